// Where in a JSON document a problem lies, as a path people can find in the
// file ("layers[0].time_s[3]"): the value a parse stopped at (with its line),
// and the first null inside an array (Lua arrays cannot hold nil).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace frugal {

struct JsonErrorPlace {
  bool found = false;
  size_t line = 0;    // 1-based line of the byte at fault
  std::string path;   // the value being parsed there; "" at the top level
  std::string token;  // the text at fault (e.g. "1e400")
};

// Parses `text` again, tracking the path, and returns where the first error
// lies (found = false when the text parses).
JsonErrorPlace locate_json_error(const std::string& text);

// The path of the first null element of an array inside `j` ("" when none).
std::string first_null_in_array(const nlohmann::json& j);

}  // namespace frugal
