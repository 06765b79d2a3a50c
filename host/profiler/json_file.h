// JSON files as the profiler, the planner scripts and the Lua bindings read and
// write them (cost tables, plans, reports, the cost cache).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace frugal {

// Reads and parses a JSON file. Errors (frugal::Error) name the file and, for
// a syntax error, the line; a NaN or Infinity in the text is called out, since
// JSON has no such numbers.
nlohmann::json read_json_file(const std::string& path);
// Parses text; `origin` names it in messages.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

// Writes through a temporary file in the same folder and a rename, so a reader
// never sees half a file. indent < 0: compact.
void write_json_file(const nlohmann::json& j, const std::string& path, int indent = 1);

}  // namespace frugal
