-- frugal zoo: write a network of the built-in zoo to an ONNX file, or list them
-- Zoo networks have torchvision's layouts with deterministic random weights and
-- realistic BatchNorm statistics; toy_* networks are tiny, for tests.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local PARAMETERS_NOTE = "parameters: learned ones, as torchvision counts them (weights, biases, BatchNorm scale " ..
                        "and shift); initializer values: every float stored in the ONNX file (also BatchNorm " ..
                        "running mean and variance)"
local a = argparse.parse(arg, {
  arguments = {{"name", "a zoo network (frugal zoo --list shows them), or a gated variant: NAME@gate0.5 " ..
                 "(kernel gates at that activity) or NAME@paper (docs/GATING.md)", optional = true}},
  options = {
    {"output", "output", "where to write the ONNX model (required with NAME)", short = "o"},
    {"seed", "integer", "seed of the random weights (same seed, same bytes)", default = 1, min = 0},
    {"list", "flag", "list the networks: parameters, initializer values, input and output shapes (builds " ..
     "every network: a few seconds)"},
  },
  progress = true,
  json = "with --list: print the list as JSON",
  notes = PARAMETERS_NOTE,
})
local progress = require("progress").new(a.quiet)

if a.list then
  if a.name or a.output then common.fail("--list takes no NAME or -o", 2) end
  local list = {}
  for _, name in ipairs(frugal.zoo_names()) do
    progress:status("building " .. name)
    local m <close> = frugal.zoo(name)  -- the big ones hold hundreds of MB of weights: freed at once
    list[#list + 1] = {name = name, parameters = m:parameter_count(), initializer_values = m:initializer_value_count(),
                       input = m:inputs()[1].shape, output = m:outputs()[1].shape}
  end
  progress:done()
  if a.json then
    print(frugal.json_encode(list, 1))
    return
  end
  local rows = {{"name", "parameters", "initializer values", "input", "output"}}
  for _, n in ipairs(list) do
    rows[#rows + 1] = {n.name, fmt.commas(n.parameters), fmt.commas(n.initializer_values), fmt.shape(n.input),
                       fmt.shape(n.output)}
  end
  print(fmt.table(rows, {nil, "r", "r"}, ""))
  print(PARAMETERS_NOTE)
  return
end

if a.json then common.fail("--json goes with --list", 2) end
if not a.name then common.fail("missing NAME (or --list)", 2) end
if not a.output then common.fail("missing -o model.onnx: where to write " .. a.name, 2) end
progress:stage("building " .. a.name)
local m = common.load_model("zoo:" .. a.name, a.seed)
progress:stage("writing " .. a.output)
common.try(m.save, m, a.output)
progress:done()
print(string.format("wrote %s: %s (seed %d), %s parameters (%s initializer values), input %s", a.output, a.name, a.seed,
  fmt.commas(m:parameter_count()), fmt.commas(m:initializer_value_count()), fmt.shape(m:inputs()[1].shape)))
