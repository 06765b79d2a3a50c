-- The predictor's evaluation measures (docs/PREDICTOR.md, "Evaluation"):
-- per (layer, batch) point the relative error of the predicted against the
-- measured per-sample time; MAPE and the share within +-10%; network latency
-- as the sum over layers of the batch's predicted time.
local M = {}

-- Relative errors of `predicted` against the "measured" entries of `measured`
-- (both cost tables of the same model); keep(l, b), when given, picks the points.
function M.errors(measured, predicted, keep)
  local out = {}
  for l, layer in ipairs(measured.layers) do
    local p = predicted.layers[l]
    for b, t in ipairs(layer.time_s) do
      local src = layer.source and layer.source[b] or "measured"
      if src == "measured" and t > 0 and p.time_s[b] and (not keep or keep(l, b)) then
        out[#out + 1] = math.abs(p.time_s[b] - t) / t
      end
    end
  end
  return out
end

-- A layer's kind as the executor runs it: its ops joined by "+" and its kernel
-- path without the layout and threading details in parentheses
-- ("Conv+Relu [oneDNN jit:avx512_core]"), to say which kinds carry an error.
function M.kind(layer)
  local path = (layer.algorithm or ""):gsub("%s*%b()", "")
  local ops = table.concat(layer.ops or {}, "+")
  return path ~= "" and (ops .. " [" .. path .. "]") or ops
end

-- Adds the measured points of `measured` to acc[kind] = {signed = {predicted /
-- measured - 1, ...}, meas_s = measured batch seconds, err_s = |predicted -
-- measured| batch seconds}; returns acc.
function M.add_by_kind(acc, measured, predicted)
  for l, layer in ipairs(measured.layers) do
    local p, k = predicted.layers[l], M.kind(layer)
    for b, t in ipairs(layer.time_s) do
      local src = layer.source and layer.source[b] or "measured"
      if src == "measured" and t > 0 and p.time_s[b] then
        acc[k] = acc[k] or {signed = {}, meas_s = 0, err_s = 0}
        local e = acc[k]
        e.signed[#e.signed + 1] = p.time_s[b] / t - 1
        e.meas_s = e.meas_s + t * b
        e.err_s = e.err_s + math.abs(p.time_s[b] - t) * b
      end
    end
  end
  return acc
end

-- {mape =, within10 =, n =} of a list of relative errors (nil when empty).
function M.summary(errors)
  if #errors == 0 then return nil end
  local sum, good = 0, 0
  for _, e in ipairs(errors) do
    sum = sum + e
    if e <= 0.1 then good = good + 1 end
  end
  return {mape = sum / #errors, within10 = good / #errors, n = #errors}
end

-- Appends the elements of b to a; returns a.
function M.append(a, b)
  for _, x in ipairs(b) do a[#a + 1] = x end
  return a
end

-- Seconds of a batch of b by the table, as the planner prices a plan of one
-- step per layer: the sum over layers of b x per-sample time plus the layer's
-- step overhead (else the table's, else 0) and per-sample step overhead.
function M.network_seconds(costs, b)
  local s = 0
  for _, layer in ipairs(costs.layers) do
    s = s + (layer.time_s[b] + (layer.step_overhead_per_sample_s or 0)) * b
      + (layer.step_overhead_s or costs.step_overhead_s or 0)
  end
  return s
end

-- A deterministic generator in [0, 1) (an LCG), for the random split.
function M.random(seed)
  local state = seed
  return function()
    state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (state >> 11) / (1 << 52)
  end
end

-- A deep copy of a plain table (cost tables), so a split can mark entries.
function M.copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = M.copy(v) end
  return c
end

-- Splits the measured points of each table: a share `test` of them (chosen by
-- rnd) are marked "interpolated" in the training copy; returns the copies and
-- per table a set test[l][b] = true.
function M.split(tables, test, rnd)
  local train, tests = {}, {}
  for i, t in ipairs(tables) do
    local c, picked = M.copy(t), {}
    for l, layer in ipairs(c.layers) do
      picked[l] = {}
      for b = 1, #layer.time_s do
        if (layer.source[b] == "measured") and rnd() < test then
          layer.source[b] = "interpolated"
          picked[l][b] = true
        end
      end
    end
    train[i], tests[i] = c, picked
  end
  return train, tests
end

return M
