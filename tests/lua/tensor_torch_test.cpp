// Tensors as a Torch7 user writes them: construction from values or sizes,
// views that share values (x[i], x[{...}], narrow, select, view, reshape),
// element-wise arithmetic, reductions, comparisons, close. The references are
// computed here in C++ from the same formula the Lua side fills in.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "lua_fixture.h"

using Catch::Matchers::Contains;

namespace {
// x = 2x3x4 with x[i][j][k] = 100 i + 10 j + k (1-based), the formula below.
const char* kSetup = R"(
  x = frugal.zeros(2, 3, 4)
  for i = 1, 2 do for j = 1, 3 do for k = 1, 4 do x:set(i, j, k, 100 * i + 10 * j + k) end end end
)";
double value(int i, int j, int k) { return 100 * i + 10 * j + k; }
}  // namespace

TEST_CASE("frugal.tensor reads a table as values, numbers as sizes", "[lua][tensor]") {
  LuaFixture f;
  CHECK(f.string("tostring(frugal.tensor({1, 2, 3}):size())") == "3");
  CHECK(f.number("frugal.tensor({1, 2, 3}):sum()") == 6);
  CHECK(f.string("tostring(frugal.tensor(2, 3):size())") == "2x3");
  CHECK(f.string("tostring(frugal.zeros{2, 3}:size())") == "2x3");
  CHECK(f.number("frugal.ones(2, 3):sum()") == 6);
  // A Size is unambiguous: sizes, never values.
  CHECK(f.string("tostring(frugal.tensor(frugal.tensor{{1, 2, 3}}:size()):size())") == "1x3");
  CHECK(f.number("frugal.tensor(frugal.tensor{{1, 2, 3}}:size()):sum()") == 0);
  CHECK(f.boolean("frugal.zeros(2, 3):size() == frugal.ones{2, 3}:size()"));
  CHECK_FALSE(f.boolean("frugal.zeros(2, 3):size() == frugal.ones{3, 2}:size()"));
  CHECK_THAT(f.error_of("frugal.tensor(frugal.zeros(2))"), Contains("x:clone()"));
}

TEST_CASE("indexing: x[i] selects, x[{...}] selects and narrows, too many indices is an error",
          "[lua][tensor]") {
  LuaFixture f;
  f.run(kSetup);
  CHECK(f.number("x[{2, 3, 4}]") == value(2, 3, 4));
  CHECK(f.number("x[2][3][4]") == value(2, 3, 4));
  CHECK(f.number("x[-1][-1][-1]") == value(2, 3, 4));  // negative: from the end
  CHECK(f.string("tostring(x[1]:size())") == "3x4");
  CHECK(f.string("tostring(x[{2, 1}]:size())") == "4");
  CHECK(f.string("tostring(x[{{}, 2}]:size())") == "2x4");
  CHECK(f.string("tostring(x[{{}, {2, 3}, 4}]:size())") == "2x2");
  CHECK(f.number("x[{{}, {2, 3}, 4}][{2, 1}]") == value(2, 2, 4));
  CHECK_THAT(f.error_of("return frugal.zeros(2, 2)[{1, 1, 1, 1}]"),
             Contains("tensor[index]: 4 indices for a tensor of 2 dimensions (size 2x2)"));
  CHECK_THAT(f.error_of("return x[3]"), Contains("index 3 out of range for dimension 1 (size 2)"));
  CHECK_THAT(f.error_of("return x[{1, {3, 2}}]"), Contains("range {3, 2} is empty"));
  CHECK_THAT(f.error_of("return x[{1, 'a'}]"), Contains("index 2 must be an integer or a range"));
}

TEST_CASE("views share values: narrow, select, view, reshape, assignment through them", "[lua][tensor]") {
  LuaFixture f;
  f.run(kSetup);
  f.run("n = x:narrow(3, 2, 2); n:fill(-1)");  // k = 2, 3 of every row
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 4; ++k) {
        const std::string at =
            "x[{" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k) + "}]";
        CHECK(f.number(at) == ((k == 2 || k == 3) ? -1 : value(i, j, k)));
      }
  CHECK_FALSE(f.boolean("n:is_contiguous()"));
  CHECK(f.boolean("x:is_contiguous()"));
  f.run("s = x:select(2, 3); s[{1, 1}] = 7");  // x[1][3][1]
  CHECK(f.number("x[{1, 3, 1}]") == 7);
  f.run("v = x:view(6, 4); v[{6, 4}] = 9");  // the last element
  CHECK(f.number("x[{2, 3, 4}]") == 9);
  f.run("r = x:reshape(24); r[1] = 5");  // contiguous: shares
  CHECK(f.number("x[{1, 1, 1}]") == 5);
  f.run("c = n:reshape(12); c[1] = 1000");  // strided: a copy
  CHECK(f.number("x[{1, 1, 2}]") == -1);
  CHECK_THAT(f.error_of("n:view(12)"), Contains("a view needs a contiguous tensor"));
  f.run("x[1] = 0");  // fills the slice
  CHECK(f.number("x[1]:sum()") == 0);
  f.run("x[2] = frugal.ones(3, 4)");  // copies into it
  CHECK(f.number("x:sum()") == 12);
  f.run("x[{2, {}, 1}] = frugal.tensor{4, 5, 6}");
  CHECK(f.number("x[{2, 3, 1}]") == 6);
  CHECK_THAT(f.error_of("x[1] = frugal.ones(5)"),
             Contains("cannot copy 5 values (size 5) into 12 (size 3x4)"));
  CHECK_THAT(f.error_of("return x:narrow(3, 4, 2)"),
             Contains("elements 4..5 are out of range for dimension 3"));
  CHECK_THAT(f.error_of("return x:select(4, 1)"), Contains("tensor:select: dimension 4 out of range"));
}

TEST_CASE("arithmetic: operators make new tensors, methods work in place", "[lua][tensor]") {
  LuaFixture f;
  f.run("a = frugal.tensor{{1, 2}, {3, 4}}; b = frugal.tensor{{10, 20}, {30, 40}}");
  CHECK(f.boolean("(a + b):equal(frugal.tensor{{11, 22}, {33, 44}})"));
  CHECK(f.boolean("(b - a):equal(frugal.tensor{{9, 18}, {27, 36}})"));
  CHECK(f.boolean("(a * b):equal(frugal.tensor{{10, 40}, {90, 160}})"));  // element-wise
  CHECK(f.boolean("(b / a):equal(frugal.tensor{{10, 10}, {10, 10}})"));
  CHECK(f.boolean("(1 - a):equal(frugal.tensor{{0, -1}, {-2, -3}})"));
  CHECK(f.boolean("(a * 2):equal(2 * a) and (-a):equal(a * -1)"));
  CHECK(f.number("a:sum()") == 10);                         // operators left a alone
  f.run("c = a:clone():add(1):mul(2):sub(0.5, b):div(2)");  // ((a + 1) * 2 - b / 2) / 2
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 2; ++j) {
      const double av = 2 * (i - 1) + j, bv = 10 * av;
      CHECK(f.number("c[{" + std::to_string(i) + "," + std::to_string(j) + "}]") ==
            Approx(((av + 1) * 2 - 0.5 * bv) / 2));
    }
  f.run("d = a:clone(); d:add(3, b)");
  CHECK(f.number("d[{2, 2}]") == 124);
  CHECK(f.boolean("a:clone():clamp(2, 3):equal(frugal.tensor{{2, 2}, {3, 3}})"));
  CHECK(f.boolean("a:clone():clamp(nil, 2):equal(frugal.tensor{{1, 2}, {2, 2}})"));
  // In place on a view writes through.
  f.run("e = a:clone(); e[2]:mul(10)");
  CHECK(f.boolean("e:equal(frugal.tensor{{1, 2}, {30, 40}})"));
  CHECK_THAT(f.error_of("return a + frugal.zeros(3)"), Contains("tensor + value: sizes differ: 2x2 vs 3"));
  CHECK_THAT(f.error_of("a:add('x')"), Contains("tensor:add: the operand must be a number or a tensor"));
  CHECK_THAT(f.error_of("a:clamp(3, 2)"), Contains("is above max"));
}

TEST_CASE("reductions over all elements and along a dimension keep Torch7's shapes", "[lua][tensor]") {
  LuaFixture f;
  f.run(kSetup);
  double total = 0;
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 4; ++k) total += value(i, j, k);
  CHECK(f.number("x:sum()") == total);
  CHECK(f.number("x:mean()") == Approx(total / 24));
  CHECK(f.number("x:max()") == value(2, 3, 4));
  CHECK(f.number("x:min()") == value(1, 1, 1));
  CHECK(f.number("x:argmax()") == 24);
  CHECK(f.number("x:argmin()") == 1);
  CHECK(f.string("tostring(x:sum(2):size())") == "2x1x4");
  for (int i = 1; i <= 2; ++i)
    for (int k = 1; k <= 4; ++k) {
      double s = 0;
      for (int j = 1; j <= 3; ++j) s += value(i, j, k);
      const std::string at = "{" + std::to_string(i) + ",1," + std::to_string(k) + "}";
      CHECK(f.number("x:sum(2)[" + at + "]") == s);
      CHECK(f.number("x:mean(2)[" + at + "]") == Approx(s / 3));
    }
  f.run("vals, idx = x:max(3)");
  CHECK(f.string("tostring(vals:size()) .. ' ' .. tostring(idx:size())") == "2x3x1 2x3x1");
  CHECK(f.number("vals[{2, 1, 1}]") == value(2, 1, 4));
  CHECK(f.number("idx[{2, 1, 1}]") == 4);
  CHECK(f.number("x:argmax(1)[{1, 2, 3}]") == 2);
  // Reductions of a strided view see only its elements.
  CHECK(f.number("x:narrow(3, 2, 2):sum()") == total - [] {
    double s = 0;
    for (int i = 1; i <= 2; ++i)
      for (int j = 1; j <= 3; ++j) s += value(i, j, 1) + value(i, j, 4);
    return s;
  }());
  CHECK(std::isnan(f.number("frugal.tensor{1, 0/0, 3}:max()")));  // NaN propagates
  CHECK_THAT(f.error_of("return frugal.zeros(0):max()"), Contains("is empty"));
}

TEST_CASE("topk: largest first by default, indices 1-based, along the last dimension", "[lua][tensor]") {
  LuaFixture f;
  const std::vector<double> v = {0.5, 3, -1, 3, 7, 2};
  f.run("t = frugal.tensor{0.5, 3, -1, 3, 7, 2}; vals, idx = t:topk(3)");
  std::vector<int> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return v[a] > v[b]; });
  for (int r = 0; r < 3; ++r) {
    CHECK(f.number("vals[" + std::to_string(r + 1) + "]") == v[order[r]]);
    CHECK(f.number("idx[" + std::to_string(r + 1) + "]") == order[r] + 1);
  }
  f.run("s = select(2, t:topk(2, 1, false))");  // smallest
  CHECK(f.number("s[1]") == 3);
  CHECK(f.number("s[2]") == 1);
  f.run("m = frugal.tensor{{1, 9, 5}, {8, 2, 7}}; mv, mi = m:topk(2)");
  CHECK(f.boolean("mv:equal(frugal.tensor{{9, 5}, {8, 7}}) and mi:equal(frugal.tensor{{2, 3}, {1, 3}})"));
  f.run("cv, ci = m:topk(1, 1)");
  CHECK(f.boolean("cv:equal(frugal.tensor{{8, 9, 7}}) and ci:equal(frugal.tensor{{2, 1, 2}})"));
  CHECK_THAT(f.error_of("return t:topk(7)"), Contains("tensor:topk: k = 7 is outside 1..6"));
}

TEST_CASE("comparisons: equal, allclose within a tolerance, max_abs_diff", "[lua][tensor]") {
  LuaFixture f;
  f.run("a = frugal.tensor{1, 2, 3}; b = frugal.tensor{1, 2, 3.00001}");
  CHECK_FALSE(f.boolean("a:equal(b)"));
  CHECK(f.boolean("a:equal(a:clone())"));
  CHECK(f.boolean("a:allclose(b)"));  // rtol 1e-5 of 3
  CHECK_FALSE(f.boolean("a:allclose(b, 0, 1e-6)"));
  CHECK(f.boolean("a:allclose(b, 0, 1e-4)"));
  CHECK_FALSE(f.boolean("a:allclose(frugal.tensor{1, 2})"));
  CHECK_FALSE(f.boolean("frugal.tensor{0/0}:allclose(frugal.tensor{0/0})"));
  CHECK(f.number("a:max_abs_diff(b)") == Approx(1e-5).margin(1e-6));
}

TEST_CASE("close frees at once; <close> at the end of the block; later use is an error", "[lua][tensor]") {
  LuaFixture f;
  f.run(R"(
    x = frugal.ones(1000)
    v = x:narrow(1, 1, 10)
    x:close()
    x:close()  -- harmless
    do
      local y <close> = frugal.ones(3)
      kept = y
    end
  )");
  CHECK(f.string("tostring(x)") == "frugal.FloatTensor (closed)");
  CHECK(f.string("tostring(kept)") == "frugal.FloatTensor (closed)");
  CHECK(f.number("v:sum()") == 10);  // a view keeps the values it shares alive
  CHECK_THAT(f.error_of("return x:sum()"), Contains("tensor:sum: argument #1 is a closed tensor"));
  CHECK_THAT(f.error_of("return x[1]"), Contains("argument #1 is a closed tensor"));
  CHECK_THAT(f.error_of("return x + 1"), Contains("argument #1 is a closed tensor"));
}
