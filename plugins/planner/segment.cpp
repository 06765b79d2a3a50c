#include "segment.h"

#include <algorithm>
#include <numeric>

namespace frugal::planner {

std::vector<int> Segment::layers() const {
  std::vector<int> v;
  for (const SegmentElement& e : elements) v.push_back(e.layer);
  return v;
}

Segment chain_segment(const CostTable& c, const std::vector<int>& order, int entry) {
  const int t = static_cast<int>(order.size());
  std::vector<int> pos(c.size(), -1);
  for (int p = 0; p < t; ++p) pos[order[p]] = p;
  Segment s;
  s.boundary.assign(t + 1, 0);
  // Tensor produced before boundary `from` is held up to its last reader in the
  // chain, or to the end when read outside it or not at all, or a network output.
  auto hold = [&](int tensor, int from) {
    const std::vector<int>& readers = c.tensor_consumers(tensor);
    int last = readers.empty() || c.kept_to_end(tensor) ? t : from - 1;
    for (int r : readers) last = std::max(last, pos[r] < 0 ? t : pos[r]);
    for (int q = from; q <= last; ++q) s.boundary[q] += c.tensor_per_sample(tensor);
  };
  hold(entry, 0);
  for (int p = 0; p < t; ++p) {
    s.elements.push_back({order[p], {}});
    hold(order[p], p + 1);
  }
  return s;
}

Segment flat_segment(const CostTable& c) {
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  return chain_segment(c, order, kNetworkInput);
}

uint64_t layer_step_need(const CostTable& costs, const Segment& s, int e, int b) {
  const int k = s.elements[e].layer;
  return s.boundary[e] * static_cast<uint64_t>(b) + costs.out(k, b) + costs.ws(k, b);
}

namespace {

int find_root(std::vector<int>& parent, int a) {
  while (parent[a] != a) a = parent[a] = parent[parent[a]];
  return a;
}

uint64_t single_sample_peak(const CostTable& c, const Segment& s) {
  uint64_t p = 0;
  for (int e = 0; e < s.size(); ++e) p = std::max(p, layer_step_need(c, s, e, 1));
  return p;
}

// The region strictly between x and y: its branches (connected pieces, each in
// table order) in every order up to 4 branches; beyond, the table's order, its
// reverse, and the order that minimises the single-sample peak of branches run
// one after another (largest "peak minus what it leaves for y" first, as in
// register allocation).
SegmentElement collapse_region(const CostTable& c, int x, int y) {
  const int lo = x + 1, hi = y, n = hi - lo;
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (int r = lo; r < hi; ++r)
    for (int u : c.distinct_inputs(r))
      if (u >= lo && u < hi) parent[find_root(parent, r - lo)] = find_root(parent, u - lo);
  std::vector<int> branch_of(n, -1);
  std::vector<std::vector<int>> branches;
  for (int i = 0; i < n; ++i) {
    const int root = find_root(parent, i);
    if (branch_of[root] < 0) {
      branch_of[root] = static_cast<int>(branches.size());
      branches.emplace_back();
    }
    branches[branch_of[root]].push_back(lo + i);
  }
  const int p = static_cast<int>(branches.size());
  std::vector<int> perm(p);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<std::vector<int>> perms;
  if (p <= 4) {
    do perms.push_back(perm);
    while (std::next_permutation(perm.begin(), perm.end()));
  } else {
    perms.push_back(perm);
    perms.emplace_back(perm.rbegin(), perm.rend());
    std::vector<int64_t> key(p);
    for (int a = 0; a < p; ++a) {
      const Segment alone = chain_segment(c, branches[a], x);
      uint64_t leaves = 0;
      for (int k : branches[a])
        for (int r : c.consumers[k])
          if (r == y) leaves += c.out_per_sample(k);
      key[a] = static_cast<int64_t>(single_sample_peak(c, alone)) - static_cast<int64_t>(leaves);
    }
    std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return key[a] > key[b]; });
    perms.push_back(perm);
  }
  SegmentElement s;
  for (const std::vector<int>& pm : perms) {
    std::vector<int> order;
    for (int a : pm) order.insert(order.end(), branches[a].begin(), branches[a].end());
    s.variants.push_back(chain_segment(c, order, x));
  }
  return s;
}

}  // namespace

Segment collapsed_segment(const CostTable& c, std::string* why_flat) {
  const int n = c.size();
  // A layer is on every input-to-output path iff no tensor jumps over it.
  std::vector<char> jumped(n, 0);
  int outputs = 0;
  for (int w = 0; w < n; ++w) {
    for (int u : c.distinct_inputs(w))
      for (int p = u + 1; p < w; ++p) jumped[p] = 1;
    if (c.kept_to_end(w)) {
      ++outputs;
      for (int p = w + 1; p < n; ++p) jumped[p] = 1;
    }
  }
  if (outputs != 1) {
    if (why_flat) *why_flat = "the network has " + std::to_string(outputs) + " outputs";
    return flat_segment(c);
  }
  const std::vector<uint64_t> lin = flat_segment(c).boundary;
  Segment s;
  int x = kNetworkInput;
  for (int y = 0; y < n; ++y) {
    if (jumped[y]) continue;
    if (y > x + 1) {
      s.elements.push_back(collapse_region(c, x, y));
      s.boundary.push_back(lin[x + 1]);
    }
    s.elements.push_back({y, {}});
    s.boundary.push_back(lin[y]);
    x = y;
  }
  s.boundary.push_back(lin[n]);
  return s;
}

Segment reordered_flat_segment(const CostTable& c, const Segment& collapsed) {
  std::vector<int> order;
  for (const SegmentElement& e : collapsed.elements) {
    if (e.layer >= 0) {
      order.push_back(e.layer);
      continue;
    }
    const Segment* best = &e.variants[0];
    for (const Segment& v : e.variants)
      if (single_sample_peak(c, v) < single_sample_peak(c, *best)) best = &v;
    for (const SegmentElement& l : best->elements) order.push_back(l.layer);
  }
  return chain_segment(c, order, kNetworkInput);
}

}  // namespace frugal::planner
