#include "chain_dp.h"

#include <algorithm>
#include <string>

#include "frugal/error.h"

namespace frugal::planner {

// Every candidate is computed by one expression, used both when filling and
// when tracing back, so the trace-back finds the choice the fill made.
static inline float split_expr(float b1, float a, float b2, float c, float inv_b) {
  return (b1 * a + b2 * c) * inv_b;
}

// The two inner loops, over memory: the bulk of the planning time. The rows
// never overlap the destination, and restrict lets the compiler vectorise.
static void min_sum(float* __restrict f, const float* __restrict a, const float* __restrict c, int lo,
                    int hi) {
  for (int m = lo; m < hi; ++m) f[m] = std::min(f[m], a[m] + c[m]);
}

static void min_split(float* __restrict f, const float* __restrict a, const float* __restrict c, float b1,
                      float b2, float inv_b, int lo, int hi) {
  for (int m = lo; m < hi; ++m) f[m] = std::min(f[m], split_expr(b1, a[m], b2, c[m], inv_b));
}

uint64_t ChainDP::table_bytes(int n, int samples, int units) {
  return static_cast<uint64_t>(n) * (n + 1) / 2 * static_cast<uint64_t>(samples) * (units + 1) *
         sizeof(float);
}

ChainDP::ChainDP(ChainSpec spec) : s_(std::move(spec)), stride_(static_cast<size_t>(s_.units) + 1) {
  if (s_.n < 1 || s_.samples < 1 || s_.units < 0) throw Error("planner: empty chain");
  tab_.assign(static_cast<size_t>(s_.n) * (s_.n + 1) / 2 * s_.samples * stride_, kInf);
  first_.assign(static_cast<size_t>(s_.n) * (s_.n + 1) / 2 * s_.samples, s_.units + 1);
  std::vector<float> scratch;
  for (int d = 0; d < s_.n; ++d)
    for (int i = 0; i + d < s_.n; ++i) {
      if (s_.extended)
        fill_extended(i, i + d);
      else
        fill_paper(i, i + d, scratch);
    }
  fill_top();
}

float ChainDP::value(int i, int j, int b, int m) const {
  if (i > j || b == 0) return 0.0f;
  if (m < 0) return kInf;
  return row(i, j, b)[m];
}

void ChainDP::fill_extended(int i, int j) {
  const int M = s_.units;
  for (int b = 1; b <= s_.samples; ++b) {
    float* f = row(i, j, b);
    if (i == j) std::copy_n(&s_.exact[i][(b - 1) * stride_], stride_, f);  // (a)
    // Entries below a row's first finite one are infinite: skip them.
    for (int k = i; k < j; ++k) {  // (c)
      const int lo = std::max(first(i, k, b), first(k + 1, j, b));
      if (lo <= M) min_sum(f, row(i, k, b), row(k + 1, j, b), lo, M + 1);
    }
    const float inv = 1.0f / static_cast<float>(b);
    for (int b1 = 1; b1 < b; ++b1) {  // (b)
      const int b2 = b - b1;
      const int64_t wi = s_.in_units[i][b2], wo = s_.out_units[j][b1];
      const int64_t lo = std::max(wi + first(i, j, b1), wo + first(i, j, b2));
      if (lo > M) continue;
      min_split(f, row(i, j, b1) - wi, row(i, j, b2) - wo, static_cast<float>(b1), static_cast<float>(b2),
                inv, static_cast<int>(lo), M + 1);
    }
    set_first(i, j, b);
  }
}

void ChainDP::set_first(int i, int j, int b) {
  const float* f = row(i, j, b);
  int m = 0;
  while (m <= s_.units && !(f[m] < kInf)) ++m;
  first_[pair(i, j) * s_.samples + (b - 1)] = m;
}

void ChainDP::fill_paper(int i, int j, std::vector<float>& exact_row) {
  const int M = s_.units;
  exact_row.assign(static_cast<size_t>(s_.samples) * stride_, kInf);
  for (int b = 1; b <= s_.samples; ++b) {  // recurrence (1); (3) when i == j
    float* e = &exact_row[(b - 1) * stride_];
    for (int k = i; k <= j; ++k) {
      const float* x = &s_.exact[k][(b - 1) * stride_];
      const float* a = k > i ? row(i, k - 1, b) : nullptr;
      const float* c = k < j ? row(k + 1, j, b) : nullptr;
      for (int m = 0; m <= M; ++m) e[m] = std::min(e[m], ((a ? a[m] : 0.0f) + x[m]) + (c ? c[m] : 0.0f));
    }
  }
  for (int b = 1; b <= s_.samples; ++b) {  // recurrence (2)
    float* f = row(i, j, b);
    std::copy_n(&exact_row[(b - 1) * stride_], stride_, f);  // b1 = b
    const float inv = 1.0f / static_cast<float>(b);
    for (int b1 = 1; b1 < b; ++b1) {
      const int b2 = b - b1;
      const int64_t wi = s_.in_units[i][b2], wo = s_.out_units[j][b1];
      const int64_t lo = std::max(wi, wo + first(i, j, b2));
      if (lo > M) continue;
      min_split(f, &exact_row[(b1 - 1) * stride_] - wi, row(i, j, b2) - wo, static_cast<float>(b1),
                static_cast<float>(b2), inv, static_cast<int>(lo), M + 1);
    }
    set_first(i, j, b);
  }
}

float ChainDP::paper_exact(int i, int j, int b, int m, int* best_k) const {
  float best = kInf;
  *best_k = -1;
  for (int k = i; k <= j; ++k) {
    float v = ((k > i ? row(i, k - 1, b)[m] : 0.0f) + exact(k, b, m)) + (k < j ? row(k + 1, j, b)[m] : 0.0f);
    if (v < best) {
      best = v;
      *best_k = k;
    }
  }
  return best;
}

float ChainDP::split_value(int i, int j, int b, int b1, int m, bool paper) const {
  const int b2 = b - b1;
  int k;
  if (b2 == 0) return paper ? paper_exact(i, j, b, m, &k) : kInf;
  const int64_t wi = s_.in_units[i][b2], wo = s_.out_units[j][b1];
  if (m < wi || m < wo) return kInf;
  const float a = paper ? paper_exact(i, j, b1, static_cast<int>(m - wi), &k) : row(i, j, b1)[m - wi];
  return split_expr(static_cast<float>(b1), a, static_cast<float>(b2), row(i, j, b2)[m - wo],
                    1.0f / static_cast<float>(b));
}

void ChainDP::trace(int i, int j, int b, int m, std::vector<LayerRun>& out) const {
  if (i > j || b == 0) return;
  if (m < 0 || !(row(i, j, b)[m] < kInf))
    throw Error("planner: internal error: trace-back of an infeasible entry");
  if (!s_.extended) {
    int best_b1 = -1;
    float best = kInf;
    for (int b1 = 1; b1 <= b; ++b1) {
      float v = split_value(i, j, b, b1, m, true);
      if (v < best) best = v, best_b1 = b1;
    }
    const int b1 = best_b1, b2 = b - b1;
    const int m1 = static_cast<int>(m - s_.in_units[i][b2]);
    int k;
    paper_exact(i, j, b1, m1, &k);
    trace(i, k - 1, b1, m1, out);
    s_.emit_exact(k, b1, m1, out);
    trace(k + 1, j, b1, m1, out);
    if (b2 > 0) trace(i, j, b2, static_cast<int>(m - s_.out_units[j][b1]), out);
    return;
  }
  // Extended: (a), then (c) over k, then (b) over b1; the first minimum wins.
  enum { kExact, kMeet, kSplit } kind = kExact;
  int arg = -1;
  float best = i == j ? exact(i, b, m) : kInf;
  for (int k = i; k < j; ++k) {
    float v = row(i, k, b)[m] + row(k + 1, j, b)[m];
    if (v < best) best = v, kind = kMeet, arg = k;
  }
  for (int b1 = 1; b1 < b; ++b1) {
    float v = split_value(i, j, b, b1, m, false);
    if (v < best) best = v, kind = kSplit, arg = b1;
  }
  if (!(best < kInf)) throw Error("planner: internal error: no finite choice in the trace-back");
  if (kind == kExact) {
    s_.emit_exact(i, b, m, out);
  } else if (kind == kMeet) {
    trace(i, arg, b, m, out);
    trace(arg + 1, j, b, m, out);
  } else {
    const int b1 = arg, b2 = b - b1;
    trace(i, j, b1, static_cast<int>(m - s_.in_units[i][b2]), out);
    trace(i, j, b2, static_cast<int>(m - s_.out_units[j][b1]), out);
  }
}

float ChainDP::top_candidate(int b, int b1, int m) const {
  const int b2 = b - b1;
  const int64_t wi = s_.in_units[0][b2];
  if (m < wi) return kInf;
  const float phase = value(0, s_.n - 1, b1, static_cast<int>(m - wi));
  // The bound is on the phase's total seconds; keep a margin for float rounding.
  if (!(phase < kInf) || static_cast<double>(phase) * b1 > s_.latency_s * (1.0 - 1e-6)) return kInf;
  if (b2 == 0) return phase;
  const int64_t wo = s_.out_units[s_.n - 1][b1];
  if (m < wo) return kInf;
  return split_expr(static_cast<float>(b1), phase, static_cast<float>(b2), top(b2, static_cast<int>(m - wo)),
                    1.0f / static_cast<float>(b));
}

void ChainDP::fill_top() {
  top_.assign(static_cast<size_t>(s_.samples + 1) * stride_, kInf);
  std::fill_n(top_.begin(), stride_, 0.0f);
  for (int b = 1; b <= s_.samples; ++b)
    for (int m = 0; m <= s_.units; ++m) {
      float best = kInf;
      for (int b1 = 1; b1 <= b; ++b1) best = std::min(best, top_candidate(b, b1, m));
      top_[static_cast<size_t>(b) * stride_ + m] = best;
    }
}

void ChainDP::trace_top(int b, int m, std::vector<LayerRun>& out) const {
  if (b == 0) return;
  int best_b1 = -1;
  float best = kInf;
  for (int b1 = 1; b1 <= b; ++b1) {
    float v = top_candidate(b, b1, m);
    if (v < best) best = v, best_b1 = b1;
  }
  if (best_b1 < 0) throw Error("planner: internal error: trace-back of an infeasible plan");
  const int b2 = b - best_b1;
  trace(0, s_.n - 1, best_b1, static_cast<int>(m - s_.in_units[0][b2]), out);
  if (b2 > 0) trace_top(b2, static_cast<int>(m - s_.out_units[s_.n - 1][best_b1]), out);
}

}  // namespace frugal::planner
