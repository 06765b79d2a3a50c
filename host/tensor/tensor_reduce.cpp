#include "tensor/tensor_reduce.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "frugal/error.h"

namespace frugal {

namespace {

void check_dim(const StridedTensor& t, size_t d) {
  if (d >= t.dim())
    throw Error("dimension " + std::to_string(d + 1) + " is out of range for a tensor of size " +
                size_string(t.sizes) + " (" + std::to_string(t.dim()) + " dimensions)");
}

// First storage index of every row along d, in C order of the other dimensions.
std::vector<int64_t> row_starts(const StridedTensor& t, size_t d) {
  StridedTensor outer = t;
  outer.sizes.erase(outer.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  outer.strides.erase(outer.strides.begin() + static_cast<std::ptrdiff_t>(d));
  std::vector<int64_t> starts;
  starts.reserve(static_cast<size_t>(outer.numel()));
  for_each_index(outer, [&](int64_t i) { starts.push_back(i); });
  return starts;
}

// A new tensor of t's sizes with dimension d of size n.
StridedTensor zeros_along(const StridedTensor& t, size_t d, int64_t n) {
  std::vector<int64_t> sizes = t.sizes;
  sizes[d] = n;
  return StridedTensor::zeros(sizes);
}

// a "beats" b for a max (or min): NaN beats everything; equal values do not.
bool beats(float a, float b, bool want_max) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return want_max ? a > b : a < b;
}

}  // namespace

double reduce_all(const StridedTensor& t, Reduction r) {
  double s = 0;
  for_each_index(t, [&](int64_t i) { s += t.at(i); });
  if (r == Reduction::Mean) return t.numel() == 0 ? std::nan("") : s / static_cast<double>(t.numel());
  return s;
}

StridedTensor reduce_dim(const StridedTensor& t, size_t d, Reduction r) {
  check_dim(t, d);
  StridedTensor out = zeros_along(t, d, 1);
  const std::vector<int64_t> in_rows = row_starts(t, d);
  const int64_t n = t.sizes[d], stride = t.strides[d];
  for (size_t k = 0; k < in_rows.size(); ++k) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += t.at(in_rows[k] + j * stride);
    if (r == Reduction::Mean) s = n == 0 ? std::nan("") : s / static_cast<double>(n);
    out.at(static_cast<int64_t>(k)) = static_cast<float>(s);
  }
  return out;
}

Extreme extreme_all(const StridedTensor& t, bool want_max) {
  if (t.numel() == 0) throw Error("the tensor is empty (size " + size_string(t.sizes) + ")");
  Extreme best{0.0f, 0};
  int64_t position = 0;
  for_each_index(t, [&](int64_t i) {
    ++position;
    if (position == 1 || beats(t.at(i), best.value, want_max)) best = {t.at(i), position};
  });
  return best;
}

std::pair<StridedTensor, StridedTensor> extreme_dim(const StridedTensor& t, size_t d, bool want_max) {
  check_dim(t, d);
  if (t.sizes[d] == 0)
    throw Error("dimension " + std::to_string(d + 1) + " is empty (size " + size_string(t.sizes) + ")");
  StridedTensor values = zeros_along(t, d, 1), indices = zeros_along(t, d, 1);
  const std::vector<int64_t> rows = row_starts(t, d);
  const int64_t n = t.sizes[d], stride = t.strides[d];
  for (size_t k = 0; k < rows.size(); ++k) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (beats(t.at(rows[k] + j * stride), t.at(rows[k] + best * stride), want_max)) best = j;
    values.at(static_cast<int64_t>(k)) = t.at(rows[k] + best * stride);
    indices.at(static_cast<int64_t>(k)) = static_cast<float>(best + 1);
  }
  return {values, indices};
}

std::pair<StridedTensor, StridedTensor> topk(const StridedTensor& t, int64_t k, size_t d, bool largest) {
  check_dim(t, d);
  if (k < 1 || k > t.sizes[d])
    throw Error("k = " + std::to_string(k) + " is outside 1.." + std::to_string(t.sizes[d]) + " (dimension " +
                std::to_string(d + 1) + " of size " + size_string(t.sizes) + ")");
  StridedTensor values = zeros_along(t, d, k), indices = zeros_along(t, d, k);
  const std::vector<int64_t> in_rows = row_starts(t, d), out_rows = row_starts(values, d);
  const int64_t n = t.sizes[d], stride = t.strides[d], out_stride = values.strides[d];
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (size_t r = 0; r < in_rows.size(); ++r) {
    auto value = [&](int64_t j) { return t.at(in_rows[r] + j * stride); };
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return beats(value(a), value(b), largest); });
    for (int64_t j = 0; j < k; ++j) {
      values.at(out_rows[r] + j * out_stride) = value(order[static_cast<size_t>(j)]);
      indices.at(out_rows[r] + j * out_stride) = static_cast<float>(order[static_cast<size_t>(j)] + 1);
    }
  }
  return {values, indices};
}

}  // namespace frugal
