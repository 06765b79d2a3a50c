#include "tensor/tensor.h"

#include <sstream>

#include "util/error.h"

namespace frugal {

Tensor::Tensor(std::vector<int64_t> d, float fill) : dims(std::move(d)) {
  int64_t n = numel();
  if (n < 0) throw Error("tensor shape " + shape_string() + " has a negative dimension");
  data.assign(static_cast<size_t>(n), fill);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

std::string Tensor::shape_string() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << "]";
  return os.str();
}

}  // namespace frugal
