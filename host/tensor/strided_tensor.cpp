#include "tensor/strided_tensor.h"

#include <algorithm>

#include "frugal/error.h"

namespace frugal {

namespace {

std::vector<int64_t> c_order_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

void check_dimension(const StridedTensor& t, size_t d) {
  if (d >= t.dim())
    throw Error("dimension " + std::to_string(d + 1) + " is out of range for a tensor of size " +
                size_string(t.sizes) + " (" + std::to_string(t.dim()) + " dimensions)");
}

}  // namespace

std::string size_string(const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return "(scalar)";
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "x" : "") + std::to_string(sizes[i]);
  return s;
}

StridedTensor StridedTensor::zeros(const std::vector<int64_t>& sizes) {
  StridedTensor t;
  const int64_t n = checked_element_count(sizes);
  t.storage = std::make_shared<std::vector<float>>(static_cast<size_t>(n), 0.0f);
  t.sizes = sizes;
  t.strides = c_order_strides(sizes);
  return t;
}

StridedTensor StridedTensor::from_dense(Tensor&& dense) {
  StridedTensor t;
  if (static_cast<int64_t>(dense.data.size()) != checked_element_count(dense.dims))
    throw Error("a tensor of size " + size_string(dense.dims) + " holds " +
                std::to_string(dense.data.size()) + " values");
  t.storage = std::make_shared<std::vector<float>>(std::move(dense.data));
  t.sizes = std::move(dense.dims);
  t.strides = c_order_strides(t.sizes);
  return t;
}

int64_t StridedTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool StridedTensor::is_contiguous() const {
  if (numel() == 0) return true;  // nothing to lay out
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

Tensor StridedTensor::to_dense() const {
  Tensor out;
  out.dims = sizes;
  if (numel() > 0 && is_contiguous()) {  // one copy (an executor's input at every run: 4.8 MB at batch 8)
    const auto first = storage->begin() + static_cast<std::ptrdiff_t>(offset);
    out.data.assign(first, first + static_cast<std::ptrdiff_t>(numel()));
    return out;
  }
  out.data.reserve(static_cast<size_t>(numel()));
  for_each_index(*this, [&](int64_t i) { out.data.push_back(at(i)); });
  return out;
}

StridedTensor StridedTensor::clone() const { return from_dense(to_dense()); }

void StridedTensor::copy_from(const StridedTensor& src) {
  if (src.numel() != numel())
    throw Error("cannot copy " + std::to_string(src.numel()) + " values (size " + size_string(src.sizes) +
                ") into " + std::to_string(numel()) + " (size " + size_string(sizes) + ")");
  // Overlapping views of one storage: read everything before writing.
  const StridedTensor from = src.storage == storage ? src.clone() : src;
  for_each_index_pair(*this, from, [&](int64_t i, int64_t j) { at(i) = from.at(j); });
}

StridedTensor StridedTensor::select(size_t d, int64_t i) const {
  check_dimension(*this, d);
  if (i < 0 || i >= sizes[d])
    throw Error("index " + std::to_string(i + 1) + " is out of range for dimension " + std::to_string(d + 1) +
                " of size " + std::to_string(sizes[d]) + " (tensor of size " + size_string(sizes) + ")");
  StridedTensor v = *this;
  v.offset += i * strides[d];
  v.sizes.erase(v.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  v.strides.erase(v.strides.begin() + static_cast<std::ptrdiff_t>(d));
  return v;
}

StridedTensor StridedTensor::narrow(size_t d, int64_t first, int64_t length) const {
  check_dimension(*this, d);
  if (first < 0 || length < 0 || first + length > sizes[d])
    throw Error("elements " + std::to_string(first + 1) + ".." + std::to_string(first + length) +
                " are out of range for dimension " + std::to_string(d + 1) + " of size " +
                std::to_string(sizes[d]) + " (tensor of size " + size_string(sizes) + ")");
  StridedTensor v = *this;
  if (length > 0) v.offset += first * strides[d];
  v.sizes[d] = length;
  return v;
}

StridedTensor StridedTensor::view(const std::vector<int64_t>& new_sizes) const {
  const int64_t n = checked_element_count(new_sizes);
  if (n != numel())
    throw Error("cannot view size " + size_string(sizes) + " (" + std::to_string(numel()) + " values) as " +
                size_string(new_sizes) + " (" + std::to_string(n) + " values)");
  if (!is_contiguous())
    throw Error("a view needs a contiguous tensor; this one (size " + size_string(sizes) +
                ") is a strided view: use :reshape() or :contiguous():view()");
  StridedTensor v = *this;
  v.sizes = new_sizes;
  v.strides = c_order_strides(new_sizes);
  return v;
}

ElementCursor::ElementCursor(const StridedTensor& t) : t_(t), counter_(t.dim(), 0), index_(t.offset) {}

void ElementCursor::next() {
  for (size_t d = counter_.size(); d-- > 0;) {
    index_ += t_.strides[d];
    if (++counter_[d] < t_.sizes[d]) return;
    index_ -= t_.strides[d] * counter_[d];
    counter_[d] = 0;
  }
}

}  // namespace frugal
