// The dynamic program over a chain of elements (layers, or the paper's special
// layers) under a memory budget in units. Two recurrence families:
//
//   paper     recurrences (1)-(3) of the VBS paper, as printed:
//             Exact[i,j,b,m] = min_k OPT[i,k-1,b,m] + Exact[k,k,b,m] + OPT[k+1,j,b,m]
//             OPT[i,j,b,m]   = min_b1 (b1 Exact[i,j,b1,m - in(i,b-b1)]
//                                      + (b-b1) OPT[i,j,b-b1,m - out(j,b1)]) / b
//   extended  F[i,j,b,m] = min of
//             (a) i = j: Exact[i,i,b,m]                          (one step of batch b)
//             (b) min_b1<b (b1 F[i,j,b1,m - in(i,b-b1)] + (b-b1) F[i,j,b-b1,m - out(j,b1)]) / b
//             (c) min_k F[i,k,b,m] + F[k+1,j,b,m]                (all b samples meet at boundary k)
//             which contains every paper schedule and the Greedy-VBS and FBS ones
//             (docs/PLANNER.md has the argument).
//
// Values are per-sample seconds (float, +inf when infeasible). Only OPT / F is
// stored, for i <= j: n(n+1)/2 * samples * (units+1) floats; the paper's Exact
// for i < j lives in a scratch row and is recomputed during the trace-back.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace frugal::planner {

constexpr float kInf = std::numeric_limits<float>::infinity();

// (layer, count) in execution order; samples are assigned first-in first-out
// per layer afterwards.
struct LayerRun {
  int layer;
  int count;
};

struct ChainSpec {
  int n = 0;        // elements
  int samples = 0;  // r: the largest number of samples the chain is asked about
  int units = 0;    // M: memory values 0..M
  bool extended = true;
  double latency_s = std::numeric_limits<double>::infinity();  // bound per top-level phase
  // Units charged for w = 0..samples samples waiting at the input of element e /
  // finished at its output (the boundaries of a range).
  std::vector<std::vector<int64_t>> in_units, out_units;
  // exact[e][(b-1)*(units+1) + m]: per-sample time when element e takes all b
  // samples as one unit of work with m units of memory; kInf when infeasible.
  std::vector<std::vector<float>> exact;
  // Writes the layer runs of element e at batch b with m units.
  std::function<void(int e, int b, int m, std::vector<LayerRun>& out)> emit_exact;
};

class ChainDP {
 public:
  explicit ChainDP(ChainSpec spec);  // fills the tables

  // Per-sample seconds for b samples through elements i..j with m units.
  float value(int i, int j, int b, int m) const;
  // Per-sample seconds for the whole chain, b samples, m units, when every
  // top-level phase (a group of samples that enters and leaves the chain before
  // the next group starts) takes at most spec().latency_s in total.
  float top(int b, int m) const { return top_[static_cast<size_t>(b) * stride_ + m]; }
  // The layer runs realising value(i, j, b, m) / top(b, m); it must be finite.
  void trace(int i, int j, int b, int m, std::vector<LayerRun>& out) const;
  void trace_top(int b, int m, std::vector<LayerRun>& out) const;

  const ChainSpec& spec() const { return s_; }
  static uint64_t table_bytes(int n, int samples, int units);

 private:
  size_t pair(int i, int j) const {
    return static_cast<size_t>(i) * s_.n - static_cast<size_t>(i) * (i - 1) / 2 + (j - i);
  }
  const float* row(int i, int j, int b) const {  // b >= 1
    return &tab_[(pair(i, j) * s_.samples + (b - 1)) * stride_];
  }
  float* row(int i, int j, int b) { return &tab_[(pair(i, j) * s_.samples + (b - 1)) * stride_]; }
  // First memory index with a finite entry (entries are non-increasing in m).
  int first(int i, int j, int b) const { return first_[pair(i, j) * s_.samples + (b - 1)]; }
  void set_first(int i, int j, int b);
  float exact(int e, int b, int m) const { return s_.exact[e][(b - 1) * stride_ + m]; }
  // The paper's Exact[i,j,b,m] for i < j (recomputed from OPT).
  float paper_exact(int i, int j, int b, int m, int* best_k) const;
  float split_value(int i, int j, int b, int b1, int m, bool paper) const;
  void fill_paper(int i, int j, std::vector<float>& scratch);
  void fill_extended(int i, int j);
  float top_candidate(int b, int b1, int m) const;
  void fill_top();

  ChainSpec s_;
  size_t stride_ = 0;  // units + 1
  std::vector<float> tab_;
  std::vector<int> first_;  // per (pair, b)
  std::vector<float> top_;  // (samples + 1) x (units + 1)
};

}  // namespace frugal::planner
