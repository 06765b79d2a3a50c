-- frugal plot bench-vbs: time per sample against the memory budget, for VBS,
-- fixed batch (FBS) and greedy VBS, one panel per network (the VBS paper's
-- Figure 7): measured (solid, dots) and predicted by the planner (dashed).
-- Input: frugal bench-vbs --json FILE, whose "rows" hold one entry per
-- (network, budget, planner): network, budget_bytes, planner, and
-- measured_s_per_sample / predicted_s_per_sample, or error when that planner
-- has no plan at that budget (docs/PLOTS.md).
local svg = require("svg")

local M = {about = "time per sample against the budget for VBS, FBS and greedy, per network (Figure 7)",
           input = "frugal bench-vbs --json FILE"}

local PLANNERS = {{"vbs", "VBS", "#0072B2"}, {"fbs", "fixed batch (FBS)", "#E69F00"}, {"greedy", "greedy VBS", "#009E73"}}
local PANEL_W, PANEL_H, COLUMNS, TOP = 440, 300, 2, 96
local PAD_L, PAD_R, PAD_T, PAD_B = 64, 16, 28, 44

-- Rows grouped by network, in order of first appearance.
local function networks(data)
  if type(data) ~= "table" or type(data.rows) ~= "table" or #data.rows == 0 then
    error("not bench-vbs results: no \"rows\" (make them with frugal bench-vbs --json FILE)", 0)
  end
  local list, by_name = {}, {}
  for i, r in ipairs(data.rows) do
    if type(r.network) ~= "string" or type(r.budget_bytes) ~= "number" or type(r.planner) ~= "string" then
      error("rows[" .. i .. "] lacks network, budget_bytes or planner", 0)
    end
    if not by_name[r.network] then
      by_name[r.network] = {name = r.network, rows = {}}
      list[#list + 1] = by_name[r.network]
    end
    table.insert(by_name[r.network].rows, r)
  end
  return list
end

-- {{budget, seconds}, ...} sorted by budget for one planner and one field.
local function series(rows, planner, field)
  local pts = {}
  for _, r in ipairs(rows) do
    if r.planner == planner and not r.error and type(r[field]) == "number" then pts[#pts + 1] = {r.budget_bytes, r[field]} end
  end
  table.sort(pts, function(a, b) return a[1] < b[1] end)
  return pts
end

local function range(net)
  local bmin, bmax, tmax = math.huge, 0, 0
  for _, r in ipairs(net.rows) do
    bmin, bmax = math.min(bmin, r.budget_bytes), math.max(bmax, r.budget_bytes)
    for _, f in ipairs({"measured_s_per_sample", "predicted_s_per_sample"}) do
      if type(r[f]) == "number" then tmax = math.max(tmax, r[f]) end
    end
  end
  if bmin == bmax then bmin, bmax = bmin * 0.9, bmax * 1.1 end
  return bmin, bmax, tmax > 0 and tmax or 1e-3
end

local function panel(doc, net, ox, oy)
  local bmin, bmax, tmax = range(net)
  local x = svg.linear(bmin, bmax, ox + PAD_L, ox + PANEL_W - PAD_R)
  local y = svg.linear(0, tmax * 1.1, oy + PANEL_H - PAD_B, oy + PAD_T)
  doc:open_group({class = "panel", id = "panel-" .. net.name:gsub("[^%w_-]", "_")})
  doc:text(ox + PAD_L, oy + 16, net.name, {["font-weight"] = "bold", class = "panel-title"})
  for _, v in ipairs(svg.ticks(0, tmax * 1.1 * 1e3, 5)) do
    doc:line(ox + PAD_L, y(v / 1e3), ox + PANEL_W - PAD_R, y(v / 1e3), {stroke = "#e6e6e6", class = "grid"})
    doc:text(ox + PAD_L - 6, y(v / 1e3) + 4, svg.num(v), {["text-anchor"] = "end", class = "tick"})
  end
  for _, v in ipairs(svg.ticks(bmin / 1e6, bmax / 1e6, 5)) do
    doc:text(x(v * 1e6), oy + PANEL_H - PAD_B + 16, svg.num(v), {["text-anchor"] = "middle", class = "tick"})
  end
  doc:line(ox + PAD_L, oy + PANEL_H - PAD_B, ox + PANEL_W - PAD_R, oy + PANEL_H - PAD_B, {class = "axis"})
  doc:line(ox + PAD_L, oy + PAD_T, ox + PAD_L, oy + PANEL_H - PAD_B, {class = "axis"})
  doc:text(ox + (PANEL_W + PAD_L) / 2, oy + PANEL_H - 8, "budget (MB)", {["text-anchor"] = "middle"})
  doc:text(ox + 14, oy + PANEL_H / 2, "ms per sample", {["text-anchor"] = "middle",
                                                        transform = string.format("rotate(-90 %s %s)", svg.num(ox + 14),
                                                                                  svg.num(oy + PANEL_H / 2))})
  for _, p in ipairs(PLANNERS) do
    local function scaled(pts)
      local out = {}
      for i, pt in ipairs(pts) do out[i] = {x(pt[1]), y(pt[2])} end
      return out
    end
    local predicted = series(net.rows, p[1], "predicted_s_per_sample")
    if #predicted > 1 then
      doc:polyline(scaled(predicted), {class = "series predicted " .. p[1], stroke = p[3], ["stroke-width"] = 1.5,
                                       ["stroke-dasharray"] = "5 4"})
    end
    local measured = series(net.rows, p[1], "measured_s_per_sample")
    if #measured > 1 then
      doc:polyline(scaled(measured), {class = "series measured " .. p[1], stroke = p[3], ["stroke-width"] = 2})
    end
    for _, pt in ipairs(measured) do
      doc:circle(x(pt[1]), y(pt[2]), 3.5, {class = "point " .. p[1], fill = p[3]},
                 string.format("%s at %.3g MB: %.3g ms per sample (measured)", p[2], pt[1] / 1e6, pt[2] * 1e3))
    end
  end
  doc:close_group()
end

function M.draw(data, title)
  local nets = networks(data)
  local rows = math.ceil(#nets / COLUMNS)
  local columns = math.min(#nets, COLUMNS)
  local subtitle = string.format("a request of %s samples; solid with dots: measured, dashed: predicted by the " ..
    "planner from the cost table", tostring(data.batch or "?"))
  local width = math.max(columns * PANEL_W + 24, svg.text_width(subtitle) + 24)  -- one panel: the text is wider
  local doc = svg.document(width, TOP + rows * PANEL_H + 12, title or "time per sample against budget")
  doc:text(12, 22, title or "Time per sample against the memory budget", {["font-size"] = 16, ["font-weight"] = "bold",
                                                                         class = "title"})
  doc:text(12, 42, subtitle, {class = "subtitle"})
  local legend = {}
  for _, p in ipairs(PLANNERS) do legend[#legend + 1] = {p[2], p[3]} end
  legend[#legend + 1] = {"predicted", "#555", true}
  doc:legend(12, 68, legend)
  for i, net in ipairs(nets) do
    panel(doc, net, 12 + ((i - 1) % COLUMNS) * PANEL_W, TOP + ((i - 1) // COLUMNS) * PANEL_H)
  end
  return doc:render()
end

return M
