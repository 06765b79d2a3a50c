-- frugal run: run a model on a batch: time per image, peak arena bytes, top-5 classes
-- For a classifier (an output of size [N, K]) the top-5 classes of the first
-- sample are printed; --json prints all of it as one JSON object.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  arguments = {{"model", "an ONNX file or zoo:NAME", default = "zoo:resnet18"}},
  options = {
    {"batch", "integer", "samples in the batch", min = 1,
     default_text = "1; the --input's first dimension; the --plan's request"},
    {"budget", "bytes", "the executor's arena, e.g. 64MB; a budget too small is refused with the smallest " ..
     "one that works", min = 1, default_text = "the --plan's budget, else what the executor picks: the run's " ..
     "peak (cpu: or a little more where that moves fewer bytes)"},
    {"input", "input", "a float32 .npy input; NaN or Inf in it is an error naming the file",
     default_text = "uniform random in [-1, 1) from --seed"},
    {"allow_nonfinite", "flag", "run an --input that holds NaN or Inf anyway (a warning says so)"},
    {"output", "output", "write the output to this .npy (several outputs: one file each, the output's name " ..
     "before .npy)", short = "o", default_text = "not written"},
    {"plan", "input", "run a plan made by frugal plan (its budget and request size unless given)",
     default_text = "the executor's own schedule of the whole batch (--schedule)"},
    {"executor", "string", "executor plugin: cpu, vulkan or one on FRUGAL_PLUGIN_PATH", default = "cpu"},
    {"threads", "integer", "the executor's threads", min = 1, default_text = "one per core"},
    {"repeat", "integer", "timed runs, the median kept (the first run of a process pays for thread start-up " ..
     "and first touches)", default = 3, min = 1},
    {"seed", "integer", "seed of the random input", default = 0, min = 0},
    {"gate_threshold", "number", "threshold of every kernel gate in the model, in [0, 1] (docs/GATING.md; " ..
     "0: every kernel on, 1: off); both executors run gates gated", min = 0, max = 1,
     default_text = "the model's own"},
    {"winograd", "string", "3x3 stride-1 convs on Winograd kernels: auto (cpu: oneDNN's where it has them, " ..
     "AVX-512; vulkan: where measured faster), off (less workspace and weight memory), or on vulkan f23 / f43 " ..
     "to force one", choices = {"auto", "off", "f23", "f43"}, default_text = "auto"},
    {"weight_storage", "string", "vulkan: the kernels of one-group convs (direct and Winograd) and of fully " ..
     "connected layers as float32 or as halves, half the bytes (docs/VULKAN.md, \"fp16 weights\")", choices = {"fp32", "fp16"},
     default_text = "fp32"},
    {"schedule", "string", "without --plan, the cpu executor's order: cache (its first layers on chunks of " ..
     "samples that stay in the last-level cache, then the rest on the whole batch) or whole (every layer on " ..
     "the whole batch at once); vulkan always runs the whole batch", choices = {"cache", "whole"},
     default_text = "cache"},
  },
  progress = true,
  json = "print the results as one JSON object (report, timings, outputs with their top-5)",
})
local progress = require("progress").new(a.quiet)

progress:stage("loading " .. a.model)
local m = common.load_model(a.model)

local plan
if a.plan then
  plan = common.try(frugal.load_json, a.plan)
  if type(plan) ~= "table" or type(plan.steps) ~= "table" then
    common.fail("--plan " .. a.plan .. " is not a plan (no \"steps\"): make one with frugal plan -o FILE")
  end
end

local x, batch
if a.input then
  x = common.try(frugal.load_npy, a.input, {nonfinite = a.allow_nonfinite and "warn" or "error"})
  batch = x:size(1)
  if a.batch and a.batch ~= batch then
    common.fail("--batch " .. a.batch .. " disagrees with --input " .. a.input .. ", which holds " .. batch .. " samples", 2)
  end
else
  batch = a.batch or (plan and math.tointeger(plan.batch)) or 1
  x = common.try(frugal.random_input, m, batch, a.seed)
end
if plan and plan.batch and plan.batch ~= batch then
  common.fail(string.format("--plan %s is for a request of %d samples, not %d (%s)", a.plan, plan.batch, batch,
    a.input and ("--input " .. a.input) or ("--batch " .. batch)), 2)
end

progress:stage("preparing " .. m:name() .. " on " .. a.executor)
if a.gate_threshold and #m:gates().gates == 0 then
  common.fail("--gate-threshold: " .. a.model .. " has no kernel gates (frugal info lists near misses)", 2)
end
if a.weight_storage == "fp16" and a.executor ~= "vulkan" then
  common.fail("--weight-storage fp16 is the vulkan executor's option (" .. a.executor .. " keeps its own)", 2)
end
if a.gate_threshold and a.executor ~= "cpu" and a.executor ~= "vulkan" then
  io.stderr:write("warning: --gate-threshold is applied by the cpu and vulkan executors only; " .. a.executor ..
                  " runs the gates densely with the model's threshold\n")
end
-- The executor holds its own (repacked) copy of the weights: the model is given
-- away (consume), each weight freed as the executor takes it, so that the
-- process holds the model about once, not twice, while the executor is made.
local model_name, first_output = m:name(), m:outputs()[1].name
local ex <close> = common.try(frugal.executor, m, {executor = a.executor, threads = a.threads, budget = a.budget,
                                                  gate_threshold = a.gate_threshold, winograd = a.winograd,
                                                  weight_storage = a.weight_storage, schedule = a.schedule,
                                                  consume = true})
m = nil
if plan and not a.budget and plan.budget_bytes then common.try(ex.set_budget, ex, plan.budget_bytes) end

local y, report
local times = {}
progress:stage(string.format("running %d sample%s, %d time%s", batch, batch == 1 and "" or "s", a["repeat"],
  a["repeat"] == 1 and "" or "s"))
for r = 1, a["repeat"] do
  progress:status(string.format("running %d sample%s (%d/%d)", batch, batch == 1 and "" or "s", r, a["repeat"]))
  y, report = common.try(ex.run, ex, x, plan and {plan = plan} or nil)
  times[#times + 1] = report.seconds
end
progress:done()
table.sort(times)
local seconds = times[(#times + 1) // 2]

-- How a run without a plan went: every layer on the whole batch, or the cpu
-- executor's cache schedule (its first layers on chunks of samples).
local function schedule_note(rep)
  local chunked, chunk = {}, nil
  for _, st in ipairs(rep.steps) do
    if st.count < batch then
      chunked[st.layer] = true
      chunk = chunk or st.count
    end
  end
  if not chunk then return "whole batch layer by layer" end
  local n = 0
  for _ in pairs(chunked) do n = n + 1 end
  return string.format("whole batch, its first %d layers on chunks of %d sample%s that stay in the cache", n, chunk,
                       chunk == 1 and "" or "s")
end

-- Outputs by name; the top classes of sample 1 for [N, K] classifiers.
local outputs = frugal.is_tensor(y) and {[first_output] = y} or y
local names = {}
for name in pairs(outputs) do names[#names + 1] = name end
table.sort(names)
local function top_classes(t)
  if t:dim() ~= 2 or t:size(2) < 2 then return nil end
  local values, indices = t[1]:topk(math.min(5, t:size(2)))
  local top = {}
  for r = 1, values:numel() do top[r] = {class = math.tointeger(indices[r]) - 1, score = values[r]} end
  return top
end

local written = {}
if a.output then
  for _, name in ipairs(names) do
    local path = #names == 1 and a.output or (a.output:gsub("%.npy$", "") .. "_" .. name:gsub("[^%w_.-]", "_") .. ".npy")
    common.try(outputs[name].save_npy, outputs[name], path)
    written[#written + 1] = path
  end
end

-- The process's peak resident memory, loading included (Linux: VmHWM; nil elsewhere).
local function process_peak_bytes()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local status = f:read("a")
  f:close()
  local kb = status:match("VmHWM:%s*(%d+) kB")
  return kb and math.tointeger(kb) * 1024 or nil
end
local process_peak = process_peak_bytes()

local d = ex:describe()
if a.json then
  local out = {model = a.model, model_name = model_name, executor = a.executor, device = d.device, batch = batch,
               input = a.input or {random_seed = a.seed}, plan = a.plan, seconds = seconds,
               seconds_per_sample = seconds / batch, times = times, report = report, outputs = {}, wrote = written,
               process_peak_bytes = process_peak}
  for _, name in ipairs(names) do
    local t = outputs[name]
    out.outputs[#out.outputs + 1] = {name = name, shape = t:size(), top = top_classes(t)}
  end
  print(frugal.json_encode(out, 1))
  return
end

print("model       " .. common.model_label(a) .. " ('" .. model_name .. "')")
print("executor    " .. a.executor .. (d.device and (", device: " .. d.device) or ""))
print("batch       " .. batch .. (a.input and (" from " .. a.input) or " (random input, seed " .. a.seed .. ")") ..
      (a.plan and (", plan " .. a.plan .. " (" .. #report.steps .. " steps)") or (", " .. schedule_note(report))))
print(string.format("time        %s per image (%s for the batch%s)", common.seconds(seconds / batch), common.seconds(seconds),
      #times > 1 and (", median of " .. #times .. " runs") or ", one run"))
local budget_note
if report.auto_budget then
  budget_note = report.budget_bytes and report.budget_bytes > report.peak_bytes
    and ("arena sized by the executor: " .. common.bytes(report.budget_bytes) .. ", the smallest in which this run " ..
         "moves the fewest bytes")
    or "arena sized by the executor to exactly what this run needs"
elseif report.budget_bytes then
  budget_note = "budget " .. common.bytes_exact(report.budget_bytes)
end
print("peak arena  " .. common.bytes_exact(report.peak_bytes) .. (budget_note and (" (" .. budget_note .. ")") or ""))
if report.predicted_peak_bytes and report.predicted_peak_bytes ~= report.peak_bytes then
  print("            (the executor predicted " .. common.bytes(report.predicted_peak_bytes) .. ")")
end
if process_peak then
  print("process     " .. common.bytes_exact(process_peak) .. " resident at most (loading included)")
end
for _, name in ipairs(names) do
  local t = outputs[name]
  print("output      " .. name .. " " .. tostring(t:size()))
  local top = top_classes(t)
  if top then
    local rows = {{"rank", "class", "score"}}
    for r, c in ipairs(top) do rows[#rows + 1] = {tostring(r), tostring(c.class), string.format("%.5g", c.score)} end
    print("top-" .. #top .. " of sample 1 (class = 0-based index into the " .. t:size(2) .. " outputs)")
    print(fmt.table(rows, {"r", "r", "r"}, "  "))
  end
end
if report.gates then
  local rows = {{"gated layer", "kernels on", "effective MACs", "dense MACs", "ratio"}}
  local eff, dense = 0, 0
  for _, g in ipairs(report.gates) do
    rows[#rows + 1] = {g.layer .. (g.gated and "" or " (skips off inputs)"),
                       g.gated and string.format("%.1f%% (t %.3g)", 100 * g.activity, g.threshold) or "-",
                       fmt.commas(g.effective_macs), fmt.commas(g.dense_macs),
                       string.format("%.3f", g.dense_macs > 0 and g.effective_macs / g.dense_macs or 1)}
    eff, dense = eff + g.effective_macs, dense + g.dense_macs
  end
  print("gates       " .. #report.gates .. " layers run gated (last run; MACs over the batch, gates included)")
  print(fmt.table(rows, {nil, "r", "r", "r", "r"}, "  "))
  print(string.format("            these layers: %s of %s MACs (%.3f)", fmt.commas(eff), fmt.commas(dense),
        dense > 0 and eff / dense or 1))
end
for _, path in ipairs(written) do print("wrote       " .. path) end
