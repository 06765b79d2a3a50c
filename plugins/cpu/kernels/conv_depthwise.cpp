#include "kernels/conv_depthwise.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/conv_1x1.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

using exec::Window;

namespace {

// 16 floats at any float-aligned address: one AVX-512 register, two AVX2 ones.
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef int32_t v16i __attribute__((vector_size(64), aligned(4)));
constexpr int64_t kLanes = 16;

// vector_math.cpp's exp_approx on 16 lanes (same steps, same clamping; NaN
// stays NaN), in place: vectors passed by reference, never by value through a
// function of the default target (whose vector ABI differs from AVX-512's).
inline void exp_v16(v16& x) {
  const v16 lo = v16{} - 87.3f, hi = v16{} + 88.7f;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  const v16 n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  v16 r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  v16 p = v16{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const v16 n_finite = n == n ? n : v16{};
  const v16i bits = (__builtin_convertvector(n_finite, v16i) + 127) << 23;
  v16 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  x = p * scale;
}

inline void sigmoid_v16(v16& x) {
  v16 e = -x;
  exp_v16(e);
  x = 1.0f / (1.0f + e);
}

// The epilogue's steps (Epilogue::apply_step's, value for value) on 16
// outputs; affine(x, k) applies affine step k (one channel's scale and shift,
// or a channel per lane).
template <typename Affine>
inline void epilogue_steps_v16(v16& x, const Epilogue::Step* steps, int nsteps, const Affine& affine) {
  using ops::ActivationKind;
  const v16 zero{}, one = v16{} + 1.0f;
  for (int k = 0; k < nsteps; ++k) {
    const Epilogue::Step& s = steps[k];
    const float a = s.a, b = s.b;
    if (s.kind == Epilogue::kAffine) {
      affine(x, k);
      continue;
    }
    if (s.kind == Epilogue::kSwish) {
      v16 sg = x;
      sigmoid_v16(sg);
      x = x * sg;
      continue;
    }
    switch (ActivationKind(s.kind)) {
      case ActivationKind::Relu:
        x = x > zero ? x : zero;
        break;
      case ActivationKind::Clip: {
        const v16 vlo = zero + a, vhi = zero + b;
        x = x < vlo ? vlo : x;  // std::max(x, lo), then std::min(., hi)
        x = vhi < x ? vhi : x;
        break;
      }
      case ActivationKind::Sigmoid:
        sigmoid_v16(x);
        break;
      case ActivationKind::HardSigmoid: {
        v16 t = a * x + b;
        t = t < zero ? zero : t;
        x = one < t ? one : t;
        break;
      }
      case ActivationKind::HardSwish: {
        v16 t = x / 6.0f + 0.5f;
        t = t < zero ? zero : t;
        x *= one < t ? one : t;
        break;
      }
      case ActivationKind::LeakyRelu:
        x = x >= zero ? x : a * x;
        break;
    }
  }
}

// On 16 outputs of channel c.
inline void epilogue_v16(v16& x, const Epilogue::Step* steps, int nsteps, int64_t c) {
  epilogue_steps_v16(x, steps, nsteps,
                     [&](v16& v, int k) { v = steps[k].scale[size_t(c)] * v + steps[k].shift[size_t(c)]; });
}

// out[oh, ow] = sum over (i, j) of w[i, j] * x[oh*sh - pt + i*dh, ow*sw - pl + j*dw] (0 outside x);
// lo[j]..hi[j] are the output columns whose input column is inside x. Compiled
// for AVX2 too (chosen at run time), since the compiler's default is SSE2 only.
__attribute__((target_clones("avx512f", "avx2", "default"))) void tap_by_tap_plane(
    const float* __restrict x, const float* __restrict wm, float* __restrict out, const Window& w,
    const int64_t* lo, const int64_t* hi) {
  for (int64_t oh = 0; oh < w.Ho; ++oh) {
    float* __restrict orow = out + oh * w.Wo;
    for (int64_t ow = 0; ow < w.Wo; ++ow) orow[ow] = 0.0f;
    for (int64_t i = 0; i < w.kh; ++i) {
      const int64_t ih = oh * w.sh - w.pt + i * w.dh;
      if (ih < 0 || ih >= w.H) continue;
      const float* __restrict src = x + ih * w.W;
      for (int64_t j = 0; j < w.kw; ++j) {
        const float wv = wm[i * w.kw + j];
        const int64_t base = j * w.dw - w.pl, a = lo[j], b = hi[j];
        if (w.sw == 1)
          for (int64_t ow = a; ow < b; ++ow) orow[ow] += wv * src[base + ow];
        else if (w.sw == 2)
          for (int64_t ow = a; ow < b; ++ow) orow[ow] += wv * src[base + 2 * ow];
        else
          for (int64_t ow = a; ow < b; ++ow) orow[ow] += wv * src[base + ow * w.sw];
      }
    }
  }
}

// 3x3 at stride 2 without workspace (on these the padded path lost: 0.41 against
// 0.31 ms on MobileNet-v2's 96 channels at 112x112) in one pass over the output:
// all K*K taps per output value;
// rows outside x read `zeros` (W values), and the few columns near the left
// and right edges take the checked path. Compiled for AVX-512 and AVX2 too.
template <int K, int S>
__attribute__((target_clones("avx512f", "avx2", "default"))) void depthwise_kxk_plane(
    const float* __restrict x, const float* __restrict wm, float* __restrict out, const Window& w,
    const float* __restrict zeros, int64_t a, int64_t b) {
  float wk[K * K];
  for (int t = 0; t < K * K; ++t) wk[t] = wm[t];
  const float* __restrict r[K];
  for (int64_t oh = 0; oh < w.Ho; ++oh) {
    for (int i = 0; i < K; ++i) {
      const int64_t ih = oh * S - w.pt + i;
      r[i] = ih >= 0 && ih < w.H ? x + ih * w.W : zeros;
    }
    float* __restrict orow = out + oh * w.Wo;
    auto edge = [&](int64_t ow) {
      const int64_t c = ow * S - w.pl;
      float acc = 0.0f;
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j)
          if (c + j >= 0 && c + j < w.W) acc += wk[i * K + j] * r[i][c + j];
      orow[ow] = acc;
    };
    for (int64_t ow = 0; ow < std::min(a, w.Wo); ++ow) edge(ow);
    const int64_t off = -w.pl;
    int64_t ow = a;
    if constexpr (K == 3 && S == 2) {
      // Runs of 16 outputs whose inputs lie inside the row (columns c .. c + 32,
      // c = 2 ow - pl): each row's even, odd and next even columns taken from
      // two pairs of loads by a shuffle each, the same sum in the same order
      // as the loop below; the last run may overlap the one before it.
      const int64_t last = std::min(b - kLanes, (w.W - 1 - 32 + w.pl) / 2);
      for (int64_t o = a; last >= a && o <= last; o = o == last ? last + 1 : std::min(o + kLanes, last)) {
        const int64_t c = o * S + off;
        v16 acc{};
        for (int i = 0; i < K; ++i) {
          v16 p0, p1, q0, q1;
          std::memcpy(&p0, r[i] + c, sizeof p0);
          std::memcpy(&p1, r[i] + c + 16, sizeof p1);
          std::memcpy(&q0, r[i] + c + 2, sizeof q0);
          std::memcpy(&q1, r[i] + c + 17, sizeof q1);
          // Two-register shuffles (one permute each); q0 holds columns c + 2 ..
          // c + 17, q1 c + 17 .. c + 32.
          const v16 even =
              __builtin_shufflevector(p0, p1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
          const v16 odd =
              __builtin_shufflevector(p0, p1, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
          const v16 next =
              __builtin_shufflevector(q0, q1, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
          acc += wk[i * K + 0] * even;
          acc += wk[i * K + 1] * odd;
          acc += wk[i * K + 2] * next;
        }
        std::memcpy(orow + o, &acc, sizeof acc);
      }
      if (last >= a) ow = last + kLanes;
    }
    for (; ow < b; ++ow) {
      const int64_t c = ow * S + off;
      float acc = 0.0f;
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) acc += wk[i * K + j] * r[i][c + j];
      orow[ow] = acc;
    }
    for (ow = std::max(a, b); ow < w.Wo; ++ow) edge(ow);
  }
}

// The padded planes' geometry: part ph (column parity at stride 2) holds
// padded columns q * S + ph, q in [0, Wq), of padded rows [0, Hp); padded
// (r, c) is input (r - pt, c - pl), 0 outside it.
struct Padded {
  int64_t Hp, Wq;
  int S;
  float* at(float* p, int64_t ph, int64_t r) const { return p + (ph * Hp + r) * Wq; }
};

// dst[q] = src[2 q] for q in [qlo, qhi); src[end] is the last float of the row.
inline void deinterleave(const float* src, float* dst, int64_t qlo, int64_t qhi, int64_t end) {
  int64_t q = qlo;
  for (; q + kLanes <= qhi && 2 * q + 2 * kLanes - 1 <= end; q += kLanes) {
    // Two loads and one two-register shuffle (a shuffle of one 32-float
    // vector was built value by value, as wide as no register).
    v16 a, b;
    std::memcpy(&a, src + 2 * q, sizeof a);
    std::memcpy(&b, src + 2 * q + kLanes, sizeof b);
    const v16 even = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    std::memcpy(dst + q, &even, sizeof even);
  }
  for (; q < qhi; ++q) dst[q] = src[2 * q];
}

// dst[0..n) = src[0..n) in vectors, the last one overlapping (no call, no
// scalar tail: rows are as short as 7 floats).
inline void copy_row(const float* src, float* dst, int64_t n) {
  typedef float v8 __attribute__((vector_size(32), aligned(4)));
  typedef float v4 __attribute__((vector_size(16), aligned(4)));
  auto copy = [&](auto v, int64_t lanes) {
    for (int64_t i = 0; i + lanes <= n; i += lanes) {
      std::memcpy(&v, src + i, sizeof v);
      std::memcpy(dst + i, &v, sizeof v);
    }
    std::memcpy(&v, src + n - lanes, sizeof v);
    std::memcpy(dst + n - lanes, &v, sizeof v);
  };
  if (n >= 16)
    copy(v16{}, 16);
  else if (n >= 8)
    copy(v8{}, 8);
  else if (n >= 4)
    copy(v4{}, 4);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// Copies input plane x into the padded parts at p, whose padding holds zeros
// already (at stride 2 the even or odd columns, 32 at a time).
__attribute__((target_clones("avx512f", "avx2", "default"))) void fill_padded(const float* x, float* p,
                                                                              const Window& w,
                                                                              const Padded& g) {
  const int64_t rows = std::min(w.H, g.Hp - w.pt);
  for (int64_t ph = 0; ph < g.S; ++ph) {
    // Parts' columns q whose input column q * S + ph - pl lies inside [0, W): [qlo, qhi).
    const int64_t first = w.pl - ph, last = w.W - 1 + w.pl - ph;
    const int64_t qlo = std::min(g.Wq, first <= 0 ? 0 : (first + g.S - 1) / g.S);
    const int64_t qhi = std::max(qlo, std::min(g.Wq, last < 0 ? 0 : last / g.S + 1));
    if (qhi == qlo) continue;
    for (int64_t ih = 0; ih < rows; ++ih) {
      float* dst = g.at(p, ph, ih + w.pt);
      const float* src = x + ih * w.W + ph - w.pl;  // src[q * S] is part column q
      if (g.S == 1)
        copy_row(src + qlo, dst + qlo, qhi - qlo);
      else
        deinterleave(src, dst, qlo, qhi, last);
    }
  }
}

// A channel's epilogue in the forms the padded path specialises (the common
// ones: BN, BN + Relu, BN + Clip (ReLU6), BN + Swish, nothing): the affine
// step's scale and shift of the plane's channel held as scalars for the whole
// plane, the activation fixed at compile time; anything else runs the generic
// steps per vector. The same operations as epilogue_v16, value for value.
enum EpiForm { kEpiGeneric, kEpiNone, kEpiAffine, kEpiAffineRelu, kEpiAffineClip, kEpiAffineSwish };

struct PlaneEpi {
  const Epilogue::Step* steps;
  int nsteps;
  int64_t c;
  float sc, sh, lo, hi;  // the affine step's scale and shift of channel c; Clip's bounds
};

EpiForm epi_form(const Epilogue::Step* steps, int nsteps) {
  using ops::ActivationKind;
  if (nsteps == 0) return kEpiNone;
  if (steps[0].kind != Epilogue::kAffine || nsteps > 2) return kEpiGeneric;
  if (nsteps == 1) return kEpiAffine;
  const int k = steps[1].kind;
  return k == int(ActivationKind::Relu)   ? kEpiAffineRelu
         : k == int(ActivationKind::Clip) ? kEpiAffineClip
         : k == Epilogue::kSwish          ? kEpiAffineSwish
                                          : kEpiGeneric;
}

// Channel m's epilogue in form `form` (epi_form of e's steps) for the plane kernels.
PlaneEpi plane_epi(const Epilogue& e, EpiForm form, int64_t m) {
  const Epilogue::Step* st = e.steps().data();
  const int ns = int(e.steps().size());
  PlaneEpi pe{st, ns, m, 1.0f, 0.0f, 0.0f, 0.0f};
  if (form != kEpiGeneric && form != kEpiNone) {
    pe.sc = st[0].scale[size_t(m)];
    pe.sh = st[0].shift[size_t(m)];
    if (form == kEpiAffineClip) pe.lo = st[1].a, pe.hi = st[1].b;
  }
  return pe;
}

template <int E>
__attribute__((always_inline)) inline void plane_epilogue(v16& x, const PlaneEpi& pe) {
  if constexpr (E == kEpiGeneric) {
    epilogue_v16(x, pe.steps, pe.nsteps, pe.c);
  } else if constexpr (E != kEpiNone) {
    x = pe.sc * x + pe.sh;
    const v16 zero{};
    if constexpr (E == kEpiAffineRelu) x = x > zero ? x : zero;
    if constexpr (E == kEpiAffineClip) {
      const v16 vlo = zero + pe.lo, vhi = zero + pe.hi;
      x = x < vlo ? vlo : x;
      x = vhi < x ? vhi : x;
    }
    if constexpr (E == kEpiAffineSwish) {
      v16 sg = x;
      sigmoid_v16(sg);
      x = x * sg;
    }
  }
}

// R output rows from oh on, from the padded parts: each run of 16 outputs of a
// row summed over all K*K taps in registers (one sum per tap row, each in tap
// column order, then the tap rows' sums in order), the epilogue applied
// there; the rows share the loads of the padded rows they have in common
// (stride 1: R + K - 1 rows of loads for R rows of outputs, not R * K). The
// runs cover Wv >= Wo columns (the parts hold zeros past the input), and the
// columns past Wo are dropped: a run past Wo writes the next row's first
// columns, so the runs go from the last to the first, and the next row's
// first run, stored after, overwrites them (the plane's last run stops at its end).
template <int K, int S, int R, int E>
__attribute__((always_inline)) inline void padded_rows(const float* __restrict p, const float* wk,
                                                       float* __restrict out, int64_t oh, const Window& w,
                                                       const Padded& g, int64_t Wv, const PlaneEpi& pe) {
  constexpr int T = (R - 1) * S + K;  // padded rows read
  const float* rows[T][S];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
    for (int ph = 0; ph < S; ++ph) rows[t][ph] = p + (ph * g.Hp + oh * S + t) * g.Wq;
  for (int64_t v = Wv - kLanes; v >= 0; v -= kLanes) {
    v16 acc[R][K] = {};
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
      for (int j = 0; j < K; ++j) {
        v16 in;
        std::memcpy(&in, rows[t][j % S] + v + j / S, sizeof in);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const int i = t - r * S;
          if (i >= 0 && i < K) acc[r][i] += wk[i * K + j] * in;
        }
      }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int i = 1; i < K; ++i) acc[r][0] += acc[r][i];
      plane_epilogue<E>(acc[r][0], pe);
      float* orow = out + (oh + r) * w.Wo;
      if ((oh + r) * w.Wo + v + kLanes <= w.Ho * w.Wo) {
        std::memcpy(orow + v, &acc[r][0], sizeof acc[r][0]);
      } else {
        float last[kLanes];
        std::memcpy(last, &acc[r][0], sizeof acc[r][0]);
        for (int64_t k = 0; k < w.Wo - v; ++k) orow[v + k] = last[k];
      }
    }
  }
}

// Output plane from the padded parts, 3x3 two rows at a time (padded_rows;
// 5x5 one: two rows' 10 sums and the 25 weights spilled registers, slower
// than one row on 14x14 and 28x28 planes), the epilogue of channel c (form
// E) applied in registers: no second pass over the plane.
template <int K, int S, int E>
__attribute__((target_clones("avx512f", "avx2", "default"))) void padded_plane(
    const float* __restrict p, const float* __restrict wm, float* __restrict out, const Window& w,
    const Padded& g, int64_t Wv, const PlaneEpi& pe) {
  float wk[K * K];
  for (int t = 0; t < K * K; ++t) wk[t] = wm[t];
  int64_t oh = 0;
  if constexpr (K == 3)
    for (; oh + 2 <= w.Ho; oh += 2) padded_rows<K, S, 2, E>(p, wk, out, oh, w, g, Wv, pe);
  for (; oh < w.Ho; ++oh) padded_rows<K, S, 1, E>(p, wk, out, oh, w, g, Wv, pe);
}

template <int K, int S>
void padded_plane_epi(const float* p, const float* wm, float* out, const Window& w, const Padded& g,
                      int64_t Wv, EpiForm form, const PlaneEpi& pe) {
  switch (form) {
    case kEpiNone:
      return padded_plane<K, S, kEpiNone>(p, wm, out, w, g, Wv, pe);
    case kEpiAffine:
      return padded_plane<K, S, kEpiAffine>(p, wm, out, w, g, Wv, pe);
    case kEpiAffineRelu:
      return padded_plane<K, S, kEpiAffineRelu>(p, wm, out, w, g, Wv, pe);
    case kEpiAffineClip:
      return padded_plane<K, S, kEpiAffineClip>(p, wm, out, w, g, Wv, pe);
    case kEpiAffineSwish:
      return padded_plane<K, S, kEpiAffineSwish>(p, wm, out, w, g, Wv, pe);
    default:
      return padded_plane<K, S, kEpiGeneric>(p, wm, out, w, g, Wv, pe);
  }
}

// The strips (see the header): KxK convs (3 or 5) at stride S (1 or 2)
// padded by K / 2 at the top and left, on AVX-512.
inline __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

struct StripMasks {
  __mmask16 m0, m1, m2, mp;  // input columns b.., b + 16.., b + 32.. inside the row; b - 16.. (b > 0)
};

// t[j]: tap column j (input columns b + S * l + j - K / 2 for the lanes l) of
// input row ih (zeros outside the plane); the loads at b - 16 read from pb.
template <int K, int S>
__attribute__((target("avx512f"), always_inline)) inline void strip_row(const float* x, int64_t ih, int64_t H,
                                                                        int64_t W, int64_t b, int64_t pb,
                                                                        const StripMasks& mk, __m512* t,
                                                                        const float* pf) {
  constexpr int h = K / 2;
  const __mmask16 m0 = mk.m0, m1 = mk.m1, mp = mk.mp;
  const __m512i z = _mm512_setzero_si512();
  const __m512i even_idx = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd_idx = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  // lane 0: the second source's lane 14; lane l > 0: the first source's lane l - 1
  const __m512i prev2_idx = _mm512_set_epi32(14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 30);
  if (ih < 0 || ih >= H) {
    for (int j = 0; j < K; ++j) t[j] = _mm512_setzero_ps();
    return;
  }
  const float* r = x + ih * W;
  if (pf) {
    // The columns of this row that the next strip (or the next plane's
    // first one) reads: on large planes they come from L3.
    _mm_prefetch(reinterpret_cast<const char*>(pf + ih * W), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(pf + ih * W + kLanes), _MM_HINT_T0);
  }
  const __m512 p = _mm512_maskz_loadu_ps(mp, r + pb);
  const __m512i pi = _mm512_castps_si512(p);
  if constexpr (S == 1) {
    const __m512 c = _mm512_maskz_loadu_ps(m0, r + b);
    const __m512 n = _mm512_maskz_loadu_ps(m1, r + b + kLanes);
    const __m512i ci = _mm512_castps_si512(c), ni = _mm512_castps_si512(n);
    t[h] = c;
    // lane l: c[l - d] (from p below lane d); c[l + d] (from n past lane 15 - d)
    t[h - 1] = _mm512_castsi512_ps(_mm512_mask_alignr_epi32(z, 0xFFFF, ci, pi, 15));
    t[h + 1] = _mm512_castsi512_ps(_mm512_mask_alignr_epi32(z, 0xFFFF, ni, ci, 1));
    if constexpr (K == 5) {
      t[0] = _mm512_castsi512_ps(_mm512_mask_alignr_epi32(z, 0xFFFF, ci, pi, 14));
      t[4] = _mm512_castsi512_ps(_mm512_mask_alignr_epi32(z, 0xFFFF, ni, ci, 2));
    }
  } else {
    const __m512 a = _mm512_maskz_loadu_ps(m0, r + b);
    const __m512 a2 = _mm512_maskz_loadu_ps(m1, r + b + kLanes);
    const __m512 ev = _mm512_permutex2var_ps(a, even_idx, a2);  // columns b + 2l
    const __m512 od = _mm512_permutex2var_ps(a, odd_idx, a2);   // b + 2l + 1
    t[h] = ev;
    t[h + 1] = od;
    // b + 2l - 1: lane 0 from p's lane 15
    t[h - 1] = _mm512_castsi512_ps(_mm512_mask_alignr_epi32(z, 0xFFFF, _mm512_castps_si512(od), pi, 15));
    if constexpr (K == 5) {
      t[0] = _mm512_permutex2var_ps(ev, prev2_idx, p);  // b + 2l - 2
      // b + 2l + 2: lane 15 the column b + 32
      const __m512 n = _mm512_maskz_loadu_ps(mk.m2 & 1, r + b + 2 * kLanes);
      t[4] = _mm512_castsi512_ps(
          _mm512_mask_alignr_epi32(z, 0xFFFF, _mm512_castps_si512(n), _mm512_castps_si512(ev), 1));
    }
  }
}

// FRUGAL_CPU_DW_PREFETCH=0: no prefetch of the next strip's columns (for comparison).
const bool prefetch_strips = !switched_off("FRUGAL_CPU_DW_PREFETCH");

// Output plane out (Ho x Wo) from input plane x (H x W), weights wm [K * K],
// in strips of 16 output columns: t[i] holds the tap columns of the input row
// under tap row i of the current output row; each output row shifts S rows
// out and loads S new ones (the first loads K - S more).
template <int K, int S, int E>
__attribute__((target("avx512f"))) void strip_plane(const float* __restrict x, const float* __restrict wm,
                                                    float* __restrict out, const Window& w,
                                                    const PlaneEpi& pe) {
  constexpr int h = K / 2;
  const int64_t H = w.H, W = w.W, Ho = w.Ho, Wo = w.Wo;
  float wk[K * K];
  for (int t = 0; t < K * K; ++t) wk[t] = wm[t];
  for (int64_t ow0 = 0; ow0 < Wo; ow0 += kLanes) {
    const int64_t b = ow0 * S;  // the input column under the strip's first output (tap column h)
    const __mmask16 mo = lanes_below(Wo - ow0);
    // The vector of 16 input columns from b, the ones before it and after it.
    const __mmask16 m0 = lanes_below(W - b), m1 = lanes_below(W - b - 16), m2 = lanes_below(W - b - 32);
    const __mmask16 mp = b > 0 ? __mmask16(0xFFFF) : __mmask16(0);
    const int64_t pb = b > 0 ? b - kLanes : 0;  // (read only when b > 0)
    const StripMasks mk{m0, m1, m2, mp};
    // The columns the strip after this one reads first (stride 1: its right
    // neighbours; stride 2: its first two vectors), or the next plane's first ones.
    const float* pf = !prefetch_strips ? nullptr : b + 2 * kLanes < W ? x + b + 2 * kLanes : x + H * W;
    __m512 t[K][K];
    for (int i = 0; i < K - S; ++i)
      strip_row<K, S>(x, i - h, H, W, b, pb, mk, t[i + S], pf);  // rows of output row -1's taps S..K-1
    for (int64_t oh = 0; oh < Ho; ++oh) {
#pragma GCC unroll 8
      for (int i = 0; i < K - S; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < K; ++j) t[i][j] = t[i + S][j];
#pragma GCC unroll 2
      for (int i = K - S; i < K; ++i) strip_row<K, S>(x, oh * S - h + i, H, W, b, pb, mk, t[i], pf);
      __m512 s[K];
#pragma GCC unroll 8
      for (int i = 0; i < K; ++i) {
        s[i] = _mm512_mul_ps(_mm512_set1_ps(wk[i * K]), t[i][0]);
#pragma GCC unroll 8
        for (int j = 1; j < K; ++j) s[i] = _mm512_fmadd_ps(_mm512_set1_ps(wk[i * K + j]), t[i][j], s[i]);
      }
#pragma GCC unroll 8
      for (int i = 1; i < K; ++i) s[0] = _mm512_add_ps(s[0], s[i]);
      v16 y;
      std::memcpy(&y, &s[0], sizeof y);
      plane_epilogue<E>(y, pe);
      __m512 st;
      std::memcpy(&st, &y, sizeof st);
      _mm512_mask_storeu_ps(out + oh * Wo + ow0, mo, st);
    }
  }
}

template <int K, int S>
void strip_plane_epi(const float* x, const float* wm, float* out, const Window& w, EpiForm form,
                     const PlaneEpi& pe) {
  switch (form) {
    case kEpiNone:
      return strip_plane<K, S, kEpiNone>(x, wm, out, w, pe);
    case kEpiAffine:
      return strip_plane<K, S, kEpiAffine>(x, wm, out, w, pe);
    case kEpiAffineRelu:
      return strip_plane<K, S, kEpiAffineRelu>(x, wm, out, w, pe);
    case kEpiAffineClip:
      return strip_plane<K, S, kEpiAffineClip>(x, wm, out, w, pe);
    case kEpiAffineSwish:
      return strip_plane<K, S, kEpiAffineSwish>(x, wm, out, w, pe);
    default:
      return strip_plane<K, S, kEpiGeneric>(x, wm, out, w, pe);
  }
}

// r[0..16) transposed in place (r[i][j] and r[j][i] swapped): four rounds of
// two-register shuffles, round d swapping the off-diagonal d x d blocks of
// every 2d x 2d block.
inline void transpose16(v16* r) {
  for (int i = 0; i < 16; ++i)
    if (!(i & 8)) {
      const v16 a = r[i], b = r[i + 8];
      r[i] = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      r[i + 8] = __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    }
  for (int i = 0; i < 16; ++i)
    if (!(i & 4)) {
      const v16 a = r[i], b = r[i + 4];
      r[i] = __builtin_shufflevector(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
      r[i + 4] = __builtin_shufflevector(a, b, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    }
  for (int i = 0; i < 16; ++i)
    if (!(i & 2)) {
      const v16 a = r[i], b = r[i + 2];
      r[i] = __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      r[i + 2] = __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    }
  for (int i = 0; i < 16; i += 2) {
    const v16 a = r[i], b = r[i + 1];
    r[i] = __builtin_shufflevector(a, b, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
    r[i + 1] = __builtin_shufflevector(a, b, 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  }
}

// The channel-interleaved path, for planes whose rows fill few lanes: 16
// channels at a time, lane l of every vector channel m0 + l.
//
// Fills the interleaved padded buffer p ([Hp, Wp, 16]; padded (r, c) is input
// (r - pt, c - pl), its padding zero already) from the `cnt` <= 16 input
// planes src[l] (lanes past cnt get zeros): 16 pixels of the 16 planes
// transposed in registers, one vector store per pixel.
__attribute__((target_clones("avx512f", "avx2", "default"))) void fill_interleaved(
    const float* const* src, int cnt, float* __restrict p, const Window& w, int64_t Hp, int64_t Wp) {
  const int64_t P = w.H * w.W;
  v16 r[kLanes];
  int64_t ih = 0, iw = 0;  // pixel p0 + k's row and column
  for (int64_t p0 = 0; p0 < P; p0 += kLanes) {
    const int64_t n = std::min<int64_t>(kLanes, P - p0);
    // Whole vectors by a fixed-size copy (inlined), the plane's last few
    // pixels one by one: a copy of variable size was a call into libc's
    // memcpy per plane and vector, as long as the sums themselves on 7x7 planes.
    for (int l = 0; l < int(kLanes); ++l) {
      r[l] = v16{};
      if (l >= cnt) continue;
      if (n == kLanes)
        std::memcpy(&r[l], src[l] + p0, sizeof r[l]);
      else
        for (int64_t k = 0; k < n; ++k) r[l][k] = src[l][p0 + k];
    }
    transpose16(r);
    for (int64_t k = 0; k < n; ++k) {
      if (ih + w.pt < Hp && iw + w.pl < Wp)
        std::memcpy(p + ((ih + w.pt) * Wp + iw + w.pl) * kLanes, &r[k], sizeof r[k]);
      if (++iw == w.W) iw = 0, ++ih;
    }
  }
}

// Output planes dst[l] (l < cnt) from the interleaved buffer: every output
// pixel summed over all K*K taps in 16 lanes (weights wk [K*K, 16]), the
// epilogue applied per lane (affine step k's scales and shifts sc[k], sh[k]),
// 16 pixels at a time transposed back to the planes in registers.
template <int K, int S>
__attribute__((target_clones("avx512f", "avx2", "default"))) void interleaved_planes(
    const float* __restrict p, const float* __restrict wk, float* const* dst, int cnt, const Window& w,
    int64_t Wp, const Epilogue::Step* steps, int nsteps, const float* sc, const float* sh) {
  v16 wv[K * K];
  for (int t = 0; t < K * K; ++t) std::memcpy(&wv[t], wk + t * kLanes, sizeof wv[t]);
  const int64_t P = w.Ho * w.Wo;
  v16 r[kLanes];
  int64_t oh = 0, ow = 0;
  for (int64_t p0 = 0; p0 < P; p0 += kLanes) {
    const int64_t n = std::min<int64_t>(kLanes, P - p0);
    for (int64_t k = 0; k < kLanes; ++k) {
      if (k >= n) {
        r[k] = v16{};
        continue;
      }
      const float* base = p + (oh * S * Wp + ow * S) * kLanes;
      v16 acc[K] = {};  // one sum per tap row: K short dependency chains
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) {
          v16 in;
          std::memcpy(&in, base + (i * Wp + j) * kLanes, sizeof in);
          acc[i] += wv[i * K + j] * in;
        }
      for (int i = 1; i < K; ++i) acc[0] += acc[i];
      epilogue_steps_v16(acc[0], steps, nsteps, [&](v16& v, int s) {
        v16 a, b;
        std::memcpy(&a, sc + s * kLanes, sizeof a);
        std::memcpy(&b, sh + s * kLanes, sizeof b);
        v = a * v + b;
      });
      r[k] = acc[0];
      if (++ow == w.Wo) ow = 0, ++oh;
    }
    transpose16(r);
    for (int l = 0; l < cnt; ++l)
      if (n == kLanes)
        std::memcpy(dst[l] + p0, &r[l], sizeof r[l]);
      else
        for (int64_t k = 0; k < n; ++k) dst[l][p0 + k] = r[l][k];
  }
}

}  // namespace

namespace {

// [lo[j], hi[j]): the output columns whose input column under kernel column j lies inside the input.
void valid_cols(const Window& w, std::vector<int64_t>& lo, std::vector<int64_t>& hi) {
  lo.resize(size_t(w.kw));
  hi.resize(size_t(w.kw));
  for (int64_t j = 0; j < w.kw; ++j) w.valid_cols(j, lo[size_t(j)], hi[size_t(j)]);
}

}  // namespace

DepthwiseConv::DepthwiseConv(const Window& w, int64_t C, int64_t M, std::vector<float> weights, int threads)
    : w_(w), C_(C), M_(M), threads_(threads), weight_(std::move(weights)) {
  valid_cols(w, lo_, hi_);
  const bool square = w.kh == w.kw && w.dh == 1 && w.dw == 1 && w.sh == w.sw;
  const int64_t half = w.kh / 2;
  // 3x3 and 5x5 at stride 1 or 2 padded by K / 2 at the top and left, on
  // AVX-512: strips (stride-1 planes at most kInterleaveMaxWo wide stay
  // interleaved below; stride-2 ones to them: prepare()).
  const bool strips = !switched_off("FRUGAL_CPU_DW_STRIPS") && square && (w.kh == 3 || w.kh == 5) &&
                      (w.sw == 1 || w.sw == 2) && w.pt == half && w.pl == half &&
                      packed_isa() == PackedIsa::Avx512;
  if (strips) {
    strips_ = true;  // no padded plane
  } else if (square && w.kh == 3 && w.sw == 2) {
    direct_3x3s2_ = true;
    zero_row_.assign(size_t(w.W + 4), 0.0f);  // rows above/below the input
  } else if (square && (w.kh == 3 || w.kh == 5) && (w.sw == 1 || w.sw == 2)) {
    K_ = int(w.kh);
    S_ = int(w.sw);
    Wv_ = (w.Wo + kLanes - 1) / kLanes * kLanes;
    Hp_ = (w.Ho - 1) * S_ + K_;
    Wq_ = Wv_ + (K_ - 1) / S_;
  }
  if (!switched_off("FRUGAL_CPU_DW_INTERLEAVE") && square && (w.kh == 3 || w.kh == 5) &&
      (w.sw == 1 || w.sw == 2) && w.Wo <= kInterleaveMaxWo) {
    // Small planes: 16 channels in the lanes (see the header).
    direct_3x3s2_ = false;
    strips_ = strips && w.sw == 2;  // both, until prepare() picks one
    K_ = int(w.kh);
    S_ = int(w.sw);
    interleaved_ = true;
    Hp_ = (w.Ho - 1) * S_ + K_;
    Wq_ = (w.Wo - 1) * S_ + K_;
    const int64_t taps = int64_t(K_) * K_, blocks = (M_ + kLanes - 1) / kLanes;
    weight_il_.assign(size_t(blocks * taps * kLanes), 0.0f);
    for (int64_t m = 0; m < M_; ++m)
      for (int64_t t = 0; t < taps; ++t)
        weight_il_[size_t(((m / kLanes) * taps + t) * kLanes + m % kLanes)] = weight_[size_t(m * taps + t)];
  }
}

void DepthwiseConv::prepare(const Epilogue& e) {
  if (!interleaved_ || !strips_) return;
  const EpiForm form = epi_form(e.steps().data(), int(e.steps().size()));
  if (form == kEpiAffineSwish || form == kEpiGeneric)
    strips_ = false;  // 16 channels' sigmoids per vector, not 7 columns'
  else
    interleaved_ = false, K_ = S_ = 0, Hp_ = Wq_ = 0;  // no workspace
}

uint64_t DepthwiseConv::workspace_bytes(int64_t n) const {
  const int64_t units = interleaved_ ? n * ((M_ + kLanes - 1) / kLanes) : n * M_;
  const int64_t buffers = std::max<int64_t>(1, std::min<int64_t>(threads_, units));
  return uint64_t(buffers * plane_floats()) * sizeof(float);
}

std::string DepthwiseConv::algorithm() const {
  return interleaved_ ? "depthwise interleaved"
         : strips_    ? "depthwise strips"
         : K_         ? "depthwise padded"
                      : "depthwise direct";
}

// One output plane (channel m) from input plane x with weights wm; ws: one
// padded plane. The padded path applies the epilogue too; the others leave it to run().
void DepthwiseConv::plane(const float* x, float* out, const float* wm, float* ws, const Epilogue& e,
                          int64_t m) const {
  if (strips_) {
    const EpiForm form = epi_form(e.steps().data(), int(e.steps().size()));
    const PlaneEpi pe = plane_epi(e, form, m);
    if (w_.kh == 3)
      (w_.sw == 1 ? strip_plane_epi<3, 1> : strip_plane_epi<3, 2>)(x, wm, out, w_, form, pe);
    else
      (w_.sw == 1 ? strip_plane_epi<5, 1> : strip_plane_epi<5, 2>)(x, wm, out, w_, form, pe);
    return;
  }
  if (!K_) {
    if (direct_3x3s2_)  // columns [a, b) have all 3 taps inside the input
      depthwise_kxk_plane<3, 2>(x, wm, out, w_, zero_row_.data(), *std::max_element(lo_.begin(), lo_.end()),
                                *std::min_element(hi_.begin(), hi_.end()));
    else
      tap_by_tap_plane(x, wm, out, w_, lo_.data(), hi_.data());
    return;
  }
  const Padded g{Hp_, Wq_, S_};
  fill_padded(x, ws, w_, g);
  const EpiForm form = epi_form(e.steps().data(), int(e.steps().size()));
  const PlaneEpi pe = plane_epi(e, form, m);
  if (K_ == 3 && S_ == 1)
    padded_plane_epi<3, 1>(ws, wm, out, w_, g, Wv_, form, pe);
  else if (K_ == 3)
    padded_plane_epi<3, 2>(ws, wm, out, w_, g, Wv_, form, pe);
  else if (S_ == 1)
    padded_plane_epi<5, 1>(ws, wm, out, w_, g, Wv_, form, pe);
  else
    padded_plane_epi<5, 2>(ws, wm, out, w_, g, Wv_, form, pe);
}

// Output channel m reads input channel m / (M / C). Planes in ranges, one
// padded plane per participant (slot < min(threads, planes)).
void DepthwiseConv::run(const float* x, float* y, int64_t n, float* ws, const Epilogue& epilogue,
                        ThreadPool* pool) const {
  const int64_t mult = M_ / C_, in_plane = w_.H * w_.W, out_plane = w_.Ho * w_.Wo, planes = n * M_;
  const int64_t ws_floats = plane_floats(), taps = w_.kh * w_.kw;
  if (interleaved_) {
    run_interleaved(x, y, n, ws, epilogue, pool);
    return;
  }
  auto range = [&](int64_t p0, int64_t p1, float* buf) {
    if (K_) std::memset(buf, 0, sizeof(float) * size_t(ws_floats));  // the padding, for all its planes
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t s = p / M_, m = p % M_;
      float* out = y + p * out_plane;
      plane(x + (s * C_ + m / mult) * in_plane, out, weight_.data() + m * taps, buf, epilogue, m);
      if (!K_ && !strips_) epilogue.apply(out, m, out_plane);
    }
  };
  if (!pool || pool->size() == 1 || planes == 1) {
    range(0, planes, ws);
    return;
  }
  const int64_t items = std::min<int64_t>(planes, 4 * pool->size());
  pool->parallel_for(items, [&](int64_t it, int slot) {
    range(planes * it / items, planes * (it + 1) / items, ws + slot * ws_floats);
  });
}

// Blocks of 16 output channels (the last one cnt < 16), one interleaved
// padded buffer per participant.
void DepthwiseConv::run_interleaved(const float* x, float* y, int64_t n, float* ws, const Epilogue& epilogue,
                                    ThreadPool* pool) const {
  const int64_t mult = M_ / C_, in_plane = w_.H * w_.W, out_plane = w_.Ho * w_.Wo;
  const int64_t blocks = (M_ + kLanes - 1) / kLanes, units = n * blocks, taps = int64_t(K_) * K_;
  const int64_t ws_floats = plane_floats();
  const Epilogue::Step* st = epilogue.steps().data();
  const int ns = int(epilogue.steps().size());
  auto range = [&](int64_t u0, int64_t u1, float* buf) {
    std::memset(buf, 0, sizeof(float) * size_t(ws_floats));               // the padding, for all its blocks
    std::vector<float> sc(size_t(ns * kLanes)), sh(size_t(ns * kLanes));  // [step, lane]
    const float* src[kLanes];
    float* dst[kLanes];
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t s = u / blocks, m0 = (u % blocks) * kLanes;
      const int cnt = int(std::min<int64_t>(kLanes, M_ - m0));
      for (int l = 0; l < cnt; ++l) {
        src[l] = x + (s * C_ + (m0 + l) / mult) * in_plane;
        dst[l] = y + (s * M_ + m0 + l) * out_plane;
      }
      for (int k = 0; k < ns; ++k) {
        if (st[k].kind != Epilogue::kAffine) continue;
        for (int l = 0; l < int(kLanes); ++l) {
          sc[size_t(k * kLanes + l)] = l < cnt ? st[k].scale[size_t(m0 + l)] : 0.0f;
          sh[size_t(k * kLanes + l)] = l < cnt ? st[k].shift[size_t(m0 + l)] : 0.0f;
        }
      }
      fill_interleaved(src, cnt, buf, w_, Hp_, Wq_);
      const float* wk = weight_il_.data() + (m0 / kLanes) * taps * kLanes;
      if (K_ == 3 && S_ == 1)
        interleaved_planes<3, 1>(buf, wk, dst, cnt, w_, Wq_, st, ns, sc.data(), sh.data());
      else if (K_ == 3)
        interleaved_planes<3, 2>(buf, wk, dst, cnt, w_, Wq_, st, ns, sc.data(), sh.data());
      else if (S_ == 1)
        interleaved_planes<5, 1>(buf, wk, dst, cnt, w_, Wq_, st, ns, sc.data(), sh.data());
      else
        interleaved_planes<5, 2>(buf, wk, dst, cnt, w_, Wq_, st, ns, sc.data(), sh.data());
    }
  };
  if (!pool || pool->size() == 1 || units == 1) {
    range(0, units, ws);
    return;
  }
  const int64_t items = std::min<int64_t>(units, 4 * pool->size());
  pool->parallel_for(items, [&](int64_t it, int slot) {
    range(units * it / items, units * (it + 1) / items, ws + slot * ws_floats);
  });
}

}  // namespace frugal::cpu
