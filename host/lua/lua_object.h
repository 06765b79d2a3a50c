// Host objects (tensors, models, executors) in Lua, held the way Lua 5.4's
// liolib holds files: the userdata holds a T*, created closed (nullptr) and
// set once the object exists, so an error half-way leaves a closed userdata
// and nothing leaked. `__gc` and `__close` are one function that frees the
// object and leaves nullptr; `:close()` does the same at once, so a script
// frees weights or GPU memory without collectgarbage(). Closing twice is
// harmless; any other use of a closed object is an error naming it.
//
//   local m <close> = frugal.load("model.onnx")   -- freed at the end of the block
//   x:close()                                      -- freed now
#pragma once

#include <lua.hpp>
#include <memory>
#include <string>
#include <utility>

#include "frugal/error.h"
#include "lua/lua_binding.h"

namespace frugal {

// What a metatable made by register_object_type needs to know about T.
struct LuaObjectType {
  const char* metatable;  // "frugal.FloatTensor"
  const char* noun;       // "tensor": in messages ("argument #1 is a closed tensor")
};

namespace lua_object_detail {

// Pushes a new userdata holding a null T* with the type's metatable.
void** push_closed_slot(lua_State* L, const LuaObjectType& type);
// The slot of the object at idx, or a Lua argument error naming the type.
void** check_slot(lua_State* L, int idx, const LuaObjectType& type);
// Throws "argument #idx is a closed <noun>".
[[noreturn]] void throw_closed(int idx, const LuaObjectType& type);
// Creates the metatable: __name, __gc = __close = gc_fn, __tostring (closed
// objects print "<metatable> (closed)"), __index = methods + close.
void create_metatable(lua_State* L, const LuaObjectType& type, lua_CFunction gc_fn, const LuaBinding* methods,
                      const LuaBinding* metamethods);

}  // namespace lua_object_detail

// The type's metatable name is in upvalue 1 of the closures made by create_metatable.
template <class T>
int close_object(lua_State* L) {
  const char* mt = lua_tostring(L, lua_upvalueindex(1));
  auto** slot = static_cast<T**>(luaL_checkudata(L, 1, mt));
  T* object = *slot;
  *slot = nullptr;  // closed before the destructor runs: it may not throw, but be safe
  delete object;
  return 0;
}

// Registers T's metatable: methods (prefix "<noun>:" in messages) plus
// `close`, metamethods (with __tostring) as given, __gc and __close.
template <class T>
void register_object_type(lua_State* L, const LuaObjectType& type, const LuaBinding* methods,
                          const LuaBinding* metamethods) {
  lua_object_detail::create_metatable(L, type, close_object<T>, methods, metamethods);
}

// Pushes a new userdata holding T(args...). If constructing T throws, the
// userdata stays closed and the error propagates.
template <class T, class... Args>
T& push_object(lua_State* L, const LuaObjectType& type, Args&&... args) {
  auto** slot = reinterpret_cast<T**>(lua_object_detail::push_closed_slot(L, type));
  *slot = new T(std::forward<Args>(args)...);
  return **slot;
}

// The open object at idx; a Lua argument error for another type, a
// frugal::Error for a closed one.
template <class T>
T& check_object(lua_State* L, int idx, const LuaObjectType& type) {
  T* object = *reinterpret_cast<T**>(lua_object_detail::check_slot(L, idx, type));
  if (!object) lua_object_detail::throw_closed(idx, type);
  return *object;
}

// Closes the open object at idx and hands it to the caller (errors as
// check_object's): the userdata is then closed, as after :close().
template <class T>
std::unique_ptr<T> take_object(lua_State* L, int idx, const LuaObjectType& type) {
  auto** slot = reinterpret_cast<T**>(lua_object_detail::check_slot(L, idx, type));
  if (!*slot) lua_object_detail::throw_closed(idx, type);
  return std::unique_ptr<T>(std::exchange(*slot, nullptr));
}

// The open object at idx, or nullptr (another type, or closed).
template <class T>
T* test_object(lua_State* L, int idx, const LuaObjectType& type) {
  auto** slot = static_cast<T**>(luaL_testudata(L, idx, type.metatable));
  return slot ? *slot : nullptr;
}

// True when the value at idx is of this type, open or closed.
inline bool is_object(lua_State* L, int idx, const LuaObjectType& type) {
  return luaL_testudata(L, idx, type.metatable) != nullptr;
}

}  // namespace frugal
