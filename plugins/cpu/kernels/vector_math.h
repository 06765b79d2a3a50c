// Activations over arrays that the compiler vectorises: an exp of ~1 ulp built
// from float arithmetic only (std::exp is one libm call per value, and Sigmoid
// with it was the largest share of EfficientNet-B0's time), compiled for
// AVX-512 and AVX2 as well as the default target, chosen at run time (the
// build does not assume the machine's instruction set).
#pragma once

#include <cstdint>

namespace frugal::cpu {

// x[i] = 1 / (1 + exp(-x[i])): relative error below 1e-6 for x >= -87, and
// below 1e-38 absolute under that (exp's argument is clamped to [-87.3, 88.7],
// which keeps every intermediate a normal float); NaN stays NaN.
void sigmoid_inplace(float* x, int64_t n);
// x[i] = x[i] * sigmoid(x[i]) (Swish, SiLU), with the same sigmoid.
void swish_inplace(float* x, int64_t n);
// x[i] = scale * x[i] + shift (a channel's BatchNormalization or bias).
void affine_inplace(float* x, int64_t n, float scale, float shift);
// Both in one pass: Relu(scale * x[i] + shift) (a conv's bias or BatchNormalization, then Relu).
void affine_relu_inplace(float* x, int64_t n, float scale, float shift);
// x[i] = x[i] > 0 ? x[i] : 0 (Relu), and min(max(x[i], lo), hi) (Clip).
void relu_inplace(float* x, int64_t n);
void clip_inplace(float* x, int64_t n, float lo, float hi);
// The sum of x[0..n) in double precision, 16 partial sums at a time (a
// GlobalAveragePool: the one double chain ran at a tenth of ONNX Runtime's rate).
double sum_floats(const float* x, int64_t n);
// y[i] = x[2 * i] for i < n: an im2col row of a stride-2 conv (the stems).
void copy_stride2(float* y, const float* x, int64_t n);

// A gated Gemm's active rows of weights (kernels/gated_gemm.cpp) for several samples, each
// row read once for all: for each sample s < g with on[s * on_stride] set, y[s * ldy + j] +=
// sum over r < nrows of a[s * lda + r] * rows[r * ld + j], for j < n.
void add_scaled_rows(float* y, int64_t ldy, const float* rows, int64_t ld, const float* a, int64_t lda,
                     const uint8_t* on, int64_t on_stride, int64_t g, int64_t nrows, int64_t n);

}  // namespace frugal::cpu
