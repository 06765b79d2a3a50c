-- Where bench-gate's Vulkan time goes: the same variants as `frugal bench-gate
-- --executor vulkan` (the dense zoo network and frugal.gate's variants,
-- calibrated on the timed input, seed 0), timed in the same interleaved rounds,
-- with per variant the medians of the executor's own clock (`seconds`), of the
-- GPU's stamped steps (`gpu_seconds`) and of the host's submission
-- (`host_seconds.submit`: from the queue submission to the fence, staged copies
-- included), and the arena compactions the run records as buffer copies (each
-- copy followed by a barrier: `move_copies`, `moved_bytes`). A hand-run
-- measurement for GPUs (docs/GATING.md, "Vulkan on a GPU").
--   ./build/frugal tools/vulkan-grid/gate-phases.lua [NETS] [BATCH] [ROUNDS] [ACTIVITIES]
-- NETS: zoo networks, comma-separated (default alexnet,squeezenet1_1,resnet18);
-- BATCH (default 1); ROUNDS: timed rounds after one untimed (default 5);
-- ACTIVITIES: comma-separated, "paper" for the paper's profile (default 1,0.5,paper).
local nets, activities = {}, {}
for n in (arg[1] or "alexnet,squeezenet1_1,resnet18"):gmatch("[^,]+") do nets[#nets + 1] = n end
local batch = math.tointeger(tonumber(arg[2] or "1"))
local rounds = math.max(1, math.tointeger(tonumber(arg[3] or "5")))
for s in (arg[4] or "1,0.5,paper"):gmatch("[^,]+") do
  if s == "paper" then
    activities[#activities + 1] = {label = "paper", activity = 0.6427, every = 2}  -- cli_common's PAPER_GATES
  else
    activities[#activities + 1] = {label = s, activity = tonumber(s), every = 1}
  end
end

local function median(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c[#c // 2 + 1]
end

print(string.format("%-14s %-8s %5s %9s %9s %9s %9s %8s %11s", "network", "variant", "batch", "own ms", "gpu ms",
  "submit ms", "outside", "copies", "moved B"))
for _, name in ipairs(nets) do
  local dense = frugal.zoo(name)
  local x = frugal.random_input(dense, batch, 0)
  local variants = {{label = "dense", model = dense}}
  for _, act in ipairs(activities) do
    local gated = frugal.gate(dense, {activity = act.activity, every = act.every, seed = 0, input = x})
    variants[#variants + 1] = {label = act.label, model = gated}
  end
  for _, v in ipairs(variants) do
    v.ex = frugal.executor(v.model, {executor = "vulkan"})
    v.own, v.gpu, v.submit = {}, {}, {}
  end
  for round = 0, rounds do
    for _, v in ipairs(variants) do
      local _, r = v.ex:run(x)
      if round > 0 then
        v.own[#v.own + 1] = r.seconds
        v.gpu[#v.gpu + 1] = r.gpu_seconds or 0
        v.submit[#v.submit + 1] = (r.host_seconds or {}).submit or 0
      end
      v.copies, v.moved = r.move_copies or 0, r.moved_bytes or 0
    end
  end
  for _, v in ipairs(variants) do
    local own, gpu, submit = median(v.own), median(v.gpu), median(v.submit)
    print(string.format("%-14s %-8s %5d %9.3f %9.3f %9.3f %9.3f %8d %11d", name, v.label, batch, own * 1e3, gpu * 1e3,
      submit * 1e3, (submit - gpu) * 1e3, v.copies, v.moved))
    v.ex:close()
  end
end
