// The Lua tensor API: values against references computed here (C order is
// (i-1)*cols + j), errors against the messages scripts will show.
#include <cmath>
#include <vector>

#include "lua/lua_tensor.h"
#include "lua_fixture.h"
#include "tensor/tensor.h"

using Catch::Matchers::Contains;

namespace {
// The tensor in global `name`, as a dense copy of what the binding holds.
frugal::Tensor global_tensor(LuaFixture& f, const char* name) {
  lua_getglobal(f.lua.state(), name);
  const frugal::StridedTensor* t = frugal::test_tensor(f.lua.state(), -1);
  lua_pop(f.lua.state(), 1);
  REQUIRE(t != nullptr);
  return t->to_dense();
}
}  // namespace

TEST_CASE("tensor shapes: varargs, table, size, dim, numel", "[lua][tensor]") {
  LuaFixture f;
  f.run("t = frugal.tensor(2, 3, 4); u = frugal.zeros{5, 6}");
  CHECK(f.number("t:dim()") == 3);
  CHECK(f.number("t:numel()") == 24);
  CHECK(f.number("t:nElement()") == 24);
  CHECK(f.number("t:size(1)") == 2);
  CHECK(f.number("t:size(3)") == 4);
  CHECK(f.number("#t:size()") == 3);
  CHECK(f.number("t:size()[2]") == 3);
  CHECK(f.number("#t") == 2);
  CHECK(f.number("u:size(2)") == 6);
  CHECK(f.number("u:sum()") == 0);  // zero-filled
  CHECK(global_tensor(f, "t").dims == std::vector<int64_t>{2, 3, 4});
  CHECK(f.boolean("frugal.is_tensor(t) and not frugal.is_tensor({})"));
}

TEST_CASE("tensor get/set are 1-based and C-ordered", "[lua][tensor]") {
  LuaFixture f;
  f.run(R"(
    t = frugal.tensor(3, 4)
    for i = 1, 3 do for j = 1, 4 do t:set(i, j, 10 * i + j) end end
  )");
  const frugal::Tensor t = global_tensor(f, "t");
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 4; ++j) {
      CHECK(t.data[(i - 1) * 4 + (j - 1)] == 10 * i + j);
      CHECK(f.number("t:get(" + std::to_string(i) + "," + std::to_string(j) + ")") == 10 * i + j);
    }
  // reshape keeps the C order: element (2,3) of 3x4 is element 7 of the flat copy.
  CHECK(f.number("t:reshape(12)[7]") == 23);
  CHECK(f.number("t:reshape{2, 6}:get(2, 1)") == 23);  // flat element 7 again
}

TEST_CASE("1-D indexing t[i] and t[i] = v", "[lua][tensor]") {
  LuaFixture f;
  f.run("t = frugal.tensor(4); for i = 1, #t do t[i] = i * i end");
  CHECK(f.number("t[3]") == 9);
  CHECK(f.number("t:get(4)") == 16);
  CHECK(global_tensor(f, "t").data == std::vector<float>{1, 4, 9, 16});
  CHECK_THAT(f.error_of("return t[5]"), Contains("index 5 out of range for dimension 1 (size 4)"));
  CHECK_THAT(f.error_of("return t[0]"), Contains("index 0 out of range"));
  CHECK_THAT(f.error_of("t[1.5] = 1"), Contains("must be an integer, got 1.5"));
  CHECK_THAT(f.error_of("t[1] = 'x'"), Contains("value must be a number, got string"));
  CHECK_THAT(f.error_of("t.foo = 1"), Contains("cannot set field 'foo'"));
}

TEST_CASE("fill, clone independence, sum/min/max/max_abs_diff", "[lua][tensor]") {
  LuaFixture f;
  f.run("a = frugal.tensor(2, 5):fill(2.5); b = a:clone(); b:set(2, 5, -1)");
  CHECK(f.number("a:sum()") == Approx(25.0));
  CHECK(f.number("a:get(2, 5)") == 2.5);  // the clone is a copy
  CHECK(f.number("b:min()") == -1);
  CHECK(f.number("b:max()") == 2.5);
  CHECK(f.number("a:max_abs_diff(b)") == 3.5);
  CHECK_THAT(f.error_of("return a:max_abs_diff(frugal.tensor(5, 2))"), Contains("sizes differ: 2x5 vs 5x2"));
  CHECK_THAT(f.error_of("return frugal.tensor(0):max()"), Contains("is empty"));
}

TEST_CASE("frugal.tensor of nested values and totable round trip", "[lua][tensor]") {
  LuaFixture f;
  f.run(R"(
    src = {{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12.5}}}
    t = frugal.tensor(src)
    back = t:totable()
    same = true
    for i = 1, 2 do for j = 1, 2 do for k = 1, 3 do
      same = same and back[i][j][k] == src[i][j][k] and t:get(i, j, k) == src[i][j][k]
    end end end
  )");
  CHECK(global_tensor(f, "t").dims == std::vector<int64_t>{2, 2, 3});
  CHECK(f.boolean("same"));
  CHECK(f.number("#back") == 2);
  CHECK(f.number("#back[2][2]") == 3);
  CHECK(global_tensor(f, "t").data.back() == 12.5f);
  // Empty and flat tables.
  CHECK(f.number("frugal.tensor({}):numel()") == 0);
  CHECK(f.number("frugal.tensor({3, 4}):get(2)") == 4);
}

TEST_CASE("frugal.tensor of values refuses ragged or odd tables, naming the element", "[lua][tensor]") {
  LuaFixture f;
  CHECK_THAT(f.error_of("frugal.tensor({{1, 2}, {3}})"), Contains("element [2] has 1 entries, expected 2"));
  CHECK_THAT(f.error_of("frugal.tensor({{1, 2}, {3, 'x'}})"),
             Contains("element [2][2] is a string, expected a number"));
  CHECK_THAT(f.error_of("frugal.tensor({{1, 2}, 3})"), Contains("element [2] is a number, expected a table"));
  CHECK_THAT(f.error_of("frugal.tensor({1, {2}})"), Contains("element [2] is a table, expected a number"));
  CHECK_THAT(f.error_of("frugal.tensor({1, 2, x = 3})"), Contains("keys other than 1..2"));
  CHECK_THAT(f.error_of("local t = {}; t[1] = t; frugal.tensor(t)"), Contains("nested deeper than"));
  CHECK_THAT(f.error_of("frugal.tensor('x')"), Contains("must be sizes or a table of values, got string"));
}

TEST_CASE("tensor constructors refuse bad sizes without crashing", "[lua][tensor]") {
  LuaFixture f;
  CHECK_THAT(f.error_of("frugal.tensor()"), Contains("give sizes or values"));
  CHECK_THAT(f.error_of("frugal.zeros(nil)"), Contains("size 1 must be an integer, got nil"));
  CHECK_THAT(f.error_of("frugal.tensor(2, -3)"), Contains("size 2 is -3; sizes must be >= 0"));
  CHECK_THAT(f.error_of("frugal.tensor(2.5)"), Contains("must be an integer, got 2.5"));
  CHECK_THAT(f.error_of("frugal.tensor(1e30)"), Contains("must be an integer, got 1e+30"));
  CHECK_THAT(f.error_of("frugal.zeros{2, 'x'}"), Contains("sizes[2] must be an integer"));
  CHECK_THAT(f.error_of("frugal.tensor(2^40, 2^40)"), Contains("too many elements"));
  CHECK_THAT(f.error_of("frugal.tensor(100000, 100000, 100000)"), Contains("more than this machine's"));
  CHECK_THAT(f.error_of("frugal.tensor(2):reshape(3)"), Contains("cannot view size 2 (2 values) as 3"));
}

TEST_CASE("get/set/size check index counts and ranges", "[lua][tensor]") {
  LuaFixture f;
  f.run("t = frugal.tensor(2, 3)");
  CHECK_THAT(f.error_of("return t:get(1)"), Contains("got 1 indices for a tensor of 2 dimensions"));
  CHECK_THAT(f.error_of("return t:get(1, 4)"), Contains("index 4 out of range for dimension 2 (size 3)"));
  CHECK_THAT(f.error_of("return t:get(-3, 1)"), Contains("index -3 out of range for dimension 1 (size 2)"));
  CHECK_THAT(f.error_of("return t:get('a', 1)"), Contains("index 1 must be an integer, got string"));
  CHECK_THAT(f.error_of("t:set(1, 1)"), Contains("got 1 indices"));
  CHECK_THAT(f.error_of("t:set()"), Contains("usage: x:set"));
  CHECK_THAT(f.error_of("return t:size(3)"), Contains("dimension 3 out of range"));
  CHECK_THAT(f.error_of("return t.size(nil)"), Contains("frugal.FloatTensor expected, got nil"));
  CHECK_THAT(f.error_of("return t:fill('x')"), Contains("value must be a number"));
}

TEST_CASE("random is deterministic, uniform in [-1, 1) or standard normal", "[lua][tensor]") {
  LuaFixture f;
  f.run(R"(
    a = frugal.tensor(100000):random(42)
    b = frugal.tensor(100000):random(42)
    c = frugal.tensor(100000):random(43)
    n = frugal.tensor(100000):random(7, "normal")
  )");
  const auto a = global_tensor(f, "a").data;
  const auto b = global_tensor(f, "b").data;
  const auto c = global_tensor(f, "c").data;
  CHECK(a == b);
  CHECK(a != c);
  double sum = 0, sq = 0;
  for (float v : a) {
    REQUIRE(v >= -1.0f);
    REQUIRE(v < 1.0f);
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  // Uniform(-1, 1): mean 0, variance 1/3; the standard errors at n = 1e5 are ~0.002.
  CHECK(std::fabs(sum / a.size()) < 0.01);
  CHECK(std::fabs(sq / a.size() - 1.0 / 3.0) < 0.01);
  const auto n = global_tensor(f, "n").data;
  double m = 0, v2 = 0;
  for (float v : n) m += v;
  m /= n.size();
  for (float v : n) v2 += (v - m) * (v - m);
  CHECK(std::fabs(m) < 0.02);
  CHECK(std::fabs(v2 / n.size() - 1.0) < 0.02);
  CHECK_THAT(f.error_of("frugal.tensor(3):random(1, 'gauss')"), Contains("distribution 'gauss' is unknown"));
  CHECK_THAT(f.error_of("frugal.tensor(3):random(-1)"), Contains("seed must be >= 0"));
}

TEST_CASE("tostring shows values and the Torch-style size line", "[lua][tensor]") {
  LuaFixture f;
  f.run("s = tostring(frugal.tensor({{1, 2, 3}, {4, 5, 6}}))");
  std::string s = f.string("s");
  CHECK_THAT(s, Contains("[frugal.FloatTensor of size 2x3]"));
  CHECK_THAT(s, Contains("1  2  3"));
  CHECK_THAT(s, Contains("4  5  6"));
  CHECK(s.find("1  2  3") < s.find("4  5  6"));
  CHECK_THAT(f.string("tostring(frugal.tensor(2, 2, 2))"), Contains("(2,.,.) = "));
  CHECK_THAT(f.string("tostring(frugal.tensor(0, 3))"), Contains("of size 0x3]"));
  CHECK_THAT(f.string("tostring(frugal.tensor(1000))"), Contains("(980 more)"));
}

TEST_CASE("a tensor freed by a hand-called __gc gives an error, not a crash", "[lua][tensor]") {
  LuaFixture f;
  f.run("t = frugal.tensor(3); getmetatable(t).__gc(t); getmetatable(t).__gc(t)");
  CHECK_THAT(f.error_of("return t:numel()"), Contains("tensor:numel: argument #1 is a closed tensor"));
  CHECK(f.string("tostring(t)") == "frugal.FloatTensor (closed)");
}
