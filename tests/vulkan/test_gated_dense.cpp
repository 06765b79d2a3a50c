// A gated model (docs/GATING.md) on the Vulkan executor, which runs its gates
// densely (every node as written): equal to the float64 reference at
// thresholds 0 (every kernel on), 0.5 and 1 (every kernel off), with the
// validation layer reporting nothing.
#include <catch2/catch.hpp>

#include "gated_graphs.h"
#include "vk_test_util.h"

TEST_CASE("vulkan: gated models run densely and equal the reference", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  for (bool pool_first : {false, true}) {
    for (float t : {0.0f, 0.5f, 1.0f}) {
      gate_test::GatedGraphOptions o;
      o.pool_first = pool_first;
      o.threshold = t;
      INFO("pool_first " << pool_first << " threshold " << t);
      const frugal::Graph g = gate_test::gated_graph(o);
      std::map<std::string, frugal::RefTensor> in;
      in["x"] = frugal::random_ref_tensor({3, o.channels, o.size, o.size}, 17);
      const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
      vk_test::Executor ex(g);
      REQUIRE(ex.ok());
      std::vector<vk_test::HostTensor> out;
      REQUIRE(ex.run(vk_test::host_inputs(in), out).ok());
      REQUIRE(out.size() == 1);
      double scale = 1e-3;
      for (double v : want.data) scale = std::max(scale, std::abs(v));
      CHECK(vk_test::max_diff(out[0].data, want) <= 1e-4 * scale);
      CHECK(ex.validation_errors() == 0);
    }
  }
}
