// Timing gated layers at a stated activity (common/gate_activity.h; the
// profiler's --gate-activity, docs/GATING.md): which units are on, the
// synthetic input's zero channels, the CPU gated conv switching exactly
// floor(A x K) kernels on per sample whatever its gate says, the option's
// checks, and describe() and runs (which the option does not change).
#include <catch2/catch.hpp>
#include <cmath>

#include "common/gate_activity.h"
#include "common/gate_params.h"
#include "cpu_plugin.h"
#include "gated_graphs.h"
#include "graph_helpers.h"
#include "model.h"

using Catch::Matchers::Contains;
using frugal::exec::GateActivity;
using frugal::exec::on_at_activity;

TEST_CASE("gate activity: floor(a x n) units on, spread evenly", "[gating]") {
  for (int64_t n : {1, 2, 3, 7, 8, 16, 64, 384}) {
    for (double a : {0.0, 0.1, 0.25, 0.5, 0.6427, 0.75, 1.0}) {
      int64_t on = 0, first_half = 0;
      for (int64_t k = 0; k < n; ++k) {
        on += on_at_activity(k, a);
        if (k < n / 2) first_half += on_at_activity(k, a);
      }
      INFO("n " << n << " a " << a);
      CHECK(on == int64_t(std::floor(a * double(n) + 1e-9)));
      CHECK(std::abs(double(first_half) - a * double(n / 2)) <= 1.0);  // not bunched at one end
    }
  }
  std::vector<float> x(2 * 8 * 3, 1.0f);
  frugal::exec::zero_off_channels(x.data(), 2, 8, 3, 0.25);
  int64_t zero_planes = 0;
  for (size_t p = 0; p < 16; ++p)
    zero_planes += x[p * 3] == 0.0f && x[p * 3 + 1] == 0.0f && x[p * 3 + 2] == 0.0f;
  CHECK(zero_planes == 2 * 6);
}

TEST_CASE("gate activity: the option is checked", "[gating]") {
  CHECK(GateActivity::parse(nullptr).given.is_null());
  CHECK(*GateActivity::parse(0.5).of("any") == 0.5);
  const GateActivity per = GateActivity::parse({{"conv1", 0.25}});
  CHECK(*per.of("conv1") == 0.25);
  CHECK(!per.of("conv2"));
  CHECK_THROWS_WITH(GateActivity::parse(1.5), Contains("'gate_activity' must be a number in [0, 1]"));
  CHECK_THROWS_WITH(GateActivity::parse("half"),
                    Contains("'gate_activity' must be a number in [0, 1] or an object"));
  CHECK_THROWS_WITH(GateActivity::parse({{"conv1", -1}}), Contains("for layer 'conv1'"));
}

TEST_CASE("gate activity: the CPU gated conv switches floor(a x K) kernels on", "[gating][cpu]") {
  gate_test::GatedGraphOptions o;  // conv1: 8 kernels over 6 channels, 7x7
  o.kernels = o.gate_channels = 16;
  const frugal::cpu::Model m(gate_test::gated_graph(o), 1);
  const int l = m.layer_index("conv1");
  REQUIRE(l >= 0);
  REQUIRE(m.layers()[size_t(l)].gate_kernels == 16);
  const int64_t n = 3;
  std::vector<float> x = cpu_test::random_floats(size_t(n * 6 * 49), 7);
  std::vector<float> y(size_t(n * 16 * 49)), ws(m.layer_bytes(l, n).ws_bytes / 4 + 1);
  for (double a : {-1.0, 0.0, 0.25, 0.5, 1.0}) {
    frugal::cpu::KernelArgs args;
    args.in = {x.data(), nullptr, nullptr};
    args.in_dims = m.call_dims(l, n);
    args.in.resize(args.in_dims.size(), nullptr);
    args.out = y.data();
    args.out_dims = m.dims_at(m.layers()[size_t(l)].output, n);
    args.ws = ws.data();
    frugal::exec::GateStats st;
    args.gate_stats = &st;
    args.gate_activity = a;
    m.kernel(l).run(args);
    INFO("activity " << a);
    CHECK(st.kernels == n * 16);
    if (a >= 0) CHECK(st.kernels_on == n * int64_t(std::floor(a * 16)));
    // Off kernels are zero planes, whatever the gate computed.
    int64_t zero = 0;
    for (int64_t p = 0; p < n * 16; ++p) {
      bool all = true;
      for (int64_t i = 0; i < 49; ++i) all = all && y[size_t(p * 49 + i)] == 0.0f;
      zero += all;
    }
    if (a >= 0) CHECK(zero >= n * (16 - int64_t(std::floor(a * 16))));
  }
}

TEST_CASE("gate activity: the executor option is described and leaves runs alone", "[gating][cpu]") {
  gate_test::GatedGraphOptions o;
  cpu_test::Executor plain(gate_test::gated_graph(o), "{\"threads\": 1}");
  cpu_test::Executor stated(gate_test::gated_graph(o),
                            "{\"threads\": 1, \"gate_activity\": {\"conv1\": 0.25}}");
  REQUIRE(plain.ok());
  REQUIRE(stated.ok());
  CHECK(stated.describe()["gate_activity"]["conv1"] == 0.25);
  CHECK(!plain.describe().contains("gate_activity"));
  cpu_test::HostTensor x{
      "x", {4, o.channels, o.size, o.size}, cpu_test::random_floats(size_t(4 * 6 * 49), 3)};
  std::vector<cpu_test::HostTensor> a, b;
  REQUIRE(plain.run({x}, a).ok());
  REQUIRE(stated.run({x}, b).ok());
  CHECK(a[0].data == b[0].data);
  double median = 0, spread = 0;
  for (int l = 0; l < int(stated.describe()["layers"].size()); ++l)
    CHECK(stated.time_layer(l, 2, 1, median, spread).ok());
  cpu_test::Executor bad(gate_test::gated_graph(o), "{\"gate_activity\": 2}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message, Contains("'gate_activity' must be a number in [0, 1]"));
}
