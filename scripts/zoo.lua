-- frugal zoo: write a network of the built-in zoo to an ONNX file, or list them
-- usage: frugal zoo NAME -o model.onnx [--seed S]
--        frugal zoo --list
--   NAME         a zoo network (frugal zoo --list shows them)
--   -o FILE      where to write the ONNX model (--output FILE also works)
--   --seed S     seed of the random weights (default 1; same seed, same bytes)
--   --list       names, parameter counts (torchvision's, and all initializers)
--                and input shapes (builds every network:
--                a few seconds)
-- Zoo networks have torchvision's layouts with deterministic random weights and
-- realistic BatchNorm statistics; toy_* networks are tiny, for tests.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")
local progress = require("progress").new()

local usage = "frugal zoo NAME -o model.onnx [--seed S] | frugal zoo --list"
local a = argparse.parse(common.short_output(arg, "output"), {
  usage = usage,
  optional_positional = {"name"},
  options = {output = "string", seed = "integer", list = "flag"},
  defaults = {seed = 1},
})
if a.seed < 0 then common.fail("--seed must be >= 0, got " .. a.seed, 2) end

if a.list then
  if a.name or a.output then common.fail("--list takes no NAME or -o\nusage: " .. usage, 2) end
  local rows = {{"name", "parameters", "initializers", "input", "output"}}
  for _, name in ipairs(frugal.zoo_names()) do
    progress:status("building " .. name)
    local m <close> = frugal.zoo(name)  -- the big ones hold hundreds of MB of weights: freed at once
    rows[#rows + 1] = {name, fmt.commas(m:torchvision_parameter_count()), fmt.commas(m:parameter_count()),
                       fmt.shape(m:inputs()[1].shape),
                       fmt.shape(m:outputs()[1].shape)}
  end
  progress:done()
  print(fmt.table(rows, {nil, "r", "r"}, ""))
  print("parameters: as torchvision counts them (weights, biases, BatchNorm scale and shift);")
  print("initializers: every float initializer in the ONNX file (also BatchNorm running mean and variance)")
  return
end

if not a.name then common.fail("missing NAME (or --list)\nusage: " .. usage, 2) end
if not a.output then common.fail("missing -o model.onnx: where to write " .. a.name .. "\nusage: " .. usage, 2) end
progress:status("building " .. a.name)
local m = common.try(frugal.zoo, a.name, {seed = a.seed})
progress:status("writing " .. a.output)
common.try(m.save, m, a.output)
progress:done()
print(string.format("wrote %s: %s (seed %d), %s parameters, input %s", a.output, a.name, a.seed,
  fmt.commas(m:parameter_count()), fmt.shape(m:inputs()[1].shape)))
