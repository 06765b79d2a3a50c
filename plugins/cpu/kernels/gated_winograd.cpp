// The eight-lane helpers are always inlined into the clones that have AVX (GCC warns of
// their ABI as if they were called).
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/gated_winograd.h"

#include <cstddef>
#include <cstring>

namespace frugal::cpu {

std::vector<float> winograd_kernels(const float* w, int64_t M, int64_t C) {
  // G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
  static const float G[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  std::vector<float> u(std::size_t(kWinogradPoints * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      float gg[4][3];  // G g
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          u[std::size_t(((i * 4 + j) * M + m) * C + c)] =
              gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2];
    }
  return u;
}

void winograd_arrange(const WinogradTiles& t, const float* x, float* dst) {
  const int64_t rows = t.rows(), cols = t.cols();
  float* even = dst;
  float* odd = dst + rows * cols;
  for (int64_t r = 0; r < rows; ++r) {
    float* e = even + r * cols;
    float* o = odd + r * cols;
    const int64_t h = r - t.pt;
    if (h < 0 || h >= t.H) {
      std::memset(e, 0, sizeof(float) * std::size_t(cols));
      std::memset(o, 0, sizeof(float) * std::size_t(cols));
      continue;
    }
    const float* src = x + h * t.W;
    for (int64_t q = 0; q < cols; ++q) {
      const int64_t w0 = 2 * q - t.pl, w1 = w0 + 1;
      e[q] = w0 >= 0 && w0 < t.W ? src[w0] : 0.0f;
      o[q] = w1 >= 0 && w1 < t.W ? src[w1] : 0.0f;
    }
  }
}

namespace {
// Eight tiles at once (GCC vector types, as kernels/gated_conv.cpp's plane_sums): the plain
// loop over tiles did not vectorise.
using Lanes = float __attribute__((vector_size(32)));

template <typename T>
__attribute__((always_inline)) inline T load(const float* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
__attribute__((always_inline)) inline void store(float* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Tiles [tx, tx + lanes of T) of one row of tiles: e and o the 4 rows' even and odd columns.
template <typename T>
__attribute__((always_inline)) inline void input_tiles(const float* const e[4], const float* const o[4],
                                                       int64_t tx, float* base, int64_t stride) {
  T a[4][4];
  for (int i = 0; i < 4; ++i) {  // row i of the tile times B: (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    const T d0 = load<T>(e[i] + tx), d1 = load<T>(o[i] + tx), d2 = load<T>(e[i] + tx + 1),
            d3 = load<T>(o[i] + tx + 1);
    a[i][0] = d0 - d2;
    a[i][1] = d1 + d2;
    a[i][2] = d2 - d1;
    a[i][3] = d1 - d3;
  }
  for (int j = 0; j < 4; ++j) {  // then B^T over the rows
    store(base + (0 * 4 + j) * stride + tx, a[0][j] - a[2][j]);
    store(base + (1 * 4 + j) * stride + tx, a[1][j] + a[2][j]);
    store(base + (2 * 4 + j) * stride + tx, a[2][j] - a[1][j]);
    store(base + (3 * 4 + j) * stride + tx, a[1][j] - a[3][j]);
  }
}
}  // namespace

// B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], eight tiles of a row at once.
__attribute__((target_clones("avx2", "default"))) void winograd_input(const WinogradTiles& t,
                                                                      const float* arranged, int64_t ty0,
                                                                      int64_t ty1, float* v, int64_t stride) {
  const int64_t rows = t.rows(), cols = t.cols(), tc = t.tile_cols();
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* e0 = arranged + (2 * ty) * cols;
    const float* o0 = e0 + rows * cols;
    const float* const e[4] = {e0, e0 + cols, e0 + 2 * cols, e0 + 3 * cols};
    const float* const o[4] = {o0, o0 + cols, o0 + 2 * cols, o0 + 3 * cols};
    float* base = v + (ty - ty0) * tc;
    int64_t tx = 0;
    for (; tx + 8 <= tc; tx += 8) input_tiles<Lanes>(e, o, tx, base, stride);
    for (; tx < tc; ++tx) input_tiles<float>(e, o, tx, base, stride);
  }
}

namespace {
// Two output rows of tiles [tx, tx + lanes of T) of one kernel: the 16 points of each tile
// at s[p * stride], A^T m A into the rows' even (r?e) and odd (r?o) columns.
template <typename T>
__attribute__((always_inline)) inline void output_tiles(const float* s, int64_t stride, T& r0e, T& r0o,
                                                        T& r1e, T& r1o) {
  T m[4][4];
  for (int p = 0; p < 16; ++p) m[p / 4][p % 4] = load<T>(s + p * stride);
  T r[2][4];
  for (int j = 0; j < 4; ++j) {
    r[0][j] = m[0][j] + m[1][j] + m[2][j];
    r[1][j] = m[1][j] - m[2][j] - m[3][j];
  }
  r0e = r[0][0] + r[0][1] + r[0][2];
  r0o = r[0][1] - r[0][2] - r[0][3];
  r1e = r[1][0] + r[1][1] + r[1][2];
  r1o = r[1][1] - r[1][2] - r[1][3];
}

// Even and odd columns of eight tiles into 16 consecutive outputs.
__attribute__((always_inline)) inline void store_interleaved(float* out, Lanes e, Lanes o) {
  store(out, __builtin_shufflevector(e, o, 0, 8, 1, 9, 2, 10, 3, 11));
  store(out + 8, __builtin_shufflevector(e, o, 4, 12, 5, 13, 6, 14, 7, 15));
}

void store_tile(const WinogradTiles& t, int64_t ty, int64_t tx, float r0e, float r0o, float r1e, float r1o,
                float* out) {
  const float v[2][2] = {{r0e, r0o}, {r1e, r1o}};
  for (int i = 0; i < 2; ++i) {
    const int64_t h = 2 * ty + i;
    if (h >= t.Ho) break;
    for (int j = 0; j < 2 && 2 * tx + j < t.Wo; ++j) out[h * t.Wo + 2 * tx + j] = v[i][j];
  }
}
}  // namespace

// A^T m A with A^T = [1 1 1 0; 0 1 -1 -1], eight tiles of a row at once where their
// 2 x 16 outputs lie inside the plane.
__attribute__((target_clones("avx2", "default"))) void winograd_output(const WinogradTiles& t, const float* y,
                                                                       int64_t stride, int64_t ty0,
                                                                       int64_t ty1, float* out) {
  const int64_t tc = t.tile_cols();
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* row = y + (ty - ty0) * tc;
    const bool both_rows = 2 * ty + 1 < t.Ho;
    int64_t tx = 0;
    for (; both_rows && 2 * (tx + 8) <= t.Wo; tx += 8) {
      Lanes r0e, r0o, r1e, r1o;
      output_tiles<Lanes>(row + tx, stride, r0e, r0o, r1e, r1o);
      store_interleaved(out + 2 * ty * t.Wo + 2 * tx, r0e, r0o);
      store_interleaved(out + (2 * ty + 1) * t.Wo + 2 * tx, r1e, r1o);
    }
    for (; tx < tc; ++tx) {
      float r0e, r0o, r1e, r1o;
      output_tiles<float>(row + tx, stride, r0e, r0o, r1e, r1o);
      store_tile(t, ty, tx, r0e, r0o, r1e, r1o, out);
    }
  }
}

}  // namespace frugal::cpu
