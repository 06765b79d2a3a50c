-- The frugal half of compare.mjs: a long-lived `frugal` process that holds one
-- model on the CPU executor and runs it when told, so that process start and
-- model load stay outside the timed part (the driver times each "run" round trip).
-- usage: frugal tools/ort-compare/frugal_side.lua MODEL.onnx THREADS
-- Commands on stdin, one per line; every reply is one line on stdout:
--   input X.npy   load the input (once); two untimed runs (the first one sizes the arena),
--                 then the arena is kept at the size the executor chose for this
--                 batch (its schedule's peak, or a little more where that moves
--                 fewer bytes), as a session's memory is kept by ONNX Runtime  -> "ok BUDGET_BYTES"
--   run           run once on that input                   -> "ran SECONDS HOST_SECONDS" (the executor's own
--                 clock; this process's clock around the Lua call, as the driver times ORT's session.run)
--   save Y.npy    write the last output                    -> "ok"
--   ping          nothing (the driver times the pipe round trip)   -> "pong"
--   quit
-- A failure answers "error MESSAGE" (the driver stops with it) instead of a traceback.
local model_path, threads = arg[1], tonumber(arg[2])
if not model_path or not threads then
  io.stderr:write("usage: frugal frugal_side.lua MODEL.onnx THREADS\n")
  os.exit(2)
end
-- A reply must reach the driver now, not when a buffer fills, and as one write
-- (unbuffered, print writes the text and its newline apart: two wake-ups of the driver).
io.stdout:setvbuf("line")

local ok, ex = pcall(function()
  return frugal.executor(frugal.load(model_path), {executor = "cpu", threads = threads, consume = true})
end)
if not ok then
  print("error " .. tostring(ex):gsub("\n", " "))
  os.exit(1)
end
print("ready " .. ex:describe().threads)

local x, y
local handlers = {
  input = function(path)
    if x then error("one input per process (the arena is sized to it)") end
    x = frugal.load_npy(path)
    local _, report = ex:run(x)  -- no budget yet: the arena is sized to this batch
    ex:set_budget(report.budget_bytes)
    y = ex:run(x)
    return "ok " .. math.tointeger(report.budget_bytes)
  end,
  run = function()
    local report
    local t0 = frugal.clock()
    y, report = ex:run(x)
    local host = frugal.clock() - t0
    return string.format("ran %.9f %.9f", report.seconds, host)
  end,
  ping = function() return "pong" end,
  save = function(path)
    y:save_npy(path)
    return "ok"
  end,
}

for line in io.lines() do
  local cmd, rest = line:match("^(%S+)%s*(.*)$")
  if cmd == "quit" then break end
  local h = handlers[cmd]
  if not h then
    print("error unknown command '" .. tostring(line) .. "'")
  else
    local good, reply = pcall(h, rest)
    print(good and reply or ("error " .. tostring(reply):gsub("\n", " ")))
  end
end
