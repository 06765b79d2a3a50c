-- Text formatting shared by the sub-command scripts.
local M = {}

-- 4089184256 -> "4,089,184,256"
function M.commas(n)
  if n == nil then return "?" end
  local s = tostring(math.tointeger(n) or n)
  local sign, int, rest = s:match("^(%-?)(%d+)(.*)$")
  if not int then return s end
  int = int:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  return sign .. int .. rest
end

-- 4089184256 -> "4.09 G" (metric prefixes for counts)
function M.si(n)
  if n == nil then return "?" end
  local units = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}
  for _, u in ipairs(units) do
    if math.abs(n) >= u[1] then return string.format("%.3g %s", n / u[1], u[2]) end
  end
  return tostring(n)
end

-- {1, 3, "H", 224} -> "[1, 3, H, 224]"; nil -> "?"
function M.shape(s)
  if s == nil then return "?" end
  local parts = {}
  for i, d in ipairs(s) do parts[i] = tostring(d) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- Rows of strings as left-aligned columns (right-aligned where align[c] == "r").
function M.table(rows, align, indent)
  align = align or {}
  indent = indent or ""
  local widths = {}
  for _, r in ipairs(rows) do
    for c, cell in ipairs(r) do widths[c] = math.max(widths[c] or 0, #cell) end
  end
  local lines = {}
  for _, r in ipairs(rows) do
    local cells = {}
    for c, cell in ipairs(r) do
      local pad = string.rep(" ", widths[c] - #cell)
      cells[c] = align[c] == "r" and pad .. cell or (c < #r and cell .. pad or cell)
    end
    lines[#lines + 1] = indent .. table.concat(cells, "  ")
  end
  return table.concat(lines, "\n")
end

return M
