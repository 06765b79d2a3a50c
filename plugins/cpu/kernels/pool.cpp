// MaxPool, AveragePool (1-D and 2-D; pads, auto_pad, strides, dilations,
// ceil_mode, count_include_pad both ways), GlobalAveragePool and GlobalMaxPool
// (any spatial rank). Parallel over (sample, channel) planes. Within a plane,
// the windows that lie wholly inside the input (the interior rectangle of
// outputs, fixed at compile time) run a loop over output columns without bounds
// checks that the compiler vectorises; only the border outputs take the generic
// loop that checks every window element against the input and the padding.
// MaxPool on AVX-512 takes one path for every output instead (max_plane_avx512).
// GCC 12 warns inside its own AVX-512 intrinsics once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "frugal/model/ops/pool.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/window.h"
#include "kernels/conv_1x1.h"
#include "kernels/kernel_util.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

using exec::Window;

namespace {

// Outputs [lo, hi) along one axis whose whole window lies inside [0, size):
// o*stride - pad >= 0 and o*stride - pad + (k-1)*dilation < size. The set is an
// interval (both bounds are monotone in o); empty when lo == hi.
void interior_range(int64_t outputs, int64_t size, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                    int64_t& lo, int64_t& hi) {
  auto inside = [&](int64_t o) {
    return o * stride - pad >= 0 && o * stride - pad + (k - 1) * dilation < size;
  };
  lo = 0;
  while (lo < outputs && !inside(lo)) ++lo;
  hi = lo;
  while (hi < outputs && inside(hi)) ++hi;
}

// y[k] = max(y[k], s[k * S]) and y[k] += s[k * S] for k < n: with restrict
// parameters so that the compiler vectorises them once inlined (stride 2 by
// shuffles); `acc < v ? v : acc` is std::max's order, so a NaN input is skipped.
template <int S>
__attribute__((always_inline)) inline void max_into(float* __restrict y, const float* __restrict s,
                                                    int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float v = s[k * S];
    y[k] = y[k] < v ? v : y[k];
  }
}
template <int S>
__attribute__((always_inline)) inline void add_into(float* __restrict y, const float* __restrict s,
                                                    int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] += s[k * S];
}
// Three adjacent taps of one row at stride 2 (3x3/2 pools: ResNet, SqueezeNet) in one pass.
__attribute__((always_inline)) inline void max3_into_s2(float* __restrict y, const float* __restrict s,
                                                        int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    float a = y[k], v = s[2 * k];
    a = a < v ? v : a;
    v = s[2 * k + 1];
    a = a < v ? v : a;
    v = s[2 * k + 2];
    y[k] = a < v ? v : a;
  }
}

// One output row's interior columns y[0, n) (output column ow0 onwards), every
// window inside x: the max (or the mean over kh*kw values) of the window
// starting at input row h0. Max skips NaN inputs exactly as the generic loop
// does. S: the column stride when 1 or 2, else 0 (read from w). Compiled for
// AVX2 too (chosen at run time), since the compiler's default is SSE2 only.
template <bool Max, int S>
__attribute__((target_clones("avx2", "default"))) void pool_interior_row(const float* x, float* y, int64_t n,
                                                                         const exec::Window& w, int64_t h0,
                                                                         int64_t ow0) {
  const int64_t sw = S > 0 ? S : w.sw;
  const float init = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t k = 0; k < n; ++k) y[k] = init;
  for (int64_t i = 0; i < w.kh; ++i) {
    const float* row = x + (h0 + i * w.dh) * w.W + ow0 * sw - w.pl;
    if (Max && S == 2 && w.kw == 3 && w.dw == 1) {
      max3_into_s2(y, row, n);
      continue;
    }
    for (int64_t j = 0; j < w.kw; ++j) {
      const float* src = row + j * w.dw;
      if (S == 1)
        Max ? max_into<1>(y, src, n) : add_into<1>(y, src, n);
      else if (S == 2)
        Max ? max_into<2>(y, src, n) : add_into<2>(y, src, n);
      else if (Max)
        for (int64_t k = 0; k < n; ++k) y[k] = y[k] < src[k * sw] ? src[k * sw] : y[k];
      else
        for (int64_t k = 0; k < n; ++k) y[k] += src[k * sw];
    }
  }
  if (!Max) {
    const float div = float(w.kh * w.kw);  // every element is inside: both count_include_pad modes agree
    for (int64_t k = 0; k < n; ++k) y[k] /= div;
  }
}

#pragma GCC push_options
#pragma GCC target("avx512f")
// MaxPool of one (sample, channel) plane, borders included, without a branch
// per window element: a chunk of n output columns reads input columns
// [c0, c0 + 32) (c0 = ow0 * sw - pl) as two vectors, maxed over the window's
// rows inside the input; the window's column taps are then picked from those
// 32 lanes by permutes (idx: kw vectors, lane l of tap j = l * sw + j * dw) and
// maxed. In NCHW the border outputs were a quarter to a half of the 14x14 and
// 7x7 planes, each a checked scalar loop.
// Each row is one zero-masked load (lanes outside [0, W) are neither read nor
// faulted on) and one masked max, acc = max(v, acc) in the lanes inside the
// row and acc (-inf from the start) outside: the padding is -inf, and a NaN
// input is skipped (max(v, acc) keeps acc where v is NaN), as in the generic
// loop; acc never holds a NaN, so the taps' maxes need no order. K: kh and kw
// when both are 3 (the rows and taps unrolled), else 0 (read from w). The high
// vector is skipped where the chunk's lanes end within the first 16.
// The loop reads its window's rows in turn through the same load instructions,
// which the hardware prefetcher does not follow: once the planes came from
// memory (SqueezeNet's first MaxPool at batch 8) every load waited for it,
// about 50x the one-sample time. So the rows three output rows ahead are prefetched.
// 16-lane stores whose extra lanes land on outputs written later; masked only
// at the plane's end. 3x3 at stride 1 (GoogLeNet's branch pools): two output
// rows per pass where both windows lie inside the input rows, the max of their
// two common input rows taken once (4 loads and 4 masked maxes per 16 lanes
// for the two rows instead of 6 and 6).
template <int K, bool S1>
void max_plane_avx512(const float* x, float* y, const exec::Window& w, int64_t n, const int32_t* idx,
                      const int32_t* row_range, const uint32_t* chunk_mask) {
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t kh = K ? K : w.kh, kw = K ? K : w.kw;
  const int64_t H = w.H, W = w.W, Ho = w.Ho, Wo = w.Wo, sh = w.sh, dh = w.dh, pt = w.pt;
  const int64_t x_size = H * W, y_size = Ho * Wo, row_step = dh * W, chunk_in = n * w.sw;
  const int64_t chunks = (Wo + n - 1) / n;
  const float* x_left = x - w.pl;
  __m512i taps[32];
  for (int64_t j = 0; j < kw; ++j) taps[j] = _mm512_loadu_si512(idx + 16 * j);
  for (int64_t oh = 0; oh < Ho; ++oh) {
    const int64_t h0 = oh * sh - pt;
    const int64_t i_lo = row_range[2 * oh], i_hi = row_range[2 * oh + 1];
    const bool all_rows = i_lo == 0 && i_hi == kh;
    const bool pair =
        K == 3 && S1 && sh == 1 && dh == 1 && all_rows && oh + 1 < Ho && row_range[2 * oh + 3] == 3;
    const int64_t ahead = std::max<int64_t>(0, h0 + (kh - 1) * dh + 1 + 3 * sh) * W;
    for (int64_t p = ahead; p < std::min(x_size, ahead + (pair ? 2 : 1) * sh * W); p += 16)
      _mm_prefetch(reinterpret_cast<const char*>(x + p), _MM_HINT_T0);
    const float* r = x_left + h0 * W;
    float* dst = y + oh * Wo;
    if (pair) {
      // Two output rows at once: the max of their two common input rows once.
      for (int64_t c = 0; c < chunks; ++c, r += chunk_in, dst += n) {
        const __mmask16 m_lo = __mmask16(chunk_mask[c]), m_hi = __mmask16(chunk_mask[c] >> 16);
        __m512 a_lo, b_lo, a_hi = ninf, b_hi = ninf;
        {
          __m512 p = _mm512_mask_max_ps(ninf, m_lo, _mm512_maskz_loadu_ps(m_lo, r + W), ninf);
          p = _mm512_mask_max_ps(p, m_lo, _mm512_maskz_loadu_ps(m_lo, r + 2 * W), p);
          a_lo = _mm512_mask_max_ps(p, m_lo, _mm512_maskz_loadu_ps(m_lo, r), p);
          b_lo = _mm512_mask_max_ps(p, m_lo, _mm512_maskz_loadu_ps(m_lo, r + 3 * W), p);
        }
        if (m_hi) {
          const float* q = r + 16;
          __m512 p = _mm512_mask_max_ps(ninf, m_hi, _mm512_maskz_loadu_ps(m_hi, q + W), ninf);
          p = _mm512_mask_max_ps(p, m_hi, _mm512_maskz_loadu_ps(m_hi, q + 2 * W), p);
          a_hi = _mm512_mask_max_ps(p, m_hi, _mm512_maskz_loadu_ps(m_hi, q), p);
          b_hi = _mm512_mask_max_ps(p, m_hi, _mm512_maskz_loadu_ps(m_hi, q + 3 * W), p);
        }
        __m512 out_a = a_lo, out_b = b_lo;
        for (int64_t j = 1; j < 3; ++j) {
          out_a = _mm512_max_ps(_mm512_permutex2var_ps(a_lo, taps[j], a_hi), out_a);
          out_b = _mm512_max_ps(_mm512_permutex2var_ps(b_lo, taps[j], b_hi), out_b);
        }
        // The first row's extra lanes would land on the second row's outputs,
        // already written: masked there.
        const int64_t left = Wo - c * n;
        if (left >= 16)
          _mm512_storeu_ps(dst, out_a);
        else
          _mm512_mask_storeu_ps(dst, __mmask16((1u << left) - 1u), out_a);
        if (dst + Wo - y + 16 <= y_size)
          _mm512_storeu_ps(dst + Wo, out_b);
        else
          _mm512_mask_storeu_ps(dst + Wo, __mmask16((1u << std::min(n, left)) - 1u), out_b);
      }
      ++oh;
      continue;
    }
    for (int64_t c = 0; c < chunks; ++c, r += chunk_in, dst += n) {
      const __mmask16 m_lo = __mmask16(chunk_mask[c]), m_hi = __mmask16(chunk_mask[c] >> 16);
      __m512 lo = ninf, hi = ninf;
      auto row = [&](int64_t i) {
        const float* ri = r + i * row_step;
        lo = _mm512_mask_max_ps(lo, m_lo, _mm512_maskz_loadu_ps(m_lo, ri), lo);
        if (m_hi) hi = _mm512_mask_max_ps(hi, m_hi, _mm512_maskz_loadu_ps(m_hi, ri + 16), hi);
      };
      if (K && all_rows) {
        for (int64_t i = 0; i < K; ++i) row(i);
      } else {
        for (int64_t i = i_lo; i < i_hi; ++i) row(i);
      }
      __m512 out = S1 ? lo : _mm512_permutex2var_ps(lo, taps[0], hi);  // tap 0 at stride 1: lane l
      for (int64_t j = 1; j < kw; ++j) out = _mm512_max_ps(_mm512_permutex2var_ps(lo, taps[j], hi), out);
      if (dst - y + 16 <= y_size)
        _mm512_storeu_ps(dst, out);
      else
        _mm512_mask_storeu_ps(dst, __mmask16((1u << std::min(n, Wo - c * n)) - 1u), out);
    }
  }
}
#pragma GCC pop_options

using InteriorRow = void (*)(const float*, float*, int64_t, const exec::Window&, int64_t, int64_t);

template <bool Max>
InteriorRow pick_interior_row(int64_t sw) {
  return sw == 1   ? pool_interior_row<Max, 1>
         : sw == 2 ? pool_interior_row<Max, 2>
                   : pool_interior_row<Max, 0>;
}

class PoolKernel : public Kernel {
 public:
  explicit PoolKernel(const KernelSpec& s) : label_(s.label()) {
    const auto& op = s.op_as<ops::WindowPool>();
    const auto* avg = dynamic_cast<const ops::AveragePool*>(&op);
    max_ = avg == nullptr;
    require_float_activation(s, 0, "input X");
    const Dims& x = s.inputs[0].dims;
    if (op.kernel().size() == 3 || x.size() == 5)
      unsupported(s, "3-D pooling is not supported (1-D and 2-D are)");
    if (avg) {
      for (int64_t d : op.window.dilations)
        if (d != 1) unsupported(s, "AveragePool with dilations is not supported");
    }
    win_ = Window::from_node(s, x, op.kernel());
    C_ = x[1];
    count_include_pad_ = avg && avg->count_include_pad;
    interior_range(win_.Ho, win_.H, win_.kh, win_.sh, win_.dh, win_.pt, oh_lo_, oh_hi_);
    interior_range(win_.Wo, win_.W, win_.kw, win_.sw, win_.dw, win_.pl, ow_lo_, ow_hi_);
    interior_row_ = max_ ? pick_interior_row<true>(win_.sw) : pick_interior_row<false>(win_.sw);
    // The AVX-512 MaxPool needs the window's column span within 32 lanes.
    const int64_t span = (win_.kw - 1) * win_.dw;
    if (max_ && span <= 31 && packed_isa() == PackedIsa::Avx512) {
      chunk_ = std::min<int64_t>(16, (31 - span) / win_.sw + 1);
      tap_idx_.assign(size_t(16 * win_.kw), 0);
      for (int64_t j = 0; j < win_.kw; ++j)
        for (int64_t l = 0; l < chunk_; ++l)
          tap_idx_[size_t(16 * j + l)] = int32_t(l * win_.sw + j * win_.dw);
      // Per output row the window rows inside the input [i_lo, i_hi); per
      // chunk the lanes inside the input row (bit l: column c0 + l).
      const Window& w = win_;
      for (int64_t oh = 0; oh < w.Ho; ++oh) {
        const int64_t h0 = oh * w.sh - w.pt;
        const int64_t i_lo = h0 >= 0 ? 0 : (-h0 + w.dh - 1) / w.dh;
        const int64_t i_hi = h0 > w.H - 1 ? 0 : std::min(w.kh, (w.H - 1 - h0) / w.dh + 1);
        row_range_.push_back(int32_t(i_lo));
        row_range_.push_back(int32_t(i_hi));
      }
      for (int64_t ow0 = 0; ow0 < w.Wo; ow0 += chunk_) {
        const int64_t c0 = ow0 * w.sw - w.pl;
        const int64_t a = std::clamp<int64_t>(-c0, 0, 32), b = std::clamp<int64_t>(w.W - c0, 0, 32);
        const uint64_t m = b > a ? ((1ull << b) - 1ull) & ~((1ull << a) - 1ull) : 0;
        chunk_mask_.push_back(uint32_t(m));
      }
    }
  }

  void run(const KernelArgs& a) const override {
    const int64_t planes = a.in_dims[0][0] * C_, in_plane = win_.H * win_.W, out_plane = win_.Ho * win_.Wo;
    parallel_range(a.pool, planes, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) pool_plane(a.in[0] + p * in_plane, a.out + p * out_plane);
    });
  }

 private:
  // One (sample, channel) plane: interior rows run the fast row loop between
  // their border columns; rows outside [oh_lo_, oh_hi_) are all border.
  void pool_plane(const float* x, float* y) const {
    const Window& w = win_;
    if (chunk_ > 0) {
      if (w.kh == 3 && w.kw == 3 && w.sw == 1)
        return max_plane_avx512<3, true>(x, y, w, chunk_, tap_idx_.data(), row_range_.data(),
                                         chunk_mask_.data());
      if (w.kh == 3 && w.kw == 3)
        return max_plane_avx512<3, false>(x, y, w, chunk_, tap_idx_.data(), row_range_.data(),
                                          chunk_mask_.data());
      if (w.sw == 1)
        return max_plane_avx512<0, true>(x, y, w, chunk_, tap_idx_.data(), row_range_.data(),
                                         chunk_mask_.data());
      return max_plane_avx512<0, false>(x, y, w, chunk_, tap_idx_.data(), row_range_.data(),
                                        chunk_mask_.data());
    }
    for (int64_t oh = 0; oh < w.Ho; ++oh) {
      float* yrow = y + oh * w.Wo;
      const bool interior = oh >= oh_lo_ && oh < oh_hi_ && ow_lo_ < ow_hi_;
      const int64_t a = interior ? ow_lo_ : w.Wo, b = interior ? ow_hi_ : w.Wo;
      for (int64_t ow = 0; ow < a; ++ow) yrow[ow] = pool_checked(x, oh, ow);
      if (interior) interior_row_(x, yrow + a, b - a, w, oh * w.sh - w.pt, a);
      for (int64_t ow = b; ow < w.Wo; ++ow) yrow[ow] = pool_checked(x, oh, ow);
    }
  }

  // One output whose window may cross the input's edge: checks every element
  // against the input and, for count_include_pad, against the padded input.
  float pool_checked(const float* x, int64_t oh, int64_t ow) const {
    const Window& w = win_;
    const int64_t h0 = oh * w.sh - w.pt, w0 = ow * w.sw - w.pl;
    float best = -std::numeric_limits<float>::infinity();
    double sum = 0.0;
    int64_t inside = 0, in_padded = 0;
    for (int64_t i = 0; i < w.kh; ++i) {
      const int64_t ih = h0 + i * w.dh;
      const bool row_in = ih >= 0 && ih < w.H;
      const bool row_padded = ih < w.H + w.pb;  // ih >= -pt always holds
      for (int64_t j = 0; j < w.kw; ++j) {
        const int64_t iw = w0 + j * w.dw;
        if (row_padded && iw < w.W + w.pr) ++in_padded;
        if (!row_in || iw < 0 || iw >= w.W) continue;
        const float v = x[ih * w.W + iw];
        ++inside;
        if (max_)
          best = std::max(best, v);
        else
          sum += v;
      }
    }
    if (max_) return best;
    const int64_t div = count_include_pad_ ? in_padded : inside;
    return div > 0 ? float(sum / double(div)) : 0.0f;
  }

  std::string label_;
  Window win_;
  int64_t C_ = 0;
  bool max_ = false, count_include_pad_ = false;
  int64_t oh_lo_ = 0, oh_hi_ = 0, ow_lo_ = 0, ow_hi_ = 0;  // outputs whose windows lie inside the input
  InteriorRow interior_row_ = nullptr;
  int64_t chunk_ = 0;                 // output columns per step of the AVX-512 MaxPool (0: not taken)
  std::vector<int32_t> tap_idx_;      // its permute indices, 16 per column tap
  std::vector<int32_t> row_range_;    // its window rows inside the input per output row
  std::vector<uint32_t> chunk_mask_;  // its input lanes inside the row per chunk
};

class GlobalPoolKernel : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelSpec& s) : label_(s.label()) {
    max_ = dynamic_cast<const ops::GlobalMaxPool*>(s.op) != nullptr;
    require_float_activation(s, 0, "input X");
    if (s.inputs[0].dims.size() < 3)
      fail(s, "input must have rank >= 3, got " + dims_string(s.inputs[0].dims));
  }

  void run(const KernelArgs& a) const override {
    const Dims& x = a.in_dims[0];
    const int64_t planes = x[0] * x[1], inner = product(x, 2);
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)),
                   [&](int64_t p0, int64_t p1) {
                     for (int64_t p = p0; p < p1; ++p) {
                       const float* v = a.in[0] + p * inner;
                       if (max_) {
                         float best = -std::numeric_limits<float>::infinity();
                         for (int64_t i = 0; i < inner; ++i) best = std::max(best, v[i]);
                         a.out[p] = best;
                       } else {
                         a.out[p] = float(sum_floats(v, inner) / double(inner));
                       }
                     }
                   });
  }

 private:
  std::string label_;
  bool max_ = false;
};

}  // namespace

FRUGAL_CPU_KERNEL(MaxPool, PoolKernel);
FRUGAL_CPU_KERNEL(AveragePool, PoolKernel);
FRUGAL_CPU_KERNEL(GlobalAveragePool, GlobalPoolKernel);
FRUGAL_CPU_KERNEL(GlobalMaxPool, GlobalPoolKernel);

}  // namespace frugal::cpu
