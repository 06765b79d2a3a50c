// Tensors, models and executors free their memory on :close() or at the end
// of a `local x <close>` block, without collectgarbage(), as Lua's files do.
#include <unistd.h>

#include <fstream>

#include "lua_fixture.h"

using Catch::Matchers::Contains;

namespace {
// Resident memory of this process, in bytes (/proc/self/statm, field 2).
[[maybe_unused]] double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}
}  // namespace

TEST_CASE("x:close() gives a tensor's memory back at once", "[lua][close]") {
#if defined(__SANITIZE_ADDRESS__)
  // ASan keeps freed blocks in quarantine: resident memory says nothing there.
  // The plain build runs this check.
  SUCCEED("not measurable under AddressSanitizer");
#else
  LuaFixture f;
  constexpr double kBytes = 64e6;  // 16M floats, written (zero-filled), so resident
  const double before = resident_bytes();
  f.run("x = frugal.ones(16000000)");
  const double allocated = resident_bytes();
  CHECK(allocated - before > 0.9 * kBytes);
  f.run("x:close()");  // x is still referenced: only close can free it
  CHECK(allocated - resident_bytes() > 0.9 * kBytes);
  f.run("do local y <close> = frugal.ones(16000000) end");
  CHECK(resident_bytes() - before < 0.5 * kBytes);
#endif
}

TEST_CASE("models and executors close; later use names the closed object", "[lua][close]") {
  LuaFixture f;
  f.run(R"(
    m = frugal.zoo("toy_tiny")
    ex = frugal.executor(m, {executor = "cpu"})
    y = ex:run(frugal.random_input(m, 2, 0))
    ex:close()
    ex:close()  -- harmless
    m:close()
    do
      local m2 <close> = frugal.zoo("toy_tiny")
      local ex2 <close> = frugal.executor(m2)
      kept_model, kept_executor = m2, ex2
    end
  )");
  CHECK(f.string("tostring(ex)") == "frugal.Executor (closed)");
  CHECK(f.string("tostring(m)") == "frugal.Model (closed)");
  CHECK(f.string("tostring(kept_model) .. ' ' .. tostring(kept_executor)") ==
        "frugal.Model (closed) frugal.Executor (closed)");
  CHECK(f.number("y:numel()") > 0);  // outputs are tensors of their own
  CHECK_THAT(f.error_of("ex:run(frugal.zeros(1))"),
             Contains("executor:run: argument #1 is a closed executor"));
  CHECK_THAT(f.error_of("return m:nodes()"), Contains("model:nodes: argument #1 is a closed model"));
  CHECK_THAT(f.error_of("return frugal.executor(m)"),
             Contains("frugal.executor: argument #1 is a closed model"));
  CHECK_THAT(f.error_of("return frugal.profile(ex)"),
             Contains("frugal.profile: argument #1 is a closed executor"));
}
