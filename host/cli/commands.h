// The CLI's sub-commands are the Lua scripts in script_dir(). Each script starts
// with a comment block that documents it:
//
//   -- frugal info: print a model's inputs, outputs, ops, parameters and MACs
//   -- usage: frugal info MODEL.onnx [--batch N]
//   --   MODEL.onnx   the model to describe
//
// The first line gives the one-line summary (`frugal --help`), the lines from
// "usage:" to the end of the block the usage text (`frugal help CMD`).
#pragma once

#include <string>
#include <vector>

namespace frugal {

struct ScriptCommand {
  std::string name;  // file name without ".lua"
  std::string path;
  std::string summary;  // "" when the script has no header line
  std::string usage;    // "" when the script has no usage block
};

// Reads the leading comment block of a script (throws frugal::Error if unreadable).
ScriptCommand read_script_command(const std::string& path);
// Every *.lua directly in `dir`, sorted by name; names starting with '_' are private.
std::vector<ScriptCommand> list_script_commands(const std::string& dir);
// The known name closest to `name` (edit distance), or "" if none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

}  // namespace frugal
