-- What the run / fold / profile / plan / workflow scripts share: the model
-- argument (a file or zoo:NAME), "-o" as a short form, user-facing failures
-- without a traceback, and number formats.
local M = {}

-- Prints "frugal: MESSAGE" and exits with `code` (default 1): for errors that
-- are the user's (a budget too small, a missing file), not the script's.
function M.fail(msg, code)
  if frugal.isatty("stderr") then io.stderr:write("\r\27[K") end  -- a progress line may be showing
  io.stderr:write("frugal: " .. tostring(msg) .. "\n")
  os.exit(code or 1)
end

-- An error value as a message for people: without the script position prefix
-- ("/path/x.lua:12: ") and the binding's name ("frugal.plan: ").
function M.message(err)
  local msg = tostring(err):gsub("^[^:\n]*%.lua:%d+: ", ""):gsub("^frugal%.[%w_]+: ", "")
  return msg
end

-- pcall that turns an error into M.fail.
function M.try(f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then M.fail(M.message(r[2])) end
  return table.unpack(r, 2, r.n)
end

-- "-o X" -> "--NAME X" (argparse knows long options only).
function M.short_output(argv, name)
  local out = {}
  for i, a in ipairs(argv) do out[i] = (a == "-o") and ("--" .. name) or a end
  return out
end

-- A model from "file.onnx" or "zoo:NAME".
function M.load_model(spec, seed)
  local zoo_name = spec:match("^zoo:(.+)$")
  if zoo_name then return M.try(frugal.zoo, zoo_name, {seed = seed or 1}) end
  return M.try(frugal.load, spec)
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
