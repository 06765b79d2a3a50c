// Winograd F(2x2, 3x3) and F(4x4, 3x3) for the gated conv's reduced path
// (kernels/gated_conv.cpp) on 3x3 stride-1 convs: output tiles of m x m in blocks
// of tile rows; per block the active channels' transformed tiles, (m + 2)^2
// products on the indexed tiles (kernels/indexed_gemm.h), one per point of the
// transformed tile, over the active kernels x channels, and the active kernels'
// output transforms. F(4x4, 3x3) takes 2.25 products per output, F(2x2, 3x3) 4.
#pragma once

#include <cstdint>
#include <vector>

namespace frugal::cpu {

// The tiles (m x m outputs, m 2 or 4) of an output plane Ho x Wo over an input plane
// H x W padded by pt, pl, and a channel's arranged form: the padded plane's columns by
// their remainder mod m as m planes of rows() x cols() (zeros outside the input), so
// that a row of tiles transforms with contiguous loads.
struct WinogradTiles {
  int64_t m = 2, H = 0, W = 0, pt = 0, pl = 0, Ho = 0, Wo = 0;
  int64_t points() const { return (m + 2) * (m + 2); }
  int64_t tile_rows() const { return (Ho + m - 1) / m; }
  int64_t tile_cols() const { return (Wo + m - 1) / m; }
  int64_t rows() const { return m * tile_rows() + 2; }
  int64_t cols() const { return tile_cols() + 1; }
  int64_t arranged_floats() const { return m * rows() * cols(); }
};

// The transformed kernels U[p][k][c] = (G g G^T)[p] of weights [M][C][3][3] for t.m.
std::vector<float> winograd_kernels(const WinogradTiles& t, const float* w, int64_t M, int64_t C);

// Channel plane x (H x W) into its arranged form at dst.
void winograd_arrange(const WinogradTiles& t, const float* x, float* dst);
// Tile rows [ty0, ty1) of an arranged channel: point p of the block's tile j at v[p * stride + j].
void winograd_input(const WinogradTiles& t, const float* arranged, int64_t ty0, int64_t ty1, float* v,
                    int64_t stride);
// Tile rows [ty0, ty1) of one kernel's output plane (Ho x Wo) from its products, point p of the
// block's tile j at y[p * stride + j].
void winograd_output(const WinogradTiles& t, const float* y, int64_t stride, int64_t ty0, int64_t ty1,
                     float* out);

}  // namespace frugal::cpu
