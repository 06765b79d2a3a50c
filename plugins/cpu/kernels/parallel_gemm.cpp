#include "kernels/parallel_gemm.h"

#include <cblas.h>

#include <algorithm>

#ifdef FRUGAL_HAVE_DNNL
#include <omp.h>

#include <dnnl.hpp>
#endif

namespace frugal::cpu {

namespace {

void sgemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc, bool onednn) {
  if (M <= 0 || N <= 0) return;
#ifdef FRUGAL_HAVE_DNNL
  if (onednn && K > 0) {
    // One thread: no OpenMP team inside the executor's pool (as kernels/conv_onednn.cpp).
    const int prev = omp_get_max_threads();
    if (prev != 1) omp_set_num_threads(1);
    dnnl::sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (prev != 1) omp_set_num_threads(prev);
    return;
  }
#else
  (void)onednn;
#endif
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N),
              int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

}  // namespace

void parallel_sgemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
                    ThreadPool* pool, bool onednn) {
  const double flops = 2.0 * double(M) * double(N) * double(K);
  int parts = pool ? pool->size() : 1;
  if (flops < 2e6) parts = 1;  // too small to share
  const bool by_rows = M >= 16 * parts || M >= N;
  parts = int(std::min<int64_t>(parts, by_rows ? M : N));
  if (parts <= 1) {
    sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, onednn);
    return;
  }
  const int64_t total = by_rows ? M : N;
  pool->parallel_for(parts, [&](int64_t p, int) {
    const int64_t lo = total * p / parts, hi = total * (p + 1) / parts;
    if (by_rows) {  // rows [lo, hi) of op(A) and C
      const float* a = ta ? A + lo : A + lo * lda;
      sgemm(ta, tb, hi - lo, N, K, alpha, a, lda, B, ldb, beta, C + lo * ldc, ldc, onednn);
    } else {  // columns [lo, hi) of op(B) and C
      const float* b = tb ? B + lo * ldb : B + lo;
      sgemm(ta, tb, M, hi - lo, K, alpha, A, lda, b, ldb, beta, C + lo, ldc, onednn);
    }
  });
}

}  // namespace frugal::cpu
