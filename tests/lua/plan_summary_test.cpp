// The plan summary (scripts/lib/plan_summary.lua, also tostring(plan)) for a
// plan with every field and for one with steps only, as a planner plugin may
// write it: phases derived from the steps agree with the plan checker's.
#include "lua_fixture.h"

using Catch::Matchers::Contains;

namespace {
const std::string kData = FRUGAL_SOURCE_DIR "/tests/cli/data/";
}

TEST_CASE("plan summary: phases derived from the steps equal the plan checker's", "[lua][plan]") {
  LuaFixture f;
  f.run("summary = require('plan_summary'); plan = frugal.load_json('" + kData + "plan_toy_branched.json')");
  f.run(R"(
    derived = summary.derive_phases(plan)
    same = #derived == #plan.phases
    for i, p in ipairs(plan.phases) do
      same = same and derived[i].first_step == p.first_step and derived[i].step_count == p.step_count
    end
  )");
  CHECK(f.number("#plan.phases") == 2);
  CHECK(f.boolean("same"));
  const std::string text = f.string("summary.text(plan)");
  CHECK_THAT(text, Contains("plan        vbs (extended) for a request of 8 samples under 160.0 kB"));
  CHECK_THAT(text, Contains("unused: the budget minus the most that any of the layer's steps needs"));
  CHECK_THAT(text, Contains("FBS batches"));
}

TEST_CASE("plan summary: a plan with steps only is summarised from its steps", "[lua][plan]") {
  LuaFixture f;
  f.run("summary = require('plan_summary'); plan = frugal.load_json('" + kData + "plan_halfbatch.json')");
  const std::string text = f.string("summary.text(plan)");
  INFO(text);
  CHECK_THAT(text, Contains("plan        halfbatch for a request of 8 samples, 28 steps"));
  CHECK_THAT(text, Contains("time        80 us per sample (predicted)"));
  CHECK_THAT(text, Contains("in each of the plan's 2 phases"));
  CHECK_THAT(text, Contains("phase 1  phase 2"));
  CHECK_THAT(text, Contains("stem.conv            4        4"));
  CHECK(text.find('?') == std::string::npos);
  CHECK(text.find("unused") == std::string::npos);  // no per-layer memory in such a plan
  // Without "batch" the request size comes from the steps.
  f.run("plan.batch = nil");
  CHECK_THAT(f.string("summary.text(plan)"), Contains("for a request of 8 samples"));
}
