#include "layer_features.h"

#include <algorithm>
#include <cmath>

namespace frugal::predictor {

namespace {

double ceil_div(int64_t a, int64_t b) { return double((a + b - 1) / b); }

double weight_bytes(const LayerFacts& f) { return 4.0 * double(f.weights); }

double bytes_moved(const LayerFacts& f, int b) {
  const size_t i = size_t(b - 1);
  return f.in_bytes.at(i) + f.out_bytes.at(i) + f.ws_bytes.at(i) + weight_bytes(f);
}

double family_code(const LayerFacts& f, const std::vector<std::string>& families) {
  const auto it = std::find(families.begin(), families.end(), f.family);
  return it == families.end() ? -1.0 : double(it - families.begin());
}

// The kind's index in `kinds`; NaN (missing, to XGBoost) for a kind training never saw.
double kind_code(const LayerFacts& f, const std::vector<std::string>& kinds) {
  const auto it = std::find(kinds.begin(), kinds.end(), f.kind);
  return it == kinds.end() ? std::nan("") : double(it - kinds.begin());
}

// perf4sight's forward-pass features (section 5.2.1), per batch of b.
void analytic(const LayerFacts& f, double b, std::vector<double>& x) {
  const double n = double(f.n), m = double(f.m), g = double(std::max<int64_t>(1, f.groups));
  const double k = double(f.kh * f.kw), ip = double(f.ih * f.iw), op = double(f.oh * f.ow);
  const double mem_w = n * (m / g) * k;
  const double fft_ip = double(f.ih) * double(1 + f.iw);       // one real FFT plane: ip (1 + ip) when square
  const double log_ip = 0.5 * std::log(std::max(ip, 2.0));     // log of the side, sqrt(ih iw)
  const double tiles = ceil_div(f.ih, 2) * ceil_div(f.iw, 2);  // Winograd F(2x2, 3x3): q = 2, r = 3
  const double filter_tiles = ceil_div(f.kh, 3) * ceil_div(f.kw, 3);
  x.insert(x.end(), {n, m, k, double(f.sh * f.sw), g, ip, op,
                     mem_w,                                                       // mem_w
                     b * m * ip,                                                  // mem_ifm
                     b * n * op,                                                  // mem_ofm
                     b * op * k * m,                                              // mem_i2c
                     b * op,                                                      // mem_i2c_index
                     b * n * op * k * (m / g),                                    // ops_mm
                     n * (m / g) * fft_ip,                                        // mem_w_fft
                     b * m * fft_ip,                                              // mem_ifm_fft
                     ip * log_ip * (b * (m + n) + n * (m / g)) + b * n * m * ip,  // ops_fft
                     b * n * tiles * 3 * 16,                                      // mem_wino
                     b * n * (m / g) * tiles * filter_tiles * 16});               // ops_wino
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {"family",
                                                 "kind",
                                                 "batch",
                                                 "n",
                                                 "m",
                                                 "k",
                                                 "stride",
                                                 "groups",
                                                 "ip",
                                                 "op",
                                                 "mem_w",
                                                 "mem_ifm",
                                                 "mem_ofm",
                                                 "mem_i2c",
                                                 "mem_i2c_index",
                                                 "ops_mm",
                                                 "mem_w_fft",
                                                 "mem_ifm_fft",
                                                 "ops_fft",
                                                 "mem_wino",
                                                 "ops_wino",
                                                 "macs",
                                                 "in_bytes",
                                                 "out_bytes",
                                                 "ws_bytes",
                                                 "weight_bytes",
                                                 "bytes_moved",
                                                 "intensity",
                                                 "bundled",
                                                 "threads",
                                                 "gate_activity",
                                                 "work"};
  return names;
}

double window_ops(const LayerFacts& f, int b) {
  return f.family == "pool" ? double(b) * double(f.n) * double(f.oh * f.ow) * double(f.kh * f.kw) : 0.0;
}

double work(const LayerFacts& f, int b) {
  return f.macs_per_sample * b + window_ops(f, b) + bytes_moved(f, b) / 4.0;
}

std::vector<double> features(const LayerFacts& f, int b, const std::vector<std::string>& families,
                             const std::vector<std::string>& kinds) {
  std::vector<double> x = {family_code(f, families), kind_code(f, kinds), double(b)};
  analytic(f, double(b), x);
  const size_t i = size_t(b - 1);
  const double macs = f.macs_per_sample * b, moved = bytes_moved(f, b);
  x.insert(x.end(),
           {macs, f.in_bytes.at(i), f.out_bytes.at(i), f.ws_bytes.at(i), weight_bytes(f), moved,
            moved > 0 ? macs / moved : 0.0, double(f.bundled), f.threads, f.gate_activity, work(f, b)});
  return x;
}

}  // namespace frugal::predictor
