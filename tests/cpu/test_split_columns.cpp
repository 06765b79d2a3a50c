// The gated conv's layout of its input rows (kernels/split_columns.h) against
// brute force: every phase count the vector loops take (1, 2, 4) and others,
// rows narrower than the padding, left pads past a phase, and the values
// around what it writes left alone.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "kernels/split_columns.h"

TEST_CASE("split_columns equals the padded rows' columns by phase", "[cpu][gating]") {
  const int64_t rows = 3, src_stride = 80, dst_stride = 150, phase_stride = 30;
  std::vector<float> src(size_t(rows * src_stride));
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i + 1);
  int64_t checked = 0;
  for (int64_t s = 1; s <= 5; ++s)
    for (int64_t W = 1; W <= 70; ++W)
      for (int64_t pl = 0; pl <= 4; ++pl)
        for (int64_t cols = 1; cols <= phase_stride; ++cols) {
          if (s * phase_stride > dst_stride) continue;
          std::vector<float> got(size_t(rows * dst_stride), -7.0f);
          frugal::cpu::split_columns(src.data(), rows, src_stride, W, pl, s, cols, got.data(), dst_stride,
                                     phase_stride);
          std::vector<float> want(got.size(), -7.0f);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < s; ++j)
              for (int64_t q = 0; q < cols; ++q) {
                const int64_t c = s * q + j - pl;
                want[size_t(r * dst_stride + j * phase_stride + q)] =
                    c >= 0 && c < W ? src[size_t(r * src_stride + c)] : 0.0f;
              }
          INFO("s " << s << " W " << W << " pl " << pl << " cols " << cols);
          REQUIRE(got == want);
          ++checked;
        }
  CHECK(checked > 1000);
}
