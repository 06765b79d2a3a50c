// Random small DAGs (convs with and without padding, groups and bias, BNs with
// negative, zero and shift-free channels, ReLU, Add, Concat, pools, Identity,
// Flatten -> BN -> Gemm -> BN -> Gemm): whatever BaN-OFF and naive fold, the folded graph must
// compute what the original does. A brute-force check of "never fold wrongly".
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "fold_check.h"
#include "folder/fold.h"
#include "zoo/graph_builder.h"

using namespace frugal;
using namespace frugal::fold_test;
using frugal::zoo::ConvOptions;
using frugal::zoo::GraphBuilder;

namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
};

// A random graph on 6x6 images; every op keeps the spatial size so that any two
// values can meet in an Add or a Concat.
Graph random_graph(uint64_t seed, std::vector<std::string>& bns) {
  Rng rng{seed};
  GraphBuilder b("random_" + std::to_string(seed), seed);
  std::vector<std::string> values{b.input(2 + rng.below(3), 6, 6)};
  std::vector<std::string> unused = values;
  auto pick = [&]() {
    return values[values.size() - 1 - rng.below(std::min<int>(3, static_cast<int>(values.size())))];
  };
  auto take = [&](const std::string& v) {
    unused.erase(std::remove(unused.begin(), unused.end(), v), unused.end());
  };
  const int steps = 5 + rng.below(8);
  for (int i = 0; i < steps; ++i) {
    const std::string name = "n" + std::to_string(i);
    const std::string x = pick();
    const int64_t c = b.channels(x);
    std::string y;
    switch (rng.below(9)) {
      case 0:
      case 1: {
        ConvOptions o;
        const bool k3 = rng.chance(50);
        o.pad = k3 ? 1 : 0;
        o.bias = rng.chance(50);
        const int64_t out = 2 + rng.below(3);
        if (rng.chance(30) && c % 2 == 0 && out % 2 == 0) o.groups = 2;
        y = b.conv(x, name, out, k3 ? 3 : 1, o);
        break;
      }
      case 2:
      case 3:
        y = b.bn(x, name);
        bns.push_back(name);
        break;
      case 4:
        y = b.relu(x, name);
        break;
      case 5: {
        const std::string z = pick();
        if (z != x && b.channels(z) == c)
          y = b.add(x, z, name);
        else if (z != x)
          y = b.concat({x, z}, name);
        else
          y = b.identity(x, name);
        take(z);
        break;
      }
      case 6:
        y = b.maxpool(x, name, 3, 1, 1);
        break;
      case 7:
        y = b.avgpool(x, name, 3, 1, 1, rng.chance(50));
        break;
      default:
        y = b.identity(x, name);
        break;
    }
    take(x);
    values.push_back(y);
    unused.push_back(y);
  }
  // Join every dangling value into the output.
  std::string out = unused.back();
  unused.pop_back();
  for (size_t i = 0; i < unused.size(); ++i) out = b.concat({out, unused[i]}, "join" + std::to_string(i));
  if (rng.chance(40)) {
    out = b.flatten(out, "flatten");
    if (rng.chance(60)) {
      out = b.bn(out, "bn_flat");
      bns.push_back("bn_flat");
    }
    out = b.gemm(out, "fc", 3 + rng.below(3));
    if (rng.chance(50)) {  // Gemm -> BN [-> ReLU] -> Gemm
      out = b.bn(out, "bn_fc");
      bns.push_back("bn_fc");
      if (rng.chance(50)) out = b.relu(out, "relu_fc");
      out = b.gemm(out, "fc2", 3);
    }
  }
  Graph g = b.finish(out);
  // Awkward BN channels: negative and zero gamma, zero shift.
  for (const std::string& bn : bns) {
    float* gamma = g.tensor(bn + ".weight").f32();
    const int64_t n = known_dims(g.tensor(bn + ".weight").shape)[0];
    const int kind = rng.below(5);
    if (kind == 0) gamma[rng.below(static_cast<int>(n))] = 0.0f;
    if (kind == 1)
      for (int64_t k = 0; k < n; ++k) gamma[k] = std::fabs(gamma[k]);
    if (kind == 2)
      for (int64_t k = 0; k < n; ++k) {
        g.tensor(bn + ".bias").f32()[k] = 0.0f;
        g.tensor(bn + ".running_mean").f32()[k] = 0.0f;
      }
  }
  return g;
}

}  // namespace

TEST_CASE("random DAGs: every fold BaN-OFF or naive makes is exact", "[folder]") {
  int total = 0, folded_banoff = 0, folded_naive = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::vector<std::string> bns;
    const Graph g = random_graph(seed, bns);
    INFO("seed " << seed);
    const FoldResult ours = fold_banoff(g), naive = fold_naive(g);
    CHECK(relative_mismatch(g, ours.graph, 2, seed) < 1e-5);
    CHECK(relative_mismatch(g, naive.graph, 2, seed) < 1e-5);
    CHECK(count_op(ours.graph, "BatchNormalization") ==
          count_op(g, "BatchNormalization") - ours.report["bn_folded"].get<int>());
    total += static_cast<int>(bns.size());
    folded_banoff += ours.report["bn_folded"].get<int>();
    folded_naive += naive.report["bn_folded"].get<int>();
  }
  // The generator must exercise folding, not only refusals.
  CHECK(folded_naive > total / 5);
  CHECK(folded_banoff > folded_naive);
  WARN("random DAGs: " << total << " BNs, naive folded " << folded_naive << ", BaN-OFF " << folded_banoff);
}
