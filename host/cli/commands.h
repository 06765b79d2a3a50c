// The CLI's sub-commands are the Lua scripts in script_dir(). Each script's
// first line is its one-line summary, for `frugal --help`:
//
//   -- frugal info: print a model's inputs, outputs, ops, parameters and MACs
//
// Usage, options and defaults come from the script's argument spec
// (scripts/lib/argparse.lua): `frugal help CMD` runs it with --help.
#pragma once

#include <string>
#include <vector>

namespace frugal {

struct ScriptCommand {
  std::string name;  // file name without ".lua"
  std::string path;
  std::string summary;  // "" when the script has no header line
};

// Reads a script's summary line (throws frugal::Error if unreadable).
ScriptCommand read_script_command(const std::string& path);
// Every *.lua directly in `dir`, sorted by name; names starting with '_' are private.
std::vector<ScriptCommand> list_script_commands(const std::string& dir);
// The known name closest to `name` (edit distance), or "" if none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

}  // namespace frugal
