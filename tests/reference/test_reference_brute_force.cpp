// The reference evaluator on cases the ONNX node tests do not cover (grouped,
// dilated, strided convs with asymmetric pads; count_include_pad with ceil mode;
// 4-D broadcasting), each checked against a brute-force recomputation that
// materialises the padding instead of clipping loop bounds. Plus its errors.
#include <catch2/catch.hpp>

#include "frugal/error.h"
#include "reference.h"

using namespace frugal;

namespace {

Attribute ints(const std::string& n, std::vector<int64_t> v) {
  Attribute a;
  a.name = n;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

Attribute one_int(const std::string& n, int64_t v) {
  Attribute a;
  a.name = n;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

// A graph with one node whose inputs are all graph inputs.
Graph single_node(const std::string& op, const std::vector<std::string>& inputs,
                  std::vector<Attribute> attrs) {
  Graph g;
  Node n;
  n.name = "node0";
  n.op_type = op;
  n.inputs = inputs;
  n.outputs = {"y"};
  n.attributes = std::move(attrs);
  g.nodes.push_back(n);
  g.inputs = inputs;
  g.outputs = {"y"};
  for (const std::string& in : inputs) g.tensors[in].name = in;
  g.tensors["y"].name = "y";
  return g;
}

// Zero-pads a [N,C,H,W] tensor: top/left/bottom/right.
RefTensor pad_nchw(const RefTensor& x, int64_t t, int64_t l, int64_t b, int64_t r, double fill) {
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  RefTensor y;
  y.dims = {N, C, H + t + b, W + l + r};
  y.data.assign(static_cast<size_t>(N * C * (H + t + b) * (W + l + r)), fill);
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        y.data[static_cast<size_t>((p * (H + t + b) + h + t) * (W + l + r) + w + l)] =
            x.data[static_cast<size_t>((p * H + h) * W + w)];
  return y;
}

}  // namespace

TEST_CASE("reference Conv matches brute force with groups, dilation, stride and asymmetric pads",
          "[reference]") {
  const int64_t N = 2, C = 6, H = 9, W = 11, M = 4, G = 2, KH = 3, KW = 2, SH = 2, SW = 1, DH = 2, DW = 3;
  const int64_t pt = 1, pl = 2, pb = 3, pr = 0;
  const RefTensor x = random_ref_tensor({N, C, H, W}, 1);
  const RefTensor w = random_ref_tensor({M, C / G, KH, KW}, 2);
  const RefTensor b = random_ref_tensor({M}, 3);
  Graph g = single_node("Conv", {"x", "w", "b"},
                        {one_int("group", G), ints("strides", {SH, SW}), ints("dilations", {DH, DW}),
                         ints("pads", {pt, pl, pb, pr})});
  const RefTensor y = reference_run(g, {{"x", x}, {"w", w}, {"b", b}}).at("y");

  const RefTensor xp = pad_nchw(x, pt, pl, pb, pr, 0.0);
  const int64_t HP = xp.dims[2], WP = xp.dims[3];
  const int64_t OH = (HP - DH * (KH - 1) - 1) / SH + 1, OW = (WP - DW * (KW - 1) - 1) / SW + 1;
  REQUIRE(y.dims == std::vector<int64_t>{N, M, OH, OW});
  double worst = 0.0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b.data[static_cast<size_t>(m)];
          const int64_t g0 = m / (M / G) * (C / G);
          for (int64_t c = 0; c < C / G; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw)
                s += w.data[static_cast<size_t>(((m * (C / G) + c) * KH + kh) * KW + kw)] *
                     xp.data[static_cast<size_t>(((n * C + g0 + c) * HP + oh * SH + kh * DH) * WP + ow * SW +
                                                 kw * DW)];
          worst =
              std::max(worst, std::fabs(s - y.data[static_cast<size_t>(((n * M + m) * OH + oh) * OW + ow)]));
        }
  CHECK(worst < 1e-12);
}

TEST_CASE("reference AveragePool counts padding only inside the padded input in ceil mode", "[reference]") {
  // 5x5, kernel 3, stride 2, pads 1, ceil: output 3x3; the last window sticks out
  // past the padding, where nothing is counted even with count_include_pad.
  const RefTensor x = random_ref_tensor({1, 2, 5, 5}, 7);
  for (int include : {0, 1}) {
    Graph g = single_node("AveragePool", {"x"},
                          {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}),
                           one_int("ceil_mode", 1), one_int("count_include_pad", include)});
    const RefTensor y = reference_run(g, {{"x", x}}).at("y");
    REQUIRE(y.dims == std::vector<int64_t>{1, 2, 3, 3});
    const RefTensor xp = pad_nchw(x, 1, 1, 1, 1, 0.0);  // 7x7
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t oh = 0; oh < 3; ++oh)
        for (int64_t ow = 0; ow < 3; ++ow) {
          double s = 0.0;
          int n_real = 0, n_padded = 0;
          for (int64_t h = oh * 2; h < oh * 2 + 3; ++h)
            for (int64_t w = ow * 2; w < ow * 2 + 3; ++w) {
              if (h >= 7 || w >= 7) continue;  // beyond the padded input
              ++n_padded;
              s += xp.data[static_cast<size_t>((c * 7 + h) * 7 + w)];
              if (h >= 1 && h <= 5 && w >= 1 && w <= 5) ++n_real;
            }
          const double expected = s / (include ? n_padded : n_real);
          CHECK(y.data[static_cast<size_t>((c * 3 + oh) * 3 + ow)] == Approx(expected).epsilon(1e-12));
        }
  }
}

TEST_CASE("reference Add and Mul broadcast like numpy", "[reference]") {
  const RefTensor a = random_ref_tensor({2, 3, 4, 5}, 11);
  const RefTensor b = random_ref_tensor({3, 1, 5}, 12);
  for (const char* op : {"Add", "Mul"}) {
    Graph g = single_node(op, {"a", "b"}, {});
    const RefTensor y = reference_run(g, {{"a", a}, {"b", b}}).at("y");
    REQUIRE(y.dims == a.dims);
    double worst = 0.0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k)
          for (int64_t l = 0; l < 5; ++l) {
            const double av = a.data[static_cast<size_t>(((i * 3 + j) * 4 + k) * 5 + l)];
            const double bv = b.data[static_cast<size_t>(j * 5 + l)];
            const double e = std::string(op) == "Add" ? av + bv : av * bv;
            worst =
                std::max(worst, std::fabs(e - y.data[static_cast<size_t>(((i * 3 + j) * 4 + k) * 5 + l)]));
          }
    CHECK(worst == 0.0);
  }
}

TEST_CASE("reference evaluator errors name the node and the problem", "[reference]") {
  const RefTensor x = random_ref_tensor({1, 2, 3, 3}, 1);
  SECTION("unsupported op") {
    Graph g = single_node("Tanh", {"x"}, {});
    CHECK_THROWS_WITH(reference_run(g, {{"x", x}}), Catch::Contains("node0") && Catch::Contains("Tanh"));
  }
  SECTION("missing graph input") {
    Graph g = single_node("Relu", {"x"}, {});
    CHECK_THROWS_WITH(reference_run(g, {}), Catch::Contains("'x'"));
  }
  SECTION("shapes that cannot broadcast") {
    Graph g = single_node("Add", {"a", "b"}, {});
    CHECK_THROWS_WITH(
        reference_run(g, {{"a", random_ref_tensor({2, 3}, 1)}, {"b", random_ref_tensor({4}, 2)}}),
        Catch::Contains("node0") && Catch::Contains("broadcast"));
  }
  SECTION("conv weight that does not match the groups") {
    Graph g = single_node("Conv", {"x", "w"}, {one_int("group", 2)});
    CHECK_THROWS_AS(reference_run(g, {{"x", x}, {"w", random_ref_tensor({4, 2, 1, 1}, 3)}}), Error);
  }
}
