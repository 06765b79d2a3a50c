// Every kernel of the Vulkan executor against the float64 reference evaluator
// (tests/reference) on small random shapes that cover the attribute space:
// Conv (groups, depthwise, strides, asymmetric pads, dilations, bias, 1-D,
// auto_pad, with BN / Relu / Clip / Sigmoid epilogues), pools (count_include_pad
// both ways, ceil_mode, dilations, global), LRN, Gemm, MatMul, Concat, Flatten,
// Reshape, Identity, Dropout, Softmax, and the binary ops with broadcasting
// (Sub and Div, which the reference lacks, against a float64 loop here). The
// validation layer runs (FRUGAL_VULKAN_VALIDATION=1) and must report nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "op_cases.h"
#include "vk_test_util.h"

using vk_test::check_against_reference;
using vk_test::GraphMaker;
using vk_test::random_inputs;

namespace {

frugal::Attribute string_attr(const std::string& name, const std::string& value) {
  frugal::Attribute a;
  a.name = name;
  a.kind = frugal::Attribute::Kind::String;
  a.s = value;
  return a;
}

// Appends BatchNormalization with random statistics (var > 0).
std::string add_bn(GraphMaker& m, const std::string& x, const std::string& name, int64_t C) {
  const std::string s = m.weight(name + ".scale", {C}, 0.5f, 1.5f), b = m.weight(name + ".bias", {C});
  const std::string mean = m.weight(name + ".mean", {C}), var = m.weight(name + ".var", {C}, 0.5f, 2.0f);
  m.node("BatchNormalization", name, {x, s, b, mean, var}, {name + ".out"}).set_attr_float("epsilon", 1e-5f);
  return name + ".out";
}

// Appends an activation: 0 none, 1 Relu, 2 Clip(-0.5, 0.7), 3 Sigmoid.
std::string add_activation(GraphMaker& m, const std::string& x, const std::string& name, int kind) {
  if (kind == 0) return x;
  if (kind == 1) m.node("Relu", name, {x}, {name + ".out"});
  if (kind == 2) {
    const std::string lo = m.floats(name + ".min", {}, {-0.5f}), hi = m.floats(name + ".max", {}, {0.7f});
    m.node("Clip", name, {x, lo, hi}, {name + ".out"});
  }
  if (kind == 3) m.node("Sigmoid", name, {x}, {name + ".out"});
  return name + ".out";
}

}  // namespace

TEST_CASE("Conv covers groups, depthwise, strides, asymmetric pads, dilations, bias and epilogues",
          "[vulkan][conv]") {
  VK_REQUIRE_DEVICE();
  std::mt19937 rng(2024);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int c = 0; c < 18; ++c) {
    const int kind = c % 3;  // 0 regular, 1 grouped, 2 depthwise
    const int64_t groups = kind == 0 ? 1 : kind == 1 ? 2 : pick(2, 4);
    const int64_t C = kind == 2 ? groups : groups * pick(1, 3);
    const int64_t M = kind == 2 ? groups * pick(1, 2) : groups * pick(1, 4);
    const int64_t kh = pick(1, 3), kw = pick(1, 3), sh = pick(1, 3), sw = pick(1, 2), dh = pick(1, 2),
                  dw = pick(1, 2);
    const int64_t pt = pick(0, 2), pl = pick(0, 2), pb = pick(0, 2), pr = pick(0, 1);
    const int64_t H = pick(std::max<int>(5, int((kh - 1) * dh + 1)), 11),
                  W = pick(std::max<int>(4, int((kw - 1) * dw + 1)), 10);
    const bool bias = c % 2 == 0;
    const int epi = c % 5;  // 0 none, 1 BN, 2 BN+Relu, 3 Clip, 4 Sigmoid
    const int64_t batch = pick(1, 3);
    INFO("case " << c << ": C=" << C << " M=" << M << " group=" << groups << " k=" << kh << "x" << kw
                 << " s=" << sh << "x" << sw << " d=" << dh << "x" << dw << " pads=" << pt << "," << pl << ","
                 << pb << "," << pr << " H=" << H << " W=" << W << " bias=" << bias << " epilogue=" << epi
                 << " batch=" << batch);
    GraphMaker m;
    m.input("x", {-1, C, H, W});
    std::vector<std::string> in = {"x", m.weight("w", {M, C / groups, kh, kw})};
    if (bias) in.push_back(m.weight("b", {M}));
    frugal::Node& conv = m.node("Conv", "conv", in, {"conv.out"});
    conv.set_attr_ints("kernel_shape", {kh, kw});
    conv.set_attr_ints("strides", {sh, sw});
    conv.set_attr_ints("dilations", {dh, dw});
    conv.set_attr_ints("pads", {pt, pl, pb, pr});
    conv.set_attr_int("group", groups);
    std::string y = "conv.out";
    if (epi == 1 || epi == 2) y = add_bn(m, y, "bn", M);
    if (epi == 2) y = add_activation(m, y, "relu", 1);
    if (epi == 3) y = add_activation(m, y, "clip", 2);
    if (epi == 4) y = add_activation(m, y, "sigmoid", 3);
    m.output(y);
    const auto r = check_against_reference(m.g, random_inputs(m.g, batch, 100 + uint64_t(c)),
                                           c % 4 == 3 ? "{\"conv\": \"dense\"}" : "");
    if (r.ran) CHECK(r.description["layers"].size() == 1);  // the epilogue ops joined the conv's layer
  }
}

// conv.comp tiles M kernels x Ho*Wo pixels (4..64 kernels x 4..128 pixels,
// 4x4 or 8x8 outputs per invocation, the reduction over C*kh*kw in steps of 8, or of "conv_step" (32 on a
// CPU device, 8, 16) where it is at least 256 long) and dwconv.comp computes 4
// outputs of a row per invocation: kernel counts, pixel counts, reductions and row widths that are not
// multiples of those, on the indirect and the dense path. 153 pixels, just above a tile of 128,
// get tiles of 64 that leave fewer slots idle.
TEST_CASE("Conv tiles: sizes off every tile edge, groups, strides, dilations, pads", "[vulkan][conv]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    int64_t C, M, H, W, k, s, d, p, groups;
  };
  const std::vector<Case> cases = {
      {1, 1, 1, 1, 1, 1, 1, 0, 1},      // a 1x1 output, one kernel, one tap
      {3, 5, 9, 7, 3, 1, 1, 1, 1},      // K = 27, M = 5, 63 pixels: every edge short
      {7, 17, 13, 11, 1, 1, 1, 0, 1},   // 1x1: K = 7 < the step, M = 17 > 16
      {20, 67, 10, 13, 3, 2, 1, 1, 1},  // M beyond 64: a second row of tiles, stride 2
      {33, 64, 17, 9, 3, 1, 2, 2, 1},   // dilation 2, pixels 17*9 = 153
      {9, 130, 5, 5, 1, 1, 1, 0, 1},    // 25 pixels, three kernel tiles
      {16, 12, 23, 19, 5, 3, 1, 2, 1},  // 5x5 stride 3
      {6, 9, 11, 13, 3, 2, 1, 1, 3},    // grouped (conv_direct.comp)
      {5, 5, 9, 11, 3, 1, 1, 1, 5},     // depthwise, rows of 11 (two invocations and a partial one)
      {4, 8, 7, 6, 3, 2, 2, 2, 4},      // depthwise, multiplier 2, stride 2, dilation 2
      {12, 12, 5, 3, 5, 1, 1, 2, 12},   // depthwise 5x5 wider than the input
      {300, 9, 4, 5, 1, 1, 1, 0, 1},    // 1x1, K = 300: long steps, the last one short (12 of 32)
      {70, 21, 6, 5, 3, 1, 1, 1, 1},    // K = 630 = 19 x 32 + 22
      {20, 150, 4, 4, 3, 1, 1, 1, 1},   // 16 pixels, M = 150: 16 kernels per invocation, 128 per tile
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& t = cases[c];
    // "": what the device picks (texel operands on CPU devices); the rest conv.comp
    for (const char* options :
         {"", "{\"conv_texel\": \"off\"}", "{\"conv\": \"dense\", \"conv_texel\": \"off\"}",
          "{\"conv_step\": 8, \"conv_texel\": \"off\"}", "{\"conv_step\": 16, \"conv_texel\": \"off\"}",
          "{\"conv_texel\": \"on\", \"winograd\": \"off\"}"}) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " k=" << t.k
                   << " s=" << t.s << " d=" << t.d << " p=" << t.p << " groups=" << t.groups << " options "
                   << options);
      GraphMaker m;
      m.input("x", {-1, t.C, t.H, t.W});
      frugal::Node& conv = m.node(
          "Conv", "conv", {"x", m.weight("w", {t.M, t.C / t.groups, t.k, t.k}), m.weight("b", {t.M})}, {"y"});
      conv.set_attr_ints("kernel_shape", {t.k, t.k});
      conv.set_attr_ints("strides", {t.s, t.s});
      conv.set_attr_ints("dilations", {t.d, t.d});
      conv.set_attr_ints("pads", {t.p, t.p, t.p, t.p});
      conv.set_attr_int("group", t.groups);
      m.output(add_activation(m, "y", "relu", 1));
      const auto r = check_against_reference(m.g, random_inputs(m.g, 2, 300 + uint64_t(c)), options);
      // With texels on, every conv here but the grouped one reads them (1x1, direct, depthwise).
      if (r.ran && std::string(options).find("\"conv_texel\": \"on\"") != std::string::npos)
        CHECK(r.description["vulkan"]["texel_layers"].get<int64_t>() ==
              (t.groups == 1 || t.groups == t.C ? 1 : 0));
    }
  }
  // The long step's depth: 32 by default on a CPU device, 8 on a GPU; other values are refused.
  GraphMaker m;
  m.input("x", {-1, 300, 3, 3});
  m.node("Conv", "conv", {"x", m.weight("w", {8, 300, 1, 1})}, {"y"}).set_attr_ints("kernel_shape", {1, 1});
  m.output("y");
  const auto r = check_against_reference(m.g, random_inputs(m.g, 1, 950), "");
  if (r.ran) {
    const bool cpu = r.description["device"].get<std::string>().find("(cpu") != std::string::npos;
    CHECK(r.description["vulkan"]["conv_step"].get<int64_t>() == (cpu ? 32 : 8));
    vk_test::Executor bad(m.g, "{\"conv_step\": 12}");
    CHECK(!bad.ok());
    CHECK_THAT(bad.created.message, Catch::Matchers::Contains("'conv_step' must be 8, 16 or 32"));
  }
}

// 1x1 convs on conv_texel.comp (option conv_texel): kernels and pixel
// quads off the invocation's 8 x 8 tile (one quad, one kernel; M < 8 takes 4
// kernels per invocation), reductions of one texel and long ones, the input
// read by quads and pixel by pixel (planes not a multiple of 4, strides),
// batches, epilogues; "off" and the default (on for CPU devices) too; 1x1
// convs with C not a multiple of 4 or padding run as direct convs (every other
// shape of those is in "Conv tiles" above).
TEST_CASE("Texel 1x1 convs: tiles off every edge, batches, epilogues, what qualifies",
          "[vulkan][conv][texel]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    int64_t C, M, H, W, s, p;
    int epi;  // 0 bias only, 1 BN + Relu, 2 Clip, 3 Sigmoid
    bool qualifies;
  };
  const std::vector<Case> cases = {
      {4, 1, 1, 4, 1, 0, 0, true},      // one quad, one kernel: a 4-kernel tile with 3 past M
      {8, 5, 3, 4, 1, 0, 1, true},      // 3 quads: the second pixel block half full
      {16, 13, 4, 5, 1, 0, 2, true},    // M = 13: a second kernel block of 5
      {300, 9, 2, 6, 1, 0, 3, true},    // a long reduction
      {64, 96, 12, 12, 1, 0, 1, true},  // many blocks, several work groups
      {8, 8, 3, 3, 1, 0, 2, true},      // 9 pixels, by pixel: the last quad has one
      {12, 13, 7, 7, 1, 0, 1, true},    // 49 pixels by pixel, M = 13
      {8, 9, 8, 7, 2, 0, 1, true},      // stride 2: 4 x 4 outputs, by pixel
      {16, 4, 9, 9, 2, 0, 0, true},     // stride 2 on an odd plane: 5 x 5 outputs
      {8, 2, 1, 1, 1, 0, 3, true},      // one pixel (squeeze-and-excite)
      {16, 8, 27, 19, 1, 0, 0, true},   // 513 pixels: 129 quads, 65 invocations, 2 work groups
      {7, 8, 4, 4, 1, 0, 0, true},      // C = 7: a direct conv (k-major kernels)
      {8, 8, 4, 4, 1, 1, 0, true},      // padded: a direct conv
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& t = cases[c];
    for (const char* options : {"", "{\"conv_texel\": \"on\"}", "{\"conv_texel\": \"off\"}"}) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " options "
                   << options);
      GraphMaker m;
      m.input("x", {-1, t.C, t.H, t.W});
      m.conv("x", "y", t.C, t.M, 1, t.s, 1, {t.p, t.p, t.p, t.p});
      std::string y = "y";
      if (t.epi == 1) y = add_activation(m, add_bn(m, y, "bn", t.M), "relu", 1);
      if (t.epi >= 2) y = add_activation(m, y, "act", t.epi);
      m.output(y);
      const auto r = check_against_reference(m.g, random_inputs(m.g, 3, 1200 + uint64_t(c)), options);
      if (!r.ran) continue;
      const bool cpu = r.description["device"].get<std::string>().find("(cpu") != std::string::npos;
      const std::string mode = r.description["vulkan"]["conv_texel"].get<std::string>();
      CHECK(mode == (*options ? (std::string(options).find("\"on\"") != std::string::npos ? "on" : "off")
                              : (cpu ? "on" : "off")));
      CHECK(r.description["vulkan"]["texel_layers"].get<int64_t>() == (t.qualifies && mode == "on" ? 1 : 0));
    }
  }
  GraphMaker m;
  m.input("x", {-1, 4, 2, 2});
  m.conv("x", "y", 4, 4, 1, 1, 1, {0, 0, 0, 0});
  m.output("y");
  vk_test::Executor bad(m.g, "{\"conv_texel\": true}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message, Catch::Matchers::Contains("'conv_texel' must be \"auto\""));
}

// Winograd F(2x2, 3x3) and F(4x4, 3x3) (winograd.comp, the products on
// conv.comp): outputs not a multiple of the tile (2 or 4) in either direction,
// a single tile, pads 0, 1 and asymmetric ones (the tile's window reaching
// past every edge), kernel and channel counts off conv.comp's tile edges,
// batches run sample after sample through the workspace, and epilogues; each
// against the float64 reference, with "auto" (what the executor picks) too,
// and the products on conv.comp and on texels (option conv_texel).
TEST_CASE("Winograd convs: tiles off every edge, pads, batches, epilogues", "[vulkan][conv][winograd]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    int64_t C, M, H, W;
    std::vector<int64_t> pads;  // top, left, bottom, right
    int epi;                    // 0 bias only, 1 BN + Relu, 2 Clip
  };
  const std::vector<Case> cases = {
      {1, 1, 3, 3, {0, 0, 0, 0}, 0},      // one output pixel: one tile, mostly outside
      {3, 5, 9, 7, {1, 1, 1, 1}, 1},      // 9 x 7 outputs: partial tiles on both sides
      {16, 24, 6, 6, {1, 1, 1, 1}, 2},    // exactly 3 x 3 (F23) tiles, 1.5 x 1.5 of F43's
      {17, 67, 13, 11, {1, 0, 2, 1}, 1},  // asymmetric pads, M beyond 64, C odd
      {33, 16, 14, 14, {1, 1, 1, 1}, 0},  // 14 x 14 (resnet's layer3 shape, scaled down)
      {20, 130, 5, 9, {2, 2, 0, 0}, 2},   // pads only top and left, three kernel tiles
      {40, 36, 23, 5, {0, 1, 0, 1}, 1},   // tall and narrow, no vertical pad
      {260, 6, 7, 7, {1, 1, 1, 1}, 1},    // C = 260: long steps (8 x 32 + 4); M = 6, padded to 8 in U
      {24, 132, 7, 7, {1, 1, 1, 1}, 2},   // 7 x 7 in F(2x2): 16 tiles, 16 kernels per invocation
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& t = cases[c];
    for (const char* options :
         {"{\"winograd\": \"f23\"}", "{\"winograd\": \"f43\"}", "",
          "{\"winograd\": \"f23\", \"conv_step\": 8}", "{\"winograd\": \"f23\", \"conv_texel\": \"on\"}",
          "{\"winograd\": \"f43\", \"conv_texel\": \"on\"}",
          "{\"winograd\": \"f43\", \"conv_texel\": \"off\"}"}) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " options "
                   << options);
      GraphMaker m;
      m.input("x", {-1, t.C, t.H, t.W});
      frugal::Node& conv =
          m.node("Conv", "conv", {"x", m.weight("w", {t.M, t.C, 3, 3}), m.weight("b", {t.M})}, {"y"});
      conv.set_attr_ints("kernel_shape", {3, 3});
      conv.set_attr_ints("pads", t.pads);
      std::string y = "y";
      if (t.epi == 1) y = add_activation(m, add_bn(m, y, "bn", t.M), "relu", 1);
      if (t.epi == 2) y = add_activation(m, y, "clip", 2);
      m.output(y);
      const auto r = check_against_reference(m.g, random_inputs(m.g, 3, 500 + uint64_t(c)), options);
      if (r.ran) {
        CHECK(r.description["layers"].size() == 1);
        CHECK(r.description["vulkan"]["winograd"].get<std::string>() ==
              (*options ? std::string(options).substr(14, 3) : "auto"));
        // The products on texels (conv_texel.comp with k-major weight sets) where asked.
        if (std::string(options).find("\"conv_texel\": \"on\"") != std::string::npos)
          CHECK(r.description["vulkan"]["texel_layers"].get<int64_t>() == 1);
      }
    }
  }
}

// Split-K (conv.comp with its reduction cut into slices, splitk.comp adding
// them with the epilogue; a Winograd conv's products summed by its output
// transform): forced on this device with {"min_groups": 4096}, since lavapipe,
// a CPU device, never splits by default. Reductions cut into 2 to 9 slices of
// whole steps with a short last one, 1x1 and 3x3, strides, dilations, pads,
// BN + Relu and Clip epilogues, batches of 3 (each sample's partial sums apart),
// on the indirect and the dense path and as Winograd F(2x2) and F(4x4).
TEST_CASE("Split-K convs: slices off the step, batches, epilogues, Winograd", "[vulkan][conv][splitk]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    int64_t C, M, H, W, k, s, d, p;
    int epi;  // 0 bias only, 1 BN + Relu, 2 Clip
  };
  const std::vector<Case> cases = {
      {16, 24, 9, 7, 3, 1, 1, 1, 1},    // K = 144: 2 slices
      {33, 67, 10, 13, 3, 2, 1, 1, 2},  // K = 297: 4 slices, the last 57 long; M beyond 64
      {130, 5, 3, 3, 1, 1, 1, 0, 0},    // 1x1, K = 130: slices of 72 and 58
      {64, 130, 5, 5, 3, 1, 2, 2, 1},   // K = 576, dilation 2: 9 slices; three kernel tiles
      {600, 17, 2, 3, 1, 1, 1, 0, 2},   // 1x1, K = 600: 9 slices of 72, the last 24
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& t = cases[c];
    // (conv_texel off: its 1x1 convs would otherwise read texels, which leave the reduction whole)
    for (const char* options :
         {"{\"min_groups\": 4096, \"winograd\": \"off\", \"conv_texel\": \"off\"}",
          "{\"min_groups\": 4096, \"winograd\": \"off\", \"conv_texel\": \"off\", \"conv\": \"dense\"}",
          "{\"min_groups\": 4096, \"winograd\": \"off\", \"conv_texel\": \"off\", \"conv_step\": 8}"}) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " k=" << t.k
                   << " options " << options);
      GraphMaker m;
      m.input("x", {-1, t.C, t.H, t.W});
      m.conv("x", "y", t.C, t.M, t.k, t.s, t.d, {t.p, t.p, t.p, t.p});
      std::string y = "y";
      if (t.epi == 1) y = add_activation(m, add_bn(m, y, "bn", t.M), "relu", 1);
      if (t.epi == 2) y = add_activation(m, y, "clip", 2);
      m.output(y);
      const auto r = check_against_reference(m.g, random_inputs(m.g, 3, 700 + uint64_t(c)), options);
      if (r.ran) CHECK(r.description["vulkan"]["split_layers"].get<int64_t>() == 1);
    }
  }
  const std::vector<Case> wino = {
      {128, 20, 6, 7, 3, 1, 1, 1, 1},    // C = 128: 2 slices
      {200, 67, 13, 11, 3, 1, 1, 1, 2},  // C = 200: 3 slices, the last 56 long
  };
  for (size_t c = 0; c < wino.size(); ++c) {
    const Case& t = wino[c];
    for (const char* options :
         {"{\"min_groups\": 4096, \"winograd\": \"f23\"}", "{\"min_groups\": 4096, \"winograd\": \"f43\"}"}) {
      INFO("winograd case " << c << ": C=" << t.C << " M=" << t.M << " options " << options);
      GraphMaker m;
      m.input("x", {-1, t.C, t.H, t.W});
      frugal::Node& conv =
          m.node("Conv", "conv", {"x", m.weight("w", {t.M, t.C, 3, 3}), m.weight("b", {t.M})}, {"y"});
      conv.set_attr_ints("kernel_shape", {3, 3});
      conv.set_attr_ints("pads", {1, 1, 1, 1});
      std::string y = "y";
      if (t.epi == 1) y = add_activation(m, add_bn(m, y, "bn", t.M), "relu", 1);
      if (t.epi == 2) y = add_activation(m, y, "clip", 2);
      m.output(y);
      const auto r = check_against_reference(m.g, random_inputs(m.g, 3, 800 + uint64_t(c)), options);
      if (r.ran) CHECK(r.description["vulkan"]["split_layers"].get<int64_t>() == 1);
    }
  }
  // By default a CPU device (lavapipe) leaves every reduction whole.
  GraphMaker m;
  m.input("x", {-1, 64, 5, 5});
  frugal::Node& conv = m.node("Conv", "conv", {"x", m.weight("w", {8, 64, 3, 3})}, {"y"});
  conv.set_attr_ints("kernel_shape", {3, 3});
  conv.set_attr_ints("strides", {2, 2});
  m.output("y");
  const auto r = check_against_reference(m.g, random_inputs(m.g, 1, 900), "");
  if (r.ran && r.description["device"].get<std::string>().find("(cpu") != std::string::npos) {
    CHECK(r.description["vulkan"]["min_groups"].get<int64_t>() == 0);
    CHECK(r.description["vulkan"]["split_layers"].get<int64_t>() == 0);
  }
}

TEST_CASE("Conv in 1-D and with auto_pad", "[vulkan][conv]") {
  VK_REQUIRE_DEVICE();
  {
    GraphMaker m;
    m.input("x", {-1, 3, 17});
    frugal::Node& conv = m.node("Conv", "conv1d", {"x", m.weight("w", {4, 3, 3}), m.weight("b", {4})}, {"y"});
    conv.set_attr_ints("strides", {2});
    conv.set_attr_ints("pads", {1, 2});
    conv.set_attr_ints("dilations", {2});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 7));
  }
  for (const char* pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    INFO(pad);
    GraphMaker m;
    m.input("x", {-1, 2, 9, 8});
    frugal::Node& conv = m.node("Conv", "conv", {"x", m.weight("w", {3, 2, 4, 3})}, {"y"});
    conv.attributes.push_back(string_attr("auto_pad", pad));
    conv.set_attr_ints("strides", {2, 3});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 8));
  }
}

TEST_CASE("MaxPool and AveragePool: pads, strides, dilations, ceil_mode, count_include_pad, 1-D, global",
          "[vulkan][pool]") {
  VK_REQUIRE_DEVICE();
  std::mt19937 rng(77);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int c = 0; c < 12; ++c) {
    const bool max = c % 2 == 0;
    const int64_t k0 = pick(1, 3), k1 = pick(2, 3), s0 = pick(1, 3), s1 = pick(1, 2);
    const int64_t d0 = max ? pick(1, 2) : 1, d1 = max ? pick(1, 2) : 1;
    const int64_t p0 = pick(0, k0 - 1), p1 = pick(0, k1 - 1), p2 = pick(0, k0 - 1), p3 = pick(0, k1 - 1);
    const bool ceil = c % 3 == 1, include_pad = c % 4 == 1;
    const int64_t H = pick(6, 10), W = pick(6, 10);
    INFO("case " << c << (max ? " max" : " avg") << " k=" << k0 << "x" << k1 << " s=" << s0 << "x" << s1
                 << " d=" << d0 << "x" << d1 << " pads=" << p0 << "," << p1 << "," << p2 << "," << p3
                 << " ceil=" << ceil << " include_pad=" << include_pad);
    GraphMaker m;
    m.input("x", {-1, 3, H, W});
    frugal::Node& n = m.node(max ? "MaxPool" : "AveragePool", "pool", {"x"}, {"y"});
    n.set_attr_ints("kernel_shape", {k0, k1});
    n.set_attr_ints("strides", {s0, s1});
    n.set_attr_ints("pads", {p0, p1, p2, p3});
    if (max) n.set_attr_ints("dilations", {d0, d1});
    if (ceil) n.set_attr_int("ceil_mode", 1);
    if (!max) n.set_attr_int("count_include_pad", include_pad ? 1 : 0);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 200 + uint64_t(c)));
  }
  {  // 1-D average pooling with padding counted
    GraphMaker m;
    m.input("x", {-1, 2, 11});
    frugal::Node& n = m.node("AveragePool", "pool1d", {"x"}, {"y"});
    n.set_attr_ints("kernel_shape", {3});
    n.set_attr_ints("strides", {2});
    n.set_attr_ints("pads", {1, 1});
    n.set_attr_int("count_include_pad", 1);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 3, 9));
  }
  {  // global average pooling after a conv
    GraphMaker m;
    m.input("x", {-1, 3, 7, 5});
    m.node("Conv", "conv", {"x", m.weight("w", {6, 3, 1, 1})}, {"c"});
    m.node("GlobalAveragePool", "gap", {"c"}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 10));
  }
}

TEST_CASE("GlobalMaxPool equals the maximum of each plane", "[vulkan][pool]") {
  VK_REQUIRE_DEVICE();
  GraphMaker m;
  m.input("x", {-1, 4, 6, 5});
  m.node("GlobalMaxPool", "gmp", {"x"}, {"y"});
  m.output("y");
  const auto in = random_inputs(m.g, 3, 11);
  vk_test::Executor ex(m.g);
  REQUIRE(ex.ok());
  const frugal::RefTensor& x = in.at("x");
  std::vector<vk_test::HostTensor> inputs = {{"x", x.dims, std::vector<float>(x.data.begin(), x.data.end())}},
                                   outputs;
  REQUIRE(ex.run(inputs, outputs).ok());
  REQUIRE(outputs[0].dims == std::vector<int64_t>{3, 4, 1, 1});
  for (int64_t p = 0; p < 12; ++p) {
    double want = -1e300;
    for (int64_t i = 0; i < 30; ++i) want = std::max(want, x.data[size_t(p * 30 + i)]);
    CHECK(outputs[0].data[size_t(p)] == float(want));
  }
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("LRN across channels", "[vulkan][lrn]") {
  VK_REQUIRE_DEVICE();
  for (int64_t size : {1, 3, 4, 5}) {
    INFO("size " << size);
    GraphMaker m;
    m.input("x", {-1, 6, 4, 3});
    frugal::Node& n = m.node("LRN", "lrn", {"x"}, {"y"});
    n.set_attr_int("size", size);
    n.set_attr_float("alpha", 0.02f);
    n.set_attr_float("beta", 0.75f);
    n.set_attr_float("bias", 1.5f);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 20 + uint64_t(size)));
  }
}

TEST_CASE("Gemm: transposes, alpha, beta, bias shapes, bundled BatchNorm and Relu", "[vulkan][gemm]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    bool trans_b;
    int c_kind;  // 0 none, 1 [N] (epilogue), 2 [1, N], 3 scalar [1]
    float alpha, beta;
    bool bn_relu;
  };
  const Case cases[] = {{true, 1, 1.0f, 1.0f, false},
                        {false, 0, 0.5f, 1.0f, false},
                        {true, 2, 1.5f, -0.5f, true},
                        {false, 3, 1.0f, 2.0f, false},
                        {true, 1, 1.0f, 1.0f, true}};
  int i = 0;
  for (const Case& c : cases) {
    INFO("case " << i);
    const int64_t K = 37, N = 19;
    GraphMaker m;
    m.input("x", {-1, K});
    std::vector<std::string> in = {"x", c.trans_b ? m.weight("w", {N, K}) : m.weight("w", {K, N})};
    if (c.c_kind == 1) in.push_back(m.weight("c", {N}));
    if (c.c_kind == 2) in.push_back(m.weight("c", {1, N}));
    if (c.c_kind == 3) in.push_back(m.weight("c", {1}));
    frugal::Node& g = m.node("Gemm", "gemm", in, {"g"});
    g.set_attr_int("transB", c.trans_b ? 1 : 0);
    g.set_attr_float("alpha", c.alpha);
    g.set_attr_float("beta", c.beta);
    std::string y = "g";
    if (c.bn_relu) y = add_activation(m, add_bn(m, y, "bn", N), "relu", 1);
    m.output(y);
    const auto r = check_against_reference(m.g, random_inputs(m.g, 5, 30 + uint64_t(i)));
    if (r.ran) CHECK(r.description["layers"].size() == 1);
    ++i;
  }
  {  // transA and a full [M, N] C: a model with fixed shapes (not batched)
    GraphMaker m;
    m.input("a", {13, 6});
    frugal::Node& g = m.node("Gemm", "gemm", {"a", m.weight("b", {13, 9}), m.weight("c", {6, 9})}, {"y"});
    g.set_attr_int("transA", 1);
    g.set_attr_float("beta", 0.25f);
    m.output("y");
    const auto r = check_against_reference(m.g, random_inputs(m.g, 1, 40));
    if (r.ran) CHECK(r.description["batched"] == false);
  }
  {  // A and C at run time
    GraphMaker m;
    m.input("a", {-1, 8});
    m.input("c", {-1, 5});
    m.node("Gemm", "gemm", {"a", m.weight("b", {8, 5}), "c"}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 4, 41));
  }
}

TEST_CASE("Gemm: few rows (one column per invocation) and many rows (tiles)", "[vulkan][gemm]") {
  VK_REQUIRE_DEVICE();
  // Batches 1-8 run on matmul_rows.spv (4 rows per invocation: 3 and 6 leave a
  // block part empty), 9 and 21 on the 16 x 16 tiles; 70 columns span two
  // column groups of 64, the second one part empty.
  for (int64_t batch : {1, 3, 6, 8, 9, 21}) {
    INFO("batch " << batch);
    const int64_t K = 45, N = 70;
    GraphMaker m;
    m.input("x", {-1, K});
    frugal::Node& g = m.node("Gemm", "gemm", {"x", m.weight("w", {N, K}), m.weight("c", {N})}, {"g"});
    g.set_attr_int("transB", 1);
    m.output(add_activation(m, "g", "relu", 1));
    check_against_reference(m.g, random_inputs(m.g, batch, 60 + uint64_t(batch)));
  }
}

// matmul_rows_k.spv (a work group per column, the reduction spread over its
// 64 invocations and added in shared memory), which a GPU uses where
// matmul_rows.spv has too few work groups: forced with {"min_groups": 4096};
// K = 200 and 131 (not a multiple of 64), B stored both ways, bias, Relu, rows
// 1-8 (a block of 4 part empty), a folded MatMul with 3 rows per sample.
TEST_CASE("Gemm: few rows with the reduction spread over a work group", "[vulkan][gemm][splitk]") {
  VK_REQUIRE_DEVICE();
  const char* options = "{\"min_groups\": 4096}";
  for (int64_t batch : {1, 3, 8}) {
    for (int64_t transB : {0, 1}) {
      INFO("batch " << batch << " transB " << transB);
      const int64_t K = transB ? 200 : 131, N = 70;
      GraphMaker m;
      m.input("x", {-1, K});
      const std::vector<int64_t> wd = transB ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      frugal::Node& g = m.node("Gemm", "gemm", {"x", m.weight("w", wd), m.weight("c", {N})}, {"g"});
      g.set_attr_int("transB", transB);
      m.output(add_activation(m, "g", "relu", 1));
      const auto r = check_against_reference(m.g, random_inputs(m.g, batch, 90 + uint64_t(batch)), options);
      if (r.ran) CHECK(r.description["vulkan"]["split_layers"].get<int64_t>() == 1);
    }
  }
  GraphMaker m;
  m.input("x", {-1, 3, 150});
  m.node("MatMul", "mm", {"x", m.weight("w", {150, 9})}, {"y"});
  m.output("y");
  const auto r = check_against_reference(m.g, random_inputs(m.g, 2, 99), options);
  if (r.ran) CHECK(r.description["vulkan"]["split_layers"].get<int64_t>() == 1);
}

TEST_CASE("MatMul: folded batch dims, batched operands, broadcasting, vectors", "[vulkan][matmul]") {
  VK_REQUIRE_DEVICE();
  {  // [N, M, K] @ [K, N2]: rows fold
    INFO("folded rows");
    GraphMaker m;
    m.input("x", {-1, 5, 12});
    m.node("MatMul", "mm", {"x", m.weight("w", {12, 7})}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 3, 50));
  }
  {  // two activations with the batch on axis 0
    INFO("two activations");
    GraphMaker m;
    m.input("a", {-1, 4, 6});
    m.input("b", {-1, 6, 3});
    m.node("MatMul", "mm", {"a", "b"}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 3, 51));
  }
  {  // broadcasting of a constant over a batch dim, fixed shapes
    INFO("broadcast constant");
    GraphMaker m;
    m.input("a", {2, 3, 4, 5});
    m.node("MatMul", "mm", {"a", m.weight("b", {3, 5, 6})}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 1, 52));
  }
  {  // vector times matrix, fixed shapes
    INFO("vector");
    GraphMaker m;
    m.input("v", {7});
    m.node("MatMul", "mm", {"v", m.weight("b", {7, 4})}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 1, 53));
  }
}

TEST_CASE("Concat, Flatten, Reshape, Identity and Dropout move data exactly", "[vulkan][shape]") {
  VK_REQUIRE_DEVICE();
  {  // Concat on channels of three activations, then on the last axis
    GraphMaker m;
    m.input("a", {-1, 2, 3, 4});
    m.input("b", {-1, 3, 3, 4});
    m.node("Relu", "r", {"a"}, {"ra"});
    m.node("Concat", "cat1", {"ra", "b", "a"}, {"c1"}).set_attr_int("axis", 1);
    m.node("Concat", "cat3", {"c1", "c1"}, {"c2"}).set_attr_int("axis", -1);
    m.node("Flatten", "flat", {"c2"}, {"f"});
    m.node("Reshape", "reshape", {"f", m.ints("shape", {0, 7, -1})}, {"r2"});
    m.node("Identity", "id", {"r2"}, {"i"});
    m.node("Dropout", "drop", {"i"}, {"y"});
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 3, 60));
  }
  {  // Concat on axis 0 with a constant part (fixed shapes)
    GraphMaker m;
    m.input("a", {2, 5});
    m.node("Concat", "cat0", {"a", m.weight("k", {3, 5})}, {"y"}).set_attr_int("axis", 0);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 1, 61));
  }
}

TEST_CASE("Softmax along each axis, opset 13 and the 2-D view of opset 11", "[vulkan][softmax]") {
  VK_REQUIRE_DEVICE();
  for (int64_t axis : {-1, 1, 2}) {
    INFO("opset 13 axis " << axis);
    GraphMaker m;
    m.input("x", {-1, 3, 4, 5});
    m.node("Softmax", "sm", {"x"}, {"y"}).set_attr_int("axis", axis);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 70 + uint64_t(axis + 2)));
  }
  {
    GraphMaker m(11);
    m.input("x", {-1, 3, 4});
    m.node("Softmax", "sm", {"x"}, {"y"}).set_attr_int("axis", 1);
    m.output("y");
    check_against_reference(m.g, random_inputs(m.g, 2, 75));
  }
  {  // axis 0 mixes samples: the model is not batched
    GraphMaker m;
    m.input("x", {4, 3});
    m.node("Softmax", "sm", {"x"}, {"y"}).set_attr_int("axis", 0);
    m.output("y");
    const auto r = check_against_reference(m.g, random_inputs(m.g, 1, 76));
    if (r.ran) CHECK(r.description["batched"] == false);
  }
}

TEST_CASE("BatchNormalization, Relu, Clip and Sigmoid as layer heads", "[vulkan][pointwise]") {
  VK_REQUIRE_DEVICE();
  GraphMaker m;
  m.input("x", {-1, 5, 3, 2});
  std::string y = add_bn(m, "x", "bn", 5);  // head: BN, with Relu bundled
  y = add_activation(m, y, "relu", 1);
  m.node("Sigmoid", "sig_head", {"x"}, {"s"});  // head: Sigmoid
  const std::string lo = m.floats("lo", {}, {-0.25f});
  m.node("Clip", "clip_head", {"x", lo}, {"c"});  // head: Clip with only a lower bound
  m.node("Add", "sum1", {y, "s"}, {"t"});
  m.node("Add", "sum2", {"t", "c"}, {"out"});
  m.output("out");
  check_against_reference(m.g, random_inputs(m.g, 3, 80));
}

TEST_CASE("Add and Mul broadcast against the reference", "[vulkan][binary]") {
  VK_REQUIRE_DEVICE();
  GraphMaker m;
  m.input("x", {-1, 4, 3, 5});
  m.input("y", {-1, 1, 3, 5});
  m.node("Add", "add_act", {"x", "y"}, {"a"});                        // broadcast over channels
  m.node("Mul", "mul_chan", {"a", m.weight("s", {4, 1, 1})}, {"b"});  // per-channel constant
  m.node("Add", "add_scalar", {"b", m.weight("k", {1})}, {"c"});      // scalar
  m.node("Mul", "mul_row", {m.weight("r", {5}), "c"}, {"d"});  // constant first, broadcast on the last axis
  m.output("d");
  check_against_reference(m.g, random_inputs(m.g, 2, 90));
}

TEST_CASE("Sub and Div broadcast against a float64 loop", "[vulkan][binary]") {
  VK_REQUIRE_DEVICE();
  for (const char* op : {"Sub", "Div"}) {
    INFO(op);
    GraphMaker m;
    m.input("x", {-1, 3, 4});
    const std::vector<float> kv = {1.5f, -2.0f, 0.75f, 3.0f};
    m.node(op, "op", {"x", m.floats("k", {4}, kv)}, {"y"});
    m.node(op, "op2", {m.floats("k2", {3, 1}, {2.0f, -1.0f, 0.5f}), "y"}, {"z"});
    m.output("z");
    const auto in = random_inputs(m.g, 2, 95);
    const frugal::RefTensor& x = in.at("x");
    vk_test::Executor ex(m.g);
    REQUIRE(ex.ok());
    std::vector<vk_test::HostTensor> inputs = {{"x", x.dims,
                                                std::vector<float>(x.data.begin(), x.data.end())}},
                                     outputs;
    const vk_test::Status st = ex.run(inputs, outputs);
    INFO(st.message);
    REQUIRE(st.ok());
    const double k2[3] = {2.0, -1.0, 0.5};
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          const double xv = x.data[size_t((s * 3 + i) * 4 + j)];
          const double yv = std::string(op) == "Sub" ? xv - kv[size_t(j)] : xv / kv[size_t(j)];
          const double want = std::string(op) == "Sub" ? k2[i] - yv : k2[i] / yv;
          const float got = outputs[0].data[size_t((s * 3 + i) * 4 + j)];
          CHECK(std::fabs(got - want) <= 1e-5 + 1e-5 * std::fabs(want));
        }
    CHECK(ex.validation_errors() == 0);
  }
}

TEST_CASE("A residual network with branches, concatenation and a classifier", "[vulkan][network]") {
  VK_REQUIRE_DEVICE();
  GraphMaker m;
  m.input("x", {-1, 3, 16, 16});
  auto conv = [&](const std::string& x, const std::string& name, int64_t cin, int64_t cout, int64_t k,
                  int64_t stride) {
    frugal::Node& n =
        m.node("Conv", name, {x, m.weight(name + ".w", {cout, cin, k, k}, -0.3f, 0.3f)}, {name + ".y"});
    n.set_attr_ints("strides", {stride, stride});
    n.set_attr_ints("pads", {k / 2, k / 2, k / 2, k / 2});
    return add_activation(m, add_bn(m, name + ".y", name + ".bn", cout), name + ".relu", 1);
  };
  std::string a = conv("x", "stem", 3, 8, 3, 2);
  frugal::Node& mp = m.node("MaxPool", "pool", {a}, {"p"});
  mp.set_attr_ints("kernel_shape", {3, 3});
  mp.set_attr_ints("strides", {2, 2});
  mp.set_attr_ints("pads", {1, 1, 1, 1});
  std::string b = conv("p", "b1", 8, 8, 3, 1);
  b = conv(b, "b2", 8, 8, 3, 1);
  m.node("Add", "res", {b, "p"}, {"r"});
  std::string l = conv("r", "left", 8, 4, 1, 1), r = conv("r", "right", 8, 6, 3, 1);
  m.node("Concat", "cat", {l, r}, {"c"}).set_attr_int("axis", 1);
  m.node("GlobalAveragePool", "gap", {"c"}, {"g"});
  m.node("Flatten", "flat", {"g"}, {"f"});
  frugal::Node& fc =
      m.node("Gemm", "fc", {"f", m.weight("fc.w", {10, 10}), m.weight("fc.b", {10})}, {"logits"});
  fc.set_attr_int("transB", 1);
  m.node("Softmax", "prob", {"logits"}, {"y"}).set_attr_int("axis", 1);
  m.output("y");
  for (int64_t batch : {1, 4}) {
    INFO("batch " << batch);
    check_against_reference(m.g, random_inputs(m.g, batch, 300 + uint64_t(batch)), "", 1e-5, 1e-3);
  }
}

TEST_CASE("the ops added through the op registry match the float64 reference", "[vulkan][reference]") {
  VK_REQUIRE_DEVICE();
  for (const exec_test::OpCase& c : exec_test::registry_op_cases()) {
    INFO(c.name);
    CHECK(exec_test::check_op_case(c, vk_test::api(), [](exec_test::PluginExecutor& ex) {
            const uint64_t errors = ex.describe()["vulkan"]["validation_errors"].get<uint64_t>();
            return errors == 0 ? std::string() : std::to_string(errors) + " validation errors";
          }) == "");
  }
}
