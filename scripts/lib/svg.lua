-- A small SVG writer for frugal's figures (frugal plot): elements with
-- escaped text and attributes in a fixed order (the same input gives the same
-- bytes), linear scales, "nice" axis ticks, and a colour-blind-safe palette.
--
--   local svg = require("svg")
--   local doc = svg.document(640, 400, "title for screen readers")
--   doc:rect(10, 10, 50, 20, {class = "bar", fill = svg.palette[1]}, "tooltip")
--   doc:text(10, 50, "label", {["text-anchor"] = "end"})
--   io.write(doc:render())
local M = {}

-- Okabe and Ito's palette: distinguishable with every common colour blindness.
M.palette = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}
M.font = "DejaVu Sans, Helvetica, Arial, sans-serif"

function M.escape(s)
  return (tostring(s):gsub("[&<>\"']", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                         ["'"] = "&apos;"}))
end

-- Numbers with at most 2 decimals ("12.5", "3"), so files stay small and stable.
local function num(v)
  if math.type(v) == "integer" then return tostring(v) end
  local s = string.format("%.2f", v):gsub("0+$", ""):gsub("%.$", "")
  return s == "-0" and "0" or s
end
M.num = num

local function attributes(attrs)
  local keys = {}
  for k in pairs(attrs or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = attrs[k]
    parts[#parts + 1] = string.format(' %s="%s"', k, M.escape(type(v) == "number" and num(v) or v))
  end
  return table.concat(parts)
end

local Doc = {}
Doc.__index = Doc

function M.document(width, height, title)
  local d = setmetatable({width = width, height = height, parts = {}}, Doc)
  d.parts[1] = string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" ' ..
    'font-family="%s" font-size="12">', num(width), num(height), num(width), num(height), M.escape(M.font))
  d.parts[2] = "<title>" .. M.escape(title) .. "</title>"
  d.parts[3] = string.format('<rect class="background" x="0" y="0" width="%s" height="%s" fill="white"/>',
                             num(width), num(height))
  return d
end

-- An element with optional <title> (a tooltip in browsers) or text content.
function Doc:element(name, attrs, tooltip, content)
  local open = "<" .. name .. attributes(attrs)
  if not tooltip and not content then
    self.parts[#self.parts + 1] = open .. "/>"
    return
  end
  self.parts[#self.parts + 1] = open .. ">" .. (tooltip and ("<title>" .. M.escape(tooltip) .. "</title>") or "") ..
                                (content and M.escape(content) or "") .. "</" .. name .. ">"
end

function Doc:rect(x, y, w, h, attrs, tooltip)
  local a = {x = x, y = y, width = math.max(w, 0), height = math.max(h, 0)}
  for k, v in pairs(attrs or {}) do a[k] = v end
  self:element("rect", a, tooltip)
end

function Doc:line(x1, y1, x2, y2, attrs)
  local a = {x1 = x1, y1 = y1, x2 = x2, y2 = y2, stroke = "#444"}
  for k, v in pairs(attrs or {}) do a[k] = v end
  self:element("line", a)
end

function Doc:text(x, y, s, attrs)
  local a = {x = x, y = y}
  for k, v in pairs(attrs or {}) do a[k] = v end
  self:element("text", a, nil, s)
end

function Doc:circle(cx, cy, r, attrs, tooltip)
  local a = {cx = cx, cy = cy, r = r}
  for k, v in pairs(attrs or {}) do a[k] = v end
  self:element("circle", a, tooltip)
end

-- points: {{x, y}, ...}
function Doc:polyline(points, attrs)
  local p = {}
  for i, xy in ipairs(points) do p[i] = num(xy[1]) .. "," .. num(xy[2]) end
  local a = {points = table.concat(p, " "), fill = "none"}
  for k, v in pairs(attrs or {}) do a[k] = v end
  self:element("polyline", a)
end

function Doc:open_group(attrs) self.parts[#self.parts + 1] = "<g" .. attributes(attrs) .. ">" end
function Doc:close_group() self.parts[#self.parts + 1] = "</g>" end

function Doc:render()
  return table.concat(self.parts, "\n") .. "\n</svg>\n"
end

-- v in [d0, d1] -> [r0, r1]
function M.linear(d0, d1, r0, r1)
  local span = (d1 - d0) ~= 0 and (d1 - d0) or 1
  return function(v) return r0 + (v - d0) * (r1 - r0) / span end
end

-- About n round values covering [lo, hi] (1, 2 or 5 times a power of ten apart).
function M.ticks(lo, hi, n)
  if hi <= lo then return {lo} end
  local raw = (hi - lo) / math.max(n, 1)
  local p = 10 ^ math.floor(math.log(raw, 10))
  local step = p
  for _, m in ipairs({1, 2, 5, 10}) do
    if m * p >= raw then step = m * p; break end
  end
  local out = {}
  for v = math.ceil(lo / step) * step, hi + step * 1e-9, step do out[#out + 1] = v end
  return out
end

-- Approximate width of text at the document's 12 px font.
function M.text_width(s, size)
  return #tostring(s) * (size or 12) * 0.6
end

-- A figure's heading: title (bold), subtitle and an optional line of explanation.
function Doc:heading(title, subtitle, explain)
  self:text(12, 22, title, {["font-size"] = 16, ["font-weight"] = "bold", class = "title"})
  self:text(12, 42, subtitle, {class = "subtitle"})
  if explain then self:text(12, 60, explain, {class = "subtitle", fill = "#555"}) end
end

-- A row of coloured swatches with labels at (x, y); items: {{label, colour, dashed}}.
function Doc:legend(x, y, items)
  for _, it in ipairs(items) do
    if it[3] then
      self:line(x, y - 4, x + 18, y - 4, {stroke = it[2], ["stroke-width"] = 2, ["stroke-dasharray"] = "4 3"})
    else
      self:rect(x, y - 10, 18, 10, {fill = it[2], class = "swatch"})
    end
    self:text(x + 24, y, it[1], {class = "legend"})
    x = x + 24 + M.text_width(it[1]) + 18
  end
end

return M
