// push_json_text (JSON text straight into Lua values, as run reports are pushed)
// against push_json of the parsed document: the same Lua values, empty objects
// marked as objects, integers kept integers, invalid text refused with nothing pushed.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "frugal/error.h"
#include "lua/lua_json.h"
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
