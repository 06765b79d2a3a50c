// A dense float32 tensor in C order: what scripts, .npy files and executors
// exchange. Deliberately simple; executors keep their own buffers in the arena.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace frugal {

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> d, float fill = 0.0f);
  int64_t numel() const;
  size_t bytes() const { return data.size() * sizeof(float); }
  std::string shape_string() const;  // "[2, 3, 224, 224]"
};

// "[2, 3, 224, 224]" for these dims.
std::string shape_string(const std::vector<int64_t>& dims);

// Element count of `dims`; throws frugal::Error on a negative dimension or when
// the count overflows int64 (shapes from scripts and files are untrusted).
int64_t checked_element_count(const std::vector<int64_t>& dims);

}  // namespace frugal
