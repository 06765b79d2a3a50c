// A float32 tensor that may be a view of another one's values, as Torch7's
// tensors are: the values live in a shared storage, and a tensor is an offset
// plus sizes and strides (in elements) into it. narrow, select and view make
// views that share the storage; clone and to_dense copy. What Lua scripts hold
// (host/lua/lua_tensor.*); frugal::Tensor stays the dense C-order form that
// executors and .npy files exchange. Indices here are 0-based.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace frugal {

struct StridedTensor {
  std::shared_ptr<std::vector<float>> storage;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;

  // A new zero-filled tensor (C order); throws on negative sizes or overflow.
  static StridedTensor zeros(const std::vector<int64_t>& sizes);
  // Takes a dense tensor's values without copying them.
  static StridedTensor from_dense(Tensor&& t);

  size_t dim() const { return sizes.size(); }
  int64_t numel() const;
  bool is_contiguous() const;  // C order with no gaps: a view() is possible
  // The element at storage index i (see ElementCursor).
  float& at(int64_t i) const { return (*storage)[static_cast<size_t>(i)]; }

  Tensor to_dense() const;                   // a C-order copy
  StridedTensor clone() const;               // a new storage holding a C-order copy
  void copy_from(const StridedTensor& src);  // same element count; C order of both

  // Views sharing the storage. Throw frugal::Error naming the dimension, index
  // or size at fault (dimensions counted from 1 in messages, as scripts do).
  StridedTensor select(size_t d, int64_t i) const;                      // drops dimension d
  StridedTensor narrow(size_t d, int64_t first, int64_t length) const;  // keeps it, shorter
  StridedTensor view(const std::vector<int64_t>& new_sizes) const;      // contiguous only
};

// "2x3", "(scalar)" for no dimensions.
std::string size_string(const std::vector<int64_t>& sizes);

// Walks a tensor's storage indices in C order (last dimension fastest).
class ElementCursor {
 public:
  explicit ElementCursor(const StridedTensor& t);
  int64_t index() const { return index_; }
  void next();

 private:
  const StridedTensor& t_;
  std::vector<int64_t> counter_;
  int64_t index_;
};

// Calls f(storage index) for each element in C order.
template <class F>
void for_each_index(const StridedTensor& t, F&& f) {
  const int64_t n = t.numel();
  if (t.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) f(t.offset + i);
    return;
  }
  ElementCursor c(t);
  for (int64_t i = 0; i < n; ++i, c.next()) f(c.index());
}

// Calls f(index in a, index in b) for each pair of elements in C order; a and
// b must hold the same number of elements.
template <class F>
void for_each_index_pair(const StridedTensor& a, const StridedTensor& b, F&& f) {
  const int64_t n = a.numel();
  ElementCursor ca(a), cb(b);
  for (int64_t i = 0; i < n; ++i, ca.next(), cb.next()) f(ca.index(), cb.index());
}

}  // namespace frugal
