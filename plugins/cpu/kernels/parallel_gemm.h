// sgemm split over the executor's threads. OpenBLAS itself runs single-threaded
// (the executor sets it to 1 thread): its own worker threads spin for a long
// while after each call and then fight the kernels' OpenMP threads for the
// cores, which on a busy machine made multi-threaded runs several times slower
// than single-threaded ones. So every parallel part of the executor is OpenMP,
// and each thread calls sgemm on its own block of C.
#pragma once

#include <cstdint>

namespace frugal::cpu {

// C[M,N] = alpha * op(A) op(B) + beta * C (row-major, like cblas_sgemm), split by
// rows of C (or by columns when rows are few), one single-threaded sgemm per thread.
void parallel_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads);

}  // namespace frugal::cpu
