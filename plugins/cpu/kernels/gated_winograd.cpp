// The eight-lane helpers are always inlined into the clones that have AVX (GCC warns of
// their ABI as if they were called).
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/gated_winograd.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/split_columns.h"

namespace frugal::cpu {

namespace {
// G of F(2x2, 3x3) (points 0, 1, -1, infinity) and of F(4x4, 3x3) (0, 1, -1, 2, -2, infinity).
constexpr float kG2[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
constexpr float kG4[6][3] = {{1.0f / 4, 0, 0},
                             {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                             {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                             {1.0f / 24, 1.0f / 12, 1.0f / 6},
                             {1.0f / 24, -1.0f / 12, 1.0f / 6},
                             {0, 0, 1}};
}  // namespace

std::vector<float> winograd_kernels(const WinogradTiles& t, const float* w, int64_t M, int64_t C) {
  const int n = int(t.m + 2);
  const float(*G)[3] = t.m == 4 ? kG4 : kG2;
  std::vector<float> u(std::size_t(t.points() * M * C));
  for (int64_t k = 0; k < M; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (k * C + c) * 9;
      double gg[6][3];  // G g in double, rounded once at the end
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3; ++j)
          gg[i][j] = double(G[i][0]) * g[j] + double(G[i][1]) * g[3 + j] + double(G[i][2]) * g[6 + j];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          u[std::size_t(((i * n + j) * M + k) * C + c)] =
              float(gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
    }
  return u;
}

void winograd_arrange(const WinogradTiles& t, const float* x, float* dst) {
  const int64_t rows = t.rows(), cols = t.cols();
  const int64_t r0 = std::min(rows, t.pt),
                r1 = std::max(r0, std::min(rows, t.H + t.pt));  // rows in the input
  for (int64_t j = 0; j < t.m; ++j) {
    std::memset(dst + j * rows * cols, 0, sizeof(float) * std::size_t(r0 * cols));
    std::memset(dst + (j * rows + r1) * cols, 0, sizeof(float) * std::size_t((rows - r1) * cols));
  }
  split_columns(x + (r0 - t.pt) * t.W, r1 - r0, t.W, t.W, t.pl, t.m, cols, dst + r0 * cols, cols,
                rows * cols);
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

// F(2x2, 3x3): tiles [tx, tx + lanes of T) of one row of tiles; row0 the tile row's first row
// in the even column plane, the odd one `plane` floats on.
template <typename T>
__attribute__((always_inline)) inline void input_tiles2(const float* row0, int64_t plane, int64_t cols,
                                                        int64_t tx, float* base, int64_t stride) {
  T a[4][4];
  for (int i = 0; i < 4; ++i) {  // row i of the tile times B: (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    const float* r = row0 + i * cols + tx;
    const T d0 = load<T>(r), d1 = load<T>(r + plane), d2 = load<T>(r + 1), d3 = load<T>(r + plane + 1);
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

// F(4x4, 3x3)'s B^T on six values: B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
// 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
template <typename T>
__attribute__((always_inline)) inline void bt6(const T d[6], T t[6]) {
  const T a = d[1] - d[3], b = d[4] - d[2];
  t[0] = (d[0] - d[2]) * 4.0f + b;
  t[1] = d[3] + d[4] - (d[1] + d[2]) * 4.0f;
  t[2] = (d[1] - d[2]) * 4.0f + (d[4] - d[3]);
  t[3] = b - a * 2.0f;
  t[4] = b + a * 2.0f;
  t[5] = a * 4.0f + (d[5] - d[3]);
}

// F(4x4, 3x3): tiles [tx, tx + lanes of T) of one row of tiles; row0 the tile row's first
// row in the first of the four column planes (`plane` floats apart).
template <typename T>
__attribute__((always_inline)) inline void input_tiles4(const float* row0, int64_t plane, int64_t cols,
                                                        int64_t tx, float* base, int64_t stride) {
  T a[6][6];
  for (int i = 0; i < 6; ++i) {  // row i of the tile times B
    const float* r = row0 + i * cols + tx;
    const T d[6] = {load<T>(r),     load<T>(r + plane),    load<T>(r + 2 * plane), load<T>(r + 3 * plane),
                    load<T>(r + 1), load<T>(r + plane + 1)};
    bt6(d, a[i]);
  }
  for (int j = 0; j < 6; ++j) {  // then B^T over the rows
    const T col[6] = {a[0][j], a[1][j], a[2][j], a[3][j], a[4][j], a[5][j]};
    T v[6];
    bt6(col, v);
    for (int i = 0; i < 6; ++i) store(base + (i * 6 + j) * stride + tx, v[i]);
  }
}
template <int M, typename T>
__attribute__((always_inline)) inline void input_at(const float* row0, int64_t plane, int64_t cols,
                                                    int64_t tx, float* base, int64_t stride) {
  if constexpr (M == 4)
    input_tiles4<T>(row0, plane, cols, tx, base, stride);
  else
    input_tiles2<T>(row0, plane, cols, tx, base, stride);
}

// Tile row ty of an arranged channel: eight tiles at once (the last eight moved back to end at
// the row's end: with 14 tiles a row, a third of them went one by one), one by one where the
// row has fewer than eight.
template <int M>
__attribute__((always_inline)) inline void input_row(const WinogradTiles& t, const float* arranged,
                                                     int64_t ty, float* base, int64_t stride) {
  const int64_t plane = t.rows() * t.cols(), tc = t.tile_cols();
  const float* row0 = arranged + M * ty * t.cols();
  int64_t tx = 0;
  for (; tx + 8 <= tc; tx += 8) input_at<M, Lanes>(row0, plane, t.cols(), tx, base, stride);
  if (tx < tc && tc >= 8) input_at<M, Lanes>(row0, plane, t.cols(), tc - 8, base, stride);
  for (; tc < 8 && tx < tc; ++tx) input_at<M, float>(row0, plane, t.cols(), tx, base, stride);
}
}  // namespace

// B^T d B per tile row; F(2x2, 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] on the even
// and odd column planes.
__attribute__((target_clones("avx2", "default"))) void winograd_input(const WinogradTiles& t,
                                                                      const float* arranged, int64_t ty0,
                                                                      int64_t ty1, float* v, int64_t stride) {
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    float* base = v + (ty - ty0) * t.tile_cols();
    if (t.m == 4)
      input_row<4>(t, arranged, ty, base, stride);
    else
      input_row<2>(t, arranged, ty, base, stride);
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

// F(4x4, 3x3)'s A^T on six values: A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
template <typename T>
__attribute__((always_inline)) inline void at6(const T m[6], T o[4]) {
  const T s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
  o[0] = m[0] + s12 + s34;
  o[1] = d12 + d34 * 2.0f;
  o[2] = s12 + s34 * 4.0f;
  o[3] = d12 + d34 * 8.0f + m[5];
}

// F(4x4, 3x3): the 4 x 4 outputs o of tiles [tx, tx + lanes of T), their 36 points at s[p * stride].
template <typename T>
__attribute__((always_inline)) inline void output_tiles4(const float* s, int64_t stride, T o[4][4]) {
  T r[4][6];
  for (int j = 0; j < 6; ++j) {  // A^T over the rows
    T col[6], v[4];
    for (int i = 0; i < 6; ++i) col[i] = load<T>(s + (i * 6 + j) * stride);
    at6(col, v);
    for (int k = 0; k < 4; ++k) r[k][j] = v[k];
  }
  for (int k = 0; k < 4; ++k) at6(r[k], o[k]);  // then over the columns
}

// Columns 0-3 of eight tiles into 32 consecutive outputs.
__attribute__((always_inline)) inline void store_interleaved4(float* out, const Lanes c[4]) {
  const Lanes lo01 = __builtin_shufflevector(c[0], c[1], 0, 8, 1, 9, 2, 10, 3, 11);
  const Lanes hi01 = __builtin_shufflevector(c[0], c[1], 4, 12, 5, 13, 6, 14, 7, 15);
  const Lanes lo23 = __builtin_shufflevector(c[2], c[3], 0, 8, 1, 9, 2, 10, 3, 11);
  const Lanes hi23 = __builtin_shufflevector(c[2], c[3], 4, 12, 5, 13, 6, 14, 7, 15);
  store(out, __builtin_shufflevector(lo01, lo23, 0, 1, 8, 9, 2, 3, 10, 11));
  store(out + 8, __builtin_shufflevector(lo01, lo23, 4, 5, 12, 13, 6, 7, 14, 15));
  store(out + 16, __builtin_shufflevector(hi01, hi23, 0, 1, 8, 9, 2, 3, 10, 11));
  store(out + 24, __builtin_shufflevector(hi01, hi23, 4, 5, 12, 13, 6, 7, 14, 15));
}

// Tiles [tx, tx + lanes of T) of tile row ty into the tile row's first `rows` rows of outputs:
// eight (T = Lanes) whose outputs lie inside the plane's columns, or one (T = float) clipped to
// them.
template <int M, typename T>
__attribute__((always_inline)) inline void output_at(const WinogradTiles& t, const float* row, int64_t stride,
                                                     int64_t ty, int64_t tx, int64_t rows, float* out) {
  T o[M][M];
  if constexpr (M == 4)
    output_tiles4<T>(row + tx, stride, o);
  else
    output_tiles<T>(row + tx, stride, o[0][0], o[0][1], o[1][0], o[1][1]);
  for (int64_t k = 0; k < rows; ++k) {
    float* dst = out + (M * ty + k) * t.Wo + M * tx;
    if constexpr (!std::is_same_v<T, Lanes>)
      for (int l = 0; l < M && M * tx + l < t.Wo; ++l) dst[l] = o[k][l];
    else if constexpr (M == 4)
      store_interleaved4(dst, o[k]);
    else
      store_interleaved(dst, o[k][0], o[k][1]);
  }
}

// Tile row ty: eight tiles at once where their columns lie inside the plane (the last eight
// moved back to end at the last such tile), the rest one by one.
template <int M>
__attribute__((always_inline)) inline void output_row(const WinogradTiles& t, const float* row,
                                                      int64_t stride, int64_t ty, float* out) {
  const int64_t inside = t.Wo / M, rows = std::min<int64_t>(M, t.Ho - M * ty);
  int64_t tx = 0;
  for (; tx + 8 <= inside; tx += 8) output_at<M, Lanes>(t, row, stride, ty, tx, rows, out);
  if (tx < inside && inside >= 8) {
    output_at<M, Lanes>(t, row, stride, ty, inside - 8, rows, out);
    tx = inside;
  }
  for (; tx < t.tile_cols(); ++tx) output_at<M, float>(t, row, stride, ty, tx, rows, out);
}
}  // namespace

// A^T m A per tile row; F(2x2, 3x3): A^T = [1 1 1 0; 0 1 -1 -1].
__attribute__((target_clones("avx2", "default"))) void winograd_output(const WinogradTiles& t, const float* y,
                                                                       int64_t stride, int64_t ty0,
                                                                       int64_t ty1, float* out) {
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* row = y + (ty - ty0) * t.tile_cols();
    if (t.m == 4)
      output_row<4>(t, row, stride, ty, out);
    else
      output_row<2>(t, row, stride, ty, out);
  }
}

}  // namespace frugal::cpu
