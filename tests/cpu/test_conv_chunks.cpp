// The cpu executor's im2col convolution on planes large enough that it runs in
// chunks of output rows (plugins/cpu/kernels/conv.cpp), and 1x1 convs, which
// run in chunks too (without a workspace): random channels,
// kernels, strides, dilations, pads and groups, with a bias and a BN + Relu
// epilogue, at 1 and 2 threads and several batch sizes, against the float64
// reference evaluator; and its workspace never exceeds one whole-plane im2col
// matrix per thread that runs samples (what the unchunked kernel took).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <sstream>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::numel;

namespace {}  // namespace

TEST_CASE("im2col convs on large planes (chunked) match the float64 reference", "[cpu][conv]") {
  std::mt19937_64 rng(31337);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int chunked = 0;  // cases whose workspace is below one whole-plane im2col: they ran in chunks
  for (int t = 0; t < 12; ++t) {
    // The first cases are 1x1 stride-1 convs (sgemm on the input, also run in
    // chunks of rows) with a few dozen channels on 40..56 square planes.
    const bool pointwise = t < 4;
    const int64_t group = pick(0, 3) == 0 ? 2 : 1;
    const int64_t C = group * (pointwise ? pick(48, 64) : pick(3, 48)),
                  M = group * (pointwise ? pick(48, 64) : pick(2, 8));
    const int64_t k = pointwise         ? 1
                      : pick(0, 3) == 0 ? 1
                                        : pick(2, 5),
                  s = pointwise ? 1 : pick(1, 2), d = k > 1 ? pick(1, 2) : 1;
    const int64_t pt = pick(0, k - 1), pl = pick(0, k - 1), pb = pick(0, k - 1), pr = pick(0, k - 1);
    const int64_t H = pointwise ? pick(46, 56) : pick(20, 56), W = pointwise ? pick(46, 56) : pick(20, 56),
                  N = pick(1, 3);
    GraphMaker m;
    m.input("x", {N, C, H, W});
    const std::vector<int64_t> wd = {M, C / group, k, k};
    m.constant("W", wd, cpu_test::random_floats(size_t(numel(wd)), rng()));
    m.constant("B", {M}, cpu_test::random_floats(size_t(M), rng()));
    frugal::Node& n = m.node("Conv", {"x", "W", "B"}, "y");
    n.set_attr_ints("kernel_shape", {k, k});
    n.set_attr_ints("strides", {s, s});
    n.set_attr_ints("dilations", {d, d});
    n.set_attr_ints("pads", {pt, pl, pb, pr});
    n.set_attr_int("group", group);
    m.batchnorm("y", "bn", M, rng);
    m.node("Relu", {"bn"}, "out");
    m.output("out");

    const std::vector<int64_t> xd = {N, C, H, W};
    const HostTensor x{"x", xd, cpu_test::random_floats(size_t(numel(xd)), rng())};
    frugal::RefValues ref_in;
    ref_in["x"] = cpu_test::ref_of(xd, x.data);
    const frugal::RefTensor want = frugal::reference_run(m.graph(), ref_in).at("out");
    std::ostringstream what;
    what << "Conv x=[" << N << "," << C << "," << H << "," << W << "] W=[" << M << "," << C / group << ","
         << k << "," << k << "] s" << s << " d" << d << " pads " << pt << "," << pl << "," << pb << "," << pr
         << " group " << group;
    INFO(what.str());
    for (int threads : {1, 2}) {
      cpu_test::Executor ex(m.graph(), "{\"threads\": " + std::to_string(threads) + "}");
      REQUIRE(ex.ok());
      std::vector<HostTensor> out;
      const cpu_test::Status st = ex.run({x}, out);
      INFO("threads " << threads << ": " << st.message);
      REQUIRE(st.ok());
      REQUIRE(out[0].dims == want.dims);
      double worst = 0.0;
      for (size_t i = 0; i < want.data.size(); ++i)
        worst = std::max(worst, std::fabs(double(out[0].data[i]) - want.data[i]) /
                                    (1e-4 + 1e-4 * std::fabs(want.data[i])));
      CHECK(worst <= 1.0);

      // Workspace of the conv layer: at most min(threads, batch) whole-plane im2col matrices.
      const nlohmann::json desc = ex.describe();
      const int64_t Ho = want.dims[2], Wo = want.dims[3], K = (C / group) * k * k;
      for (int batch : {1, 3}) {
        const frugal_layer_bytes b = ex.layer_bytes(0, batch);
        const int64_t whole = std::min<int64_t>(threads, batch) * K * Ho * Wo * 4;
        const bool is_1x1 = k == 1 && s == 1 && pt + pl + pb + pr == 0;
        INFO("batch " << batch << ": ws " << b.ws_bytes << ", whole-plane im2col " << whole);
        CHECK(int64_t(b.ws_bytes) <= (is_1x1 ? 0 : whole));
        chunked += threads == 1 && batch == 1 && int64_t(b.ws_bytes) < whole;
      }
    }
  }
  CHECK(chunked >= 4);
}
