#include "lua/lua_json.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "frugal/error.h"
#include "lua/lua_binding.h"
#include "profiler/json_file.h"
#include "profiler/json_path.h"

namespace frugal {

namespace {

constexpr const char* kObjectMarker = "frugal.json_object";
constexpr int kMaxDepth = 200;  // deeper is a cycle or a mistake

void push_json_at(lua_State* L, const nlohmann::json& j, int depth) {
  if (depth > kMaxDepth) throw Error("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  luaL_checkstack(L, 3, "JSON to Lua");
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      lua_pushnil(L);
      break;
    case nlohmann::json::value_t::boolean:
      lua_pushboolean(L, j.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer:
      lua_pushinteger(L, j.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t v = j.get<uint64_t>();
      if (v <= static_cast<uint64_t>(INT64_MAX))
        lua_pushinteger(L, static_cast<lua_Integer>(v));
      else
        lua_pushnumber(L, static_cast<lua_Number>(v));
      break;
    }
    case nlohmann::json::value_t::number_float:
      lua_pushnumber(L, j.get<double>());
      break;
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case nlohmann::json::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 1;
      for (const auto& e : j) {
        push_json_at(L, e, depth + 1);
        lua_rawseti(L, -2, i++);
      }
      break;
    }
    case nlohmann::json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(j.size()));
      if (j.empty()) luaL_setmetatable(L, kObjectMarker);
      for (auto it = j.begin(); it != j.end(); ++it) {
        push_json_at(L, it.value(), depth + 1);
        lua_setfield(L, -2, it.key().c_str());
      }
      break;
    }
    default:
      throw Error("JSON value of type " + std::string(j.type_name()) + " has no Lua form");
  }
}

std::string key_path(const std::string& where, lua_State* L, int key_idx) {
  if (lua_type(L, key_idx) == LUA_TNUMBER) return where + "[" + std::string(lua_tostring(L, key_idx)) + "]";
  return where + "." + std::string(lua_tostring(L, key_idx));
}

nlohmann::json to_json_at(lua_State* L, int idx, const std::string& where, int depth) {
  idx = lua_absindex(L, idx);
  if (depth > kMaxDepth)
    throw Error(where + ": nested deeper than " + std::to_string(kMaxDepth) +
                " levels (a table that contains itself?)");
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
      return nullptr;
    case LUA_TBOOLEAN:
      return static_cast<bool>(lua_toboolean(L, idx));
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) return static_cast<int64_t>(lua_tointeger(L, idx));
      const double d = lua_tonumber(L, idx);
      if (std::isnan(d)) throw Error(where + " is NaN");
      if (!std::isfinite(d)) throw Error(where + " is infinite");
      return d;
    }
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      return std::string(s, n);
    }
    case LUA_TTABLE:
      break;
    default:
      throw Error(where + " is a " + std::string(luaL_typename(L, idx)) + ", which has no JSON form");
  }
  luaL_checkstack(L, 4, "Lua to JSON");
  // A record that decodes some fields when first read (a run report's steps) gets them now.
  if (luaL_getmetafield(L, idx, "__materialize") != LUA_TNIL) {
    lua_pushvalue(L, idx);
    lua_call(L, 1, 0);
  }
  // Count the keys and see whether they are exactly 1..n.
  lua_Integer count = 0;
  bool all_positive_integers = true;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    ++count;
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1) all_positive_integers = false;
    lua_pop(L, 1);
  }
  const bool is_array = all_positive_integers && static_cast<lua_Integer>(lua_rawlen(L, idx)) == count;
  if (count == 0) {
    bool marked_object = false;
    if (lua_getmetatable(L, idx)) {
      luaL_getmetatable(L, kObjectMarker);
      marked_object = lua_rawequal(L, -1, -2);
      lua_pop(L, 2);
    }
    return marked_object ? nlohmann::json::object() : nlohmann::json::array();
  }
  if (is_array) {
    nlohmann::json a = nlohmann::json::array();
    for (lua_Integer i = 1; i <= count; ++i) {
      lua_rawgeti(L, idx, i);
      a.push_back(to_json_at(L, -1, where + "[" + std::to_string(i) + "]", depth + 1));
      lua_pop(L, 1);
    }
    return a;
  }
  nlohmann::json o = nlohmann::json::object();
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      const std::string kt = luaL_typename(L, -2);
      throw Error(where + " mixes keys: a table with a " + kt +
                  " key is neither a JSON array (keys 1..n) nor an object (string keys)");
    }
    const std::string path = key_path(where, L, -2);
    // lua_next needs the key untouched: copy it before converting the value.
    size_t n = 0;
    const char* k = lua_tolstring(L, -2, &n);
    std::string key(k, n);
    o[key] = to_json_at(L, -1, path, depth + 1);
    lua_pop(L, 1);
  }
  return o;
}

// ---- module functions -------------------------------------------------------

int l_json_encode(lua_State* L) {
  const int indent = lua_isnoneornil(L, 2) ? -1 : static_cast<int>(luaL_checkinteger(L, 2));
  const std::string s = lua_to_json(L, 1, "value").dump(indent);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int l_json_decode(lua_State* L) {
  push_json(L, parse_json_text(check_string_arg(L, 1), "JSON text"));
  return 1;
}

int l_load_json(lua_State* L) {
  const std::string path = check_string_arg(L, 1);
  const nlohmann::json j = read_json_file(path);
  // A null element would be a hole in the Lua array (ipairs stops there, # is undefined).
  const std::string hole = first_null_in_array(j);
  if (!hole.empty())
    throw Error(path + ": " + hole +
                " is null: an element of a list must have a value (a measurement that failed?)");
  push_json(L, j);
  return 1;
}

int l_save_json(lua_State* L) {
  const std::string path = check_string_arg(L, 2);
  const int indent = lua_isnoneornil(L, 3) ? 1 : static_cast<int>(luaL_checkinteger(L, 3));
  write_json_file(lua_to_json(L, 1, "value"), path, indent);
  return 0;
}

const LuaBinding kFunctions[] = {{"json_encode", l_json_encode},
                                 {"json_decode", l_json_decode},
                                 {"load_json", l_load_json},
                                 {"save_json", l_save_json},
                                 {nullptr, nullptr}};

}  // namespace

void push_json(lua_State* L, const nlohmann::json& j) { push_json_at(L, j, 0); }

namespace {

// nlohmann's SAX events -> Lua values: a container is a table on the stack until
// it ends, then stored into its parent (or left as the result).
class LuaSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  LuaSax(lua_State* L, std::string what) : L_(L), base_(lua_gettop(L)), what_(std::move(what)) {}

  bool null() override {
    return value([&] { lua_pushnil(L_); });
  }
  bool boolean(bool v) override {
    return value([&] { lua_pushboolean(L_, v); });
  }
  bool number_integer(number_integer_t v) override {
    return value([&] { lua_pushinteger(L_, v); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return value([&] {
      if (v <= static_cast<uint64_t>(INT64_MAX))
        lua_pushinteger(L_, static_cast<lua_Integer>(v));
      else
        lua_pushnumber(L_, static_cast<lua_Number>(v));
    });
  }
  bool number_float(number_float_t v, const string_t&) override {
    return value([&] { lua_pushnumber(L_, v); });
  }
  bool string(string_t& v) override {
    return value([&] { lua_pushlstring(L_, v.data(), v.size()); });
  }
  bool binary(binary_t&) override { throw Error(what_ + ": JSON binary values have no Lua form"); }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    lua_settop(L_, base_);
    throw Error(what_ + " is not valid JSON: " + e.what());
  }

 private:
  struct Frame {
    bool array = false;
    lua_Integer next = 1;  // the next array index
    std::string key;       // the key of the object's next value
    bool empty = true;
  };

  template <class Push>
  bool value(Push push) {
    luaL_checkstack(L_, 3, "JSON to Lua");
    push();
    store();
    return true;
  }
  // The value on top of the stack into the enclosing table, if any.
  void store() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    f.empty = false;
    if (f.array)
      lua_rawseti(L_, -2, f.next++);
    else
      lua_setfield(L_, -2, f.key.c_str());
  }
  bool open(bool array) {
    if (frames_.size() >= size_t(kMaxDepth))
      throw Error(what_ + ": JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    luaL_checkstack(L_, 3, "JSON to Lua");
    lua_newtable(L_);
    Frame& f = frames_.emplace_back();
    f.array = array;
    return true;
  }
  bool close() {
    const bool marked_empty_object = !frames_.back().array && frames_.back().empty;
    frames_.pop_back();
    if (marked_empty_object) luaL_setmetatable(L_, kObjectMarker);
    store();
    return true;
  }

  lua_State* L_;
  int base_;
  std::string what_;
  std::vector<Frame> frames_;
};

}  // namespace

void push_json_text(lua_State* L, const std::string& text, const std::string& what) {
  const int base = lua_gettop(L);
  LuaSax sax(L, what);
  try {
    nlohmann::json::sax_parse(text, &sax);
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
}

nlohmann::json lua_to_json(lua_State* L, int idx, const std::string& where) {
  return to_json_at(L, idx, where, 0);
}

void open_lua_json(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  luaL_newmetatable(L, kObjectMarker);
  lua_pop(L, 1);
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
