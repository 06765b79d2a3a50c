// Helpers the op definitions share (private to the model library): messages,
// overflow-checked size arithmetic, input access, numpy broadcasting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/op.h"

namespace frugal::ops {

using Dims = std::vector<int64_t>;
using Shapes = std::vector<ValueShape>;

[[noreturn]] void bad(const std::string& msg);
std::string str(const Dims& d);
// Overflow-checked arithmetic (Error "size computation overflows int64").
int64_t mul(int64_t a, int64_t b);
int64_t add(int64_t a, int64_t b);
int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX);

// The input at `i`, which the op requires ("missing required input i (role)").
const ValueShape& need(const Shapes& in, size_t i, const char* role);
// The input at `i` when present, else nullptr.
const ValueShape* opt(const Shapes& in, size_t i);
// Axis in [-rank, rank) -> [0, rank); Error naming `what` otherwise.
int64_t norm_axis(int64_t axis, int64_t rank, const char* what);
// A present value of these dims and dtype.
ValueShape value(Dims dims, DType t);
// Multidirectional (numpy) broadcasting of a and b.
Dims broadcast(const ValueShape& a, const ValueShape& b);

}  // namespace frugal::ops
