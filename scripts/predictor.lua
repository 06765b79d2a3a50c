-- frugal predictor: train a per-layer time predictor on profiled zoo networks (docs/PREDICTOR.md)
-- `frugal predictor train` profiles a basis of networks, with channel-pruned
-- variants, at a few batch sizes (profiles are cached) and trains the xgb
-- predictor; `frugal profile MODEL --predict FILE` then fills cost tables.
local argparse = require("argparse")
local basis = require("predictor_basis")
local common = require("cli_common")

local a = argparse.parse(arg, {
  arguments = {{"action", "what to do: train"}},
  options = {
    {"nets", "string", "the basis: zoo networks, comma-separated (gemm_ladder: large Gemms; mobilenet_v2_silu: " ..
     "SiLU; docs/PREDICTOR.md)", default = "resnet18,mobilenet_v2,squeezenet1_1,mobilenet_v2_silu,gemm_ladder"},
    {"batches", "list", "batch sizes to measure", min = 1, max = 1024, default_text = "1,2,4,8,12"},
    {"pruning", "list", "pruning levels in percent (0 = the network itself): each conv that can shrink alone " ..
     "loses that share of its filters", min = 0, max = 95, default_text = "0,30,50,70,90"},
    {"output", "output", "the predictor file to write (required)", short = "o"},
    {"mode", "string", "forest (random forest, as perf4sight) or boosted (gradient boosting)", default = "forest",
     choices = {"forest", "boosted"}},
    {"seed", "integer", "the training seed", default = 0, min = 0},
    {"predictor", "string", "predictor plugin", default = "xgb"},
    {"executor", "string", "executor plugin", default = "cpu"},
    {"threads", "integer", "the executor's threads", min = 1, default_text = "one per core"},
    {"repeat", "integer", "timed runs per layer and batch size", default = 5, min = 1},
    {"no_cache", "flag", "profile again even where a profile is cached"},
  },
  progress = true,
})
if a.action ~= "train" then common.fail("unknown action '" .. a.action .. "': the action is train", 2) end
if not a.output then common.fail("give the predictor file to write: -o FILE", 2) end

local progress = require("progress").new(a.quiet)
local nets, levels, batches = basis.names(a.nets), a.pruning or {0, 30, 50, 70, 90}, a.batches or {1, 2, 4, 8, 12}
local profiled = basis.profile_all(nets, levels, batches,
  {executor = a.executor, threads = a.threads, repeats = a["repeat"], cache = not a.no_cache}, progress)
local cached, measured_s = 0, 0
for _, p in ipairs(profiled) do
  if p.cached then cached = cached + 1 else measured_s = measured_s + p.seconds end
end
progress:stage(string.format("training (%s) on %d profiles", a.mode, #profiled))
local header = common.try(frugal.train_predictor, profiled,
  {output = a.output, predictor = a.predictor, mode = a.mode, seed = a.seed})
progress:done()
print(string.format("basis       %s at pruning %s%%, batch sizes %s", table.concat(nets, ", "),
  table.concat(levels, ","), table.concat(batches, ",")))
print(string.format("profiles    %d (%d cached, %d measured in %s) on %s (%s)", #profiled, cached,
  #profiled - cached, common.seconds(measured_s), tostring(header.executor), tostring(header.device)))
print(string.format("trained     %s on %d (layer, batch) points; layer families %s", header.mode, header.points,
  table.concat(header.families, ", ")))
print("wrote       " .. a.output)
