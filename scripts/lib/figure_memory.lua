-- frugal plot memory: per layer, the memory in use while it runs against the
-- budget, for the plan and for fixed batch size (the VBS paper's Table III as
-- a chart). In use = the budget minus what the layer leaves unused (the most
-- that any of its steps needs: docs/PLAN.md, layers[].unused_bytes).
local svg = require("svg")
local common = require("cli_common")

local M = {about = "memory in use per layer against the budget, the plan's and fixed batch's (Table III as a chart)",
           input = "a plan with per-layer memory (frugal plan -o FILE, planner vbs or fbs)"}

local ROW, TOP, VBS_COLOUR, FBS_COLOUR = 24, 104, "#0072B2", "#E69F00"

-- Byte axis unit: kB for toy plans, MB otherwise.
local function unit_of(max)
  if max < 1e6 then return 1e3, "kB" end
  return 1e6, "MB"
end

local function check(plan)
  if type(plan) ~= "table" or type(plan.layers) ~= "table" or #plan.layers == 0 or not plan.budget_bytes then
    error("the plan has no per-layer memory (\"layers\" with unused_bytes, and budget_bytes): make it with " ..
          "frugal plan --planner vbs or fbs -o FILE", 0)
  end
  for i, l in ipairs(plan.layers) do
    if type(l.unused_bytes) ~= "number" then error("layers[" .. i .. "] ('" .. tostring(l.name) .. "') has no unused_bytes", 0) end
  end
end

function M.draw(plan, title)
  check(plan)
  local budget = plan.budget_bytes
  local has_fbs = plan.layers[1].fbs_unused_bytes ~= nil
  local label_w = 16
  for _, l in ipairs(plan.layers) do label_w = math.max(label_w, svg.text_width(l.name) + 16) end
  label_w = math.min(label_w, 260)
  local plot_w = 560
  local max = budget
  for _, l in ipairs(plan.layers) do max = math.max(max, budget - l.unused_bytes) end
  local unit, unit_name = unit_of(max)
  local x = svg.linear(0, max * 1.04, label_w, label_w + plot_w)
  local bottom = TOP + #plan.layers * ROW
  local subtitle = string.format("%s plan%s: a request of %d samples under %s", plan.planner or "a planner's",
    plan.model and (" for " .. plan.model) or "", plan.batch or 0, common.bytes(budget))
  local explain = "in use = the most that any of the layer's steps needs (held activations, output, workspace)"
  local width = math.max(label_w + plot_w + 40, svg.text_width(explain) + 24)
  local doc = svg.document(width, bottom + 48, title or "memory in use per layer")

  doc:heading(title or "Memory in use per layer, against the budget", subtitle, explain)
  local legend = {{"plan (" .. tostring(plan.planner or "?") .. ")", VBS_COLOUR}}
  if has_fbs then legend[2] = {"fixed batch (FBS)", FBS_COLOUR} end
  doc:legend(12, 82, legend)

  for _, v in ipairs(svg.ticks(0, max * 1.04 / unit, 6)) do
    doc:line(x(v * unit), TOP - 6, x(v * unit), bottom, {stroke = "#e0e0e0", class = "grid"})
    doc:text(x(v * unit), bottom + 16, svg.num(v), {["text-anchor"] = "middle", class = "tick"})
  end
  doc:text(label_w + plot_w / 2, bottom + 36, "memory in use (" .. unit_name .. ")", {["text-anchor"] = "middle"})
  local bar_h = has_fbs and 9 or 16
  for i, l in ipairs(plan.layers) do
    local y = TOP + (i - 1) * ROW
    doc:text(label_w - 8, y + 14, l.name, {["text-anchor"] = "end", class = "layer"})
    local used = budget - l.unused_bytes
    doc:rect(x(0), y + 2, x(used) - x(0), bar_h, {class = "bar plan", fill = VBS_COLOUR},
             string.format("%s: %s in use, %s unused (plan)", l.name, common.bytes(used), common.bytes(l.unused_bytes)))
    if has_fbs and l.fbs_unused_bytes then
      local fused = budget - l.fbs_unused_bytes
      doc:rect(x(0), y + 2 + bar_h + 1, x(fused) - x(0), bar_h, {class = "bar fbs", fill = FBS_COLOUR},
               string.format("%s: %s in use, %s unused (fixed batch)", l.name, common.bytes(fused),
                             common.bytes(l.fbs_unused_bytes)))
    end
  end
  doc:line(x(budget), TOP - 10, x(budget), bottom, {class = "budget", stroke = "#D55E00", ["stroke-width"] = 2,
                                                    ["stroke-dasharray"] = "6 4"})
  doc:text(x(budget), TOP - 14, "budget " .. common.bytes(budget), {["text-anchor"] = "middle", fill = "#D55E00",
                                                                     class = "budget-label"})
  return doc:render()
end

return M
