// push_json_text (JSON text straight into Lua values, as run reports are pushed)
// against push_json of the parsed document: the same Lua values, empty objects
// marked as objects, integers kept integers, invalid text refused with nothing pushed.
// A run report's steps, decoded when first read, against the document too.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "frugal/error.h"
#include "lua/lua_json.h"
#include "lua/lua_records.h"
#include "lua_fixture.h"

TEST_CASE("push_json_text gives the values push_json gives for the parsed text", "[lua][json]") {
  LuaFixture f;
  lua_State* L = f.lua.state();
  const char* texts[] = {
      R"({"peak_bytes":123456789,"seconds":0.0125,"auto_budget":false,"gates":[],"empty":{},)"
      R"("steps":[{"layer":"relu \"a\\b\"","first":0,"count":3,"calls":1,"moved_bytes":0,)"
      R"("move_seconds":0,"seconds":1.5e-05},{"layer":"fc","first":0,"count":3,"calls":0,)"
      R"("moved_bytes":18446744073709551615,"move_seconds":2.5e-07,"seconds":3e-06}]})",
      R"([1,-2,3.5,true,"x",[[],{}],{"a":{"b":{"c":[{}],"n":null}}}])",
      R"("a string")",
      "42",
      "{}",
  };
  for (const char* text : texts) {
    INFO(text);
    const int top = lua_gettop(L);
    frugal::push_json_text(L, text, "test text");
    REQUIRE(lua_gettop(L) == top + 1);
    frugal::push_json(L, nlohmann::json::parse(text));
    const nlohmann::json from_text = frugal::lua_to_json(L, -2, "from text");
    const nlohmann::json from_document = frugal::lua_to_json(L, -1, "from document");
    CHECK(from_text == from_document);
    CHECK(from_text.dump() == from_document.dump());
    // Integers stay Lua integers, floats floats (math.type), through the whole tree.
    lua_setglobal(L, "b");
    lua_setglobal(L, "a");
    f.run(R"(
      local function same(x, y, path)
        assert(type(x) == type(y), path .. ": " .. type(x) .. " against " .. type(y))
        if type(x) == "number" then
          assert(math.type(x) == math.type(y) and x == y, path)
        elseif type(x) == "table" then
          assert(getmetatable(x) == getmetatable(y), path .. ": metatables differ")
          for k, v in pairs(x) do same(v, y[k], path .. "." .. tostring(k)) end
          for k in pairs(y) do assert(x[k] ~= nil, path .. "." .. tostring(k) .. " missing") end
        else
          assert(x == y, path)
        end
      end
      same(a, b, "value")
    )");
    REQUIRE(lua_gettop(L) == top);
  }
  // Empty objects convert back to {} and empty arrays to [].
  frugal::push_json_text(L, R"({"o":{},"a":[]})", "test text");
  CHECK(frugal::lua_to_json(L, -1, "x").dump() == R"({"a":[],"o":{}})");
  lua_pop(L, 1);

  // Invalid text: an error naming it, the stack as it was.
  for (const char* bad : {R"({"steps":[{"layer":"x",)", "[1,2", "{\"a\" 1}", "", "[1] 2"}) {
    INFO(bad);
    const int top = lua_gettop(L);
    try {
      frugal::push_json_text(L, bad, "the run report it returned");
      FAIL("no error");
    } catch (const frugal::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("the run report it returned is not valid JSON"));
    }
    CHECK(lua_gettop(L) == top);
  }
}

TEST_CASE("a run report's steps are decoded when first read, and are the text's", "[lua][json]") {
  LuaFixture f;
  lua_State* L = f.lua.state();
  const std::string steps =
      R"([{"layer":"a {b} [c] \"d,\\","first":0,"count":2,"calls":1,"seconds":1.5e-05},)"
      R"({"layer":"fc","first":0,"count":2,"calls":0,"seconds":3e-06}])";
  const std::string texts[] = {
      R"({"seconds":0.0125,"steps":)" + steps +
          R"(,"gates":[{"layer":"x"}],"peak_bytes":7})",                             // steps inside
      R"({"seconds":0.0125,"peak_bytes":7,"steps":)" + steps + "}",                  // steps last
      nlohmann::json::parse(R"({"seconds":0.0125,"steps":)" + steps + "}").dump(2),  // spaces, newlines
      R"({"seconds":0.0125,"peak_bytes":7})",                                        // no steps
      R"({"seconds":0.0125,"steps":"none"})",                                        // not a list
  };
  for (const std::string& text : texts) {
    INFO(text);
    const nlohmann::json want = nlohmann::json::parse(text);
    for (const char* read :
         {"local n = #(r.steps or {})", "for _ in pairs(r) do end", "frugal.json_encode(r)", "tostring(r)"}) {
      INFO(read);
      const int top = lua_gettop(L);
      frugal::push_record_text(L, text, "test report", frugal::Record::RunReport);
      lua_setglobal(L, "r");
      f.run(std::string("r_before = rawget(r, 'steps')\n") + read);
      lua_getglobal(L, "r");
      CHECK(frugal::lua_to_json(L, -1, "report") == want);
      lua_pop(L, 1);
      // Before the read, a list of steps was not yet a Lua value.
      const bool list = want.contains("steps") && want["steps"].is_array();
      CHECK(f.number("r_before == nil and 1 or 0") == (list ? 1 : (want.contains("steps") ? 0 : 1)));
      CHECK(lua_gettop(L) == top);
    }
  }
  // A script's own steps win over the pending ones.
  frugal::push_record_text(L, texts[0], "test report", frugal::Record::RunReport);
  lua_setglobal(L, "r");
  f.run(
      "r.steps = 'mine'; assert(r.steps == 'mine'); assert(frugal.json_decode(frugal.json_encode(r)).steps "
      "== 'mine')");
  // Steps that are not valid JSON: the error comes when they are read, naming them.
  frugal::push_record_text(L, R"({"seconds":1,"steps":[{"layer":}]})", "test report",
                           frugal::Record::RunReport);
  lua_setglobal(L, "r");
  CHECK(f.number("r.seconds") == 1);
  CHECK_THAT(f.error_of("return r.steps"), Catch::Contains("steps"));
}
