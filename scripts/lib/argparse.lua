-- Command-line parsing and help for the sub-command scripts. One spec per
-- command lists its arguments with their kinds, defaults and help, so that
-- parsing, defaults and `frugal help CMD` cannot disagree:
--
--   local a = argparse.parse(arg, {
--     arguments = {{"model", "an ONNX file or zoo:NAME", default = "zoo:resnet18"}},
--     options = {
--       {"batch", "integer", "samples in the batch", min = 1, default_text = "1, or --input's first dimension"},
--       {"output", "output", "write the output here (.npy)", short = "o"},
--       {"repeat", "integer", "timed runs, median kept", default = 3, min = 1},
--     },
--     progress = true,   -- adds --quiet
--     json = "print the results as JSON",   -- adds --json with this help
--     notes = "free text after the options",
--   })
--   a.model, a.batch, a.output, a["repeat"], a.quiet, a.json
--   a.defaulted.model   -- true when MODEL was not given (say so in the output)
--
-- Option kinds: "integer", "number", "bytes" (20MB, 64MiB, plain bytes),
-- "string", "flag", "list" (comma-separated integers: --batches 1,2,4),
-- "input" (a file that must be readable) and "output" (a file that must be
-- writable: checked before any work, so a long job does not fail at its end).
-- Options are "--name value", "--name=value", a flag is "--name"; `short`
-- adds "-x value". min / max bound numbers, choices lists the allowed strings.
-- An argument is required unless it has a default or optional = true.
-- Mistakes print one line naming the option, and the usage line, then exit
-- with status 2 (no traceback: they are the user's, not the script's).
-- "--help" prints the help: the script's first comment line (its summary),
-- usage, arguments, options with their defaults, notes.
local M = {}

local METAVAR = {integer = "N", number = "X", bytes = "SIZE", string = "S", list = "L", input = "FILE",
                 output = "FILE"}

local function command_name()
  return ((arg and arg[0] or "?"):match("([^/]+)%.lua$")) or "?"
end

local function usage_line(spec)
  local parts = {"frugal", command_name()}
  for _, p in ipairs(spec.arguments or {}) do
    local name = p.metavar or p[1]:upper()
    parts[#parts + 1] = (p.default ~= nil or p.optional) and ("[" .. name .. "]") or name
  end
  if #(spec.options or {}) > 0 or spec.progress or spec.json then parts[#parts + 1] = "[options]" end
  return table.concat(parts, " ")
end

local function fail(spec, msg)
  io.stderr:write("frugal: " .. msg .. "\n")
  io.stderr:write("usage: " .. usage_line(spec) .. "  (frugal help " .. command_name() .. " for more)\n")
  os.exit(2)
end

-- Edit distance, for "did you mean".
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = {[0] = i}
    for j = 1, #b do
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
    end
    prev = cur
  end
  return prev[#b]
end

local function closest(name, known)
  local best, best_d
  for _, k in ipairs(known) do
    local d = distance(name, k)
    if k:sub(1, #name) == name or name:sub(1, #k) == k then d = math.min(d, 1) end
    if not best_d or d < best_d then best, best_d = k, d end
  end
  if best_d and best_d <= math.max(2, #name // 3) then return best end
end

-- The full option list: the spec's, then the standard ones.
local function all_options(spec)
  local list = {}
  for _, o in ipairs(spec.options or {}) do list[#list + 1] = o end
  if spec.json then list[#list + 1] = {"json", "flag", spec.json} end
  if spec.progress then
    list[#list + 1] = {"quiet", "flag", "no progress on stderr (default: a live status line on a terminal, " ..
                                        "a line per stage when stderr is a file or pipe)"}
  end
  list[#list + 1] = {"help", "flag", "print this help", short = "h"}
  return list
end

local function show_default(o)
  if o.default_text then return o.default_text end
  local d = o.default
  if d == nil then return nil end
  if type(d) == "table" then return table.concat(d, ",") end
  return tostring(d)
end

local function option_label(o)
  local label = (o.short and ("-" .. o.short .. ", ") or "") .. "--" .. o[1]:gsub("_", "-")
  if o[2] ~= "flag" then label = label .. " " .. (o.metavar or METAVAR[o[2]] or "V") end
  return label
end

local HELP_WIDTH = 100

-- Words of `text` in lines of at most `width` characters.
local function wrap(text, width)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if #line > 0 and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = word
    else
      line = #line > 0 and (line .. " " .. word) or word
    end
  end
  lines[#lines + 1] = line
  return lines
end

-- Two columns: labels, then their help wrapped under itself.
local function wrap_rows(rows)
  local width = 0
  for _, r in ipairs(rows) do width = math.max(width, #r[1]) end
  local indent = string.rep(" ", width + 4)
  local lines = {}
  for _, r in ipairs(rows) do
    for i, text in ipairs(wrap(r[2], math.max(30, HELP_WIDTH - #indent))) do
      lines[#lines + 1] = (i == 1 and ("  " .. r[1] .. string.rep(" ", width - #r[1] + 2)) or indent) .. text
    end
  end
  return table.concat(lines, "\n")
end

-- The older spec form, {options = {name = kind}, defaults = {...}, usage = "..."},
-- still parses (scripts not yet moved to the form above); its help lists the
-- options with their defaults but without descriptions.
local function upgrade(spec)
  if not spec.options or #spec.options > 0 or next(spec.options) == nil then return spec end
  local new = {arguments = {}, options = {}, progress = spec.progress, json = spec.json, notes = spec.usage}
  for _, name in ipairs(spec.positional or {}) do new.arguments[#new.arguments + 1] = {name, name} end
  for _, name in ipairs(spec.optional_positional or {}) do
    new.arguments[#new.arguments + 1] = {name, name, optional = true}
  end
  local names = {}
  for name in pairs(spec.options) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local kind = spec.options[name]
    local d = (spec.defaults or {})[name]
    new.options[#new.options + 1] = {name, kind, name:gsub("_", " "), default = d,
                                     default_text = (d == nil and kind ~= "flag") and "none" or nil}
  end
  return new
end

function M.help(spec)
  spec = upgrade(spec)
  local out = {}
  local f = io.open(arg[0], "r")
  local first = f and f:read("l")
  if f then f:close() end
  local summary = first and first:match("^%-%- (frugal .*)$")
  if summary then out[#out + 1] = summary end
  out[#out + 1] = "usage: " .. usage_line(spec)
  if #(spec.arguments or {}) > 0 then
    local rows = {}
    for _, p in ipairs(spec.arguments) do
      local d = show_default(p)
      rows[#rows + 1] = {p.metavar or p[1]:upper(), p[2] .. (d and (" (default: " .. d .. ")") or "")}
    end
    out[#out + 1] = "arguments:\n" .. wrap_rows(rows)
  end
  local rows = {}
  for _, o in ipairs(all_options(spec)) do
    local d = show_default(o)
    rows[#rows + 1] = {option_label(o), o[3] .. (d and (" (default: " .. d .. ")") or "")}
  end
  out[#out + 1] = "options:\n" .. wrap_rows(rows)
  if spec.notes then out[#out + 1] = spec.notes end
  return table.concat(out, "\n") .. "\n"
end

local function readable(path)
  local f, err = io.open(path, "r")
  if not f then return false, err end
  local ok, read_err = f:read(0)
  f:close()
  if ok == nil and read_err then return false, path .. ": " .. read_err end
  return true
end

-- A path that can be written: opened for append (leaves an existing file as
-- it is), and removed again if it did not exist. Returns nil or the reason.
function M.check_writable(path)
  local existed = io.open(path, "r")
  if existed then existed:close() end
  local f, err = io.open(path, "a")
  if not f then return err end
  f:close()
  if not existed then os.remove(path) end
  return nil
end

local function check_range(spec, o, v)
  local flag = "--" .. o[1]:gsub("_", "-")
  if o.min and o.max and (v < o.min or v > o.max) then
    fail(spec, string.format("%s must be in %s..%s, got %s", flag, o.min, o.max, v))
  elseif o.min and v < o.min then
    fail(spec, string.format("%s must be >= %s, got %s", flag, o.min, v))
  elseif o.max and v > o.max then
    fail(spec, string.format("%s must be <= %s, got %s", flag, o.max, v))
  end
end

local function convert(spec, o, text)
  local flag, kind = "--" .. o[1]:gsub("_", "-"), o[2]
  if kind == "integer" or kind == "number" then
    local v = tonumber(text)
    if kind == "integer" then v = math.tointeger(v) end
    if not v then fail(spec, string.format("%s needs %s, got '%s'", flag, kind == "integer" and "an integer" or "a number", text)) end
    check_range(spec, o, v)
    return v
  elseif kind == "bytes" then
    local ok, v = pcall(frugal.parse_bytes, text)
    if not ok then fail(spec, flag .. ": " .. tostring(v):gsub("^frugal%.parse_bytes: ", "")) end
    check_range(spec, o, v)
    return v
  elseif kind == "list" then
    local out = {}
    for item in text:gmatch("[^,]+") do
      local v = math.tointeger(tonumber(item))
      if not v then fail(spec, flag .. " needs comma-separated integers, got '" .. text .. "'") end
      check_range(spec, o, v)
      out[#out + 1] = v
    end
    if #out == 0 then fail(spec, flag .. " needs at least one integer") end
    return out
  elseif kind == "input" then
    local ok, err = readable(text)
    if not ok then fail(spec, flag .. ": cannot read " .. err) end
  elseif kind == "output" then
    local err = M.check_writable(text)
    if err then fail(spec, flag .. ": cannot write " .. err) end
  end
  if o.choices then
    local ok = false
    for _, c in ipairs(o.choices) do ok = ok or c == text end
    if not ok then fail(spec, flag .. " must be one of " .. table.concat(o.choices, ", ") .. ", got '" .. text .. "'") end
  end
  return text
end

local function find_option(spec, options, a)
  local name, value = a:match("^%-%-([%w_%-]+)=(.*)$")
  if not name then name = a:match("^%-%-([%w_%-]+)$") end
  local short = not name and a:match("^%-(%a)$")
  for _, o in ipairs(options) do
    if (name and o[1] == name:gsub("%-", "_")) or (short and o.short == short) then return o, value end
  end
  if not name and not short then return nil end
  local known = {}
  for _, o in ipairs(options) do known[#known + 1] = "--" .. o[1]:gsub("_", "-") end
  local guess = closest(a:gsub("=.*$", ""), known)
  fail(spec, "unknown option '" .. a .. "'" .. (guess and (" (did you mean " .. guess .. "?)") or
                                                 (" (known: " .. table.concat(known, ", ") .. ")")))
end

function M.parse(argv, spec)
  spec = upgrade(spec)
  local options = all_options(spec)
  local out, positional, i = {defaulted = {}}, {}, 1
  while i <= #argv do
    local a = argv[i]
    local o, value = find_option(spec, options, a)
    if not o then
      positional[#positional + 1] = a
    elseif o[1] == "help" then
      io.stdout:write(M.help(spec))
      os.exit(0)
    elseif o[2] == "flag" then
      if value then fail(spec, "--" .. o[1]:gsub("_", "-") .. " takes no value") end
      out[o[1]] = true
    else
      if not value then
        i = i + 1
        value = argv[i]
        if value == nil then fail(spec, "--" .. o[1]:gsub("_", "-") .. " needs a value") end
      end
      out[o[1]] = convert(spec, o, value)
    end
    i = i + 1
  end
  local args = spec.arguments or {}
  for k, p in ipairs(args) do
    if positional[k] ~= nil then
      out[p[1]] = positional[k]
    elseif p.default ~= nil then
      out[p[1]] = p.default
      out.defaulted[p[1]] = true
    elseif not p.optional then
      fail(spec, "missing " .. (p.metavar or p[1]:upper()) .. " (" .. p[2] .. ")")
    end
  end
  if #positional > #args then fail(spec, "unexpected argument '" .. positional[#args + 1] .. "'") end
  for _, o in ipairs(options) do
    if out[o[1]] == nil and o.default ~= nil then out[o[1]] = o.default end
  end
  return out
end

return M
