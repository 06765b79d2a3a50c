#include "profiler/json_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frugal/error.h"
#include "profiler/json_path.h"

namespace frugal {

namespace {

// nlohmann::json's out_of_range id for a number beyond a double ("1e400").
constexpr int kNumberOverflow = 406;

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // The line and the value at fault, for people editing the file by hand.
    const JsonErrorPlace at = locate_json_error(text);
    const std::string where =
        " (line " + std::to_string(at.line) + (at.path.empty() ? "" : ", " + at.path) + ")";
    if (e.id == kNumberOverflow)
      throw Error(origin + ": " + (at.path.empty() ? "a number" : at.path) + " = " + at.token +
                  " is beyond the range of a double (line " + std::to_string(at.line) +
                  "): a value in this file is not a real number");
    std::string msg = origin + ": not valid JSON" + where + ": " + e.what();
    if (text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos)
      msg += " (NaN and Infinity are not JSON numbers: a value in this file is not a real number)";
    throw Error(msg);
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error("cannot read '" + path + "': read error");
  return parse_json_text(ss.str(), path);
}

void write_json_file(const nlohmann::json& j, const std::string& path, int indent) {
  const std::string text = j.dump(indent) + "\n";
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write '" + path + "': " + std::strerror(errno));
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw Error("cannot write '" + path + "': write error (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(e));
  }
}

}  // namespace frugal
