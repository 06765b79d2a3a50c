-- frugal run: run a model on a batch: time per image, peak arena bytes, top-5 classes
-- usage: frugal run [MODEL.onnx | zoo:NAME] [--batch N] [--budget 64MB] [--input x.npy]
--                   [--output y.npy] [--threads T] [--executor cpu|vulkan] [--plan plan.json]
--                   [--repeat R] [--seed S]
--   MODEL          an ONNX file or zoo:NAME (default: zoo:resnet18)
--   --batch N      samples in the batch (default 1, or the --input's first dimension)
--   --budget B     the executor's arena, e.g. 64MB (default: exactly what the whole
--                  batch needs, as the executor counts it; printed). A budget too
--                  small is refused with the smallest budget that works.
--   --input F      a float32 .npy input (default: uniform random in [-1, 1), --seed S)
--   --output F     write the output to this .npy (several outputs: F with the
--                  output's name before .npy)
--   --plan F       run a plan made by `frugal plan` (its budget unless --budget)
--   --repeat R     run R times and report the median time (default 3: the first
--                  run of a process pays for thread start-up and first touches)
-- For a classifier (output [N,K]) the top-5 classes of the first sample are printed.
-- Progress goes to stderr when it is a terminal.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")
local progress = require("progress").new()

local usage = "frugal run [MODEL.onnx | zoo:NAME] [--batch N] [--budget 64MB] [--input x.npy] " ..
              "[--output y.npy] [--threads T] [--executor cpu|vulkan] [--plan plan.json] [--repeat R] [--seed S]"
local a = argparse.parse(arg, {
  usage = usage,
  optional_positional = {"model"},
  options = {batch = "integer", budget = "bytes", input = "string", output = "string", threads = "integer",
             executor = "string", plan = "string", ["repeat"] = "integer", seed = "integer"},
  defaults = {executor = "cpu", ["repeat"] = 3, seed = 0},
})
a.model = a.model or "zoo:resnet18"
if a.batch and a.batch < 1 then common.fail("--batch must be >= 1, got " .. a.batch, 2) end
if a["repeat"] < 1 then common.fail("--repeat must be >= 1, got " .. a["repeat"], 2) end
if a.threads and a.threads < 1 then common.fail("--threads must be >= 1, got " .. a.threads, 2) end
if a.seed < 0 then common.fail("--seed must be >= 0, got " .. a.seed, 2) end

progress:status("loading " .. a.model)
local m = common.load_model(a.model)

local x, batch
if a.input then
  x = common.try(frugal.load_npy, a.input)
  batch = x:size(1)
  if a.batch and a.batch ~= batch then
    common.fail("--batch " .. a.batch .. " disagrees with --input " .. a.input .. ", which holds " .. batch .. " samples", 2)
  end
else
  batch = a.batch or 1
  x = common.try(frugal.random_input, m, batch, a.seed)
end

progress:status("preparing " .. m:name() .. " on " .. a.executor)
local ex = common.try(frugal.executor, m, {executor = a.executor, threads = a.threads, budget = a.budget})
local run_opts = nil
if a.plan then
  local plan = common.try(frugal.load_json, a.plan)
  if not a.budget and plan.budget_bytes then common.try(ex.set_budget, ex, plan.budget_bytes) end
  run_opts = {plan = plan}
end

local y, report
local times = {}
for r = 1, a["repeat"] do
  progress:status(string.format("running %d sample%s (%d/%d)", batch, batch == 1 and "" or "s", r, a["repeat"]))
  y, report = common.try(ex.run, ex, x, run_opts)
  times[#times + 1] = report.seconds
end
progress:done()
table.sort(times)
local seconds = times[(#times + 1) // 2]

local d = ex:describe()
print("model       " .. m:origin() .. " ('" .. m:name() .. "')")
print("executor    " .. a.executor .. (d.device and (", device: " .. d.device) or ""))
print("batch       " .. batch .. (a.input and (" from " .. a.input) or " (random input, seed " .. a.seed .. ")") ..
      (a.plan and (", plan " .. a.plan .. " (" .. #report.steps .. " steps)") or ", whole batch layer by layer"))
print(string.format("time        %s per image (%s for the batch%s)", common.seconds(seconds / batch), common.seconds(seconds),
      #times > 1 and (", median of " .. #times .. " runs") or ", one run"))
local budget_note
if report.auto_budget then
  budget_note = "arena sized by the executor to exactly what this run needs"
elseif report.budget_bytes then
  budget_note = "budget " .. common.bytes_exact(report.budget_bytes)
end
print("peak arena  " .. common.bytes_exact(report.peak_bytes) .. (budget_note and (" (" .. budget_note .. ")") or ""))
if report.predicted_peak_bytes and report.predicted_peak_bytes ~= report.peak_bytes then
  print("            (the executor predicted " .. common.bytes(report.predicted_peak_bytes) .. ")")
end

-- Outputs: print shapes; top-5 for [N,K] classifiers.
local outputs = y
if getmetatable(y) == getmetatable(x) then outputs = {[m:outputs()[1].name] = y} end
local names = {}
for name in pairs(outputs) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  local t = outputs[name]
  print("output      " .. name .. " " .. fmt.shape(t:size()))
  if t:dim() == 2 and t:size(2) >= 2 then
    local k = t:size(2)
    local scores = {}
    for c = 1, k do scores[c] = {c - 1, t:get(1, c)} end
    table.sort(scores, function(p, q) return p[2] > q[2] end)
    local rows = {{"rank", "class", "score"}}
    for r = 1, math.min(5, k) do
      rows[#rows + 1] = {tostring(r), tostring(scores[r][1]), string.format("%.5g", scores[r][2])}
    end
    print("top-" .. math.min(5, k) .. " of sample 1 (class = 0-based index into the " .. k .. " outputs)")
    print(fmt.table(rows, {"r", "r", "r"}, "  "))
  end
end

if a.output then
  if #names == 1 then
    common.try(outputs[names[1]].save_npy, outputs[names[1]], a.output)
    print("wrote       " .. a.output)
  else
    for _, name in ipairs(names) do
      local path = a.output:gsub("%.npy$", "") .. "_" .. name:gsub("[^%w_.-]", "_") .. ".npy"
      common.try(outputs[name].save_npy, outputs[name], path)
      print("wrote       " .. path)
    end
  end
end
