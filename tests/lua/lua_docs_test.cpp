// docs/LUA.md against the module: every function, method and field that exists
// is documented (a "### " heading naming frugal.NAME, x:NAME for tensors,
// m:NAME for models, ex:NAME for executors), every one documented exists, and
// every ```lua example on the page runs without error (they assert their
// results) through the frugal executable.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "lua_fixture.h"

namespace {

const char* kDoc = FRUGAL_SOURCE_DIR "/docs/LUA.md";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::set<std::string> documented_names() {
  std::set<std::string> names;
  std::istringstream in(read_file(kDoc));
  std::string line;
  const std::regex name(R"((frugal\.|\bx:|\bm:|\bex:)([A-Za-z_]\w*))");
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) != 0) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), name), end; it != end; ++it)
      names.insert((*it)[1].str() + (*it)[2].str());
  }
  return names;
}

// What the module has, in the same notation.
std::set<std::string> existing_names() {
  LuaFixture f;
  f.run(R"(
    local out = {}
    local function add(prefix, t) for k in pairs(t) do out[#out + 1] = prefix .. k end end
    add("frugal.", frugal)
    add("x:", getmetatable(frugal.zeros(1)).__methods)
    local m = frugal.zoo("toy_tiny")
    add("m:", getmetatable(m).__index)
    add("ex:", getmetatable(frugal.executor(m)).__index)
    names = table.concat(out, "\n")
  )");
  std::set<std::string> names;
  std::istringstream in(f.string("names"));
  for (std::string n; std::getline(in, n);) names.insert(n);
  return names;
}

std::vector<std::string> lua_examples() {
  std::vector<std::string> blocks;
  const std::string doc = read_file(kDoc);
  const std::regex block("```lua\\n([\\s\\S]*?)```");
  for (std::sregex_iterator it(doc.begin(), doc.end(), block), end; it != end; ++it)
    blocks.push_back((*it)[1].str());
  return blocks;
}

}  // namespace

TEST_CASE("docs/LUA.md documents exactly the functions and methods that exist", "[lua][docs]") {
  const std::set<std::string> documented = documented_names(), existing = existing_names();
  REQUIRE(existing.size() > 60);
  for (const std::string& n : existing) {
    INFO(n << " exists but docs/LUA.md has no '### ' heading naming it");
    CHECK(documented.count(n) == 1);
  }
  for (const std::string& n : documented) {
    INFO(n << " is documented in docs/LUA.md but does not exist");
    CHECK(existing.count(n) == 1);
  }
}

TEST_CASE("docs/LUA.md: every lua example runs", "[lua][docs]") {
  const std::vector<std::string> examples = lua_examples();
  REQUIRE(examples.size() >= 10);
  const std::string dir = std::string(FRUGAL_TEST_BINARY_DIR) + "/lua_docs_" + std::to_string(getpid());
  REQUIRE(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()) == 0);
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::string path = dir + "/example" + std::to_string(i + 1) + ".lua";
    std::ofstream(path) << examples[i];
    const std::string cmd = "cd '" + dir + "' && XDG_CACHE_HOME='" + dir +
                            "' " FRUGAL_TEST_BINARY_DIR "/frugal '" + path + "' > '" + path + ".out' 2>&1";
    const int status = std::system(cmd.c_str());
    INFO("example " << i + 1 << ":\n" << examples[i] << "\noutput:\n" << read_file(path + ".out"));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}
