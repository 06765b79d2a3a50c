#include "cli/commands.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "frugal/error.h"

namespace frugal {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string f = slash == std::string::npos ? path : path.substr(slash + 1);
  if (f.size() > 4 && f.compare(f.size() - 4, 4, ".lua") == 0) f.resize(f.size() - 4);
  return f;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

ScriptCommand read_script_command(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("cannot read script '" + path + "': " + std::strerror(errno));
  ScriptCommand c;
  c.name = base_name(path);
  c.path = path;
  std::string line;
  while (std::getline(f, line) && line.rfind("#!", 0) == 0) {
  }  // a shebang line
  const std::string prefix = "-- frugal " + c.name + ":";
  if (line.rfind(prefix, 0) == 0) c.summary = trim(line.substr(prefix.size()));
  return c;
}

std::vector<ScriptCommand> list_script_commands(const std::string& dir) {
  std::vector<ScriptCommand> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() <= 4 || n[0] == '_' || n[0] == '.' || n.compare(n.size() - 4, 4, ".lua") != 0) continue;
    std::string path = dir + "/" + n;
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    try {
      out.push_back(read_script_command(path));
    } catch (const std::exception&) {
      // An unreadable script still shows up in the list, without a summary.
      out.push_back(ScriptCommand{base_name(path), path, ""});
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ScriptCommand& a, const ScriptCommand& b) { return a.name < b.name; });
  return out;
}

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& k : known) {
    size_t d = edit_distance(name, k);
    // A prefix ("inf" for "info") is a good guess regardless of distance.
    if (!name.empty() && k.rfind(name, 0) == 0) d = std::min<size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  size_t limit = std::max<size_t>(2, name.size() / 3);
  return best_d <= limit ? best : "";
}

}  // namespace frugal
