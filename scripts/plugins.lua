-- frugal plugins: list the plugins found (name, kind, version, file) and the files refused, with reasons
-- usage: frugal plugins
-- Plugins are looked for in the build's plugin folder, then in each folder of
-- FRUGAL_PLUGIN_PATH (':'-separated). A refused file does not stop the others.
local argparse = require("argparse")
local fmt = require("textfmt")
argparse.parse(arg, {usage = "frugal plugins"})

local found = frugal.plugins()
print("searched: " .. (#found.dirs > 0 and table.concat(found.dirs, ", ") or "(no folders)"))
if #found.plugins == 0 then
  print("no plugins loaded")
else
  local rows = {{"name", "kind", "version", "file"}}
  for _, p in ipairs(found.plugins) do rows[#rows + 1] = {p.name, p.kind, p.version, p.file} end
  print(fmt.table(rows))
end
if #found.refused > 0 then
  print(#found.refused .. " refused:")
  for _, r in ipairs(found.refused) do print("  " .. r.reason) end
end
