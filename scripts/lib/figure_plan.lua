-- frugal plot plan: a plan's batch sizes per layer and phase (the VBS paper's
-- Figure 9). One row per layer; across, the samples of the request; a box is
-- one step of that layer on those samples (its width is the batch size, the
-- number in it too), coloured by phase. Beside it, the fixed-batch plan at the
-- same budget when the plan carries it (layers[].fbs_batches).
local svg = require("svg")
local summary = require("plan_summary")
local common = require("cli_common")

local M = {about = "a plan's batch sizes per layer and phase (the VBS paper's Figure 9)",
           input = "a plan (frugal plan -o FILE)"}

local ROW, GAP, TOP = 16, 4, 150
local TEXT_ON = {"white", "black", "white", "black", "black", "white", "black", "white"}  -- per palette colour

local function layer_names(plan)
  local names, seen = {}, {}
  for _, l in ipairs(plan.layers or {}) do names[#names + 1] = l.name; seen[l.name] = true end
  for _, s in ipairs(plan.steps) do
    if not seen[s.layer] then names[#names + 1] = s.layer; seen[s.layer] = true end
  end
  return names
end

local function phase_of_steps(plan)
  local phase_of = {}
  for p, ph in ipairs(plan.phases or summary.derive_phases(plan)) do
    for s = ph.first_step, ph.first_step + ph.step_count - 1 do phase_of[s + 1] = p end
  end
  return phase_of
end

-- Sample numbers along the top of a panel, and light lines between samples.
local function sample_axis(doc, x0, cw, batch, bottom, label)
  doc:text(x0, TOP - 30, label, {["font-weight"] = "bold"})
  local every = math.max(1, math.ceil(batch / math.max(1, math.floor(cw * batch / 28))))
  for s = 1, batch do
    if s == 1 or s % every == 0 then
      doc:text(x0 + (s - 0.5) * cw, TOP - 8, tostring(s), {["text-anchor"] = "middle", class = "tick"})
    end
  end
  if batch <= 64 then
    for s = 0, batch do doc:line(x0 + s * cw, TOP - 4, x0 + s * cw, bottom, {stroke = "#e0e0e0", class = "grid"}) end
  end
end

-- A box for `count` samples from `first` in row `row`.
local function step_box(doc, x0, cw, row, first, count, fill, text_colour, class, tooltip)
  local x, y, w = x0 + first * cw, TOP + (row - 1) * (ROW + GAP), count * cw - 1
  doc:rect(x, y, w, ROW, {class = class, fill = fill}, tooltip)
  if w >= 12 then
    doc:text(x + w / 2, y + ROW - 4, tostring(count), {["text-anchor"] = "middle", fill = text_colour,
                                                        class = "count", ["font-size"] = 11})
  end
end

function M.draw(plan, title)
  if type(plan) ~= "table" or type(plan.steps) ~= "table" or #plan.steps == 0 then
    error("not a plan: it has no \"steps\" (make one with frugal plan -o FILE)", 0)
  end
  local names = layer_names(plan)
  local row_of = {}
  for i, n in ipairs(names) do row_of[n] = i end
  local batch = summary.request_size(plan)
  local label_w = 16
  for _, n in ipairs(names) do label_w = math.max(label_w, svg.text_width(n) + 16) end
  label_w = math.min(label_w, 260)
  local has_fbs = plan.layers and plan.layers[1] and plan.layers[1].fbs_batches ~= nil
  local panel_w = math.max(320, math.min(640, batch * 40))
  local fbs_w = has_fbs and math.max(160, panel_w * 0.4) or 0
  local subtitle = string.format("%s%s plan%s: a request of %d samples%s%s", plan.planner or "a planner's",
    plan.method and plan.method ~= plan.planner and (" (" .. plan.method .. ")") or "",
    plan.model and (" for " .. plan.model) or "", batch,
    plan.budget_bytes and (" under " .. common.bytes(plan.budget_bytes)) or "",
    plan.time_per_sample_s and (", " .. common.seconds(plan.time_per_sample_s) .. " per sample predicted") or "")
  local explain = {"a box = one step of the layer on those samples (the number in it: its batch size);",
                   "colour = phase (a phase ends when every sample is finished or not yet started)"}
  local width = label_w + panel_w + (has_fbs and (fbs_w + 40) or 0) + 24
  for _, t in ipairs({subtitle, explain[1], explain[2]}) do width = math.max(width, svg.text_width(t) + 24) end
  local bottom = TOP + #names * (ROW + GAP)
  local doc = svg.document(width, bottom + 24, title or "batch sizes per layer and phase")
  local phase_of = phase_of_steps(plan)
  local nphases = 0
  for _, p in pairs(phase_of) do nphases = math.max(nphases, p) end

  doc:text(12, 22, title or "Batch sizes per layer and phase", {["font-size"] = 16, ["font-weight"] = "bold",
                                                                 class = "title"})
  doc:text(12, 42, subtitle, {class = "subtitle"})
  doc:text(12, 60, explain[1], {class = "subtitle", fill = "#555"})
  doc:text(12, 76, explain[2], {class = "subtitle", fill = "#555"})
  local legend = {}
  for p = 1, math.min(nphases, #svg.palette) do legend[p] = {"phase " .. p, svg.palette[p]} end
  doc:legend(12, 98, legend)

  local x0, cw = label_w, panel_w / batch
  sample_axis(doc, x0, cw, batch, bottom, "samples of the request")
  for i, n in ipairs(names) do
    doc:text(label_w - 8, TOP + (i - 1) * (ROW + GAP) + ROW - 4, n, {["text-anchor"] = "end", class = "layer"})
  end
  for k, s in ipairs(plan.steps) do
    local p = phase_of[k] or 1
    local c = (p - 1) % #svg.palette + 1
    step_box(doc, x0, cw, row_of[s.layer], s.first, s.count, svg.palette[c], TEXT_ON[c], "step phase" .. p,
             string.format("step %d: %s on samples %d..%d (%d) in phase %d", k, s.layer, s.first + 1,
                           s.first + s.count, s.count, p))
  end

  if has_fbs then
    local fx, fcw = label_w + panel_w + 40, fbs_w / batch
    sample_axis(doc, fx, fcw, batch, bottom, "fixed batch (FBS)")
    for _, l in ipairs(plan.layers) do
      local first = 0
      for _, count in ipairs(l.fbs_batches or {}) do
        step_box(doc, fx, fcw, row_of[l.name], first, count, "#9e9e9e", "black", "fbs-step",
                 string.format("fixed batch: %s on samples %d..%d (%d)", l.name, first + 1, first + count, count))
        first = first + count
      end
    end
  end
  return doc:render()
end

return M
