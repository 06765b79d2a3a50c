// NumPy .npy files (format versions 1, 2 and 3) holding float32 arrays in C
// order: the way tensors enter and leave frugal scripts. Anything else (other
// dtypes, Fortran order, truncated or malformed files) is refused with a message
// that names the file.
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace frugal {

Tensor load_npy(const std::string& path);
// Parses .npy bytes; `origin` names the source in error messages.
Tensor parse_npy(const std::string& bytes, const std::string& origin);

// "" when every value of `t` is finite; else how many are not and where the
// first is: "2 values are not finite (the first, NaN, at index [0, 1, 3])".
std::string nonfinite_summary(const Tensor& t);

// Writes version 1.0 (version 2.0 when the header would not fit 64 KiB), data
// aligned to 64 bytes as NumPy does.
void save_npy(const Tensor& t, const std::string& path);
std::string npy_bytes(const Tensor& t);

}  // namespace frugal
