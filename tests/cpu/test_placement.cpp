// The offline placement the Vulkan executor records (plugins/common/placement.h),
// checked on the host without a device: random valid plans on the zoo toys are
// placed in a block of exactly their peak, then "run" on a byte block where
// every sample of every tensor carries its own tag pattern: the moves are
// applied as non-overlapping pieces (as the device copies them), every step's
// one call must find all its samples' input tags at its input offsets, and
// writes its output's tags (and scribbles over its workspace). The peak must equal the byte-counting
// simulation's, and nothing may lie outside the block.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "common/chunk_memory.h"
#include "common/placement.h"
#include "common/plan_memory.h"
#include "cpu_plugin.h"
#include "model.h"
#include "zoo/networks.h"

namespace {

using frugal::exec::LayerGraph;
using frugal::exec::OffsetAllocator;
using frugal::exec::Plan;
using frugal::exec::PlanStep;

uint32_t tag(int t, int64_t sample, uint64_t word) {
  return uint32_t(t) * 2654435761u ^ uint32_t(sample) * 40503u ^ uint32_t(word) * 97u ^ 0x5bd1e995u;
}

// A random valid plan from the memory model of the cpu plugin (the same layer
// order as the engine's Model of the same graph).
Plan random_plan(exec_test::MemoryModel& mm, int64_t batch, std::mt19937_64& rng) {
  Plan plan;
  for (const exec_test::Step& s : mm.random_plan(batch, rng))
    plan.steps.push_back(PlanStep{s.layer, s.first, s.count});
  return plan;
}

void write_tags(std::vector<uint8_t>& block, uint64_t offset, int t, int64_t first, int64_t count,
                uint64_t sample_bytes) {
  for (int64_t j = 0; j < count; ++j)
    for (uint64_t w = 0; w < sample_bytes / 4; ++w) {
      const uint32_t v = tag(t, first + j, w);
      std::memcpy(block.data() + offset + uint64_t(j) * sample_bytes + 4 * w, &v, 4);
    }
}

bool tags_intact(const std::vector<uint8_t>& block, uint64_t offset, int t, int64_t first, int64_t count,
                 uint64_t sample_bytes) {
  for (int64_t j = 0; j < count; ++j)
    for (uint64_t w = 0; w < sample_bytes / 4; ++w) {
      uint32_t v;
      std::memcpy(&v, block.data() + offset + uint64_t(j) * sample_bytes + 4 * w, 4);
      if (v != tag(t, first + j, w)) return false;
    }
  return true;
}

// Runs the placement on a host block of exactly `capacity` bytes; returns the
// number of moves applied.
size_t emulate(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t capacity) {
  const frugal::exec::Placement placed = frugal::exec::place_plan(m, plan, batch, capacity);
  REQUIRE(placed.extent <= capacity);
  std::vector<uint8_t> block(size_t(capacity), 0xEE);
  for (size_t k = 0; k < m.inputs().size(); ++k) {
    const int t = m.inputs()[k];
    REQUIRE(placed.input_offsets[k] + m.bytes(t, batch) <= capacity);
    write_tags(block, placed.input_offsets[k], t, 0, batch, m.sample_bytes(t));
  }
  size_t moves = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const frugal::exec::PlacedStep& ps = placed.steps[i];
    for (const OffsetAllocator::Move& mv : ps.moves) {
      ++moves;
      for (const OffsetAllocator::Move& p : frugal::exec::non_overlapping_pieces(mv)) {
        REQUIRE((p.to + p.bytes <= p.from || p.from + p.bytes <= p.to));  // no overlap inside one copy
        REQUIRE(std::max(p.from, p.to) + p.bytes <= capacity);
        std::memcpy(block.data() + p.to, block.data() + p.from, size_t(p.bytes));
      }
    }
    // One call on all the step's samples: every input in one block.
    const frugal::exec::Layer& L = m.layers()[size_t(s.layer)];
    INFO("step " << i << " (" << frugal::exec::describe_step(m, s) << ")");
    for (size_t k = 0; k < L.node_inputs.size(); ++k) {
      const int t = L.node_inputs[k];
      if (t < 0) continue;
      REQUIRE(ps.in_offsets[k] + m.bytes(t, s.count) <= capacity);
      REQUIRE(tags_intact(block, ps.in_offsets[k], t, s.first, s.count, m.sample_bytes(t)));
    }
    REQUIRE(ps.out_offset + m.bytes(L.output, s.count) <= capacity);
    write_tags(block, ps.out_offset, L.output, s.first, s.count, m.sample_bytes(L.output));
    if (ps.ws_bytes) {
      REQUIRE(ps.ws_offset + ps.ws_bytes <= capacity);
      std::memset(block.data() + ps.ws_offset, 0xA5, size_t(ps.ws_bytes));
    }
  }
  for (size_t k = 0; k < m.outputs().size(); ++k) {
    const int t = m.outputs()[k];
    int64_t held = 0;
    for (const frugal::exec::PlacedPiece& p : placed.outputs[k]) {
      CHECK(tags_intact(block, p.offset, t, p.first, p.count, m.sample_bytes(t)));
      held += p.count;
    }
    CHECK(held == batch);
  }
  return moves;
}

}  // namespace

TEST_CASE("a plan placed offline in exactly its peak keeps every operand where the calls read it",
          "[cpu][placement]") {
  const std::vector<std::pair<const char*, frugal::Graph (*)(uint64_t)>> nets = {
      {"toy_linear", &frugal::zoo::build_toy_linear},
      {"toy_branched", &frugal::zoo::build_toy_branched},
      {"toy_allops", &frugal::zoo::build_toy_allops}};
  std::mt19937_64 rng(11);
  size_t total_moves = 0;
  for (const auto& [name, build] : nets) {
    const frugal::Graph g = build(1);
    const frugal::cpu::Model m(g, 1);
    cpu_test::Executor ex(g, "{\"threads\": 1}");
    REQUIRE(ex.ok());
    exec_test::MemoryModel mm(ex);
    REQUIRE(mm.description()["layers"].size() == m.layers().size());
    const int64_t batch = m.batched() ? 5 : 1;
    for (int trial = 0; trial < 12; ++trial) {
      INFO(name << ", trial " << trial);
      const Plan plan = trial == 0 ? frugal::exec::whole_batch_plan(m, batch) : random_plan(mm, batch, rng);
      const frugal::exec::PlanMemory pm = frugal::exec::simulate_plan(m, plan, batch);
      const frugal::exec::Placement placed = frugal::exec::place_plan(m, plan, batch, pm.peak);
      CHECK(placed.peak == pm.peak);    // the same live bytes as the byte counter
      CHECK(placed.extent <= pm.peak);  // nothing beyond the block
      total_moves += emulate(m, plan, batch, pm.peak);
      // A roomier block: the same peak, fewer or no moves.
      CHECK(frugal::exec::place_plan(m, plan, batch, 2 * pm.peak + 64).peak == pm.peak);
      if (pm.peak > 0) CHECK_THROWS(frugal::exec::place_plan(m, plan, batch, pm.peak - 1));
    }
  }
  CHECK(total_moves > 0);  // the exact-peak blocks did compact somewhere
}

// Outputs at the top end of the block, inputs below: a whole-batch plan, in
// exactly its peak, alternates ends and compacts nothing (before: 38-58 MB
// moved per request of 12 on these networks, unfolded and folded alike).
TEST_CASE("a whole-batch plan placed in exactly its peak moves no bytes", "[cpu][placement]") {
  const std::vector<std::pair<const char*, frugal::Graph (*)(uint64_t)>> nets = {
      {"squeezenet1_1", &frugal::zoo::build_squeezenet1_1},
      {"resnet18", &frugal::zoo::build_resnet18},
      {"googlenet", &frugal::zoo::build_googlenet}};
  for (const auto& [name, build] : nets) {
    INFO(name);
    const frugal::cpu::Model m(build(1), 1);
    const int64_t batch = 12;
    const Plan plan = frugal::exec::whole_batch_plan(m, batch);
    const frugal::exec::PlanMemory pm = frugal::exec::simulate_plan(m, plan, batch);
    const frugal::exec::Placement placed = frugal::exec::place_plan(m, plan, batch, pm.peak);
    CHECK(placed.peak == pm.peak);
    CHECK(placed.moved_bytes == 0);
    CHECK(placed.compactions == 0);
  }
}

// The depthwise convs' workspace (one padded plane per thread) is a multiple of
// 64 bytes: at EfficientNet-B0's peak step (a stride-2 depthwise conv on 4.8
// MB) a workspace 8 bytes off that no longer fit the hole below the output,
// whose top-end place is rounded down to 64, and the block compacted 4.8 MB.
TEST_CASE("whole-batch plans of the depthwise networks placed in exactly their peak move no bytes",
          "[cpu][placement]") {
  const std::vector<std::pair<const char*, frugal::Graph (*)(uint64_t)>> nets = {
      {"mobilenet_v2", &frugal::zoo::build_mobilenet_v2},
      {"efficientnet_b0", &frugal::zoo::build_efficientnet_b0}};
  for (const auto& [name, build] : nets) {
    const frugal::Graph g = build(1);
    for (int threads : {1, 2}) {
      const frugal::cpu::Model m(g, threads);
      for (int64_t batch : {1, 3}) {
        INFO(name << ", " << threads << " threads, batch " << batch);
        const Plan plan = frugal::exec::whole_batch_plan(m, batch);
        const frugal::exec::PlanMemory pm = frugal::exec::simulate_plan(m, plan, batch);
        const frugal::exec::Placement placed = frugal::exec::place_plan(m, plan, batch, pm.peak);
        CHECK(placed.peak == pm.peak);
        CHECK(placed.moved_bytes == 0);
      }
    }
  }
}

// Budgets are any number of bytes, so the top end of the block can be at an
// odd address; a chunk placed there is rounded down to 64 bytes (kernels read
// floats, SIMD wants them aligned). UBSan caught misaligned floats in the
// epilogue when the top placement took capacity - bytes as it was.
TEST_CASE("chunks at the top of a block of odd capacity stay aligned", "[cpu][placement]") {
  for (uint64_t capacity : {uint64_t(1000003), uint64_t(4097), uint64_t(1 << 20)}) {
    INFO("capacity " << capacity);
    OffsetAllocator a(capacity);
    std::mt19937_64 rng(capacity);
    std::vector<OffsetAllocator::Id> held;
    for (int op = 0; op < 2000; ++op) {
      if (held.empty() || rng() % 3 != 0) {
        const uint64_t size = 4 * (1 + rng() % (capacity / 64));
        if (a.live_bytes() + size > capacity) continue;
        held.push_back(a.alloc(size));
      } else {
        const size_t k = size_t(rng() % held.size());
        a.release(held[k]);
        held.erase(held.begin() + long(k));
      }
      a.check();
      for (OffsetAllocator::Id id : held) {
        REQUIRE(a.offset(id) % 4 == 0);
        REQUIRE(a.offset(id) + a.size(id) <= capacity);
      }
    }
  }
}

TEST_CASE("a move splits into non-overlapping pieces no longer than its shift", "[cpu][placement]") {
  using Move = OffsetAllocator::Move;
  for (const Move& m :
       {Move{100, 96, 10}, Move{100, 0, 10}, Move{100, 90, 10}, Move{40, 0, 100}, Move{7, 7, 5},
        Move{96, 100, 10}, Move{0, 100, 10}, Move{90, 100, 10}, Move{0, 40, 100}}) {
    std::vector<uint8_t> a(256), b;
    for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 7 + 1);
    b = a;
    std::memmove(a.data() + m.to, a.data() + m.from, size_t(m.bytes));  // the reference
    const uint64_t shift = m.from > m.to ? m.from - m.to : m.to - m.from;
    uint64_t sum = 0;
    for (const Move& p : frugal::exec::non_overlapping_pieces(m)) {
      CHECK(p.bytes <= shift);
      CHECK((p.to + p.bytes <= p.from || p.from + p.bytes <= p.to));
      std::memcpy(b.data() + p.to, b.data() + p.from, size_t(p.bytes));
      sum += p.bytes;
    }
    CHECK(sum == (m.from == m.to ? 0 : m.bytes));
    CHECK(a == b);
  }
}
