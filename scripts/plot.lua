-- frugal plot: draw a plan or benchmark results as an SVG figure (open it in a browser)
-- Figures are SVG written directly by scripts/lib/svg.lua (README: why not
-- gnuplot). Each figure is a module scripts/lib/figure_*.lua with `about`,
-- `input` and draw(data, title) -> SVG text, registered in FIGURES below.
local argparse = require("argparse")
local common = require("cli_common")

local FIGURES = {
  plan = require("figure_plan"),
  memory = require("figure_memory"),
  ["bench-vbs"] = require("figure_bench_vbs"),
  ["bench-gate"] = require("figure_bench_gate"),
}
local NAMES = {"plan", "memory", "bench-vbs", "bench-gate"}

local lines = {}
for _, name in ipairs(NAMES) do
  lines[#lines + 1] = string.format("  %-10s %s; INPUT: %s", name, FIGURES[name].about, FIGURES[name].input)
end
local a = argparse.parse(arg, {
  arguments = {{"figure", "which figure: " .. table.concat(NAMES, ", ") .. " (below)"},
               {"input", "the JSON file to draw from"}},
  options = {
    {"output", "output", "where to write the SVG", short = "o", default_text = "INPUT with -FIGURE.svg for .json"},
    {"title", "string", "the figure's title", default_text = "the figure's own"},
  },
  notes = "figures:\n" .. table.concat(lines, "\n"),
})
local figure = FIGURES[a.figure]
if not figure then
  common.fail("unknown figure '" .. a.figure .. "' (figures: " .. table.concat(NAMES, ", ") .. ")", 2)
end
local output = a.output or (a.input:gsub("%.json$", "") .. "-" .. a.figure .. ".svg")
if not a.output then common.check_writable(output, "--output") end

local data = common.try(frugal.load_json, a.input)
local ok, text = pcall(figure.draw, data, a.title)
if not ok then
  if frugal.debug then error(text, 0) end
  common.fail(a.input .. ": " .. common.message(text))
end
local f, err = io.open(output, "w")
if not f then common.fail("--output: cannot write " .. err) end
f:write(text)
f:close()
print("wrote " .. output)
