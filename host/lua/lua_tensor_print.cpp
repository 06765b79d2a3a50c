// tostring(tensor): the first values, right-aligned in a common width, and the
// size line, like Torch7's print.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "lua/lua_tensor.h"

namespace frugal {

namespace {

// Values right-aligned in a common width, like Torch's print.
std::string format_values(const Tensor& t) {
  constexpr int64_t kMaxRows = 10, kMaxCols = 8, kMaxSlices = 3, kMax1D = 20;
  auto fmt = [](float v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", static_cast<double>(v));
    return std::string(b);
  };
  std::ostringstream os;
  if (t.data.empty()) return "";
  if (t.dims.empty()) return fmt(t.data[0]) + "\n";
  size_t width = 0;
  for (size_t i = 0; i < std::min<size_t>(t.data.size(), 4096); ++i)
    width = std::max(width, fmt(t.data[i]).size());
  auto cell = [&](float v) {
    std::string s = fmt(v);
    return std::string(width + 2 - std::min(width, s.size()), ' ') + s;
  };
  if (t.dims.size() == 1) {
    int64_t n = t.dims[0];
    for (int64_t i = 0; i < std::min(n, kMax1D); ++i) os << cell(t.data[i]) << "\n";
    if (n > kMax1D) os << "  ... (" << (n - kMax1D) << " more)\n";
    return os.str();
  }
  int64_t rows = t.dims[t.dims.size() - 2], cols = t.dims.back();
  int64_t slices = static_cast<int64_t>(t.data.size()) / (rows * cols);
  for (int64_t s = 0; s < std::min(slices, kMaxSlices); ++s) {
    if (t.dims.size() > 2) {
      // Leading indices of this slice, 1-based: "(1,2,.,.) = "
      std::vector<int64_t> idx(t.dims.size() - 2);
      int64_t r = s;
      for (size_t k = idx.size(); k-- > 0;) {
        idx[k] = r % t.dims[k] + 1;
        r /= t.dims[k];
      }
      os << "(";
      for (int64_t i : idx) os << i << ",";
      os << ".,.) = \n";
    }
    const float* base = t.data.data() + s * rows * cols;
    for (int64_t r = 0; r < std::min(rows, kMaxRows); ++r) {
      for (int64_t c = 0; c < std::min(cols, kMaxCols); ++c) os << cell(base[r * cols + c]);
      if (cols > kMaxCols) os << "  ...";
      os << "\n";
    }
    if (rows > kMaxRows) os << "  ... (" << (rows - kMaxRows) << " more rows)\n";
    if (t.dims.size() > 2) os << "\n";
  }
  if (slices > kMaxSlices) os << "... (" << (slices - kMaxSlices) << " more slices)\n";
  return os.str();
}

}  // namespace

std::string format_tensor(const StridedTensor& t) {
  return format_values(t.to_dense()) + "[frugal.FloatTensor of size " + size_string(t.sizes) + "]";
}

}  // namespace frugal
