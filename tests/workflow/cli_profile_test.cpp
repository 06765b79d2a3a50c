// frugal profile: the cost table's memory figures against the zoo's known shapes,
// the cache (hit, --no-cache, a corrupt file), and interpolated batch sizes.
#include <dirent.h>

#include "workflow_test_util.h"

namespace {

std::vector<std::string> cache_files(const ScratchDir& dir) {
  std::vector<std::string> out;
  const std::string d = dir / "cache/frugal/costs";
  if (DIR* h = opendir(d.c_str())) {
    while (dirent* e = readdir(h)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.substr(n.size() - 5) == ".json") out.push_back(d + "/" + n);
    }
    closedir(h);
  }
  return out;
}

}  // namespace

TEST_CASE("frugal profile zoo:toy_tiny: bytes are the network's tensor sizes; times positive", "[workflow]") {
  ScratchDir dir("profile");
  FrugalRun r = frugal_in(dir, "profile zoo:toy_tiny --upto 3 --repeat 2 -o c.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json c = read_json(dir / "c.json");
  REQUIRE(c["batch_max"] == 3);
  CHECK(c["step_overhead"]["batch"] == 1);
  CHECK(c["step_overhead"]["per_sample_batch"] == 3);  // the network also ran at batch_max
  CHECK(c["step_overhead"]["runs"] == 2);
  CHECK(c["step_overhead"]["passes"] == 3);
  CHECK(c["passes"] == 3);
  const auto& layers = c["layers"];
  REQUIRE(layers.size() >= 4);
  // toy_tiny: input [N,3,8,8], block1 conv -> [N,4,8,8], block2 conv stride 2 -> [N,4,4,4], fc -> [N,5].
  CHECK(layers[0]["inputs"] == nlohmann::json::array({""}));
  CHECK(layers[0]["in_bytes"] ==
        nlohmann::json::array({3 * 8 * 8 * 4, 2 * 3 * 8 * 8 * 4, 3 * 3 * 8 * 8 * 4}));
  CHECK(layers[0]["out_bytes"][0] == 4 * 8 * 8 * 4);
  CHECK(layers[1]["out_bytes"][0] == 4 * 4 * 4 * 4);
  CHECK(layers.back()["out_bytes"] == nlohmann::json::array({5 * 4, 2 * 5 * 4, 3 * 5 * 4}));
  for (size_t i = 0; i < layers.size(); ++i) {
    INFO("layer " << i);
    for (int b = 0; b < 3; ++b) {
      CHECK(layers[i]["time_s"][b].get<double>() > 0);
      CHECK(layers[i]["source"][b] == "measured");
      CHECK(layers[i]["out_bytes"][b] == layers[i]["out_bytes"][0].get<long long>() * (b + 1));
    }
    // The per-step overhead, from the network run at batch 1 (docs/COSTS.md).
    REQUIRE(layers[i].contains("step_overhead_s"));
    CHECK(layers[i]["step_overhead_s"].get<double>() >= 0);
    REQUIRE(layers[i].contains("step_overhead_per_sample_s"));
    CHECK(layers[i]["step_overhead_per_sample_s"].get<double>() >= 0);
    for (const auto& in : layers[i]["inputs"]) {  // producers come first
      if (in == "") continue;
      bool earlier = false;
      for (size_t k = 0; k < i; ++k) earlier = earlier || layers[k]["name"] == in;
      CHECK(earlier);
    }
  }
}

TEST_CASE("frugal profile: the second run is a cache hit; --no-cache and a corrupt file measure again",
          "[workflow]") {
  ScratchDir dir("cache");
  const std::string cmd = "profile zoo:toy_tiny --upto 2 --repeat 1 -o ";
  FrugalRun first = frugal_in(dir, cmd + "a.json");
  REQUIRE(first.code == 0);
  CHECK(contains(first.output, "measured in"));
  const std::vector<std::string> files = cache_files(dir);
  REQUIRE(files.size() == 1);
  CHECK(contains(first.output, files[0]));

  FrugalRun second = frugal_in(dir, cmd + "b.json");
  REQUIRE(second.code == 0);
  CHECK(contains(second.output, "cached: " + files[0]));
  CHECK(read_json(dir / "a.json") == read_json(dir / "b.json"));

  FrugalRun fresh = frugal_in(dir, cmd + "c.json --no-cache");
  REQUIRE(fresh.code == 0);
  CHECK(contains(fresh.output, "measured in"));
  CHECK(read_json(files[0])["costs"] ==
        read_json(dir / "c.json"));  // the cache now holds the new measurement

  // Other threads or batch sizes are other keys: a miss, a second file.
  FrugalRun other = frugal_in(dir, "profile zoo:toy_tiny --upto 3 --repeat 1");
  REQUIRE(other.code == 0);
  CHECK(contains(other.output, "measured in"));
  CHECK(cache_files(dir).size() == 2);

  write_text(files[0], "{\"key\": oops");
  FrugalRun corrupt = frugal_in(dir, cmd + "d.json");
  REQUIRE(corrupt.code == 0);
  CHECK(contains(corrupt.output, "warning: ignoring unusable cost cache file " + files[0]));
  CHECK(contains(corrupt.output, "measured in"));
  CHECK(read_json(files[0])["costs"]["batch_max"] == 2);  // rewritten
}

TEST_CASE("frugal profile --batches: unmeasured sizes are interpolated in per-batch time", "[workflow]") {
  ScratchDir dir("interp");
  FrugalRun r = frugal_in(dir, "profile zoo:toy_tiny --upto 5 --batches 1,3 --repeat 1 -o c.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "measured: 1,3 (the others interpolated)"));
  const nlohmann::json c = read_json(dir / "c.json");
  REQUIRE(c["batch_max"] == 5);
  for (const auto& l : c["layers"]) {
    INFO(l["name"]);
    CHECK(l["source"] ==
          nlohmann::json::array({"measured", "interpolated", "measured", "interpolated", "interpolated"}));
    const auto t = l["time_s"].get<std::vector<double>>();
    // Per-batch time T(b) = b * t[b-1]: T(2) is halfway between T(1) and T(3).
    CHECK(2 * t[1] == Approx((1 * t[0] + 3 * t[2]) / 2).epsilon(1e-9));
    // Beyond the largest measured size: the per-sample time of batch 3.
    CHECK(t[3] == Approx(t[2]).epsilon(1e-12));
    CHECK(t[4] == Approx(t[2]).epsilon(1e-12));
  }
  // The planner takes the interpolated table.
  FrugalRun p = frugal_in(dir, "plan --costs c.json --budget 1MB --batch 5");
  INFO(p.output);
  CHECK(p.code == 0);
}

TEST_CASE("frugal profile: bad arguments", "[workflow]") {
  ScratchDir dir("profbad");
  FrugalRun r = frugal_in(dir, "profile zoo:toy_tiny --upto 0");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--upto must be in 1..1024"));
  r = frugal_in(dir, "profile zoo:toy_tiny --upto 2 --batches 1,3");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "batch size 3 is outside 1..2"));
  r = frugal_in(dir, "profile zoo:toy_tiny --batches 1,x");
  CHECK(r.code == 2);
}
