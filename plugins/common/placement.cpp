#include "common/placement.h"

#include <nlohmann/json.hpp>

#include "common/plan_memory.h"
#include "common/sample_store.h"

namespace frugal::exec {

Placement place_plan(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t capacity) {
  Placement out;
  OffsetAllocator mem(capacity);
  SampleStore store(m, mem, batch);
  for (ChunkMemory::Id id : store.place_inputs()) out.input_offsets.push_back(mem.offset(id));
  store.drop_unread_inputs();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const Layer& L = m.layers()[size_t(s.layer)];
    store.check_ready(i, s);
    PlacedStep ps;
    ps.ws_bytes = m.layer_bytes(s.layer, s.count).ws_bytes;
    ChunkMemory::Id ws = 0;
    bool has_ws = false;
    const ChunkMemory::Id o = store.begin_step(s, ps.ws_bytes, ws, has_ws);
    ps.moves = mem.take_moves();  // offsets below are those after the step's allocations
    if (has_ws) ps.ws_offset = mem.offset(ws);
    ps.out_offset = mem.offset(o);
    for (int t : L.node_inputs) {
      if (t < 0) {
        ps.in_offsets.push_back(0);
        continue;
      }
      const SampleStore::Piece& p = store.input_piece(t, s);
      ps.in_offsets.push_back(mem.offset(p.chunk) + uint64_t(s.first - p.first) * m.sample_bytes(t));
    }
    store.end_step(s, o, ws, has_ws);
    out.steps.push_back(std::move(ps));
  }
  store.check_complete();
  for (int t : m.outputs()) {
    std::vector<PlacedPiece> pieces;
    for (const SampleStore::Piece& p : store.pieces(t))
      pieces.push_back(PlacedPiece{p.first, p.count, mem.offset(p.chunk)});
    out.outputs.push_back(std::move(pieces));
  }
  out.peak = mem.peak_bytes();
  out.extent = mem.extent();
  out.compactions = mem.compactions();
  out.moved_bytes = mem.moved_bytes();
  return out;
}

std::string placement_summary_json(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t capacity) {
  if (capacity == 0)
    capacity = simulate_plan(m, plan, batch).peak;
  else
    check_budget(m, plan, batch, capacity);
  const Placement p = place_plan(m, plan, batch, capacity);
  return nlohmann::json{
      {"peak_bytes", p.peak}, {"moved_bytes", p.moved_bytes}, {"compactions", p.compactions}}
      .dump();
}

}  // namespace frugal::exec
