#include "planner_test_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace frugal::planner::test {

using nlohmann::json;

json make_table_json(const std::vector<LayerSpec>& layers, uint64_t input_per_sample, int batch_max) {
  json jl = json::array();
  for (const LayerSpec& l : layers) {
    uint64_t in_ps = 0;
    for (const std::string& s : l.inputs) {
      if (s.empty()) {
        in_ps += input_per_sample;
        continue;
      }
      for (const LayerSpec& p : layers)
        if (p.name == s) in_ps += p.out_per_sample;
    }
    std::vector<uint64_t> in, out;
    for (int b = 1; b <= batch_max; ++b) {
      in.push_back(in_ps * b);
      out.push_back(l.out_per_sample * b);
    }
    jl.push_back({{"name", l.name},
                  {"inputs", l.inputs},
                  {"time_s", l.time},
                  {"in_bytes", in},
                  {"out_bytes", out},
                  {"ws_bytes", l.ws}});
    if (l.step_s != 0) jl.back()["step_overhead_s"] = l.step_s;
  }
  return {{"model", "test"}, {"executor", "none"}, {"batch_max", batch_max}, {"layers", jl}};
}

namespace {

// Per-sample time falling with the batch (with noise: measured tables are not smooth).
std::vector<double> random_times(std::mt19937_64& rng, int batch_max) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double base = 1.0 + 9.0 * u(rng), floor = 0.2 + 0.7 * u(rng), e = 0.5 + u(rng);
  std::vector<double> t;
  for (int b = 1; b <= batch_max; ++b)
    t.push_back(base * (floor + (1.0 - floor) / std::pow(b, e)) * (0.9 + 0.2 * u(rng)));
  return t;
}

std::vector<uint64_t> random_ws(std::mt19937_64& rng, int batch_max) {
  std::uniform_int_distribution<int> fixed(0, 40), per(0, 60), kind(0, 3);
  const uint64_t w0 = fixed(rng), w1 = per(rng);
  const int k = kind(rng);
  std::vector<uint64_t> ws;
  for (int b = 1; b <= batch_max; ++b) {
    uint64_t v = w0 + w1 * b;
    if (k == 0) v = w0;                       // batch-independent (e.g. per-sample im2col reuse)
    if (k == 1) v = w0 + w1 * b + 5 * b * b;  // superlinear
    ws.push_back(v);
  }
  return ws;
}

LayerSpec random_layer(std::mt19937_64& rng, const std::string& name, std::vector<std::string> inputs,
                       int batch_max) {
  std::uniform_int_distribution<int> act(1, 40);
  return {name, std::move(inputs), static_cast<uint64_t>(act(rng)), random_ws(rng, batch_max),
          random_times(rng, batch_max)};
}

}  // namespace

std::vector<LayerSpec> random_linear(std::mt19937_64& rng, int n, int batch_max, uint64_t& input_per_sample) {
  input_per_sample = std::uniform_int_distribution<int>(1, 40)(rng);
  std::vector<LayerSpec> v;
  for (int i = 0; i < n; ++i)
    v.push_back(random_layer(rng, "L" + std::to_string(i), {i == 0 ? "" : v.back().name}, batch_max));
  return v;
}

std::vector<LayerSpec> random_branched(std::mt19937_64& rng, int batch_max, uint64_t& input_per_sample) {
  input_per_sample = std::uniform_int_distribution<int>(1, 40)(rng);
  std::vector<LayerSpec> v;
  int id = 0;
  auto add = [&](std::vector<std::string> ins) {
    v.push_back(random_layer(rng, "n" + std::to_string(id++), std::move(ins), batch_max));
    return v.back().name;
  };
  std::string x = add({""});
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0: {  // ResNet block, empty shortcut: x -> a -> b ; add(b, x)
      std::string a = add({x});
      std::string b = add({a});
      x = add({b, x});
      break;
    }
    case 1: {  // ResNet block, conv shortcut
      std::string a = add({x});
      std::string b = add({a});
      std::string s = add({x});
      x = add({b, s});
      break;
    }
    case 2: {  // inception-like: three branches of length 1, 2, 1 into a concat
      std::string a = add({x});
      std::string b1 = add({x});
      std::string b2 = add({b1});
      std::string c = add({x});
      x = add({a, b2, c});
      break;
    }
    default: {  // fire module: squeeze, two expands, concat, then a layer reading the input too (skip)
      std::string s = add({x});
      std::string e1 = add({s});
      std::string e2 = add({s});
      x = add({e1, e2});
      break;
    }
  }
  if (std::uniform_int_distribution<int>(0, 1)(rng)) x = add({x});
  return v;
}

namespace {

class Search {
 public:
  Search(const CostTable& c, int r, uint64_t budget, std::vector<double> step_s)
      : c_(c), n_(c.size()), r_(r), budget_(budget), step_s_(std::move(step_s)) {
    step_s_.resize(static_cast<size_t>(n_), 0.0);
  }

  uint64_t held(const std::vector<int>& p) const {
    uint64_t h = 0;
    for (int t = kNetworkInput; t < n_; ++t) {
      const int produced = t == kNetworkInput ? r_ : p[t];
      int consumed = 0;
      bool first = true;
      for (int k = 0; k < n_; ++k) {
        const auto& ins = c_.layers[k].inputs;
        if (std::find(ins.begin(), ins.end(), t) == ins.end()) continue;
        consumed = first ? p[k] : std::min(consumed, p[k]);
        first = false;
      }
      const uint64_t per = t == kNetworkInput ? c_.input_bytes_per_sample : c_.layers[t].out_bytes[0];
      h += per * static_cast<uint64_t>(produced - (first ? 0 : consumed));
    }
    return h;
  }
  int available(const std::vector<int>& p, int k) const {
    int a = std::numeric_limits<int>::max();
    for (int t : c_.layers[k].inputs) a = std::min(a, t == kNetworkInput ? r_ : p[t]);
    return std::min(a - p[k], c_.batch_max);
  }
  uint64_t key(const std::vector<int>& p) const {
    uint64_t k = 0;
    for (int x : p) k = k * (r_ + 1) + x;
    return k;
  }

  double best_time(std::vector<int>& p) {  // +inf when no completion within the budget
    if (std::all_of(p.begin(), p.end(), [&](int x) { return x == r_; })) return 0;
    const uint64_t kk = key(p);
    auto it = time_memo_.find(kk);
    if (it != time_memo_.end()) return it->second;
    double best = std::numeric_limits<double>::infinity();
    const uint64_t h = held(p);
    for (int k = 0; k < n_; ++k)
      for (int b = 1; b <= available(p, k); ++b) {
        if (h + c_.layers[k].out_bytes[b - 1] + c_.layers[k].ws_bytes[b - 1] > budget_) continue;
        p[k] += b;
        best =
            std::min(best, c_.layers[k].time_s[b - 1] * b + step_s_[static_cast<size_t>(k)] + best_time(p));
        p[k] -= b;
      }
    return time_memo_[kk] = best;
  }

  uint64_t min_peak(std::vector<int>& p) {
    if (std::all_of(p.begin(), p.end(), [&](int x) { return x == r_; })) return 0;
    const uint64_t kk = key(p);
    auto it = peak_memo_.find(kk);
    if (it != peak_memo_.end()) return it->second;
    uint64_t best = std::numeric_limits<uint64_t>::max();
    const uint64_t h = held(p);
    for (int k = 0; k < n_; ++k)
      for (int b = 1; b <= available(p, k); ++b) {
        const uint64_t step = h + c_.layers[k].out_bytes[b - 1] + c_.layers[k].ws_bytes[b - 1];
        if (step >= best) continue;
        p[k] += b;
        best = std::min(best, std::max(step, min_peak(p)));
        p[k] -= b;
      }
    return peak_memo_[kk] = best;
  }

 private:
  const CostTable& c_;
  int n_, r_;
  uint64_t budget_;
  std::vector<double> step_s_;
  std::unordered_map<uint64_t, double> time_memo_;
  std::unordered_map<uint64_t, uint64_t> peak_memo_;
};

}  // namespace

BruteForce brute_force(const CostTable& costs, int samples, uint64_t budget,
                       const std::vector<double>& step_s) {
  Search s(costs, samples, budget, step_s);
  std::vector<int> p(costs.size(), 0);
  BruteForce r;
  r.min_peak = s.min_peak(p);
  r.best_total_s = s.best_time(p);
  r.feasible = std::isfinite(r.best_total_s);
  return r;
}

uint64_t count_model_peak(const CostTable& costs, int samples, const std::vector<Step>& steps) {
  Search s(costs, samples, 0, {});
  std::vector<int> p(costs.size(), 0);
  uint64_t peak = 0;
  for (const Step& st : steps) {
    if (st.first != p[st.layer]) throw std::runtime_error("plan is not first-in first-out per layer");
    if (st.count > s.available(p, st.layer)) throw std::runtime_error("plan runs a layer on missing inputs");
    peak = std::max(peak, s.held(p) + costs.layers[st.layer].out_bytes[st.count - 1] +
                              costs.layers[st.layer].ws_bytes[st.count - 1]);
    p[st.layer] += st.count;
  }
  return peak;
}

}  // namespace frugal::planner::test

namespace frugal::planner::test {

namespace {

// Per-sample time of a layer with `macs` multiply-adds per sample: efficiency
// grows with the batch, plus a fixed per-call overhead shared by the batch.
std::vector<double> model_times(double macs, int batch_max) {
  std::vector<double> t;
  for (int b = 1; b <= batch_max; ++b)
    t.push_back(macs / 2.0e10 * (1.0 + 2.0 / std::pow(b, 0.8)) + 2.0e-5 / b);
  return t;
}

}  // namespace

json resnet50_like_table(int batch_max) {
  std::vector<LayerSpec> L;
  const uint64_t f = 4;  // float32
  auto conv = [&](const std::string& name, const std::string& in, int cin, int cout, int k, int hw_out) {
    const uint64_t out = f * cout * hw_out * hw_out;
    const uint64_t col = k > 1 ? f * cin * k * k * hw_out * hw_out : 0;
    std::vector<uint64_t> ws;
    for (int b = 1; b <= batch_max; ++b) ws.push_back(col * b);
    const double macs = static_cast<double>(cin) * cout * k * k * hw_out * hw_out;
    L.push_back({name, {in}, out, ws, model_times(macs, batch_max)});
    return name;
  };
  auto simple = [&](const std::string& name, std::vector<std::string> ins, uint64_t out, double ops) {
    L.push_back(
        {name, std::move(ins), out, std::vector<uint64_t>(batch_max, 0), model_times(ops, batch_max)});
    return name;
  };
  std::string x = conv("conv1", "", 3, 64, 7, 112);
  x = simple("pool1", {x}, f * 64 * 56 * 56, 64.0 * 56 * 56 * 9);
  const int widths[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3}, sizes[4] = {56, 28, 14, 7};
  int cin = 64;
  for (int s = 0; s < 4; ++s)
    for (int blk = 0; blk < blocks[s]; ++blk) {
      const std::string p = "res" + std::to_string(s + 2) + static_cast<char>('a' + blk);
      const int w = widths[s], hw = sizes[s], cout = 4 * w;
      std::string a = conv(p + "_branch2a", x, cin, w, 1, hw);
      std::string b = conv(p + "_branch2b", a, w, w, 3, hw);
      std::string c = conv(p + "_branch2c", b, w, cout, 1, hw);
      std::string sc = blk == 0 ? conv(p + "_branch1", x, cin, cout, 1, hw) : x;
      x = simple(p, {c, sc}, f * cout * hw * hw, 1.0 * cout * hw * hw);
      cin = cout;
    }
  x = simple("pool5", {x}, f * 2048, 2048.0 * 49);
  simple("fc1000", {x}, f * 1000, 2048.0 * 1000);
  json t = make_table_json(L, f * 3 * 224 * 224, batch_max);
  t["model"] = "resnet50-like";
  return t;
}

json synthetic_chain_table(int n, int batch_max, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> ch(16, 256), hw(7, 56);
  std::vector<LayerSpec> L;
  for (int i = 0; i < n; ++i) {
    const int c = ch(rng), s = hw(rng);
    const uint64_t out = 4ull * c * s * s;
    std::vector<uint64_t> ws;
    for (int b = 1; b <= batch_max; ++b) ws.push_back(out * 9 / 4 * b);
    L.push_back({"l" + std::to_string(i),
                 {i == 0 ? "" : L.back().name},
                 out,
                 ws,
                 model_times(9.0 * c * c * s * s, batch_max)});
  }
  return make_table_json(L, 4ull * 3 * 112 * 112, batch_max);
}

}  // namespace frugal::planner::test
