#include "tensor/tensor.h"

#include <sstream>

#include "frugal/error.h"

namespace frugal {

std::string shape_string(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << "]";
  return os.str();
}

Tensor::Tensor(std::vector<int64_t> d, float fill) : dims(std::move(d)) {
  int64_t n = checked_element_count(dims);
  data.assign(static_cast<size_t>(n), fill);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

std::string Tensor::shape_string() const { return frugal::shape_string(dims); }

int64_t checked_element_count(const std::vector<int64_t>& dims) {
  for (int64_t x : dims)
    if (x < 0) throw Error("tensor shape " + shape_string(dims) + " has a negative dimension");
  for (int64_t x : dims)
    if (x == 0) return 0;
  int64_t n = 1;
  for (int64_t x : dims) {
    if (x != 0 && n > INT64_MAX / x)
      throw Error("tensor shape " + shape_string(dims) + " has too many elements");
    n *= x;
  }
  return n;
}

}  // namespace frugal
