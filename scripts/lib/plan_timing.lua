-- Predicted against measured time of a plan, per layer: what bench-vbs
-- --explain and workflow print, so that a plan whose measured time disagrees
-- with the planner's prediction names the layer at fault.
--   predicted: per step, count x (time_s[count] + step_overhead_per_sample_s)
--              of its layer in the cost table, plus the layer's step_overhead_s
--              (else the table's): what the planner charges (docs/COSTS.md);
--   measured:  per step, the "seconds" of the executor's run report.
local common = require("cli_common")

local M = {}

-- Disagreement beyond which the scripts warn: |measured / predicted - 1| > 15%.
M.TOLERANCE = 0.15

local function median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return nil end
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end
M.median = median

-- layer name -> predicted seconds of the plan's steps of that layer; and the layer order.
function M.predicted_by_layer(plan, costs)
  local index, by_layer, order = {}, {}, {}
  for i, L in ipairs(costs.layers) do index[L.name] = i end
  for _, st in ipairs(plan.steps) do
    local L = costs.layers[index[st.layer]]
    local overhead = L.step_overhead_s or costs.step_overhead_s or 0
    if not by_layer[st.layer] then
      by_layer[st.layer] = 0
      order[#order + 1] = st.layer
    end
    by_layer[st.layer] = by_layer[st.layer] + st.count * (L.time_s[st.count] + (L.step_overhead_per_sample_s or 0))
      + overhead
  end
  return by_layer, order
end

-- Per-step figures of one run report, summed per layer: {seconds = {name -> s}, calls, moved, steps}.
function M.measured_by_layer(report)
  local m = {seconds = {}, calls = 0, moved = 0, move_seconds = 0, steps = #report.steps}
  for _, st in ipairs(report.steps) do
    m.seconds[st.layer] = (m.seconds[st.layer] or 0) + (st.seconds or 0)
    m.calls = m.calls + (st.calls or 0)
    m.moved = m.moved + (st.moved_bytes or 0)
    m.move_seconds = m.move_seconds + (st.move_seconds or 0)
  end
  return m
end

-- Medians over several runs' measured_by_layer results.
function M.median_by_layer(measurements)
  local per, out, moves = {}, {seconds = {}}, {}
  for _, m in ipairs(measurements) do
    moves[#moves + 1] = m.move_seconds or 0
    for name, s in pairs(m.seconds) do
      per[name] = per[name] or {}
      per[name][#per[name] + 1] = s
    end
  end
  for name, list in pairs(per) do out.seconds[name] = median(list) end
  local last = measurements[#measurements] or {}
  out.calls, out.moved, out.steps = last.calls, last.moved, last.steps
  out.move_seconds = median(moves)
  return out
end

-- "measured 13.8 ms is 33% above the predicted 10.4 ms" when beyond the tolerance, else nil.
function M.disagreement(predicted, measured)
  if not predicted or not measured or predicted <= 0 then return nil end
  local r = measured / predicted - 1
  if math.abs(r) <= M.TOLERANCE then return nil end
  return string.format("measured %s is %s %s the predicted %s", common.seconds(measured),
    common.percent(math.abs(r)), r > 0 and "above" or "below", common.seconds(predicted))
end

-- Layers of the plan, worst first: {name, pred, meas} with pred/meas per sample of the request.
function M.layer_rows(plan, costs, measured, batch)
  local pred, order = M.predicted_by_layer(plan, costs)
  local rows = {}
  for _, name in ipairs(order) do
    rows[#rows + 1] = {name = name, pred = pred[name] / batch, meas = (measured.seconds[name] or 0) / batch}
  end
  table.sort(rows, function(x, y) return math.abs(x.meas - x.pred) > math.abs(y.meas - y.pred) end)
  return rows
end

-- Lines for --explain: per layer predicted vs measured, the `limit` worst first.
function M.explain_lines(plan, costs, measured, batch, limit)
  local lines = {}
  for i, r in ipairs(M.layer_rows(plan, costs, measured, batch)) do
    if i > limit then break end
    lines[#lines + 1] = string.format("%-28s pred %9s  meas %9s  %s", r.name, common.seconds(r.pred),
      common.seconds(r.meas), r.pred > 0 and string.format("x%.2f", r.meas / r.pred) or "")
  end
  return lines
end

return M
