-- What the bench / bench-fold / bench-vbs scripts share: the --nets list, the
-- machine description, medians and interleaved timing, and running a sibling
-- program (cpu_bench) of the frugal executable.
local common = require("cli_common")

local M = {}

-- The toy networks are tests of the folder, not networks to time.
local function is_toy(name) return name:match("^toy_") ~= nil end

-- "a,b,c" or "all" -> list of zoo names; unknown names fail with the valid ones.
function M.nets(spec, opts)
  opts = opts or {}
  local known = {}
  for _, n in ipairs(frugal.zoo_names()) do known[n] = true end
  local out = {}
  if spec == "all" then
    for _, n in ipairs(frugal.zoo_names()) do
      if not (opts.exclude_toys and is_toy(n)) then out[#out + 1] = n end
    end
    return out
  end
  for n in spec:gmatch("[^,]+") do
    if not known[n] then
      common.fail("--nets: unknown zoo network '" .. n .. "' (known: " .. table.concat(frugal.zoo_names(), ", ") ..
                  ", or all)", 2)
    end
    out[#out + 1] = n
  end
  if #out == 0 then common.fail("--nets needs at least one zoo network", 2) end
  return out
end

function M.median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return nil end
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

-- Runs every variant once as a warm-up, then `repeats` rounds in which each
-- variant runs once, in turn, so a busy moment of the shared machine hits all
-- alike. variants: list of {name = ..., run = function() return seconds end}.
-- Sets v.times (the timed runs) and v.median. opts.warmup = false skips the
-- warm-up round (when the caller warmed up already).
function M.interleave(variants, repeats, progress, opts)
  local first = (opts and opts.warmup == false) and 1 or 0
  for i = first, repeats do
    for _, v in ipairs(variants) do
      if progress then progress:status(string.format("%s (%d/%d)", v.name, i, repeats)) end
      local t = v.run()
      v.times = v.times or {}
      if i > 0 then v.times[#v.times + 1] = t end
    end
  end
  for _, v in ipairs(variants) do v.median = M.median(v.times) end
  return variants
end

local function read_command(cmd)
  local f = io.popen(cmd .. " 2>/dev/null")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  s = s and s:gsub("%s+$", "")
  return s ~= "" and s or nil
end

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- The path of a program built next to the running frugal executable
-- (/proc/<frugal's pid>/exe: the shell popen starts is frugal's child).
function M.sibling_program(name)
  local exe = read_command("readlink -f /proc/$PPID/exe")
  if not exe then common.fail("cannot find the frugal executable (no /proc/PID/exe) to locate " .. name) end
  local dir = exe:match("^(.*)/[^/]*$") or "."
  local path = dir .. "/" .. name
  local f = io.open(path, "r")
  if not f then
    common.fail(name .. " is not built next to " .. exe .. " (build it: cmake --build BUILD --target " .. name .. ")")
  end
  f:close()
  return path
end

-- Runs argv (a list), echoing each line of its stdout as it comes; returns the
-- lines. Fails with its exit status.
function M.run_program(argv)
  local q = {}
  for i, s in ipairs(argv) do q[i] = shell_quote(s) end
  local f = io.popen(table.concat(q, " "))
  if not f then common.fail("cannot start " .. argv[1]) end
  local lines = {}
  for line in f:lines() do
    print(line)
    io.stdout:flush()
    lines[#lines + 1] = line
  end
  local ok, how, code = f:close()
  if not ok then common.fail(argv[1] .. " failed (" .. tostring(how) .. " " .. tostring(code) .. ")") end
  return lines
end

-- "machine     <cpu>, N cores, load average L (shared), OpenBLAS <version>"
function M.machine_line()
  local cpu = read_command("sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1") or "?"
  local cores = read_command("nproc") or "?"
  local load = read_command("cut -d' ' -f1-3 /proc/loadavg") or "?"
  -- The variant package that is installed (pthread, openmp, serial), with its version.
  local blas = read_command("dpkg-query -W -f='${Package} ${Version}\\n' 'libopenblas0-*' 2>/dev/null | " ..
                            "awk 'NF == 2' | head -n 1") or "version unknown"
  return string.format("machine     %s, %s cores, load average %s (1/5/15 min), OpenBLAS: %s", cpu, cores, load, blas)
end

-- Prints a table row by row as results come (a long run on a busy machine shows
-- progress, and a run cut short keeps its rows). widths[c] > 0 aligns right,
-- < 0 left; cells wider than their column push the rest along.
function M.row_printer(widths)
  return function(cells)
    local out = {}
    for c, cell in ipairs(cells) do
      local w = widths[c] or 0
      out[c] = string.format("%" .. (w < 0 and "-" or "") .. math.abs(w) .. "s", cell)
    end
    print((table.concat(out, "  "):gsub("%s+$", "")))
    io.stdout:flush()
  end
end

return M
