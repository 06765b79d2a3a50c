// Gated zoo networks end to end on Vulkan through the CLI (docs/GATING.md):
// `frugal run zoo:NAME@gate0.5 --executor vulkan` gives the CPU executor's
// output (which agrees with ONNX Runtime, docs/GATING.md) and the same
// per-layer activities and effective MACs, with the validation layer silent;
// with texel operands (gated convs, gated consumers with their active weights
// gathered: squeezenet1_1's expand3x3 convs as Winograd convs, its 1x1s
// direct; consumers reading listed channels) and without (conv.comp).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "frugal/model/onnx_import.h"
#include "reference.h"
#include "run_frugal.h"
#include "tensor/npy.h"
#include "vk_test_util.h"

namespace {

// The gates' entries of two run reports: the same layers, switches and effective MACs.
void check_gates_agree(const nlohmann::json& cpu, const nlohmann::json& vk) {
  REQUIRE(cpu.size() == vk.size());
  REQUIRE(!cpu.empty());
  for (size_t k = 0; k < cpu.size(); ++k) {
    INFO("layer " << cpu[k]["layer"]);
    CHECK(vk[k]["layer"] == cpu[k]["layer"]);
    CHECK(vk[k]["skips_off_channels"] == cpu[k]["skips_off_channels"]);
    if (cpu[k]["gated"] == true) CHECK(vk[k]["kernels_on"] == cpu[k]["kernels_on"]);
    if (cpu[k]["effective_macs"] != cpu[k]["dense_macs"] || vk[k]["effective_macs"] != vk[k]["dense_macs"])
      CHECK(vk[k]["effective_macs"] == cpu[k]["effective_macs"]);
  }
}

}  // namespace

TEST_CASE("vulkan gated: gated zoo networks through frugal run equal the cpu executor",
          "[vulkan][gating][cli]") {
  VK_REQUIRE_DEVICE();
  for (const char* model : {"zoo:toy_tiny@gate0.5", "zoo:squeezenet1_1@gate0.5"}) {
    INFO(model);
    nlohmann::json reports[3];
    frugal::Tensor outs[3];
    const char* executors[3] = {"cpu", "vulkan", "vulkan"};
    const char* envs[3] = {"", "FRUGAL_VULKAN_CONV_TEXEL=on", "FRUGAL_VULKAN_CONV_TEXEL=off"};
    for (int e = 0; e < 3; ++e) {
      const std::string y = scratch_file(std::string("gated_") + std::to_string(e) + ".npy", "");
      const FrugalRun r = run_frugal(std::string("run ") + model + " --executor " + executors[e] +
                                         " --batch 2 --repeat 1 --quiet --json -o " + sh_quote(y),
                                     envs[e]);
      REQUIRE(r.code == 0);
      reports[e] = nlohmann::json::parse(r.output)["report"];
      outs[e] = frugal::load_npy(y);
      std::remove(y.c_str());
    }
    for (int e = 1; e < 3; ++e) {
      INFO(envs[e]);
      CHECK(reports[e]["validation_errors"] == 0);
      REQUIRE(outs[0].dims == outs[e].dims);
      double diff = 0, scale = 1e-6;
      for (size_t i = 0; i < outs[0].data.size(); ++i) {
        diff = std::max(diff, double(std::fabs(outs[0].data[i] - outs[e].data[i])));
        scale = std::max(scale, double(std::fabs(outs[0].data[i])));
      }
      CHECK(diff <= 1e-4 * scale);
      check_gates_agree(reports[0]["gates"], reports[e]["gates"]);
    }
  }
}

// `frugal workflow` on a gated zoo network with the Vulkan executor: under a
// budget below the whole batch's peak, FBS runs every layer (the gated ones
// included) in smaller batches; every plan peaks where predicted and its
// output equals the gated network's float64 reference.
TEST_CASE("vulkan gated: frugal workflow on a gated zoo network, plans that split gated layers",
          "[vulkan][gating][cli]") {
  VK_REQUIRE_DEVICE();
  const std::string onnx = scratch_file("wf_gated.onnx", ""), report = scratch_file("wf_gated.json", ""),
                    prefix = scratch_file("wf_gated", "");
  REQUIRE(run_frugal("zoo toy_tiny@gate0.5 -o " + sh_quote(onnx)).code == 0);
  const FrugalRun info = run_frugal("info " + sh_quote(onnx) + " --json");
  REQUIRE(info.code == 0);
  CHECK(!nlohmann::json::parse(info.output)["gates"].empty());
  const FrugalRun r =
      run_frugal("workflow " + sh_quote(onnx) + " --executor vulkan --batch 4 --repeat 1 --report " +
                 sh_quote(report) + " --save " + sh_quote(prefix));
  REQUIRE(r.code == 0);
  std::ifstream f(report);
  const nlohmann::json w = nlohmann::json::parse(f);
  CHECK(w["fbs_plan"]["fbs_batch"].get<int>() < 4);  // every layer's batch split
  const frugal::Tensor x = frugal::load_npy(prefix + "_input.npy");
  std::map<std::string, frugal::RefTensor> in;
  in["input"] = frugal::RefTensor{x.dims, std::vector<double>(x.data.begin(), x.data.end())};
  const frugal::RefTensor want = frugal::reference_run(frugal::load_onnx_file(onnx), in).at("output");
  double scale = 1e-6;
  for (double v : want.data) scale = std::max(scale, std::abs(v));
  int plans = 0;
  for (const char* plan : {"vbs", "fbs", "greedy"}) {
    INFO(plan);
    if (!w.contains(plan)) continue;
    ++plans;
    CHECK(w[plan]["measured_peak_bytes"] == w[plan]["predicted_peak_bytes"]);
    const frugal::Tensor y = frugal::load_npy(prefix + "_" + plan + ".npy");
    CHECK(vk_test::max_diff(std::vector<float>(y.data.begin(), y.data.end()), want) <= 1e-4 * scale);
    std::remove((prefix + "_" + plan + ".npy").c_str());
  }
  CHECK(plans >= 2);
  for (const std::string& p : {onnx, report, prefix, prefix + "_input.npy"}) std::remove(p.c_str());
}
