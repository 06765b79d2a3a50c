// The profiler's pieces: interpolation of unmeasured batch sizes (by hand), the
// batch list, and the on-disk cache (round trip, key mismatch, corrupt file).
#include "profiler/batch_fill.h"
#include "profiler/cost_cache.h"
#include "profiler/profiler.h"
#include "util/error.h"
#include "workflow_test_util.h"

using namespace frugal;

TEST_CASE("fill_batch_times: linear in per-batch time inside, proportional outside", "[workflow][profiler]") {
  // Measured T(2) = 4, T(4) = 6. Below 2: per-sample 2 -> T(1) = 2. T(3) = 5.
  // Above 4: per-sample 1.5 -> T(5) = 7.5, T(6) = 9.
  const std::vector<double> t = fill_batch_times({{2, 4.0}, {4, 6.0}}, 6);
  REQUIRE(t.size() == 6);
  const std::vector<double> want = {2.0, 4.0, 5.0, 6.0, 7.5, 9.0};
  for (size_t i = 0; i < want.size(); ++i) CHECK(t[i] == Approx(want[i]));
  // One measurement: the same per-sample time everywhere.
  const std::vector<double> one = fill_batch_times({{3, 0.3}}, 4);
  for (int b = 1; b <= 4; ++b) CHECK(one[size_t(b - 1)] == Approx(0.1 * b));
  // Measured values pass through untouched, including a batch above batch_max being ignored.
  CHECK(fill_batch_times({{1, 0.25}}, 1) == std::vector<double>{0.25});
}

TEST_CASE("fill_batch_times and measured_batch_list refuse bad input", "[workflow][profiler]") {
  CHECK_THROWS_WITH(fill_batch_times({}, 3), Catch::Contains("no measured batch size"));
  CHECK_THROWS_WITH(fill_batch_times({{0, 1.0}}, 3), Catch::Contains("batch 0"));
  CHECK_THROWS_WITH(fill_batch_times({{1, -1.0}}, 3), Catch::Contains("bad measurement"));
  CHECK_THROWS_WITH(fill_batch_times({{1, 1.0}}, 0), Catch::Contains("batch_max must be >= 1"));

  ProfileOptions o;
  o.batch_max = 4;
  CHECK(measured_batch_list(o) == std::vector<int>{1, 2, 3, 4});
  o.batches = {4, 1, 4, 2};
  CHECK(measured_batch_list(o) == std::vector<int>{1, 2, 4});
  o.batches = {5};
  CHECK_THROWS_WITH(measured_batch_list(o), Catch::Contains("batch size 5 is outside 1..4"));
  o.batch_max = 0;
  CHECK_THROWS_WITH(measured_batch_list(o), Catch::Contains("largest batch size"));
}

TEST_CASE("CostCache: round trip, other key, corrupt file, unwritable folder", "[workflow][profiler]") {
  ScratchDir dir("cachelib");
  CostCache cache(dir / "costs");
  const nlohmann::json key = {{"model_hash", "abc"}, {"batch_max", 2}};
  const nlohmann::json costs = {{"batch_max", 2}, {"layers", nlohmann::json::array({{{"name", "a"}}})}};
  std::string warn;
  CHECK(!cache.load(key, &warn));
  CHECK(warn.empty());
  cache.store(key, costs, &warn);
  CHECK(warn.empty());
  REQUIRE(file_exists(cache.path_for(key)));
  auto hit = cache.load(key, &warn);
  REQUIRE(hit);
  CHECK(*hit == costs);

  // Same file name, different key inside: a miss, not someone else's table.
  nlohmann::json other = key;
  other["batch_max"] = 3;
  write_text(cache.path_for(other), nlohmann::json({{"key", key}, {"costs", costs}}).dump());
  CHECK(!cache.load(other, &warn));
  CHECK(warn.empty());

  write_text(cache.path_for(key), "{\"key\": [1,");
  CHECK(!cache.load(key, &warn));
  CHECK(contains(warn, "warning: ignoring unusable cost cache file " + cache.path_for(key)));

  warn.clear();
  write_text(dir / "file", "x");
  CostCache blocked(dir / "file/costs");  // a file where a folder should be
  blocked.store(key, costs, &warn);
  CHECK(contains(warn, "cost cache not written"));

  CHECK(fnv1a64_hex("") == "cbf29ce484222325");  // the FNV-1a 64 offset basis
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");  // published test vector
}
