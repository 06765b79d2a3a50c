// Progress as people see it. On a terminal (a pseudo-terminal here, 60
// columns): a live status line that is erased before each result line, so the
// screen a terminal would show holds the results at column 0 and no status
// remnants. Off a terminal: one line per stage on stderr, stdout unchanged;
// --quiet: nothing on stderr.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "run_frugal.h"

using Catch::Matchers::Contains;

namespace {

constexpr int kColumns = 60;

struct PtyRun {
  int code = -1;
  std::string bytes;  // everything written to the terminal, stdout and stderr
};

// Runs frugal ARGS with stdout and stderr on a pseudo-terminal of kColumns.
PtyRun run_on_pty(const std::vector<std::string>& args, const std::string& cache_dir) {
  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = kColumns;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("XDG_CACHE_HOME", cache_dir.c_str(), 1);  // a fresh cache: the profile runs and shows progress
    std::vector<char*> argv;
    static std::string exe = FRUGAL_TEST_BINARY_DIR "/frugal";
    argv.push_back(exe.data());
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  PtyRun r;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      r.bytes.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has gone
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// The lines a terminal of `columns` shows after `bytes`: "\r" goes to column
// 0, "\n" down a line, ESC [ ... K erases to the end of the line, other
// escapes do nothing, characters overwrite, and a full line wraps.
std::vector<std::string> screen(const std::string& bytes, int columns) {
  std::vector<std::string> lines(1);
  size_t row = 0, col = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      if (++row == lines.size()) lines.emplace_back();
    } else if (c == '\033' && i + 1 < bytes.size() && bytes[i + 1] == '[') {
      size_t j = i + 2;
      while (j < bytes.size() && !std::isalpha(static_cast<unsigned char>(bytes[j]))) ++j;
      if (j < bytes.size() && bytes[j] == 'K' && lines[row].size() > col) lines[row].resize(col);
      i = j;
    } else {
      if (col == static_cast<size_t>(columns)) {  // auto-wrap
        if (++row == lines.size()) lines.emplace_back();
        col = 0;
      }
      std::string& line = lines[row];
      if (line.size() <= col) line.resize(col + 1, ' ');
      line[col++] = c;
    }
  }
  return lines;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string scratch_dir(const std::string& tag) {
  std::string dir =
      std::string(FRUGAL_TEST_BINARY_DIR) + "/terminal_test_" + std::to_string(getpid()) + "_" + tag;
  REQUIRE(std::system(("rm -rf " + sh_quote(dir) + " && mkdir -p " + sh_quote(dir)).c_str()) == 0);
  return dir;
}

}  // namespace

TEST_CASE("terminal: workflow's status line is erased before each result line", "[cli][terminal]") {
  const std::string dir = scratch_dir("workflow");
  const PtyRun r =
      run_on_pty({"workflow", "zoo:toy_branched", "--batch", "4", "--repeat", "1", "--threads", "1"}, dir);
  INFO(r.bytes);
  REQUIRE(r.code == 0);
  // The live status was there: a carriage return, then a stage, then an erase.
  CHECK_THAT(r.bytes, Contains("\rfolding BatchNorm (BaN-OFF)\033[K"));
  CHECK_THAT(r.bytes, Contains("\rprofiling toy_branched on cpu: layer"));
  const std::vector<std::string> lines = screen(r.bytes, kColumns);
  std::string shown;
  for (const std::string& l : lines) shown += l + "\n";
  INFO("screen:\n" << shown);
  // Every step line starts at column 0, with nothing of a status line before it.
  for (const char* step : {"1 fold      ", "2 profile   ", "3 plan      ", "4 run       ", "5 compare"}) {
    bool found = false;
    for (const std::string& l : lines) found = found || starts_with(l, step);
    CHECK(found);
  }
  // No status remnants, even of lines longer than the terminal is wide.
  for (const std::string& l : lines) {
    CHECK_FALSE(starts_with(l, "folding"));
    CHECK_FALSE(starts_with(l, "profiling"));
    CHECK_FALSE(starts_with(l, "planning"));
    CHECK_FALSE(starts_with(l, "running the"));
    CHECK(l.find('[') == std::string::npos);  // the profiler's "[9/78]" counters
  }
  std::system(("rm -rf " + sh_quote(dir)).c_str());
}

TEST_CASE("terminal: off a terminal, a line per stage on stderr; --quiet, none", "[cli][terminal]") {
  const std::string dir = scratch_dir("log");
  const std::string err = dir + "/err.txt", out = dir + "/out.txt";
  const std::string cmd = "cd " + sh_quote(dir) + " && XDG_CACHE_HOME=" + sh_quote(dir) +
                          " " FRUGAL_TEST_BINARY_DIR
                          "/frugal workflow zoo:toy_branched --batch 4 --repeat 1 --threads 1";
  REQUIRE(std::system((cmd + " --no-cache > out.txt 2> err.txt").c_str()) == 0);
  const std::string log = read_file(err);
  INFO(log);
  CHECK_THAT(log, Contains("frugal workflow: folding BatchNorm (BaN-OFF)\n"));
  CHECK_THAT(log, Contains("frugal workflow: profiling\n"));
  CHECK_THAT(log, Contains("frugal workflow: planning\n"));
  // The profiler: a line per tenth of its work, from 0%.
  CHECK_THAT(log, Contains("frugal:   0% profiling toy_branched on cpu: layer 1/"));
  CHECK_THAT(log, Contains("frugal:  50% profiling"));
  CHECK(log.find('\r') == std::string::npos);
  CHECK(log.find('\033') == std::string::npos);

  REQUIRE(std::system((cmd + " --no-cache --quiet > out.txt 2> err.txt").c_str()) == 0);
  CHECK(read_file(err).empty());
  CHECK_THAT(read_file(out), Contains("\n5 compare\n"));
  std::system(("rm -rf " + sh_quote(dir)).c_str());
}
