-- A plan (frugal.plan's table) as text: the headline figures, then per layer
-- the batch size of each of its steps in each phase (the VBS paper's Figure 9)
-- and the memory the layer leaves unused, for the plan and for fixed batch
-- size (the paper's Table III).
local fmt = require("textfmt")
local common = require("cli_common")

local M = {}

local MAX_PHASE_COLUMNS = 6

-- {4, 4, 4} -> "4x3"; {2, 1, 1} -> "2 1x2"
local function runs(list)
  local parts, i = {}, 1
  while i <= #list do
    local j = i
    while j < #list and list[j + 1] == list[i] do j = j + 1 end
    parts[#parts + 1] = tostring(list[i]) .. (j > i and ("x" .. (j - i + 1)) or "")
    i = j + 1
  end
  return table.concat(parts, " ")
end
M.runs = runs

-- Per layer name, per phase index: the counts of its steps.
local function batches_by_phase(plan)
  local phase_of = {}
  for p, ph in ipairs(plan.phases or {}) do
    for s = ph.first_step, ph.first_step + ph.step_count - 1 do phase_of[s + 1] = p end
  end
  local cells = {}
  for s, step in ipairs(plan.steps) do
    local p = phase_of[s] or 1
    cells[step.layer] = cells[step.layer] or {}
    cells[step.layer][p] = cells[step.layer][p] or {}
    table.insert(cells[step.layer][p], step.count)
  end
  return cells
end

-- The headline lines (time, peak, baselines).
function M.headline(plan)
  local lines = {}
  local what = plan.planner .. (plan.method and plan.method ~= plan.planner and (" (" .. plan.method .. ")") or "")
  lines[#lines + 1] = string.format("plan        %s for a request of %d samples under %s%s", what, plan.batch,
    common.bytes(plan.budget_bytes),
    plan.memory_unit_bytes and (", memory unit " .. common.bytes(plan.memory_unit_bytes)) or "")
  lines[#lines + 1] = string.format("time        %s per sample (predicted), %s for the request", common.seconds(plan.time_per_sample_s),
    common.seconds(plan.time_total_s))
  lines[#lines + 1] = string.format("peak        %s of the %s budget%s", common.bytes(plan.peak_bytes),
    common.bytes(plan.budget_bytes),
    plan.min_budget_bytes and ("; the smallest plan needs " .. common.bytes(plan.min_budget_bytes)) or "")
  local b = plan.baselines
  if b then
    for _, name in ipairs({"fbs", "greedy"}) do
      local x = b[name]
      if x then
        local label = name == "fbs" and "fixed batch" or "greedy VBS"
        if x.error then
          lines[#lines + 1] = string.format("%-11s no plan (%s)", name, x.error)
        else
          lines[#lines + 1] = string.format("%-11s %s per sample, peak %s (%s%s)", name, common.seconds(x.time_per_sample_s),
            common.bytes(x.peak_bytes), label, x.batch and (", batch " .. x.batch) or "")
        end
      end
    end
  elseif plan.fbs_batch then
    lines[#lines + 1] = string.format("fbs         batch %d in %d round(s)", plan.fbs_batch,
      math.ceil(plan.batch / plan.fbs_batch))
  end
  if plan.gain_vs_fbs then
    lines[#lines + 1] = string.format("gain        %s less time per sample than fixed batch", common.percent(plan.gain_vs_fbs))
  end
  return lines
end

-- The per-layer table. Returns a string.
function M.layer_table(plan)
  local cells = batches_by_phase(plan)
  local nphases = #(plan.phases or {})
  if nphases == 0 then nphases = 1 end
  local shown = math.min(nphases, MAX_PHASE_COLUMNS)
  local header = {"#", "layer"}
  for p = 1, shown do header[#header + 1] = "phase " .. p end
  if nphases > shown then header[#header + 1] = "phases " .. (shown + 1) .. "-" .. nphases end
  header[#header + 1] = "unused"
  local has_fbs = plan.layers and plan.layers[1] and plan.layers[1].fbs_batches ~= nil
  if has_fbs then
    header[#header + 1] = "FBS batches"
    header[#header + 1] = "FBS unused"
  end
  local rows, align = {header}, {"r"}
  for i, l in ipairs(plan.layers or {}) do
    local row = {tostring(i), l.name}
    local per = cells[l.name] or {}
    for p = 1, shown do row[#row + 1] = per[p] and runs(per[p]) or "-" end
    if nphases > shown then
      local rest = {}
      for p = shown + 1, nphases do
        for _, c in ipairs(per[p] or {}) do rest[#rest + 1] = c end
      end
      row[#row + 1] = #rest > 0 and runs(rest) or "-"
    end
    row[#row + 1] = common.bytes(l.unused_bytes)
    if has_fbs then
      row[#row + 1] = runs(l.fbs_batches or {})
      row[#row + 1] = common.bytes(l.fbs_unused_bytes)
    end
    rows[#rows + 1] = row
  end
  for c = 3, #header do align[c] = "r" end
  return fmt.table(rows, align, "  ")
end

function M.print(plan)
  for _, line in ipairs(M.headline(plan)) do print(line) end
  local np = #(plan.phases or {})
  print(string.format("layers      batch size of each step, per phase (%d phase%s; Figure 9), and memory left unused (Table III)",
    np, np == 1 and "" or "s"))
  print(M.layer_table(plan))
end

return M
