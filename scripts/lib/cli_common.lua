-- What the sub-command scripts share: user-facing failures (one line, no
-- traceback unless --debug), the model argument (a file or zoo:NAME), output
-- files checked before the work, and number formats.
local M = {}

-- An error value as a message for people: without the script position
-- ("/path/x.lua:12: "), the binding's name ("frugal.plan: ", "executor:run: ")
-- and a plugin call's file and function ("vbs (/path/planners.so): plan: "
-- becomes "vbs: ").
function M.message(err)
  local msg = tostring(err)
  msg = msg:gsub("^[^:\n]*%.lua:%d+: ", "", 1)
  for _ = 1, 2 do
    msg = msg:gsub("^frugal%.[%w_]+: ", "", 1):gsub("^tensor:[%w_]+: ", "", 1):gsub("^model:[%w_]+: ", "", 1)
             :gsub("^executor:[%w_]+: ", "", 1)
  end
  msg = msg:gsub("([%w_%-]+) %([^()\n]*%.so%): [%w_]+: ", "%1: ")
  repeat
    local before = msg
    msg = msg:gsub("^([%w_%-]+): %1: ", "%1: ")
  until msg == before
  return msg
end

-- A planner's error in the commands' words: its options are --budget, --unit,
-- --latency, --min-gain, --batch; "cost table: " names the file when given.
local PLANNER_OPTIONS = {budget_bytes = "--budget", unit_bytes = "--unit", latency_bound_s = "--latency",
                         min_gain = "--min-gain"}
function M.planner_message(err, costs_file)
  local msg = M.message(err)
  if costs_file then msg = msg:gsub("^([%w_%-]+): cost table: ", "%1: " .. costs_file .. ": ", 1) end
  msg = msg:gsub("%f[%w_]([%a_]+_[%a_]+)%f[^%w_]", function(word) return PLANNER_OPTIONS[word] end)
  msg = msg:gsub("^([%w_%-]+): options: ", "%1: ")
  local need = msg:match("needs at least (%d+) bytes") or msg:match("needs (%d+) bytes")
  if need and tonumber(need) >= 10000 then msg = msg .. " (that is " .. M.bytes(tonumber(need)) .. ")" end
  return msg
end

-- Prints "frugal: MESSAGE" and exits with `code` (default 1): for errors that
-- are the user's (a budget too small, a missing file), not the script's.
function M.fail(msg, code)
  if frugal.isatty("stderr") then io.stderr:write("\r\27[K") end  -- a progress line may be showing
  io.stderr:write("frugal: " .. tostring(msg) .. "\n")
  os.exit(code or 1)
end

-- pcall that turns an error into M.fail; with --debug the error goes through
-- with its traceback.
function M.try(f, ...)
  if frugal.debug then return f(...) end
  local r = table.pack(pcall(f, ...))
  if not r[1] then M.fail(M.message(r[2])) end
  return table.unpack(r, 2, r.n)
end

-- Fails unless `path` can be written (checked before long work, so that it
-- does not fail at its end). `what` names it ("--report").
function M.check_writable(path, what)
  local err = require("argparse").check_writable(path)
  if err then M.fail(what .. ": cannot write " .. err, 2) end
end

-- The paper's CaffeNet profile (docs/GATING.md): 64.27% of the kernels on, every
-- other gateable conv gated.
M.PAPER_GATES = {activity = 0.6427, every = 2}

-- A model from "file.onnx" or "zoo:NAME", or a gated zoo variant (docs/GATING.md):
-- "zoo:NAME@gate0.5" (every conv that can be gated, calibrated to that activity on
-- 8 random samples) or "zoo:NAME@paper" (M.PAPER_GATES); or a channel-pruned
-- variant "zoo:NAME@pruneP" (P% of the filters of each conv that can shrink alone).
function M.load_model(spec, seed)
  local zoo_name = spec:match("^zoo:(.+)$")
  if not zoo_name then return M.try(frugal.load, spec) end
  local base, variant = zoo_name:match("^(.-)@(.+)$")
  local prune = variant and tonumber(variant:match("^prune(%d+)$") or "")
  if prune then return M.try(frugal.zoo, base, {seed = seed or 1, prune = prune}) end
  local m = M.try(frugal.zoo, base or zoo_name, {seed = seed or 1})
  if not variant then return m end
  local options
  if variant == "paper" then
    options = {activity = M.PAPER_GATES.activity, every = M.PAPER_GATES.every}
  else
    local a = tonumber(variant:match("^gate(.+)$") or "")
    if not a or a < 0 or a > 1 then
      M.fail(spec .. ": a gated variant is zoo:NAME@gateA (A in [0, 1], e.g. @gate0.5) or zoo:NAME@paper", 2)
    end
    options = {activity = a}
  end
  options.seed = seed or 1
  return (M.try(frugal.gate, m, options))
end

-- "zoo:resnet18 (the default model; give MODEL.onnx or zoo:NAME)" when MODEL was not given.
function M.model_label(a)
  return a.model .. (a.defaulted.model and " (the default; give MODEL.onnx or zoo:NAME)" or "")
end

-- Seconds with a unit that keeps 3 significant digits: "12.3 ms", "10 s".
function M.seconds(t)
  if t == nil then return "?" end
  local a = math.abs(t)
  if a == 0 then return "0 s" end
  if a >= 1 then return string.format("%.4g s", t) end
  if a >= 1e-3 then return string.format("%.3g ms", t * 1e3) end
  if a >= 1e-6 then return string.format("%.3g us", t * 1e6) end
  return string.format("%.3g ns", t * 1e9)
end

-- Bytes: exact below 10 kB (plans of toy tables are small), else "12.3 MB".
function M.bytes(n)
  if n == nil then return "?" end
  if n < 10000 then return string.format("%d B", n) end
  return frugal.format_bytes(math.tointeger(n) or math.floor(n))
end

-- "21.0 kB (20992 bytes)": rounded for people, exact for scripts and budgets.
function M.bytes_exact(n)
  if n == nil then return "?" end
  if n < 10000 then return string.format("%d B", n) end
  return string.format("%s (%d bytes)", frugal.format_bytes(math.tointeger(n) or math.floor(n)), n)
end

-- 0.1234 -> "12.3%"
function M.percent(x)
  if x == nil then return "?" end
  return string.format("%.1f%%", 100 * x)
end

return M
