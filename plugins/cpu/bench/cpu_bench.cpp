// Benchmark of the cpu executor plugin (not a test; `cpu_bench --help`).
// Per network and batch size: images/s and achieved GFLOP/s (2 x MACs / time) of
// a whole-graph run, GFLOP/s of the conv layers alone (time_layer, summed), and
// next to them OpenBLAS's own sgemm GFLOP/s (with the same number of threads) on
// a GEMM of typical conv size, measured in the same run right before the conv
// layers are timed (and at the start and end, so drift from a busy machine shows).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frugal/model/onnx_export.h"
#include "frugal/plugin.h"
#include "loader/plugin_registry.h"
#include "zoo/zoo.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// GFLOP/s of cblas_sgemm on [M,K] x [K,N] (median of timed runs after a warm-up).
double sgemm_gflops(int M, int N, int K, int threads, int repeats) {
  openblas_set_num_threads(threads);
  std::vector<float> a(size_t(M) * K, 0.5f), b(size_t(K) * N, 0.25f), c(size_t(M) * N);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f,
              c.data(), N);
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    for (int i = 0; i < 8; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f,
                  c.data(), N);
    t.push_back((now() - t0) / 8);
  }
  return 2.0 * M * N * K / median(t) / 1e9;
}

struct Api {
  const frugal_executor_api* api;
  void check(frugal_status st, const frugal_error& err, const char* what) const {
    if (st != FRUGAL_OK) {
      std::fprintf(stderr, "cpu_bench: %s failed: %s\n", what, err.message);
      std::exit(1);
    }
  }
};

// An option's value as given on the command line: digits are a number (cache_bytes), anything else a string.
nlohmann::json option_value(const std::string& v) {
  const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
  return digits ? nlohmann::json(std::stoull(v)) : nlohmann::json(v);
}

// --conv A,B,..., --winograd A,B, --residual-add A,B, --se-scale A,B, --schedule A,B or --cache-bytes A,B:
// per network and batch, images/s of one executor per value of `key` (the executor option), measured in
// interleaved rounds (each round runs every value once, in turn), medians and their ratios to the first
// value. `base`: the other options.
int compare_paths(const Api& A, const std::vector<std::string>& models, const std::vector<int>& batches,
                  const nlohmann::json& base, const std::string& key, const std::vector<std::string>& values,
                  int rounds) {
  std::printf("%-16s %5s", "network", "batch");
  for (const std::string& c : values) std::printf(" %12s", (c + " img/s").c_str());
  for (size_t k = 1; k < values.size(); ++k) std::printf(" %14s", (values[k] + "/" + values[0]).c_str());
  std::printf("\n");
  frugal_error err{};
  for (const std::string& name : models) {
    const std::string bytes = frugal::save_onnx_bytes(frugal::build_zoo_model(name, 1));
    std::vector<frugal_executor*> exs;
    for (const std::string& c : values) {
      nlohmann::json o = base;
      o[key] = option_value(c);
      frugal_executor* ex = nullptr;
      A.check(A.api->create(bytes.data(), bytes.size(), o.dump().c_str(), &ex, &err), err, "create");
      exs.push_back(ex);
    }
    for (int batch : batches) {
      std::vector<int64_t> in_dims = {batch, 3, 224, 224}, out_dims = {batch, 1000};
      std::vector<float> x(size_t(batch) * 3 * 224 * 224), y(size_t(batch) * 1000);
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> u(-1, 1);
      for (float& v : x) v = u(rng);
      frugal_tensor in{nullptr, FRUGAL_DTYPE_FLOAT32, 4, in_dims.data(), x.data(), x.size() * 4};
      frugal_tensor out{nullptr, FRUGAL_DTYPE_FLOAT32, 2, out_dims.data(), y.data(), y.size() * 4};
      std::vector<std::vector<double>> times(exs.size());
      for (int r = -1; r < rounds; ++r)  // round -1: warm-up
        for (size_t k = 0; k < exs.size(); ++k) {
          frugal_blob rep{};
          const double t0 = now();
          A.check(A.api->run(exs[k], nullptr, &in, 1, &out, 1, &rep, &err), err, "run");
          if (r >= 0) times[k].push_back(now() - t0);
          if (rep.release) rep.release(rep.data);
        }
      std::printf("%-16s %5d", name.c_str(), batch);
      for (const auto& t : times) std::printf(" %12.2f", batch / median(t));
      for (size_t k = 1; k < times.size(); ++k)
        std::printf(" %13.0f%%", 100.0 * median(times[0]) / median(times[k]));
      std::printf("\n");
      std::fflush(stdout);
    }
    for (frugal_executor* ex : exs) A.api->destroy(ex);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models = {"resnet50"};
  std::vector<int> batches = {1, 8};
  int threads = 0, repeats = 5;
  std::string conv;      // the executor's "conv" option ("" = its default)
  std::string winograd;  // its "winograd" option ("" = its default)
  std::string residual;  // its "residual_add" option ("" = its default)
  std::string se_scale;  // its "se_scale" option ("" = its default)
  std::string schedule;  // its "schedule" option ("" = its default)
  std::string cache;     // its "cache_bytes" option ("" = its default)
  bool per_op = false, per_layer = false, per_step = false;
  int gap_ms = 0;  // pause before each whole-graph run (as tools/ort-compare pauses between turns)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cpu_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--models")
      models = split(value());
    else if (a == "--batches") {
      batches.clear();
      for (const std::string& b : split(value())) batches.push_back(std::stoi(b));
    } else if (a == "--threads")
      threads = std::stoi(value());
    else if (a == "--conv")
      conv = value();
    else if (a == "--winograd")
      winograd = value();
    else if (a == "--residual-add")
      residual = value();
    else if (a == "--se-scale")
      se_scale = value();
    else if (a == "--schedule")
      schedule = value();
    else if (a == "--cache-bytes")
      cache = value();
    else if (a == "--repeats")
      repeats = std::stoi(value());
    else if (a == "--per-op")
      per_op = true;
    else if (a == "--layers")
      per_layer = true;
    else if (a == "--steps")
      per_step = true;
    else if (a == "--gap-ms")
      gap_ms = std::stoi(value());
    else {
      std::printf(
          "usage: cpu_bench [--models resnet50,mobilenet_v2,...] [--batches 1,8] [--threads T] [--repeats R] "
          "[--conv auto|blas|onednn] [--winograd auto|off] [--residual-add fused|separate] "
          "[--se-scale fused|separate] "
          "[--schedule cache|whole] [--cache-bytes N] [--per-op] "
          "[--layers] [--steps] [--gap-ms G]\n"
          "models: zoo names (frugal zoo); threads default: the executor's default (cores present)\n"
          "--conv: the executor's conv path (option \"conv\"; default auto); a list (blas,auto) compares\n"
          "        the paths' images/s in interleaved rounds (--repeats of them) instead\n"
          "--winograd: the executor's option \"winograd\" (default auto); a list (off,auto) compares "
          "likewise\n"
          "--residual-add: the executor's option \"residual_add\" (default fused); a list (separate,fused) "
          "compares likewise\n"
          "--se-scale: the executor's option \"se_scale\" (default fused); a list (separate,fused) "
          "compares likewise\n"
          "--schedule: the executor's option \"schedule\" (default cache); a list (whole,cache) compares "
          "likewise\n"
          "--cache-bytes: the executor's option \"cache_bytes\" (default: half the last-level cache); a list "
          "(8388608,16777216) compares likewise\n"
          "--per-op: also the seconds of the last whole-graph run summed by the layer's ops\n"
          "--layers: also each conv layer alone (time_layer) next to sgemm on its per-sample GEMM shape, and "
          "each pooling layer\n"
          "--steps: also every step of the whole-graph runs in order, its median ms over the timed runs\n"
          "         (inside a run: caches as the run leaves them, unlike time_layer)\n"
          "--gap-ms: pause G ms before each whole-graph run, as tools/ort-compare does between turns\n"
          "          (threads and cores idle in between; default 0: back to back)\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }

  frugal::PluginRegistry registry;
  std::string why;
  const frugal::LoadedPlugin* plugin =
      registry.load_file(std::string(FRUGAL_BUILD_PLUGIN_DIR) + "/cpu.so", &why);
  if (!plugin) {
    std::fprintf(stderr, "cpu_bench: %s\n", why.c_str());
    return 1;
  }
  const Api A{static_cast<const frugal_executor_api*>(plugin->api)};
  nlohmann::json opts = nlohmann::json::object();
  if (threads > 0) opts["threads"] = threads;
  // One option may be a list: its values are compared; the others are set as given.
  const std::pair<const char*, const std::string*> listed[] = {
      {"conv", &conv},         {"winograd", &winograd}, {"residual_add", &residual},
      {"se_scale", &se_scale}, {"schedule", &schedule}, {"cache_bytes", &cache}};
  for (const auto& [key, value] : listed)
    if (value->find(',') == std::string::npos && !value->empty()) opts[key] = option_value(*value);
  for (const auto& [key, value] : listed)
    if (value->find(',') != std::string::npos)
      return compare_paths(A, models, batches, opts, key, split(*value), repeats);
  const std::string options = opts.empty() ? std::string() : opts.dump();

  // A typical conv GEMM: ResNet-50 layer3 3x3 conv, one sample (M=256 filters,
  // K=256*3*3, N=14*14 positions).
  const int gm = 256, gk = 2304, gn = 196;
  int t_used = threads;
  frugal_error err{};
  double sgemm_before = 0;
  bool first = true;

  for (const std::string& name : models) {
    const std::string bytes = frugal::save_onnx_bytes(frugal::build_zoo_model(name, 1));
    frugal_executor* ex = nullptr;
    A.check(A.api->create(bytes.data(), bytes.size(), options.empty() ? nullptr : options.c_str(), &ex, &err),
            err, "create");
    frugal_blob blob{};
    A.check(A.api->describe(ex, &blob, &err), err, "describe");
    const nlohmann::json d = nlohmann::json::parse(std::string(static_cast<char*>(blob.data), blob.size));
    if (blob.release) blob.release(blob.data);
    t_used = d["threads"].get<int>();
    if (first) {
      sgemm_before = sgemm_gflops(gm, gn, gk, t_used, repeats);
      std::printf("device: %s, conv path %s\n", d["device"].get<std::string>().c_str(),
                  d["conv"].get<std::string>().c_str());
      std::printf(
          "sgemm %dx%dx%d (M x N x K, typical conv GEMM): %.1f GFLOP/s with %d thread%s, %.1f with 1\n", gm,
          gn, gk, sgemm_before, t_used, t_used == 1 ? "" : "s", sgemm_gflops(gm, gn, gk, 1, repeats));
      std::printf("%-16s %5s %10s %10s %12s %8s %12s %10s %10s %10s\n", "network", "batch", "images/s",
                  "GFLOP/s", "conv GFLOP/s", "sgemm", "conv/sgemm", "peak MB", "moved MB", "packed MB");
      first = false;
    }
    int64_t macs = 0, conv_macs = 0;
    std::vector<int> conv_layers;
    for (size_t l = 0; l < d["layers"].size(); ++l) {
      const auto& L = d["layers"][l];
      macs += L["macs_per_sample"].get<int64_t>();
      if (L["ops"][0] == "Conv") {
        conv_layers.push_back(int(l));
        conv_macs += L["macs_per_sample"].get<int64_t>();
      }
    }
    for (int batch : batches) {
      std::vector<int64_t> in_dims = d["inputs"][0]["shape"].get<std::vector<int64_t>>();
      std::vector<int64_t> out_dims = d["outputs"][0]["shape"].get<std::vector<int64_t>>();
      in_dims[0] = out_dims[0] = batch;
      int64_t n_in = 1, n_out = 1;
      for (int64_t x : in_dims) n_in *= x;
      for (int64_t x : out_dims) n_out *= x;
      std::vector<float> x(static_cast<size_t>(n_in)), y(static_cast<size_t>(n_out));
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> u(-1, 1);
      for (float& v : x) v = u(rng);
      frugal_tensor in{nullptr,  FRUGAL_DTYPE_FLOAT32, int32_t(in_dims.size()), in_dims.data(),
                       x.data(), x.size() * 4};
      frugal_tensor out{nullptr,  FRUGAL_DTYPE_FLOAT32, int32_t(out_dims.size()), out_dims.data(),
                        y.data(), y.size() * 4};
      std::vector<double> times;
      uint64_t peak = 0, moved = 0;
      nlohmann::json last_report;
      std::vector<std::vector<double>> step_times;  // [step][timed run]
      for (int r = 0; r <= repeats; ++r) {          // run 0 is the warm-up
        if (gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
        frugal_blob rep{};
        const double t0 = now();
        A.check(A.api->run(ex, nullptr, &in, 1, &out, 1, &rep, &err), err, "run");
        const double t = now() - t0;
        const nlohmann::json report =
            nlohmann::json::parse(std::string(static_cast<char*>(rep.data), rep.size));
        if (rep.release) rep.release(rep.data);
        peak = report["peak_bytes"].get<uint64_t>();
        moved = report["moved_bytes"].get<uint64_t>();
        if (r > 0) times.push_back(t);
        if (r > 0 && per_step) {
          const auto& steps = report["steps"];
          step_times.resize(steps.size());
          for (size_t k = 0; k < steps.size(); ++k)
            step_times[k].push_back(steps[k]["seconds"].get<double>());
        }
        if (r == repeats) last_report = report;
      }
      const double t = median(times);
      // The reference rate right before the conv layers are timed, so both see the same machine load.
      const double sgemm_now = sgemm_gflops(gm, gn, gk, t_used, repeats);
      double conv_time = 0;
      for (int l : conv_layers) {
        double med = 0, spread = 0;
        A.check(A.api->time_layer(ex, l, batch, repeats, &med, &spread, &err), err, "time_layer");
        conv_time += med;
        if (per_layer) {
          // The per-sample GEMM of an ungrouped conv: M filters x N output positions x K = macs / (M N).
          const auto& L = d["layers"][size_t(l)];
          const auto shape = L["output_shape"].get<std::vector<int64_t>>();
          const int64_t M = shape[1], N = shape.size() == 4 ? shape[2] * shape[3] : shape[2];
          const int64_t K = L["macs_per_sample"].get<int64_t>() / std::max<int64_t>(1, M * N);
          const double gf = 2.0 * double(L["macs_per_sample"].get<int64_t>()) * batch / med / 1e9;
          std::printf("    %-28s %-40s M %4lld N %5lld K %5lld %8.2f ms %6.1f GFLOP/s  sgemm %6.1f\n",
                      L["name"].get<std::string>().c_str(), L["algorithm"].get<std::string>().c_str(),
                      (long long)M, (long long)N, (long long)K, med * 1e3, gf,
                      sgemm_gflops(int(M), int(N), int(K), t_used, 3));
        }
      }
      if (per_layer)  // the pooling layers alone too (no MACs: time only)
        for (size_t l = 0; l < d["layers"].size(); ++l) {
          const auto& L = d["layers"][l];
          const std::string op = L["ops"][0].get<std::string>();
          if (op != "MaxPool" && op != "AveragePool") continue;
          double med = 0, spread = 0;
          A.check(A.api->time_layer(ex, int(l), batch, repeats, &med, &spread, &err), err, "time_layer");
          std::printf("    %-28s %-18s %s %8.2f ms\n", L["name"].get<std::string>().c_str(), op.c_str(),
                      L["output_shape"].dump().c_str(), med * 1e3);
        }
      const double conv_gflops = 2.0 * double(conv_macs) * batch / conv_time / 1e9;
      std::printf("%-16s %5d %10.2f %10.1f %12.1f %8.1f %11.0f%% %10.1f %10.1f %10.1f\n", name.c_str(), batch,
                  batch / t, 2.0 * double(macs) * batch / t / 1e9, conv_gflops, sgemm_now,
                  100.0 * conv_gflops / sgemm_now, double(peak) / 1e6, double(moved) / 1e6,
                  double(d["packed_weights_bytes"].get<uint64_t>()) / 1e6);
      if (per_step)
        for (size_t k = 0; k < step_times.size(); ++k) {
          const std::string layer = last_report["steps"][k]["layer"].get<std::string>();
          const auto& L = *std::find_if(d["layers"].begin(), d["layers"].end(),
                                        [&](const nlohmann::json& x) { return x["name"] == layer; });
          std::string ops;
          for (const auto& o : L["ops"]) ops += (ops.empty() ? "" : "+") + o.get<std::string>();
          std::printf("    step %-28s %-24s %-36s %-20s %8.3f ms\n", layer.c_str(), ops.c_str(),
                      L["algorithm"].get<std::string>().c_str(), L["output_shape"].dump().c_str(),
                      median(step_times[k]) * 1e3);
        }
      if (per_op) {
        std::map<std::string, double> by_ops;
        for (const auto& st : last_report["steps"]) {
          const auto& L = *std::find_if(d["layers"].begin(), d["layers"].end(),
                                        [&](const nlohmann::json& x) { return x["name"] == st["layer"]; });
          std::string ops;
          for (const auto& o : L["ops"]) ops += (ops.empty() ? "" : "+") + o.get<std::string>();
          if (!L["algorithm"].get<std::string>().empty())
            ops += " (" + L["algorithm"].get<std::string>() + ")";
          by_ops[ops] += st["seconds"].get<double>();
        }
        for (const auto& kv : by_ops) std::printf("    %-40s %8.3f s\n", kv.first.c_str(), kv.second);
      }
      std::fflush(stdout);
    }
    A.api->destroy(ex);
  }
  const double sgemm_after = sgemm_gflops(gm, gn, gk, t_used, repeats);
  std::printf("sgemm %dx%dx%d again at the end: %.1f GFLOP/s (drift %+.0f%%)\n", gm, gn, gk, sgemm_after,
              100.0 * (sgemm_after / sgemm_before - 1.0));
  return 0;
}
