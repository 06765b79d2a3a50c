// Runs the built frugal executable through the shell and captures what it prints.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

struct FrugalRun {
  int code = -1;       // exit status; >= 128 when the shell saw a signal
  std::string output;  // stdout and stderr, interleaved
};

// Single-quotes `s` for /bin/sh.
inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `args` is pasted into the command line as is (quote with sh_quote); `env` is
// a prefix such as "FRUGAL_PLUGIN_PATH=/x".
inline FrugalRun run_frugal(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + FRUGAL_TEST_BINARY_DIR "/frugal " + args + " 2>&1";
  FrugalRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  INFO("command: " << cmd << "\noutput:\n" << r.output);
  // Never a crash, never a sanitizer report.
  CHECK(r.code < 128);
  CHECK(r.output.find("Sanitizer") == std::string::npos);
  CHECK(r.output.find("runtime error:") == std::string::npos);
  return r;
}

// A file under the build tree, unique to this process.
inline std::string scratch_file(const std::string& name, const std::string& content) {
  std::string path =
      std::string(FRUGAL_TEST_BINARY_DIR) + "/cli_test_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}
