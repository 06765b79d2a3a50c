-- The predictor's training basis and evaluation sets: zoo networks (pruned
-- variants included) folded and profiled as `frugal workflow` does, each
-- profile cached, so a second training or evaluation measures nothing again.
local common = require("cli_common")
local M = {}

-- "a,b,c" -> {"a", "b", "c"}
function M.names(text)
  local out = {}
  for item in text:gmatch("[^,]+") do out[#out + 1] = item end
  return out
end

-- The folded zoo network NAME with PERCENT% of its prunable filters dropped.
function M.model(name, percent)
  local spec = "zoo:" .. name .. (percent > 0 and ("@prune" .. percent) or "")
  local folded = common.try(frugal.fold, common.load_model(spec), {method = "banoff"})
  return folded, name .. (percent > 0 and (" pruned " .. percent .. "%") or "")
end

-- Profiles every (network, pruning level) at the batch sizes; returns the list
-- {model =, costs =, label =, network =, pruning =, cached =, seconds =}.
-- progress: a progress object (lib/progress.lua); opts: executor, threads, repeats, cache.
-- A pruning level that drops nothing (a network without a conv that can
-- shrink alone, such as gemm_ladder) is skipped: it would be the network again.
function M.profile_all(nets, levels, batches, opts, progress)
  local out, n, i = {}, #nets * #levels, 0
  local upto = math.max(table.unpack(batches))
  for _, name in ipairs(nets) do
    local whole = common.try(frugal.zoo, name):parameter_count()
    for _, p in ipairs(levels) do
      i = i + 1
      if p == 0 or common.try(frugal.zoo, name, {prune = p}):parameter_count() < whole then
        local m, label = M.model(name, p)
        progress:stage(string.format("[%d/%d] profiling %s", i, n, label))
        local costs, info = common.try(frugal.profile, m, {executor = opts.executor, threads = opts.threads,
          upto = upto, batches = batches, repeats = opts.repeats, cache = opts.cache, progress = false})
        out[#out + 1] = {model = m, costs = costs, label = label, network = name, pruning = p, cached = info.cached,
                         seconds = info.seconds}
      end
    end
  end
  return out
end

return M
