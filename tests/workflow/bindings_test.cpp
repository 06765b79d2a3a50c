// The Lua bindings added for the workflow: JSON conversion, executor methods
// against the toy network's known shapes, frugal.run against ex:run, option and
// argument errors.
#include "lua/lua_fixture.h"
#include "workflow_test_util.h"

TEST_CASE("frugal JSON: round trip, empty object, NaN and mixed tables refused", "[workflow][lua]") {
  LuaFixture f;
  f.run(R"(
    local t = frugal.json_decode('{"a": [1, 2.5, "x"], "b": {}, "c": [], "d": true}')
    assert(t.a[1] == 1 and math.type(t.a[1]) == "integer" and t.a[2] == 2.5 and t.a[3] == "x")
    assert(frugal.json_encode(t.b) == "{}" and frugal.json_encode(t.c) == "[]")
    local back = frugal.json_decode(frugal.json_encode(t))
    assert(back.d == true and #back.a == 3)
  )");
  CHECK(contains(f.error_of("frugal.json_encode({layers = {{time_s = {1, 0/0}}}})"),
                 "value.layers[1].time_s[2] is NaN"));
  CHECK(contains(f.error_of("frugal.json_encode({1, 2, x = 3})"), "mixes keys"));
  CHECK(contains(f.error_of("frugal.json_encode({f = print})"), "value.f is a function"));
  CHECK(contains(f.error_of("frugal.json_decode('{nope')"), "not valid JSON"));
  CHECK(contains(f.error_of("frugal.load_json('/nonexistent/x.json')"), "/nonexistent/x.json"));
}

TEST_CASE("frugal.executor on toy_tiny: layers, bytes, budget, run", "[workflow][lua]") {
  LuaFixture f;
  f.run(R"(
    m = frugal.zoo("toy_tiny")
    ex = frugal.executor(m, {threads = 1})
    d = ex:describe()
    x = frugal.random_input(m, 2, 5)
  )");
  CHECK(f.number("ex:layer_count()") == f.number("#d.layers"));
  // Input [N,3,8,8] float32; the first conv writes [N,4,8,8].
  CHECK(f.number("ex:layer_bytes(1, 1).in_bytes") == 3 * 8 * 8 * 4);
  CHECK(f.number("ex:layer_bytes(1, 2).out_bytes") == 2 * 4 * 8 * 8 * 4);
  CHECK(f.string("d.layers[1].name") == f.string("m:nodes()[1].name"));
  CHECK(f.boolean("select(1, ex:time_layer(1, 2, 3)) >= 0"));
  // The executor's time_layer mode reaches the plugin (and thus the profile's cache key).
  CHECK(f.string("frugal.executor(m, {threads = 1, time_layer = 'cold_inputs'}):describe().time_layer") ==
        "cold_inputs");
  CHECK(contains(f.error_of("frugal.executor(m, {time_layer = 'hot'})"), "'time_layer'"));
  CHECK(contains(f.error_of("frugal.executor(m, {time_layer = 1})"), "'time_layer' must be a string"));
  // The cpu executor's fusions, as its describe() reports them.
  CHECK(f.string("frugal.executor(m, {threads = 1, se_scale = 'separate'}):describe().se_scale") ==
        "separate");
  CHECK(f.string("frugal.executor(m, {threads = 1, residual_add = 'separate'}):describe().residual_add") ==
        "separate");
  CHECK(f.string("d.se_scale .. ' ' .. d.residual_add") == "fused fused");
  CHECK(contains(f.error_of("frugal.executor(m, {se_scale = 'yes'})"), "'se_scale' must be \"fused\" or"));
  CHECK(contains(f.error_of("frugal.executor(m, {residual_add = true})"), "'residual_add' must be a string"));
  CHECK(contains(f.error_of("ex:layer_bytes(0, 1)"), "layer index 0 is out of range"));
  CHECK(contains(f.error_of("ex:layer_bytes(1, 0)"), "batch must be in 1.."));
  CHECK(contains(f.string("tostring(ex)"), "frugal.Executor 'cpu'"));

  // ex:run and frugal.run compute the same thing; the report has the figures.
  f.run(R"(
    y1, r1 = ex:run(x)
    y2, r2 = frugal.run(m, nil, x, {threads = 1})
    assert(y1:max_abs_diff(y2) == 0, "ex:run and frugal.run differ")
    assert(r1.peak_bytes > 0 and r1.seconds >= 0 and #r1.steps == ex:layer_count())
  )");
  CHECK(f.number("y1:size(1)") == 2);
  CHECK(f.number("y1:size(2)") == 5);

  // Inputs pass by reference when contiguous (also a view at an offset into a
  // larger storage), as a copy otherwise (columns of a wider tensor), by name in a table:
  // every form computes the same outputs as the tensor itself.
  f.run(R"(
    local big = frugal.zeros(3, 3, 8, 8)
    big:narrow(1, 2, 2):copy(x)
    local at_offset = big:narrow(1, 2, 2)
    assert(at_offset:is_contiguous())
    local strided = frugal.zeros(2, 3, 8, 16):narrow(4, 5, 8)
    strided:copy(x)
    assert(not strided:is_contiguous())
    for _, input in ipairs({at_offset, strided, {input = x}}) do
      local y = ex:run(input)
      assert(y:max_abs_diff(y1) == 0, "an input by reference or copy differs")
    end
  )");

  // A budget: exactly the need runs, one byte less is refused before running.
  f.run("need = r1.peak_bytes; ex:set_budget(need); local _, r = ex:run(x); assert(r.peak_bytes == need)");
  f.run("ex:set_budget(need - 1)");
  CHECK(contains(f.error_of("ex:run(x)"), "too small for a whole-batch run of 2 samples"));
  CHECK(contains(f.error_of("frugal.run(m, nil, x, {budget = '1kB'})"), "too small"));
  CHECK(contains(f.error_of("ex:run({wrong = x})"), "inputs['input'] is missing"));
  CHECK(contains(f.error_of("ex:run(x, {plan = {steps = {{layer = 'nope', first = 0, count = 2}}}})"),
                 "made for another model"));
}

TEST_CASE("frugal.executor with consume: the model is given away and closed, the executor the same",
          "[workflow][lua]") {
  LuaFixture f;
  f.run(R"(
    m = frugal.zoo("toy_linear")
    x = frugal.random_input(m, 3, 5)
    kept = frugal.executor(m, {threads = 1})
    given = frugal.executor(m, {threads = 1, consume = true})
    assert(given:run(x):max_abs_diff(kept:run(x)) == 0, "the consumed model's executor differs")
  )");
  CHECK(f.string("tostring(m)") == "frugal.Model (closed)");
  CHECK(contains(f.error_of("m:name()"), "closed"));
  CHECK(contains(f.error_of("frugal.executor(frugal.zoo('toy_tiny'), {consume = 1})"),
                 "'consume' must be true or false"));
}

TEST_CASE("frugal.fold / frugal.plan / frugal.profile / frugal.run: option errors", "[workflow][lua]") {
  LuaFixture f;
  ScratchDir dir("bindings");
  f.run("m = frugal.zoo('toy_tiny'); x = frugal.random_input(m, 1, 0); cache_dir = '" + dir / "cache" + "'");
  CHECK(contains(f.error_of("frugal.run(m, nil, x, {budjet = 1})"), "unknown option 'budjet'"));
  CHECK(contains(f.error_of("frugal.run(m, nil, x, {budget = 'lots'})"), "option 'budget'"));
  CHECK(contains(f.error_of("frugal.fold(m, {method = 'magic'})"), "magic"));
  CHECK(contains(f.error_of("frugal.executor(m, {executor = 'abacus'})"), "abacus"));
  f.run(
      "costs = frugal.profile(m, {upto = 2, repeats = 1, cache = false, threads = 1, cache_dir = "
      "cache_dir})");
  CHECK(f.number("costs.batch_max") == 2);
  CHECK(f.string("costs.layers[1].source[2]") == "measured");
  CHECK(contains(f.error_of("frugal.plan(costs, {batch = 2})"), "option 'budget' is required"));
  CHECK(contains(f.error_of("frugal.plan(costs, {budget = '1MB'})"), "option 'batch' is required"));
  CHECK(
      contains(f.error_of("frugal.plan(costs, {budget = '1MB', batch = 0})"), "option 'batch' must be >= 1"));
  CHECK(
      contains(f.error_of("frugal.plan(costs, {budget = '1MB', batch = 2, planner = 'oracle'})"), "oracle"));
  CHECK(contains(f.error_of("frugal.profile(m, {upto = 2, batches = {3}})"), "batch size 3 is outside 1..2"));
  CHECK(contains(f.error_of("frugal.profile(m, {repeats = 0})"), "option 'repeats'"));
  CHECK(contains(f.error_of("frugal.profile(42)"), "argument #1 must be a model"));
  // An executor is profiled as it is; its own threads are part of the table.
  f.run(
      "ex = frugal.executor(m, {threads = 1}); c1 = frugal.profile(ex, {upto = 1, repeats = 1, cache = "
      "false, cache_dir = cache_dir})");
  CHECK(f.number("c1.threads") == 1);
  CHECK(contains(f.error_of("frugal.profile(ex, {threads = 2})"),
                 "option 'threads' applies when profiling a model"));
  // A plan from frugal.plan runs through frugal.run under its own budget.
  f.run(R"(
    local p = frugal.plan(costs, {budget = '1MB', batch = 2})
    local x2 = frugal.random_input(m, 2, 3)
    local y, r = frugal.run(m, p, x2, {threads = 1})
    assert(r.peak_bytes == p.peak_bytes, "peak " .. r.peak_bytes .. " vs plan " .. p.peak_bytes)
    assert(r.budget_bytes == 1000000)
    local y0 = frugal.run(m, nil, x2, {threads = 1})
    assert(y:max_abs_diff(y0) < 1e-5)
  )");
}

// docs/COSTS.md, "Moves": with the executor that will run it, frugal.plan places
// every candidate, prices its moved bytes at the table's move price and lets the
// planner choose again; the placed bytes are what the run moves.
TEST_CASE("frugal.plan with an executor prices the arena moves of every candidate", "[workflow][lua]") {
  LuaFixture f;
  ScratchDir dir("moves");
  f.run("cache_dir = '" + dir / "cache" + "'");
  f.run(R"(
    m = frugal.zoo('toy_branched')
    ex = frugal.executor(m, {threads = 1})
    costs = frugal.profile(ex, {upto = 4, repeats = 1, cache = false, cache_dir = cache_dir, progress = false})
    -- 1, 4, 16 ... MiB up to one that holds every output at batch 4: a toy needs only the first.
    assert(#costs.move.arena_bytes == 1 and costs.move.arena_bytes[1] == 1 << 20)
    for _, s in ipairs(costs.move.s_per_byte) do assert(s > 0 and s < 1e-6, s) end
    local lo = frugal.plan(costs, {budget = '1GB', batch = 4}).min_budget_bytes
    -- The tightest budget at which some candidate moves bytes.
    for k = 0, 40 do
      local b = lo + k * lo // 40
      local p = frugal.plan(costs, {budget = b, batch = 4, executor = ex})
      for _, bytes in pairs(p.moves.by_method) do
        if bytes > 0 and not budget then budget = b end
      end
    end
    assert(budget, "no candidate moved bytes between the smallest plan and twice its budget")
    plain = frugal.plan(costs, {budget = budget, batch = 4})
    p = frugal.plan(costs, {budget = budget, batch = 4, executor = ex})
  )");
  CHECK(f.boolean("p.moves.priced"));
  CHECK(f.number("p.moves.moved_bytes") == f.number("p.moves.by_method[p.method]"));
  // The run moves exactly what was placed.
  f.run("ex:set_budget(budget); _, rep = ex:run(frugal.random_input(m, 4, 1), {plan = p})");
  CHECK(f.number("rep.moved_bytes") == f.number("p.moves.moved_bytes"));
  // Its time is the table's plus the moves' seconds, at the table's price for this budget.
  f.run(R"(
    for _, c in ipairs(plain.candidates) do if c.method == p.method then table_time = c.time_per_sample_s end end
  )");
  CHECK(f.number("p.time_per_sample_s") == Approx(f.number("table_time + p.moves.seconds / 4")));
  CHECK(f.number("p.moves.seconds") == Approx(f.number("p.moves.moved_bytes * p.moves.move_s_per_byte")));

  // At a second per byte no candidate that moves anything can win when one moves nothing.
  f.run(R"(
    dear = frugal.json_decode(frugal.json_encode(costs))
    for i = 1, #dear.move.s_per_byte do dear.move.s_per_byte[i] = 1.0 end
    q = frugal.plan(dear, {budget = budget, batch = 4, executor = ex})
    least = math.huge
    for _, bytes in pairs(q.moves.by_method) do least = math.min(least, bytes) end
  )");
  CHECK(f.number("q.moves.moved_bytes") == f.number("least"));

  // A table without a move price: planned as before, and said why.
  f.run(R"(
    bare = frugal.json_decode(frugal.json_encode(costs)); bare.move = nil
    u = frugal.plan(bare, {budget = budget, batch = 4, executor = ex})
  )");
  CHECK_FALSE(f.boolean("u.moves.priced"));
  CHECK(contains(f.string("u.moves.why"), "no move price"));
  CHECK(f.string("u.method") == f.string("plain.method"));
  CHECK(f.number("u.time_per_sample_s") == f.number("plain.time_per_sample_s"));
  CHECK(contains(f.error_of("frugal.plan(costs, {budget = budget, batch = 4, executor = 3})"),
                 "option 'executor' must be an executor"));
  CHECK(contains(f.error_of("frugal.plan(costs, {budget = budget, batch = 4, executor = ex, table = true})"),
                 "does not combine with 'table'"));
}
