-- Command-line parsing shared by the sub-command scripts.
--
--   local argparse = require("argparse")
--   local a = argparse.parse(arg, {
--     usage = "frugal info MODEL.onnx [--batch N]",
--     positional = {"model"},                 -- required, in order
--     optional_positional = {},               -- may follow the required ones
--     options = {batch = "integer", budget = "bytes", executor = "string", quiet = "flag"},
--     defaults = {executor = "cpu"},
--   })
--   a.model, a.batch, a.budget ...
--
-- Options are "--name value", "--name=value" or, for flags, "--name". Kinds:
-- "integer", "number", "bytes" (frugal.parse_bytes: 20MB, 64MiB, ...), "string",
-- "flag", "list" (comma-separated integers: --batches 1,2,4). Mistakes print
-- the message and the usage line, then exit with status 2 (no traceback: they
-- are the user's, not the script's).
local M = {}

local function fail(spec, msg)
  io.stderr:write("frugal: " .. msg .. "\n")
  if spec.usage then io.stderr:write("usage: " .. spec.usage .. "\n") end
  os.exit(2)
end

local function convert(spec, name, kind, text)
  if kind == "integer" then
    local v = math.tointeger(tonumber(text))
    if not v then fail(spec, "--" .. name .. " needs an integer, got '" .. text .. "'") end
    return v
  elseif kind == "number" then
    local v = tonumber(text)
    if not v then fail(spec, "--" .. name .. " needs a number, got '" .. text .. "'") end
    return v
  elseif kind == "bytes" then
    local ok, v = pcall(frugal.parse_bytes, text)
    if not ok then fail(spec, "--" .. name .. ": " .. tostring(v):gsub("^frugal%.parse_bytes: ", "")) end
    return v
  elseif kind == "list" then
    local out = {}
    for item in text:gmatch("[^,]+") do
      local v = math.tointeger(tonumber(item))
      if not v then fail(spec, "--" .. name .. " needs comma-separated integers, got '" .. text .. "'") end
      out[#out + 1] = v
    end
    if #out == 0 then fail(spec, "--" .. name .. " needs at least one integer") end
    return out
  end
  return text
end

function M.parse(argv, spec)
  local options = spec.options or {}
  local out = {}
  for k, v in pairs(spec.defaults or {}) do out[k] = v end
  local positional = {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      io.stdout:write("usage: " .. (spec.usage or "?") .. "\n")
      os.exit(0)
    end
    local name, value = a:match("^%-%-([%w_%-]+)=(.*)$")
    if not name then name = a:match("^%-%-([%w_%-]+)$") end
    if name then
      local key = name:gsub("%-", "_")
      local kind = options[key]
      if not kind then
        local known = {}
        for k in pairs(options) do known[#known + 1] = "--" .. k:gsub("_", "-") end
        table.sort(known)
        fail(spec, "unknown option '" .. a .. "'" ..
             (#known > 0 and " (known: " .. table.concat(known, ", ") .. ")" or ""))
      end
      if kind == "flag" then
        if value then fail(spec, "--" .. name .. " takes no value") end
        out[key] = true
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then fail(spec, "--" .. name .. " needs a value") end
        end
        out[key] = convert(spec, name, kind, value)
      end
    else
      positional[#positional + 1] = a
    end
    i = i + 1
  end
  local required = spec.positional or {}
  local optional = spec.optional_positional or {}
  if #positional < #required then
    fail(spec, "missing " .. table.concat(required, ", ", #positional + 1))
  end
  if #positional > #required + #optional then
    fail(spec, "unexpected argument '" .. positional[#required + #optional + 1] .. "'")
  end
  for k, name in ipairs(required) do out[name] = positional[k] end
  for k, name in ipairs(optional) do out[name] = positional[#required + k] end
  return out
end

return M
