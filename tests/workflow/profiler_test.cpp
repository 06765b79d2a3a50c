// The profiler's pieces: interpolation of unmeasured batch sizes (by hand), the
// batch list, and the on-disk cache (round trip, key mismatch, corrupt file).
#include "profiler/profiler.h"

#include <algorithm>
#include <cmath>

#include "frugal/error.h"
#include "profiler/batch_fill.h"
#include "profiler/cost_cache.h"
#include "profiler/cost_fit.h"
#include "profiler/cost_numbers.h"
#include "profiler/json_file.h"
#include "profiler/json_path.h"
#include "profiler/move_price.h"
#include "profiler/profile_passes.h"
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

  CHECK(fnv1a64_hex("") == "cbf29ce484222325");   // the FNV-1a 64 offset basis
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");  // published test vector
}

TEST_CASE("fit_batch_time: exact on a line, constrained to non-negative parts", "[workflow][profiler]") {
  // T(b) = 2 ms + 1 ms * b, measured exactly: recovered exactly.
  frugal::BatchTimeModel m = frugal::fit_batch_time({{1, 0.003}, {2, 0.004}, {4, 0.006}, {8, 0.010}});
  CHECK(m.fixed_s == Approx(0.002));
  CHECK(m.per_sample_s == Approx(0.001));
  // The line through (1, 1) and (2, 3) has fixed -1: the constrained fit has
  // fixed 0 and slope sum(w b T) / sum(w b^2) with w = 1 / T^2.
  m = frugal::fit_batch_time({{1, 1.0}, {2, 3.0}});
  CHECK(m.fixed_s == 0);
  CHECK(m.per_sample_s == Approx((1.0 + 6.0 / 9) / (1.0 + 4.0 / 9)));
  // Falling per-batch time (slope -1): slope 0, fixed the weighted mean.
  m = frugal::fit_batch_time({{1, 2.0}, {2, 1.0}});
  CHECK(m.per_sample_s == 0);
  CHECK(m.fixed_s == Approx((2.0 / 4 + 1.0) / (1.0 / 4 + 1.0)));
  // One size: proportional to the batch.
  m = frugal::fit_batch_time({{4, 2.0}});
  CHECK(m.fixed_s == 0);
  CHECK(m.per_sample_s == Approx(0.5));
  CHECK_THROWS_WITH(frugal::fit_batch_time({}), Catch::Contains("no measured"));
  CHECK_THROWS_WITH(frugal::fit_batch_time({{3, 0.0}}), Catch::Contains("batch 3"));
}

TEST_CASE("fit_batch_time: a knee where the per-sample time rises is found, and only there",
          "[workflow][profiler]") {
  // T(b) = 0.5 + b + 3 max(0, b - 4), measured exactly at b = 1..12: knee and parts recovered.
  std::map<int, double> measured;
  for (int b = 1; b <= 12; ++b) measured[b] = 0.5 + b + 3.0 * std::max(0, b - 4);
  frugal::BatchTimeModel m = frugal::fit_batch_time(measured);
  CHECK(m.spill_from == 4);
  CHECK(m.spill_s == Approx(3.0));
  CHECK(m.fixed_s == Approx(0.5));
  CHECK(m.per_sample_s == Approx(1.0));
  CHECK(m.batch_seconds(12) == Approx(0.5 + 12 + 24));
  // A line with +-2% alternating noise: no knee pays for its parameters.
  measured.clear();
  for (int b = 1; b <= 12; ++b) measured[b] = (0.5 + b) * (b % 2 ? 1.02 : 0.98);
  m = frugal::fit_batch_time(measured);
  CHECK(m.spill_from == 0);
  CHECK(m.spill_s == 0);
  // An exact line: no knee.
  measured.clear();
  for (int b = 1; b <= 12; ++b) measured[b] = 0.25 + 2.0 * b;
  m = frugal::fit_batch_time(measured);
  CHECK(m.spill_from == 0);
  CHECK(m.per_sample_s == Approx(2.0));
  // Fewer than 2 sizes below and 3 above any knee: a line, however bent the data.
  m = frugal::fit_batch_time({{1, 1.0}, {2, 2.0}, {3, 6.0}, {4, 10.0}});
  CHECK(m.spill_from == 0);
  // Falling per-sample time is not a knee (the part stays >= 0): none.
  measured.clear();
  for (int b = 1; b <= 12; ++b) measured[b] = 1.0 + 3.0 * b - 1.0 * std::max(0, b - 6);
  m = frugal::fit_batch_time(measured);
  CHECK(m.spill_from == 0);
}

TEST_CASE("fit_cost_times: the knee is in time_model and in the fitted times", "[workflow][profiler]") {
  nlohmann::json costs = {{"batch_max", 12},
                          {"layers", {{{"name", "add"}, {"time_s", nlohmann::json::array()}}}}};
  for (int b = 1; b <= 12; ++b)
    costs["layers"][0]["time_s"].push_back((0.1 + 0.2 * b + 0.6 * std::max(0, b - 3)) / b);
  const nlohmann::json fitted = frugal::fit_cost_times(costs);
  const nlohmann::json& M = fitted["layers"][0]["time_model"];
  CHECK(M["spill_from"] == 3);
  CHECK(M["spill_s"].get<double>() == Approx(0.6));
  for (int b = 1; b <= 12; ++b)
    CHECK(fitted["layers"][0]["time_s"][b - 1].get<double>() ==
          Approx(costs["layers"][0]["time_s"][b - 1].get<double>()));
}

TEST_CASE("fit_batch_time: a last round with idle threads is priced per idle slot", "[workflow][profiler]") {
  CHECK(frugal::idle_slots(1, 2) == 0);  // below the thread count: split another way
  CHECK(frugal::idle_slots(3, 2) == 1);
  CHECK(frugal::idle_slots(4, 2) == 0);
  CHECK(frugal::idle_slots(5, 4) == 3);
  CHECK(frugal::idle_slots(7, 1) == 0);
  // T(b) = 1 + 2 b + 1.5 idle(b) at 2 threads, measured exactly at b = 1..8: recovered exactly.
  std::map<int, double> measured;
  for (int b = 1; b <= 8; ++b) measured[b] = 1.0 + 2.0 * b + 1.5 * frugal::idle_slots(b, 2);
  frugal::BatchTimeModel m = frugal::fit_batch_time(measured, 2);
  CHECK(m.fixed_s == Approx(1.0));
  CHECK(m.per_sample_s == Approx(2.0));
  CHECK(m.idle_slot_s == Approx(1.5));
  CHECK(m.batch_seconds(3) == Approx(1.0 + 6.0 + 1.5));
  // Without the idle part (one thread) the same sizes give a line: odd batches over-priced less
  // than even ones are under-priced; the fit is not exact.
  m = frugal::fit_batch_time(measured, 1);
  CHECK(m.idle_slot_s == 0);
  CHECK(m.batch_seconds(3) < 1.0 + 6.0 + 1.5);
  // Idle slots that make things faster are not a model: the part stays at 0.
  measured.clear();
  for (int b = 1; b <= 8; ++b) measured[b] = 1.0 + 2.0 * b - 0.5 * frugal::idle_slots(b, 2);
  m = frugal::fit_batch_time(measured, 2);
  CHECK(m.idle_slot_s == 0);
  CHECK(m.fixed_s >= 0);
  CHECK(m.per_sample_s > 0);
  CHECK_THROWS_WITH(frugal::fit_batch_time({{1, 1.0}}, 0), Catch::Contains("threads"));
}

TEST_CASE("fit_cost_times: the table's thread count sets the idle-slot part", "[workflow][profiler]") {
  // Per-sample times of T(b) = 2 b + 2 idle(b) at 2 threads, b = 1..6.
  nlohmann::json costs = {{"batch_max", 6}, {"threads", 2}, {"layers", nlohmann::json::array()}};
  nlohmann::json times = nlohmann::json::array();
  for (int b = 1; b <= 6; ++b) times.push_back((2.0 * b + 2.0 * frugal::idle_slots(b, 2)) / b);
  costs["layers"].push_back({{"name", "conv"}, {"time_s", times}});
  nlohmann::json fitted = frugal::fit_cost_times(costs);
  const nlohmann::json& L = fitted["layers"][0];
  CHECK(L["time_model"]["threads"] == 2);
  CHECK(L["time_model"]["idle_slot_s"].get<double>() == Approx(2.0));
  for (int b = 1; b <= 6; ++b)
    CHECK(L["time_s"][b - 1].get<double>() == Approx(times[size_t(b - 1)].get<double>()));
  costs.erase("threads");  // no thread count (a GPU's table): a line
  fitted = frugal::fit_cost_times(costs);
  CHECK(fitted["layers"][0]["time_model"]["threads"] == 1);
  CHECK(fitted["layers"][0]["time_model"]["idle_slot_s"] == 0);
}

TEST_CASE("split_step_overhead: a line through the excess at batch 1 and at batch B",
          "[workflow][profiler]") {
  // excess(n) = 2 + 0.5 n: 2.5 at batch 1, 8 at batch 12.
  frugal::StepOverhead o = frugal::split_step_overhead(2.5, 8.0, 12);
  CHECK(o.fixed_s == Approx(2.0));
  CHECK(o.per_sample_s == Approx(0.5));
  // Less excess at B than at 1: no per-sample part.
  o = frugal::split_step_overhead(2.5, 1.0, 12);
  CHECK(o.fixed_s == Approx(2.5));
  CHECK(o.per_sample_s == 0);
  // Steep growth: the fixed part stops at 0.
  o = frugal::split_step_overhead(1.0, 23.0, 12);
  CHECK(o.per_sample_s == Approx(2.0));
  CHECK(o.fixed_s == 0);
  // Negative excess (the layer ran faster in the plan): nothing.
  o = frugal::split_step_overhead(-1.0, -3.0, 12);
  CHECK(o.fixed_s == 0);
  CHECK(o.per_sample_s == 0);
  o = frugal::split_step_overhead(3.0, 99.0, 1);  // B = 1: only the fixed part
  CHECK(o.fixed_s == 3.0);
  CHECK(o.per_sample_s == 0);
}

TEST_CASE("fit_cost_times: fits measured entries only, keeps the raw times, names a layer it cannot fit",
          "[workflow][profiler]") {
  // Per-sample times of T(b) = 4 + 2 b with noise at b = 2; b = 3 interpolated (ignored).
  nlohmann::json costs = {{"batch_max", 4},
                          {"layers",
                           {{{"name", "conv"},
                             {"time_s", {6.0, 4.4, 99.0, 3.0}},
                             {"source", {"measured", "measured", "interpolated", "measured"}}}}}};
  const nlohmann::json fitted = frugal::fit_cost_times(costs);
  const nlohmann::json& L = fitted["layers"][0];
  CHECK(L["measured_time_s"] == costs["layers"][0]["time_s"]);
  CHECK(L["source"] == nlohmann::json({"fitted", "fitted", "fitted", "fitted"}));
  const double a = L["time_model"]["fixed_s"], c = L["time_model"]["per_sample_s"];
  CHECK(a == Approx(4.0).epsilon(0.1));
  CHECK(c == Approx(2.0).epsilon(0.1));
  for (int b = 1; b <= 4; ++b) CHECK(L["time_s"][b - 1].get<double>() == Approx((a + c * b) / b));
  costs["layers"][0]["source"] = {"interpolated", "interpolated", "interpolated", "interpolated"};
  CHECK_THROWS_WITH(frugal::fit_cost_times(costs),
                    Catch::Contains("layer 0 'conv'") && Catch::Contains("no measured"));
}

TEST_CASE("parse_json_text: a syntax error or an overflowing number names the line and the value's path",
          "[workflow][profiler]") {
  const std::string text =
      "{\"batch_max\": 2,\n \"layers\": [{\"name\": \"a\",\n  \"time_s\": [0.1, 1e400]}]}";
  CHECK_THROWS_WITH(
      parse_json_text(text, "c.json"),
      Catch::Contains("c.json: layers[0].time_s[1] = 1e400 is beyond the range of a double (line 3)"));
  JsonErrorPlace at = locate_json_error(text);
  CHECK(at.found);
  CHECK(at.line == 3);
  CHECK(at.path == "layers[0].time_s[1]");
  CHECK(at.token == "1e400");

  at = locate_json_error("[1, 2, {\"x\": [3, -1e999]}]");
  CHECK(at.path == "[2].x[1]");
  CHECK_THROWS_WITH(parse_json_text("{\"a\": {\"b\": [1, NaN]}}", "t.json"),
                    Catch::Contains("t.json: not valid JSON (line 1, a.b[1])") && Catch::Contains("NaN"));
  CHECK(!locate_json_error("{\"a\": [1, 2]}").found);

  CHECK(first_null_in_array(nlohmann::json::parse(R"({"a": {"b": [1, null]}, "c": null})")) == "a.b[1]");
  CHECK(first_null_in_array(nlohmann::json::parse(R"({"c": null, "d": [[], {"e": [0]}]})")).empty());
}

TEST_CASE(
    "check_cost_numbers: null, NaN, infinite, negative or text refused naming origin, layer, field, batch",
    "[workflow][profiler]") {
  const nlohmann::json good = {{"layers",
                                {{{"name", "conv"},
                                  {"time_s", {0.5, 0.3}},
                                  {"in_bytes", {4, 8}},
                                  {"out_bytes", {4, 8}},
                                  {"ws_bytes", {0, 0}}}}}};
  CHECK_NOTHROW(check_cost_numbers(good, "c.json"));
  auto error_with = [&](const char* field, size_t k, const nlohmann::json& v) {
    nlohmann::json c = good;
    c["layers"][0][field][k] = v;
    try {
      check_cost_numbers(c, "c.json");
    } catch (const frugal::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_with("time_s", 1, nullptr) ==
        "c.json: layer 0 'conv' time_s[1] (batch 2) is null, not a number (a measurement that failed?)");
  CHECK(error_with("time_s", 0, std::nan("")) == "c.json: layer 0 'conv' time_s[0] (batch 1) is NaN");
  CHECK(error_with("ws_bytes", 1, HUGE_VAL) == "c.json: layer 0 'conv' ws_bytes[1] (batch 2) is infinite");
  CHECK(error_with("out_bytes", 0, -4) == "c.json: layer 0 'conv' out_bytes[0] (batch 1) is negative (-4)");
  CHECK(error_with("in_bytes", 1, "8") ==
        "c.json: layer 0 'conv' in_bytes[1] (batch 2) is not a number (\"8\")");
  CHECK_THROWS_WITH(check_cost_numbers(nlohmann::json::object(), "c.json"),
                    Catch::Contains("c.json: not a cost table"));
}

TEST_CASE("a cost table with a null is refused by the cache (measured again) and by the fit",
          "[workflow][profiler]") {
  ScratchDir dir("cachenull");
  CostCache cache(dir / "costs");
  const nlohmann::json key = {{"model_hash", "abc"}, {"batch_max", 2}};
  nlohmann::json costs = {{"batch_max", 2}, {"layers", {{{"name", "a"}, {"time_s", {0.5, nullptr}}}}}};
  std::string warn;
  cache.store(key, costs, &warn);
  CHECK(!cache.load(key, &warn));
  CHECK(contains(warn, "ignoring unusable cost cache file " + cache.path_for(key)));
  CHECK(contains(warn, "layer 0 'a' time_s[1] (batch 2) is null"));
  // Before, the fit skipped the null and filled the entry from the others.
  costs["layers"][0]["source"] = {"measured", "measured"};
  CHECK_THROWS_WITH(frugal::fit_cost_times(costs),
                    Catch::Contains("fit: layer 0 'a' time_s[1] (batch 2) is null"));
}

TEST_CASE("profile passes: repeats shared out, the fastest pass kept per entry", "[workflow][profiler]") {
  CHECK(repeats_per_pass(5, 3) == 2);  // ceil(5 / 3)
  CHECK(repeats_per_pass(6, 3) == 2);
  CHECK(repeats_per_pass(1, 3) == 1);  // never below one run
  CHECK(repeats_per_pass(5, 1) == 5);
  CHECK_THROWS_WITH(repeats_per_pass(5, 0), Catch::Contains("passes must be >= 1, got 0"));
  // Entry 0: a slow stretch in pass 1 (2.0 ms), fast in passes 2 and 3;
  // entry 1: fast in pass 1 only. Each keeps its own fastest pass, spread included.
  FastestPass best(2);
  CHECK(best.median(0) == -1);
  best.add(0, 0.0020, 0.0001);
  best.add(1, 0.0010, 0.0002);
  best.add(0, 0.0011, 0.0003);
  best.add(1, 0.0015, 0.0004);
  best.add(0, 0.0012, 0.0005);
  best.add(1, 0.0016, 0.0006);
  CHECK(best.median(0) == 0.0011);
  CHECK(best.spread(0) == 0.0003);
  CHECK(best.median(1) == 0.0010);
  CHECK(best.spread(1) == 0.0002);
  CHECK_THROWS(best.add(2, 0.001, 0));
}

TEST_CASE("move_s_per_byte: log-interpolated between the measured arena sizes, ends held",
          "[workflow][profiler]") {
  const nlohmann::json costs = {
      {"move", {{"arena_bytes", {1 << 20, 4 << 20}}, {"s_per_byte", {1e-10, 3e-10}}}}};
  CHECK(move_s_per_byte(costs, 1 << 20) == Approx(1e-10));
  CHECK(move_s_per_byte(costs, 2 << 20) == Approx(2e-10));  // halfway in log(size)
  CHECK(move_s_per_byte(costs, 4 << 20) == Approx(3e-10));
  CHECK(move_s_per_byte(costs, 1000) == Approx(1e-10));
  CHECK(move_s_per_byte(costs, uint64_t{1} << 40) == Approx(3e-10));
  CHECK(move_s_per_byte(nlohmann::json::object(), 1 << 20) == -1);
  nlohmann::json bad = costs;
  bad["move"]["s_per_byte"] = {1e-10};
  CHECK(move_s_per_byte(bad, 1 << 20) == -1);  // sizes and prices disagree
  bad = costs;
  bad["move"]["arena_bytes"] = {4 << 20, 1 << 20};
  CHECK(move_s_per_byte(bad, 1 << 20) == -1);  // not ascending
}
