// (c) The arena and plan execution on small networks with Add and Concat joins:
// the peak the arena measures equals the peak the memory model predicts (whole
// batch and random valid plans); a budget one byte below it is refused before
// anything runs, with the numbers in the message; plan runs give the same
// outputs as the whole-batch run; the arena itself keeps chunk contents through
// compaction and fits any set of chunks whose sizes sum to its capacity.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "arena.h"
#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "memory_model.h"
#include "reference.h"
#include "zoo/zoo.h"

using cpu_test::HostTensor;
using cpu_test::MemoryModel;

namespace {

bool all_nan(const std::vector<HostTensor>& outs) {
  for (const HostTensor& t : outs)
    for (float x : t.data)
      if (!std::isnan(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("describe() bundles BN and activations into the conv layer and names each layer's inputs",
          "[cpu][plan]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_branched", 3), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  CHECK(d["device"] == "cpu (OpenBLAS 1 thread)");
  CHECK(d["batched"] == true);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& L : d["layers"]) by_name[L["name"].get<std::string>()] = L;
  REQUIRE(by_name.count("stem.conv"));
  CHECK(by_name["stem.conv"]["ops"] == nlohmann::json({"Conv", "BatchNormalization", "Relu"}));
  CHECK(by_name["stem.conv"]["inputs"] == nlohmann::json({""}));
  // The residual Add joins conv2's layer (conv+bn) and the stem's output.
  REQUIRE(by_name.count("res.add"));
  CHECK(by_name["res.add"]["inputs"] == nlohmann::json({"res.conv2", "stem.conv"}));
  // A BN after a Concat is a layer of its own (its producer is no Conv/Gemm/BN).
  REQUIRE(by_name.count("join.bn"));
  CHECK(by_name["join.bn"]["ops"] == nlohmann::json({"BatchNormalization"}));
  CHECK(by_name["join"]["inputs"] == nlohmann::json({"branch_a.conv", "branch_b.conv"}));
  // MACs of stem.conv: 8 x 16 x 16 outputs x 3 x 3 x 3.
  CHECK(by_name["stem.conv"]["macs_per_sample"] == 8 * 16 * 16 * 27);
  // Bytes: in = 3x16x16 floats, out = 8x16x16 floats, ws = im2col of 27 x 256 floats, per sample.
  const int stem = 0;
  REQUIRE(d["layers"][stem]["name"] == "stem.conv");
  const frugal_layer_bytes b = ex.layer_bytes(stem, 4);
  CHECK(b.in_bytes == 4u * 3 * 16 * 16 * 4);
  CHECK(b.out_bytes == 4u * 8 * 16 * 16 * 4);
  CHECK(b.ws_bytes == 27u * 256 * 4);
}

TEST_CASE("zoo toys through the plugin match the float64 reference", "[cpu][plan]") {
  for (const char* name : {"toy_tiny", "toy_linear", "toy_branched", "toy_allops"}) {
    const frugal::Graph g = frugal::build_zoo_model(name, 7);
    cpu_test::Executor ex(g, "{\"threads\": 2}");
    INFO(name << ": " << ex.created.message);
    REQUIRE(ex.ok());
    const std::vector<HostTensor> in = exec_test::random_inputs(ex.describe(), 3, 99);
    std::vector<HostTensor> out;
    REQUIRE(ex.run(in, out).ok());
    frugal::RefValues ref_in;
    ref_in[in[0].name] =
        frugal::RefTensor{in[0].dims, std::vector<double>(in[0].data.begin(), in[0].data.end())};
    const frugal::RefValues want = frugal::reference_run(g, ref_in);
    const frugal::RefTensor& r = want.at(out[0].name);
    REQUIRE(r.dims == out[0].dims);
    double worst = 0;
    for (size_t i = 0; i < r.data.size(); ++i)
      worst = std::max(worst,
                       std::fabs(double(out[0].data[i]) - r.data[i]) / (1e-4 + 1e-3 * std::fabs(r.data[i])));
    CHECK(worst <= 1.0);
  }
}

TEST_CASE("measured peak equals the predicted peak; one byte less is refused before running", "[cpu][plan]") {
  for (const char* name : {"toy_branched", "toy_allops"}) {
    cpu_test::Executor ex(frugal::build_zoo_model(name, 5), "{\"threads\": 2}");
    REQUIRE(ex.ok());
    MemoryModel mm(ex);
    const frugal_placement_extension& placement = exec_test::placement_extension("cpu");
    std::mt19937_64 rng(42);
    int compacted = 0;
    for (int64_t batch : {1, 2, 3, 5}) {
      const std::vector<HostTensor> in = exec_test::random_inputs(mm.description(), batch, uint64_t(batch));

      // Whole-batch run, in an arena of exactly its predicted peak.
      const uint64_t whole_peak = mm.peak(mm.whole_batch(batch), batch);
      REQUIRE(ex.set_budget(whole_peak).ok());
      std::vector<HostTensor> base;
      nlohmann::json report;
      const cpu_test::Status st = ex.run(in, base, nullptr, &report);
      INFO(name << " batch " << batch << ": " << st.message);
      REQUIRE(st.ok());
      CHECK(report["peak_bytes"].get<uint64_t>() == whole_peak);
      CHECK(report["predicted_peak_bytes"].get<uint64_t>() == whole_peak);

      // One byte less: refused, nothing written, the message has both numbers.
      REQUIRE(ex.set_budget(whole_peak - 1).ok());
      std::vector<HostTensor> none;
      const cpu_test::Status refused = ex.run(in, none);
      CHECK(refused.code == FRUGAL_ERR_BUDGET);
      CHECK_THAT(refused.message, Catch::Contains("(" + std::to_string(whole_peak) + " bytes)") &&
                                      Catch::Contains("budget is") &&
                                      Catch::Contains(std::to_string(whole_peak - 1) + " bytes"));
      CHECK(all_nan(none));

      // Random valid plans: same outputs, measured == predicted, tight budgets.
      for (int trial = 0; trial < 6; ++trial) {
        const std::vector<cpu_test::Step> steps = mm.random_plan(batch, rng);
        const nlohmann::json plan = MemoryModel::to_json(steps, mm.description());
        const uint64_t peak = mm.peak(steps, batch);
        REQUIRE(ex.set_budget(peak).ok());
        std::vector<HostTensor> out;
        const cpu_test::Status ok = ex.run(in, out, plan, &report);
        INFO(plan.dump());
        INFO(ok.message);
        REQUIRE(ok.ok());
        CHECK(report["peak_bytes"].get<uint64_t>() == peak);
        for (const auto& st : report["steps"]) CHECK(st["calls"] == 1);  // each step as one call
        compacted += report["compactions"].get<int>() > 0;
        // The placement extension foresees exactly the moves the run made.
        nlohmann::json placed;
        REQUIRE(ex.place(placement, plan, int32_t(batch), peak, &placed).ok());
        CHECK(placed["peak_bytes"] == report["peak_bytes"]);
        CHECK(placed["moved_bytes"] == report["moved_bytes"]);
        CHECK(placed["compactions"] == report["compactions"]);
        REQUIRE(out.size() == base.size());
        for (size_t k = 0; k < out.size(); ++k) {
          REQUIRE(out[k].data.size() == base[k].data.size());
          double worst = 0;
          for (size_t i = 0; i < out[k].data.size(); ++i)
            worst = std::max(worst, double(std::fabs(out[k].data[i] - base[k].data[i])));
          CHECK(worst <= 1e-5);
        }
        REQUIRE(ex.set_budget(peak - 1).ok());
        std::vector<HostTensor> none2;
        const cpu_test::Status no = ex.run(in, none2, plan);
        CHECK(no.code == FRUGAL_ERR_BUDGET);
        CHECK_THAT(no.message, Catch::Contains("(" + std::to_string(peak) + " bytes) at step"));
        CHECK(all_nan(none2));
        const cpu_test::Status no_place = ex.place(placement, plan, int32_t(batch), peak - 1, nullptr);
        CHECK(no_place.code == FRUGAL_ERR_BUDGET);
        CHECK_THAT(no_place.message, Catch::Contains("(" + std::to_string(peak) + " bytes) at step"));
      }
    }
    INFO(name);
    CHECK(compacted > 0);  // tight budgets make the arena compact: contents must survive it
  }
}

TEST_CASE("plans that split batches give bit-identical outputs for batch-independent kernels",
          "[cpu][plan]") {
  // One sample at a time vs the whole batch: conv (im2col + sgemm per sample),
  // pools, Add, Concat compute each sample the same way at any batch size.
  cpu_test::Executor ex(frugal::build_zoo_model("toy_branched", 1), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  MemoryModel mm(ex);
  const std::vector<HostTensor> in = exec_test::random_inputs(mm.description(), 4, 5);
  std::vector<HostTensor> whole, split;
  REQUIRE(ex.run(in, whole).ok());
  std::vector<cpu_test::Step> steps;
  const size_t layers = mm.description()["layers"].size();
  // Every layer up to (not including) the final Gemm one sample at a time; the
  // Gemm (batch rows in one sgemm) on all four: its input was produced in four
  // steps with other layers' chunks allocated in between, yet it must run as
  // ONE call on 4 rows (4 one-row calls sum in another order on some CPUs).
  for (int64_t s = 0; s < 4; ++s)
    for (size_t l = 0; l + 1 < layers; ++l) steps.push_back({int(l), s, 1});
  steps.push_back({int(layers - 1), 0, 4});
  const uint64_t peak = mm.peak(steps, 4);
  REQUIRE(ex.set_budget(peak).ok());  // exactly the peak: no room to spare for keeping blocks whole
  nlohmann::json report;
  REQUIRE(ex.run(in, split, MemoryModel::to_json(steps, mm.description()), &report).ok());
  REQUIRE(whole[0].data.size() == split[0].data.size());
  CHECK(std::memcmp(whole[0].data.data(), split[0].data.data(), whole[0].data.size() * sizeof(float)) == 0);
  CHECK(report["peak_bytes"].get<uint64_t>() == peak);
  REQUIRE(report["steps"].size() == steps.size());
  uint64_t moved = 0;
  for (const auto& st : report["steps"]) {
    INFO(st.dump());
    CHECK(st["calls"] == 1);
    moved += st["moved_bytes"].get<uint64_t>();
  }
  CHECK(moved == report["moved_bytes"].get<uint64_t>());
}

TEST_CASE("the arena keeps chunk contents through splits, frees and compaction", "[cpu][arena]") {
  using frugal::cpu::Arena;
  std::mt19937_64 rng(3);
  Arena arena;
  const uint64_t capacity = 64 * 1024;
  arena.reset(capacity);
  struct Held {
    Arena::Id id;
    uint64_t size;
    uint32_t tag;
  };
  std::vector<Held> held;
  uint32_t next_tag = 1;
  auto fill = [&](const Held& h) {
    auto* p = reinterpret_cast<uint32_t*>(arena.data(h.id));
    for (uint64_t i = 0; i < h.size / 4; ++i) p[i] = h.tag * 1000003u + uint32_t(i);
  };
  auto intact = [&](const Held& h, uint64_t offset_words) {
    const auto* p = reinterpret_cast<const uint32_t*>(arena.data(h.id));
    for (uint64_t i = 0; i < h.size / 4; ++i)
      if (p[i] != h.tag * 1000003u + uint32_t(i + offset_words)) return false;
    return true;
  };
  std::vector<uint64_t> offsets;  // per held chunk: words its tag pattern is shifted by (after splits)
  for (int op = 0; op < 4000; ++op) {
    const int what = int(rng() % 3);
    if (what == 0 || held.empty()) {
      const uint64_t size = 4 * (1 + rng() % 2048);
      if (arena.live_bytes() + size > capacity) continue;  // any set that sums to <= capacity must fit
      Held h{arena.alloc(size), size, next_tag++};
      fill(h);
      held.push_back(h);
      offsets.push_back(0);
    } else if (what == 1) {
      const size_t k = rng() % held.size();
      arena.release(held[k].id);
      held.erase(held.begin() + long(k));
      offsets.erase(offsets.begin() + long(k));
    } else {
      const size_t k = rng() % held.size();
      if (held[k].size < 8) continue;
      const uint64_t at = 4 * (1 + rng() % (held[k].size / 4 - 1));
      const Arena::Id tail = arena.split(held[k].id, at);
      Held t{tail, held[k].size - at, held[k].tag};
      const uint64_t toff = offsets[k] + at / 4;
      held[k].size = at;
      held.push_back(t);
      offsets.push_back(toff);
    }
    arena.check();
    if (op % 97 == 0)
      for (size_t k = 0; k < held.size(); ++k) REQUIRE(intact(held[k], offsets[k]));
  }
  for (size_t k = 0; k < held.size(); ++k) CHECK(intact(held[k], offsets[k]));
  CHECK(arena.compactions() > 0);
  uint64_t sum = 0;
  for (const Held& h : held) sum += h.size;
  CHECK(arena.live_bytes() == sum);
}

TEST_CASE("a chunk allocated after another starts where it ends, whatever must move, and keeps contents",
          "[cpu][arena]") {
  using frugal::cpu::Arena;
  std::mt19937_64 rng(5);
  Arena arena;
  const uint64_t capacity = 64 * 1024;
  arena.reset(capacity);
  struct Held {
    Arena::Id id;
    uint64_t size;
    uint32_t tag;
  };
  std::vector<Held> held;
  uint32_t next_tag = 1;
  // Word i of a chunk with tag t holds t * 1000003 + i: a grown chunk continues its pattern.
  auto fill = [&](Arena::Id id, uint64_t bytes, uint32_t tag, uint64_t first_word) {
    auto* p = reinterpret_cast<uint32_t*>(arena.data(id));
    for (uint64_t i = 0; i < bytes / 4; ++i) p[i] = tag * 1000003u + uint32_t(first_word + i);
  };
  auto intact = [&](const Held& h) {
    const auto* p = reinterpret_cast<const uint32_t*>(arena.data(h.id));
    for (uint64_t i = 0; i < h.size / 4; ++i)
      if (p[i] != h.tag * 1000003u + uint32_t(i)) return false;
    return true;
  };
  uint64_t grown = 0;
  for (int op = 0; op < 4000; ++op) {
    const int what = int(rng() % 3);
    const uint64_t size = 4 * (1 + rng() % 2048);
    if (what == 0 || held.empty()) {
      if (arena.live_bytes() + size > capacity) continue;
      Held h{arena.alloc(size), size, next_tag++};
      fill(h.id, size, h.tag, 0);
      held.push_back(h);
    } else if (what == 1) {
      const size_t k = rng() % held.size();
      arena.release(held[k].id);
      held.erase(held.begin() + long(k));
    } else {
      const size_t k = rng() % held.size();
      if (arena.live_bytes() + size > capacity) continue;  // any growth that fits must succeed
      const Arena::Id tail = arena.alloc_after(held[k].id, size);
      REQUIRE(arena.offset(tail) == arena.offset(held[k].id) + held[k].size);
      fill(tail, size, held[k].tag, held[k].size / 4);
      arena.merge(held[k].id, tail);
      held[k].size += size;
      ++grown;
    }
    arena.check();
    if (op % 97 == 0)
      for (const Held& h : held) REQUIRE(intact(h));
  }
  for (const Held& h : held) CHECK(intact(h));
  CHECK(grown > 1000);
  CHECK(arena.moved_bytes() > 0);
}

TEST_CASE("the placement extension prices a moved byte, and refuses what it cannot place", "[cpu][arena]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_branched", 1), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  const frugal_placement_extension& placement = exec_test::placement_extension("cpu");
  REQUIRE(placement.struct_size >= sizeof(frugal_placement_extension));
  frugal_error err{};
  double per_byte = -1;
  REQUIRE(placement.time_move(ex.handle(), uint64_t{1} << 20, 3, &per_byte, &err) == FRUGAL_OK);
  // Between 1 TB/s and 10 MB/s: a memmove, not a constant or a total.
  CHECK(per_byte > 1e-12);
  CHECK(per_byte < 1e-7);
  CHECK(placement.time_move(ex.handle(), 100, 3, &per_byte, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err.message), Catch::Contains("capacity_bytes must be >= 4096"));
  CHECK(placement.time_move(ex.handle(), 1 << 20, 0, &per_byte, &err) == FRUGAL_ERR_INVALID_ARGUMENT);

  // The whole batch at its own peak moves nothing; a plan naming no layer is refused by name.
  nlohmann::json placed;
  REQUIRE(ex.place(placement, nullptr, 3, 0, &placed).ok());
  CHECK(placed["moved_bytes"] == 0);
  CHECK(placed["peak_bytes"].get<uint64_t>() > 0);
  const cpu_test::Status bad = ex.place(
      placement, nlohmann::json{{"steps", {{{"layer", "no_such_layer"}, {"first", 0}, {"count", 1}}}}}, 1, 0,
      nullptr);
  CHECK(bad.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(bad.message, Catch::Contains("no_such_layer"));
  CHECK(ex.place(placement, nullptr, 0, 0, nullptr).code == FRUGAL_ERR_INVALID_ARGUMENT);
}

TEST_CASE(
    "the run report lists every step with its fields; repeated and changed requests report their own plan",
    "[cpu][plan]") {
  // Layer names that JSON must escape; Relu then Sigmoid, each a layer of its own.
  cpu_test::GraphMaker gm;
  gm.input("x", {1, 4, 5, 5}, true);
  gm.node("Relu", {"x"}, "relu \"a\\b\"");
  gm.node("Sigmoid", {"relu \"a\\b\""}, "out");
  gm.output("out");
  cpu_test::Executor ex(gm.graph(), "{\"threads\": 2}");
  REQUIRE(ex.ok());
  MemoryModel mm(ex);
  const nlohmann::json& layers = mm.description()["layers"];
  REQUIRE(layers.size() == 2);
  CHECK(layers[0]["name"] == "relu \"a\\b\"");

  // The report's steps against the plan that ran: layer names, samples, calls, fields.
  const auto check_report = [&](const nlohmann::json& report, const std::vector<cpu_test::Step>& steps,
                                int64_t batch) {
    INFO(report.dump());
    CHECK(report["batch"] == batch);
    CHECK(report["peak_bytes"].get<uint64_t>() == mm.peak(steps, batch));
    CHECK(report["predicted_peak_bytes"].get<uint64_t>() == mm.peak(steps, batch));
    REQUIRE(report["steps"].size() == steps.size());
    double step_seconds = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const nlohmann::json& s = report["steps"][i];
      CHECK(s.size() == 7);
      CHECK(s["layer"] == layers[size_t(steps[i].layer)]["name"]);
      CHECK(s["first"] == steps[i].first);
      CHECK(s["count"] == steps[i].count);
      CHECK(s["calls"] == 1);
      CHECK(s["moved_bytes"].is_number_unsigned());
      CHECK(s["move_seconds"].get<double>() >= 0);
      CHECK(s["seconds"].get<double>() >= 0);
      step_seconds += s["seconds"].get<double>();
    }
    CHECK(step_seconds <= report["seconds"].get<double>());
  };
  // Outputs against sigmoid(relu(x)) in float64.
  const auto check_output = [](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].data.size() == in[0].data.size());
    double worst = 0;
    for (size_t i = 0; i < in[0].data.size(); ++i) {
      const double want = 1.0 / (1.0 + std::exp(-std::max(0.0, double(in[0].data[i]))));
      worst = std::max(worst, std::fabs(double(out[0].data[i]) - want));
    }
    CHECK(worst <= 1e-6);
  };

  const std::vector<HostTensor> in3 = exec_test::random_inputs(mm.description(), 3, 7);
  const std::vector<HostTensor> in2 = exec_test::random_inputs(mm.description(), 2, 8);
  // Sample by sample: relu on 0, sigmoid on 0, then both layers on samples 1..2.
  const std::vector<cpu_test::Step> split = {{0, 0, 1}, {1, 0, 1}, {0, 1, 2}, {1, 1, 2}};
  const nlohmann::json split_plan = MemoryModel::to_json(split, mm.description());
  struct Request {
    const std::vector<HostTensor>* in;
    int64_t batch;
    bool split;
  };
  // The same request twice, then each change of plan or batch, and back.
  for (const Request& r :
       {Request{&in3, 3, false}, Request{&in3, 3, false}, Request{&in3, 3, true}, Request{&in3, 3, true},
        Request{&in2, 2, false}, Request{&in3, 3, false}, Request{&in3, 3, true}}) {
    INFO("batch " << r.batch << (r.split ? ", split plan" : ", whole batch"));
    std::vector<HostTensor> out;
    nlohmann::json report;
    const cpu_test::Status st = ex.run(*r.in, out, r.split ? split_plan : nlohmann::json(nullptr), &report);
    INFO(st.message);
    REQUIRE(st.ok());
    check_report(report, r.split ? split : mm.whole_batch(r.batch), r.batch);
    check_output(*r.in, out);
  }
}
