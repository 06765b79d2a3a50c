-- A plan (frugal.plan's table, docs/PLAN.md) as text for people: the headline
-- figures, then per layer how it runs the request (the sizes of its steps in
-- each phase) and the memory it leaves unused, beside fixed batch size. Any
-- valid plan is summarised from its steps: fields a planner plugin leaves out
-- (phases, layers, times) are derived from the steps or left out.
--   require("plan_summary").text(plan) -> string       tostring(plan) is the same
local fmt = require("textfmt")
local common = require("cli_common")

local M = {}

local MAX_PHASE_COLUMNS = 6

-- {4, 4, 4} -> "4x3" (three steps of 4 samples); {2, 1, 1} -> "2 1x2"
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

-- Layer names: the plan's "layers" in table order, else in order of first step.
local function layer_names(plan)
  local names, seen = {}, {}
  for _, l in ipairs(plan.layers or {}) do names[#names + 1] = l.name; seen[l.name] = true end
  for _, s in ipairs(plan.steps or {}) do
    if not seen[s.layer] then names[#names + 1] = s.layer; seen[s.layer] = true end
  end
  return names
end

-- Samples in the request: the plan's "batch", else what its steps cover.
function M.request_size(plan)
  if plan.batch then return plan.batch end
  local n = 0
  for _, s in ipairs(plan.steps or {}) do n = math.max(n, s.first + s.count) end
  return n
end

-- Phases from the steps: a phase ends after a step when every sample has run
-- every layer or none (docs/PLAN.md). Same form as the plan's "phases".
function M.derive_phases(plan)
  local nlayers = #layer_names(plan)
  local done, in_progress, phases, start = {}, 0, {}, 0
  for k, s in ipairs(plan.steps or {}) do
    for sample = s.first, s.first + s.count - 1 do
      local before = done[sample] or 0
      done[sample] = before + 1
      local was = before > 0 and before < nlayers
      local now = before + 1 < nlayers
      in_progress = in_progress + (now and 1 or 0) - (was and 1 or 0)
    end
    if in_progress == 0 then
      phases[#phases + 1] = {first_step = start, step_count = k - start}
      start = k
    end
  end
  if start < #(plan.steps or {}) then phases[#phases + 1] = {first_step = start, step_count = #plan.steps - start} end
  return phases
end

-- Per layer name, per phase index: the sizes of its steps.
local function batches_by_phase(plan, phases)
  local phase_of = {}
  for p, ph in ipairs(phases) do
    for s = ph.first_step, ph.first_step + ph.step_count - 1 do phase_of[s + 1] = p end
  end
  local cells = {}
  for s, step in ipairs(plan.steps or {}) do
    local p = phase_of[s] or 1
    cells[step.layer] = cells[step.layer] or {}
    cells[step.layer][p] = cells[step.layer][p] or {}
    table.insert(cells[step.layer][p], step.count)
  end
  return cells
end

local function baseline_lines(plan, lines)
  for _, name in ipairs({"fbs", "greedy"}) do
    local x = plan.baselines and plan.baselines[name]
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
  if not plan.baselines and plan.fbs_batch then
    lines[#lines + 1] = string.format("fbs         batch %d in %d round(s)", plan.fbs_batch,
      math.ceil(M.request_size(plan) / plan.fbs_batch))
  end
end

-- The headline lines (what, time, peak, baselines); only the figures the plan has.
function M.headline(plan)
  local lines = {}
  local what = tostring(plan.planner or "a planner") ..
               (plan.method and plan.method ~= plan.planner and (" (" .. plan.method .. ")") or "")
  lines[#lines + 1] = string.format("plan        %s for a request of %d samples%s%s, %d steps", what,
    M.request_size(plan), plan.budget_bytes and (" under " .. common.bytes(plan.budget_bytes)) or "",
    plan.memory_unit_bytes and (", memory unit " .. common.bytes(plan.memory_unit_bytes)) or "", #(plan.steps or {}))
  if plan.time_per_sample_s then
    lines[#lines + 1] = string.format("time        %s per sample (predicted)%s", common.seconds(plan.time_per_sample_s),
      plan.time_total_s and (", " .. common.seconds(plan.time_total_s) .. " for the request") or "")
  end
  if plan.peak_bytes then
    lines[#lines + 1] = string.format("peak        %s%s%s", common.bytes(plan.peak_bytes),
      plan.budget_bytes and (" of the " .. common.bytes(plan.budget_bytes) .. " budget") or "",
      plan.min_budget_bytes and ("; the smallest plan needs " .. common.bytes(plan.min_budget_bytes)) or "")
  end
  baseline_lines(plan, lines)
  if plan.gain_vs_fbs then
    lines[#lines + 1] = string.format("gain        %s less time per sample than fixed batch", common.percent(plan.gain_vs_fbs))
  end
  return lines
end

-- The per-layer table, as a string.
function M.layer_table(plan)
  local phases = plan.phases or M.derive_phases(plan)
  local cells = batches_by_phase(plan, phases)
  local nphases = math.max(#phases, 1)
  local shown = math.min(nphases, MAX_PHASE_COLUMNS)
  local header = {"#", "layer"}
  for p = 1, shown do header[#header + 1] = "phase " .. p end
  if nphases > shown then header[#header + 1] = "phases " .. (shown + 1) .. "-" .. nphases end
  local info = {}
  for _, l in ipairs(plan.layers or {}) do info[l.name] = l end
  local has_unused = plan.layers and plan.layers[1] and plan.layers[1].unused_bytes ~= nil
  local has_fbs = plan.layers and plan.layers[1] and plan.layers[1].fbs_batches ~= nil
  if has_unused then header[#header + 1] = "unused" end
  if has_fbs then header[#header + 1] = "FBS batches"; header[#header + 1] = "FBS unused" end
  local rows, align = {header}, {"r"}
  for i, name in ipairs(layer_names(plan)) do
    local row, per, l = {tostring(i), name}, cells[name] or {}, info[name] or {}
    for p = 1, shown do row[#row + 1] = per[p] and runs(per[p]) or "-" end
    if nphases > shown then
      local rest = {}
      for p = shown + 1, nphases do
        for _, c in ipairs(per[p] or {}) do rest[#rest + 1] = c end
      end
      row[#row + 1] = #rest > 0 and runs(rest) or "-"
    end
    if has_unused then row[#row + 1] = common.bytes(l.unused_bytes) end
    if has_fbs then
      row[#row + 1] = runs(l.fbs_batches or {})
      row[#row + 1] = common.bytes(l.fbs_unused_bytes)
    end
    rows[#rows + 1] = row
  end
  for c = 3, #header do align[c] = "r" end
  return fmt.table(rows, align, "  "), #phases, has_unused, has_fbs
end

-- What the table's columns mean, for someone who has not read the VBS paper.
local function legend(nphases, has_unused, has_fbs)
  local lines = {
    string.format("layers      per layer, the sizes of its steps in samples, in each of the plan's %d phase%s", nphases,
                  nphases == 1 and "" or "s"),
    "            (a phase ends when every sample is finished or not yet started): \"4\" = one step of 4",
    "            samples, \"2x3\" = three steps of 2, \"-\" = none in that phase"}
  if has_unused then
    lines[#lines + 1] = "            unused: the budget minus the most that any of the layer's steps needs"
  end
  if has_fbs then
    lines[#lines + 1] = "            FBS: the same for the fixed-batch plan under this budget (one batch size for all)"
  end
  return table.concat(lines, "\n")
end

function M.text(plan)
  local table_text, nphases, has_unused, has_fbs = M.layer_table(plan)
  return table.concat(M.headline(plan), "\n") .. "\n" .. legend(math.max(nphases, 1), has_unused, has_fbs) .. "\n" ..
         table_text
end

function M.print(plan) print(M.text(plan)) end

return M
