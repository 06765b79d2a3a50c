// sgemm split over the executor's threads. OpenBLAS itself runs single-threaded
// (the executor sets it to 1 thread): its own worker threads would spin after
// each call and fight the executor's threads for the cores (see thread_pool.h).
// Each participant calls sgemm on its own block of C. Callers may ask for
// oneDNN's sgemm instead (when the build has oneDNN): OpenBLAS 0.3.21 does not
// know recent AMD cores and runs its Haswell (AVX2) kernels on them, while
// oneDNN's run AVX-512 where the CPU has it (the gated Gemm's dense path,
// kernels/gated_gemm.cpp). Both run single-threaded per participant.
#pragma once

#include <cstdint>

#include "thread_pool.h"

namespace frugal::cpu {

// C[M,N] = alpha * op(A) op(B) + beta * C (row-major, like cblas_sgemm), split by
// rows of C (or by columns when rows are few), one single-threaded sgemm per block.
void parallel_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                    ThreadPool* pool, bool onednn = false);

}  // namespace frugal::cpu
