// Shared by the workflow tests: a scratch folder per test, file helpers, and
// pulling numbers out of command output.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cli/run_frugal.h"

// A fresh folder under the build tree, removed at the end of the test.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& tag) {
    static int counter = 0;
    path = std::string(FRUGAL_TEST_BINARY_DIR) + "/workflow_test_" + std::to_string(getpid()) + "_" + tag +
           "_" + std::to_string(counter++);
    std::string cmd = "rm -rf " + sh_quote(path) + " && mkdir -p " + sh_quote(path);
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  ~ScratchDir() { std::system(("rm -rf " + sh_quote(path)).c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  // The environment prefix that points the cost cache here.
  std::string cache_env() const { return "XDG_CACHE_HOME=" + sh_quote(path + "/cache"); }
};

inline bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

inline std::string read_text(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_text(const std::string& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

inline nlohmann::json read_json(const std::string& p) { return nlohmann::json::parse(read_text(p)); }

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The first match of `pattern`'s group 1 (a number), or fails the test.
inline long long capture_integer(const std::string& text, const std::string& pattern) {
  std::smatch m;
  INFO("pattern: " << pattern << "\ntext:\n" << text);
  REQUIRE(std::regex_search(text, m, std::regex(pattern)));
  return std::stoll(m[1].str());
}

// `frugal ARGS` run inside `dir` (relative paths land there).
inline FrugalRun frugal_in(const ScratchDir& dir, const std::string& args, const std::string& env = "") {
  return run_frugal(args, "cd " + sh_quote(dir.path) + " && " + dir.cache_env() + " " + env);
}
