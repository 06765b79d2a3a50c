// Tensors in Lua, Torch7 style (docs/LUA.md has the whole API): userdata of
// metatable "frugal.FloatTensor" holding a StridedTensor, float32, indices
// 1-based (negative ones count from the end).
//
//   frugal.tensor{{1, 2}, {3, 4}}   from nested tables of values
//   frugal.tensor(2, 3), frugal.zeros(2, 3), frugal.ones{2, 3}, frugal.tensor(x:size())   from sizes
//   x[i], x[{i, j}], x[{{1, 2}, 3}], x:narrow, x:select, x:view, x:reshape   views sharing values
//   + - * / (element-wise, with numbers or tensors of the same size), :add, :mul, :clamp ...
//   :sum, :mean, :max, :min, :argmax, :topk, :allclose, :close ...
//
// The binding is split by concept: lua_tensor.cpp (type, construction,
// indexing, views), lua_tensor_math.cpp (arithmetic, reductions, comparisons),
// lua_tensor_print.cpp (tostring).
#pragma once

#include <lua.hpp>
#include <string>
#include <vector>

#include "lua/lua_binding.h"
#include "lua/lua_object.h"
#include "tensor/strided_tensor.h"
#include "tensor/tensor.h"

namespace frugal {

constexpr const char* kTensorMetatable = "frugal.FloatTensor";
constexpr LuaObjectType kTensorType{kTensorMetatable, "tensor"};
constexpr const char* kSizeMetatable = "frugal.Size";

// Registers the metatables and sets the module functions in the table at module_index.
void open_lua_tensor(lua_State* L, int module_index);

// Pushes a tensor userdata holding t (a view or not) and returns it.
StridedTensor& push_tensor(lua_State* L, StridedTensor t);
// Pushes a dense tensor, taking its values without a copy.
StridedTensor& push_dense_tensor(lua_State* L, Tensor t);
// Pushes a zero-filled tensor of `dims`, refusing shapes larger than this
// machine's memory (a clear error instead of an OOM kill).
StridedTensor& push_new_tensor(lua_State* L, const std::vector<int64_t>& dims);
// The open tensor at idx, or an error naming the argument.
StridedTensor& check_tensor(lua_State* L, int idx);
// The open tensor at idx, or nullptr.
StridedTensor* test_tensor(lua_State* L, int idx);

// Pushes sizes as a frugal.Size: a sequence that prints as "2x3" and
// compares equal to another Size with the same entries.
void push_size(lua_State* L, const std::vector<int64_t>& sizes);

// Throws frugal::Error if a float32 tensor of `dims` cannot exist here.
void check_tensor_fits_memory(const std::vector<int64_t>& dims);

// For the binding's own files.
extern const LuaBinding kTensorMathMethods[];
extern const LuaBinding kTensorMathMetamethods[];
std::string format_tensor(const StridedTensor& t);  // values and "[frugal.FloatTensor of size 2x3]"
// The Lua index at idx (1-based, or negative from the end) into dimension
// `dim` (1-based, for messages) of `size`, as a 0-based index.
int64_t index_from_lua(lua_State* L, int idx, int64_t size, size_t dim);
// A 1-based dimension argument as 0-based; throws when outside the tensor's.
size_t dim_from_lua(lua_State* L, int idx, const StridedTensor& t);

}  // namespace frugal
