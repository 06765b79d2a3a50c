-- frugal gate: insert LKAM kernel gates into a dense CNN, calibrated to switch on a given fraction of kernels
-- Each gate (GlobalAveragePool, a 1x1 conv with random weights, Sigmoid, a
-- threshold) switches the output channels of one conv per sample; its bias is
-- set, gate after gate in graph order, so that --activity of the kernels are
-- on over the calibration batch. The result is ordinary ONNX (docs/GATING.md).
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  arguments = {{"model", "the dense model: an ONNX file or zoo:NAME"}},
  options = {
    {"output", "output", "where to write the gated model (.onnx); required", short = "o",
     default_text = "none: required"},
    {"activity", "number", "fraction of kernels on over the calibration batch, in [0, 1]", min = 0, max = 1,
     default = 0.5},
    {"layers", "string", "comma-separated Conv node names to gate",
     default_text = "every conv that can be gated (frugal info MODEL lists why others cannot)"},
    {"seed", "integer", "seed of the gates' random 1x1 weights and of the random calibration input", min = 0,
     default = 0},
    {"threshold", "number", "the switch threshold written into the model, inside (0, 1)", default = 0.5},
    {"input", "input", "a float32 .npy calibration batch", default_text = "--batch random samples from --seed"},
    {"batch", "integer", "samples in the random calibration batch", min = 1, default = 8},
    {"executor", "string", "executor that runs the calibration batch", default = "cpu"},
  },
  json = "print the report as one JSON object",
})
if not a.output then common.fail("give -o OUT.onnx: where to write the gated model", 2) end
if not (a.threshold > 0 and a.threshold < 1) then
  common.fail("--threshold " .. a.threshold .. " must be inside (0, 1) (0 and 1 switch everything on or off)", 2)
end

local m = common.load_model(a.model)
local layers
if a.layers then
  layers = {}
  for name in a.layers:gmatch("[^,]+") do layers[#layers + 1] = name end
end
local x = a.input and common.try(frugal.load_npy, a.input) or nil
local gated, report = common.try(frugal.gate, m, {activity = a.activity, layers = layers, seed = a.seed,
  threshold = a.threshold, input = x, batch = a.batch, executor = a.executor})
common.try(gated.save, gated, a.output)

if a.json then
  report.model = a.model
  report.output = a.output
  report.requested_activity = a.activity
  print(frugal.json_encode(report, 1))
  return
end
local rows = {{"gated conv", "kernels", "on (calibration)"}}
local on, total = 0, 0
for _, g in ipairs(report.gated) do
  rows[#rows + 1] = {g.conv, tostring(g.channels), string.format("%.1f%%", 100 * g.activity)}
  on, total = on + g.activity * g.channels, total + g.channels
end
print(fmt.table(rows, {nil, "r", "r"}, "  "))
print(string.format("activity    %.1f%% of %d gated kernels on (asked %.1f%%), threshold %g, calibration %s",
  total > 0 and 100 * on / total or 0, total, 100 * a.activity, a.threshold,
  a.input or (a.batch .. " random samples, seed " .. a.seed)))
for _, s in ipairs(report.skipped) do print("dense       " .. s.conv .. ": " .. s.reason) end
print("wrote       " .. a.output)
