-- frugal plugins: list the plugins found (name, kind, version, file) and the files refused, with reasons
-- Plugins are looked for in the build's plugin folder, then in each folder of
-- FRUGAL_PLUGIN_PATH (':'-separated). A refused file does not stop the others.
local argparse = require("argparse")
local fmt = require("textfmt")
local a = argparse.parse(arg, {json = "print the folders searched, the plugins and the refusals as JSON"})

local found = frugal.plugins()
if a.json then
  print(frugal.json_encode(found, 1))
  return
end
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
