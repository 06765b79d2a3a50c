-- frugal plot bench-gate: gated against dense per network and activity, from
-- `frugal bench-gate --json`. Per row (network, activity), two bars: the MACs
-- the gated network runs as a share of the dense one's (what an ideal kernel
-- would save) and its measured time as a share of the dense time, against a
-- line at 1 (dense). A time bar longer than its MAC bar is overhead.
local svg = require("svg")

local M = {about = "gated against dense: time and MAC ratios per network and activity (bench-gate)",
           input = "frugal bench-gate --json > FILE"}

local ROW, TOP, MAC_COLOUR, TIME_COLOUR = 30, 104, "#56B4E9", "#0072B2"

local function check(data)
  if type(data) ~= "table" or type(data.rows) ~= "table" or #data.rows == 0 then
    error("not bench-gate results (no \"rows\"): make them with frugal bench-gate --json > FILE", 0)
  end
  for i, r in ipairs(data.rows) do
    if type(r.net) ~= "string" or type(r.time_ratio) ~= "number" or type(r.mac_ratio) ~= "number" then
      error("rows[" .. i .. "] has no net, time_ratio or mac_ratio", 0)
    end
  end
end

local function row_label(r)
  local act = r.variant == "paper" and "paper's profile" or ("activity " .. tostring(r.variant or r.activity))
  if type(r.measured_activity) == "number" then act = act .. string.format(" (ran %.2f)", r.measured_activity) end
  return r.net .. ", " .. act
end

local function draw_row(doc, x, y, r)
  local tip = string.format("%s: time %.3f of dense, MACs %.3f of dense", row_label(r), r.time_ratio, r.mac_ratio)
  doc:rect(x(0), y + 3, x(r.mac_ratio) - x(0), 10, {class = "bar macs", fill = MAC_COLOUR}, tip)
  doc:rect(x(0), y + 14, x(r.time_ratio) - x(0), 10, {class = "bar time", fill = TIME_COLOUR}, tip)
  doc:text(x(r.time_ratio) + 4, y + 23, string.format("%.2f", r.time_ratio), {class = "value", ["font-size"] = 10})
end

function M.draw(data, title)
  check(data)
  local label_w, max = 16, 1.1
  for _, r in ipairs(data.rows) do
    label_w = math.max(label_w, svg.text_width(row_label(r)) + 16)
    max = math.max(max, r.time_ratio * 1.08, r.mac_ratio * 1.08)
  end
  local plot_w = 480
  local x = svg.linear(0, max, label_w, label_w + plot_w)
  local bottom = TOP + #data.rows * ROW
  local subtitle = string.format("%s executor%s, batch %s", tostring(data.executor or "?"),
    data.device and (" on " .. tostring(data.device)) or "", tostring(data.batch or "?"))
  local explain = "bars as a share of the dense network: MACs run (what skipping saves at best) and time measured"
  local width = math.max(label_w + plot_w + 48, svg.text_width(explain) + 24)
  local doc = svg.document(width, bottom + 48, title or "gated against dense")
  doc:heading(title or "Gated convolution against dense: time and MACs", subtitle, explain)
  doc:legend(12, 82, {{"MACs, gated / dense", MAC_COLOUR}, {"time, gated / dense", TIME_COLOUR}})
  for _, v in ipairs(svg.ticks(0, max, 6)) do
    doc:line(x(v), TOP - 6, x(v), bottom, {stroke = "#e0e0e0", class = "grid"})
    doc:text(x(v), bottom + 16, svg.num(v), {["text-anchor"] = "middle", class = "tick"})
  end
  doc:text(label_w + plot_w / 2, bottom + 36, "share of the dense network", {["text-anchor"] = "middle"})
  for i, r in ipairs(data.rows) do
    local y = TOP + (i - 1) * ROW
    doc:text(label_w - 8, y + 18, row_label(r), {["text-anchor"] = "end", class = "row"})
    draw_row(doc, x, y, r)
  end
  doc:line(x(1), TOP - 10, x(1), bottom, {class = "dense", stroke = "#D55E00", ["stroke-width"] = 2,
                                          ["stroke-dasharray"] = "6 4"})
  doc:text(x(1), TOP - 14, "dense", {["text-anchor"] = "middle", fill = "#D55E00", class = "dense-label"})
  return doc:render()
end

return M
