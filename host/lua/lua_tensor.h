// Tensors in Lua, Torch7 style: userdata of metatable "frugal.FloatTensor"
// holding a frugal::Tensor (float32, C order). Indices are 1-based.
//
//   frugal.tensor(2, 3) / frugal.tensor{2, 3}   zero-filled tensor of that shape
//   frugal.tensor_from_table{{1, 2}, {3, 4}}    from nested tables (rectangular)
//   frugal.load_npy(path), t:save_npy(path)     NumPy .npy, float32 C order
//   t:size() -> {2, 3}, t:size(1) -> 2, t:dim(), t:numel(), #t (= t:size(1))
//   t[i] / t[i] = v (1-D only), t:get(i, j, ...), t:set(i, j, ..., v)
//   t:fill(v), t:random(seed [, "uniform"|"normal"]), t:clone(), t:totable()
//   t:reshape(...) (a copy), t:sum(), t:min(), t:max(), t:max_abs_diff(u)
//   tostring(t): the first values and "[frugal.FloatTensor of size 2x3]"
//
// t:random draws uniform values in [-1, 1) by default, or standard normal ones,
// from splitmix64 seeded with `seed`: the same seed gives the same tensor on
// every platform.
#pragma once

#include <lua.hpp>
#include <vector>

#include "tensor/tensor.h"

namespace frugal {

constexpr const char* kTensorMetatable = "frugal.FloatTensor";

// Registers the metatable and sets the module functions in the table at module_index.
void open_lua_tensor(lua_State* L, int module_index);

// Pushes a new tensor userdata (moved in) and returns it.
Tensor& push_tensor(lua_State* L, Tensor t);
// Pushes a zero-filled tensor of `dims`, refusing shapes larger than this
// machine's memory (a clear error instead of an OOM kill).
Tensor& push_new_tensor(lua_State* L, const std::vector<int64_t>& dims);
// The tensor at idx, or a Lua argument error.
Tensor& check_tensor(lua_State* L, int idx);
Tensor* test_tensor(lua_State* L, int idx);

// Throws frugal::Error if a float32 tensor of `dims` cannot exist here.
void check_tensor_fits_memory(const std::vector<int64_t>& dims);

}  // namespace frugal
