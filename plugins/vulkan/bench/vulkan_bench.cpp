// vulkan_bench: what the gating-ready convolution costs and saves, and what the
// pipeline cache saves, measured side by side in one run on this machine's
// Vulkan device (GPU time from timestamp queries; medians of --repeats).
//
//   1. indirect vs dense: each conv layer timed with every kernel active through
//      the indirect path (one vkCmdDispatchIndirect per sample reading an index
//      list) and through the plain dense dispatch (conv_dense.spv). The ratio
//      is the indirection's cost (the paper: up to 25% on a fully active layer).
//   2. gated at ~50%: the same layers with half the kernels switched off per
//      sample (gate values drawn uniform, threshold 0.5), timed inside a run
//      (gate-list build and output clear included) against the dense run.
//   3. pipeline cache: executor creation with an empty cache file, then with
//      the file the first creation wrote (a fresh device reads it).
//
// usage: vulkan_bench [--device N] [--shader-dir DIR] [--batch B] [--repeats R] [--size S]
// (frugal bench-vulkan runs it after its network table, with the shader folder
// the host gave its executors: an installed vulkan_bench has no other way to know it.)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "frugal/model/onnx_export.h"
#include "vk_executor.h"

namespace {

using frugal::vk::Executor;
using frugal::vk::ExecutorOptions;

struct ConvShape {
  const char* name;
  int64_t C, M, k, stride, groups, H;
};

std::vector<float> uniform(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// x [N, C, H, H] -> Conv (pads k/2, bias) -> Relu.
std::string conv_model(const ConvShape& s) {
  frugal::Graph g;
  frugal::TensorDesc x;
  x.name = "x";
  x.has_shape = true;
  x.shape = {frugal::Dim{-1, "N"}, frugal::Dim{s.C, ""}, frugal::Dim{s.H, ""}, frugal::Dim{s.H, ""}};
  g.tensors["x"] = x;
  g.inputs = {"x"};
  const std::vector<float> w = uniform(size_t(s.M * (s.C / s.groups) * s.k * s.k), 1, -0.1f, 0.1f),
                           b = uniform(size_t(s.M), 2, -0.1f, 0.1f);
  g.add_initializer("w", frugal::DType::Float32, {s.M, s.C / s.groups, s.k, s.k}, w.data());
  g.add_initializer("b", frugal::DType::Float32, {s.M}, b.data());
  frugal::Node c;
  c.name = "conv";
  c.op_type = "Conv";
  c.inputs = {"x", "w", "b"};
  c.outputs = {"c"};
  c.set_attr_ints("pads", {s.k / 2, s.k / 2, s.k / 2, s.k / 2});
  c.set_attr_ints("strides", {s.stride, s.stride});
  c.set_attr_int("group", s.groups);
  g.nodes.push_back(c);
  frugal::Node r;
  r.name = "relu";
  r.op_type = "Relu";
  r.inputs = {"c"};
  r.outputs = {"y"};
  g.nodes.push_back(r);
  g.tensors["c"].name = "c";
  g.tensors["y"].name = "y";
  g.outputs = {"y"};
  return frugal::save_onnx_bytes(g);
}

ExecutorOptions options(const std::string& json) { return ExecutorOptions::parse(json.c_str()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// GPU seconds of layer 0 inside whole runs (median of `repeats` runs).
double run_layer_seconds(Executor& ex, const std::vector<float>& input, const std::vector<int64_t>& dims,
                         int repeats) {
  const std::vector<int64_t> od = ex.model().dims_at(ex.model().outputs()[0], dims[0]);
  int64_t count = 1;
  for (int64_t d : od) count *= d;
  std::vector<float> out(static_cast<size_t>(count));
  frugal_tensor ti{"x",
                   FRUGAL_DTYPE_FLOAT32,
                   int32_t(dims.size()),
                   dims.data(),
                   const_cast<float*>(input.data()),
                   input.size() * 4};
  frugal_tensor to{nullptr, FRUGAL_DTYPE_FLOAT32, int32_t(od.size()), od.data(), out.data(), out.size() * 4};
  std::vector<double> t;
  ex.run(nullptr, &ti, 1, &to, 1);  // warm-up (records the command buffer)
  for (int i = 0; i < repeats; ++i) {
    const nlohmann::json rep = nlohmann::json::parse(ex.run(nullptr, &ti, 1, &to, 1));
    t.push_back(rep["steps"][0].value("seconds", 0.0));
  }
  return median(t);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows show as they come when piped (frugal bench-vulkan)
  int batch = 4, repeats = 7, device = -1;
  int64_t size = 28;
  std::string shader_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "vulkan_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::strtol(argv[++i], nullptr, 10);
    };
    if (a == "--device")
      device = int(next());
    else if (a == "--shader-dir" && i + 1 < argc)
      shader_dir = argv[++i];
    else if (a == "--batch")
      batch = int(next());
    else if (a == "--repeats")
      repeats = int(next());
    else if (a == "--size")
      size = next();
    else {
      std::fprintf(
          stderr,
          "usage: vulkan_bench [--device N] [--shader-dir DIR] [--batch B] [--repeats R] [--size S]\n");
      return 2;
    }
  }
  // Every executor below on the chosen device (-1: the default one), with the given shaders.
  std::string on_device = device >= 0 ? "\"device\": " + std::to_string(device) + ", " : "";
  if (!shader_dir.empty()) on_device += "\"shader_dir\": " + nlohmann::json(shader_dir).dump() + ", ";
  if (batch < 1 || repeats < 1 || size < 4 || device < -1) {
    std::fprintf(stderr, "vulkan_bench: batch, repeats >= 1, size >= 4 and device >= 0 please\n");
    return 2;
  }
  try {
    const ConvShape shapes[] = {{"3x3 64->64", 64, 64, 3, 1, 1, size},
                                {"3x3 128->128 /2", 128, 128, 3, 2, 1, size},
                                {"1x1 64->256", 64, 256, 1, 1, 1, size},
                                {"dw3x3 128", 128, 128, 3, 1, 128, size},
                                {"3x3 256->256 @H/4", 256, 256, 3, 1, 1, std::max<int64_t>(4, size / 4)}};
    bool first = true;
    std::printf("%-20s %12s %12s %9s %14s %9s\n", "conv layer", "dense ms", "indirect ms", "ratio",
                "gated~50% ms", "ratio");
    for (const ConvShape& s : shapes) {  // the implicit-GEMM kernel: Winograd off
      const std::string onnx = conv_model(s);
      Executor dense(onnx.data(), onnx.size(),
                     options("{" + on_device + "\"winograd\": \"off\", \"conv\": \"dense\"}"));
      Executor indirect(onnx.data(), onnx.size(),
                        options("{" + on_device + "\"winograd\": \"off\", \"conv\": \"indirect\"}"));
      if (first) {
        std::printf("device: %s, batch %d, median of %d\n", dense.device().description().c_str(), batch,
                    repeats);
        first = false;
      }
      double md, sd, mi, si;
      dense.time_layer(0, batch, repeats, md, sd);
      indirect.time_layer(0, batch, repeats, mi, si);
      // Gated: half the kernels on, per sample; against the dense layer inside the same kind of run.
      const std::vector<int64_t> dims = {batch, s.C, s.H, s.H};
      const std::vector<float> input = uniform(size_t(batch * s.C * s.H * s.H), 3, -1.0f, 1.0f);
      indirect.set_gates(0, batch, uniform(size_t(batch * s.M), 4, 0.0f, 1.0f), 0.5f);
      const double gated = run_layer_seconds(indirect, input, dims, repeats);
      const double dense_run = run_layer_seconds(dense, input, dims, repeats);
      std::printf("%-20s %12.3f %12.3f %9.3f %14.3f %9.3f\n", s.name, md * 1e3, mi * 1e3, mi / md,
                  gated * 1e3, gated / dense_run);
    }

    // Pipeline cache: a fresh device each time (a new cache file name keys a new device).
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("frugal-vk-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "pipelines.bin").string();
    double cold = 0, warm = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::unique_ptr<Executor>> all;
      for (const ConvShape& s : shapes) {
        const std::string onnx = conv_model(s);
        all.push_back(std::make_unique<Executor>(
            onnx.data(), onnx.size(), options("{" + on_device + "\"pipeline_cache\": \"" + file + "\"}")));
      }
      (pass == 0 ? cold : warm) = seconds_since(t0);
    }
    std::printf(
        "pipeline cache: creating %zu executors took %.3f s with an empty cache, %.3f s with the cache file "
        "(%.2fx)\n",
        sizeof shapes / sizeof shapes[0], cold, warm, cold / warm);
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vulkan_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
