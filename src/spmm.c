/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU SpMM Y = alpha*A*X + beta*Y for BSR A and row-interleaved multivectors.
 * S1 (sequential) and OpenMP (row-parallel) run the same per-row code, so they
 * agree bit for bit; this is the reference every GPU kernel is tested against.
 * One vector runs a copy of the row code with b fixed (unrolled), same bits. */
#include "internal.h"
#include "blockops.h"
#include <string.h>

/* One block row: acc[r*k+j] = sum over blocks p of A_p(r,:) . X(col_p*b + :, j),
 * then Y row = alpha*acc + beta*Y (Y overwritten when beta == 0). */
#define DEFINE_SPMM_ROW(SUF, REAL)                                                          \
    static void spmm_row_##SUF(const bsr_matrix *A, int i, REAL alpha, const REAL *x,       \
                               REAL beta, REAL *y, int k)                                   \
    {                                                                                       \
        int b = A->b;                                                                       \
        double acc[BSR_MAX_BLOCK * 16];                                                     \
        const REAL *val = (const REAL *)A->val;                                             \
        for (int jj0 = 0; jj0 < k; jj0 += 16) {                                             \
            int kk = k - jj0 < 16 ? k - jj0 : 16;                                           \
            memset(acc, 0, sizeof(double) * (size_t)b * kk);                                \
            for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {                         \
                const REAL *blk = val + (size_t)p * b * b;                                  \
                const REAL *xb = x + (size_t)A->colind[p] * b * k + jj0;                    \
                for (int r = 0; r < b; r++)                                                 \
                    for (int c = 0; c < b; c++) {                                           \
                        double a = blk[r * b + c];                                          \
                        for (int j = 0; j < kk; j++) acc[r * kk + j] += a * xb[c * k + j];  \
                    }                                                                       \
            }                                                                               \
            REAL *yb = y + (size_t)i * b * k + jj0;                                         \
            for (int r = 0; r < b; r++)                                                     \
                for (int j = 0; j < kk; j++) {                                              \
                    double v = (double)alpha * acc[r * kk + j];                             \
                    yb[r * k + j] = beta == 0 ? (REAL)v : (REAL)(v + (double)beta * yb[r * k + j]); \
                }                                                                           \
        }                                                                                   \
    }                                                                                       \
    static void spmm_##SUF(const bsr_matrix *A, REAL alpha, const REAL *x, REAL beta,       \
                           REAL *y, int k, int parallel)                                    \
    {                                                                                       \
        const int par = parallel && bsr_par_worth((int64_t)A->nnzb * A->b * A->b * k);      \
        if (k == 1 && A->b <= BSR_MAX_BLOCK) {                                              \
            if (!spmm1_avx_##SUF(A, alpha, x, beta, y, par))                               \
                spmm1_##SUF##_tab[A->b - 1](A, alpha, x, beta, y, par);                     \
        } else if (par) {                                                                   \
            _Pragma("omp parallel for schedule(dynamic, 64) num_threads(bsr_team_size())")   \
            for (int i = 0; i < A->nbrows; i++) spmm_row_##SUF(A, i, alpha, x, beta, y, k); \
        } else {                                                                            \
            for (int i = 0; i < A->nbrows; i++) spmm_row_##SUF(A, i, alpha, x, beta, y, k); \
        }                                                                                   \
    }

/* The one-vector kernels fetch A's values SPMM_PF_BYTES ahead of the row
 * they multiply, into every cache level: *pf is the next byte offset not yet
 * fetched, row_at the row's first value byte, end the values' size.  The
 * hardware's stream prefetch alone left one thread short of memory (rows of
 * a few blocks each).  stencil3d SpMV, one thread, thread CPU time, this
 * loaded machine, distance 4 / 8 / 16 rows against none: b = 2 (224 bytes a
 * row) best at 8-16 rows, b = 4 (900) at 8, b = 5 (1400) at 4, hence a
 * distance in bytes.  A prefetch changes no result. */
#define SPMM_PF_BYTES 6144
static inline void spmm_pf_ahead(const void *val, size_t *pf, size_t row_at, size_t end)
{
#if defined(__GNUC__)
    size_t to = row_at + SPMM_PF_BYTES;
    if (to > end) to = end;
    if (*pf < row_at) *pf = row_at;
    for (; *pf < to; *pf += 64) __builtin_prefetch((const char *)val + *pf, 0, 3);
#else
    (void)val; (void)pf; (void)row_at; (void)end;
#endif
}

/* One vector (k = 1) with b = B fixed: spmm_row's sums (from +0, blocks in
 * stored order, each block's columns ascending, in double) with the row's B
 * accumulators in registers and the block product unrolled; same bits. */
#define DEFINE_SPMM1(SUF, REAL, B)                                                          \
    static void spmm1_##SUF##_##B(const bsr_matrix *A, REAL alpha, const REAL *x, REAL beta, \
                                  REAL *y, int par)                                         \
    {                                                                                       \
        const int *restrict rowptr = A->rowptr, *restrict colind = A->colind;               \
        const REAL *restrict val = (const REAL *)A->val;                                    \
        const size_t end_ = (size_t)A->nnzb * (B * B) * sizeof(REAL);                       \
        size_t pf_ = 0;                                                                     \
        _Pragma("omp parallel for schedule(dynamic, 64) if (par) firstprivate(pf_) num_threads(bsr_team_size())") \
        for (int i = 0; i < A->nbrows; i++) {                                               \
            spmm_pf_ahead(val, &pf_, (size_t)rowptr[i] * (B * B) * sizeof(REAL), end_);     \
            double acc[B];                                                                  \
            for (int r = 0; r < B; r++) acc[r] = 0.0;                                       \
            for (int p = rowptr[i]; p < rowptr[i + 1]; p++) {                               \
                const REAL *blk = val + (size_t)p * (B * B);                                \
                const REAL *xb = x + (size_t)colind[p] * B;                                 \
                double v[B];                                                                \
                BSR_BLK_UNROLL for (int c = 0; c < B; c++) v[c] = xb[c];                       \
                BSR_BLK_UNROLL for (int r = 0; r < B; r++)                                     \
                    BSR_BLK_UNROLL for (int c = 0; c < B; c++) acc[r] += (double)blk[r * B + c] * v[c]; \
            }                                                                               \
            REAL *yb = y + (size_t)i * B;                                                   \
            for (int r = 0; r < B; r++) {                                                   \
                double w = (double)alpha * acc[r];                                          \
                yb[r] = beta == 0 ? (REAL)w : (REAL)(w + (double)beta * yb[r]);             \
            }                                                                               \
        }                                                                                   \
    }
#define SPMM1_D(B) DEFINE_SPMM1(d, double, B)

/* b = 4, double, one vector, where the processor has AVX: the row's four
 * accumulators in one register, each block transposed in registers so that
 * column c multiplies x_c in all four rows at once.  Each acc_r still adds
 * a_r0 x_0, a_r1 x_1, a_r2 x_2, a_r3 x_3 in that order, each product and sum
 * rounded (no fused multiply-add), so the bits are spmm1_d_4's (test_spmm_cpu
 * compares them with the generic loops).  stencil3d:64:4, one thread, thread
 * CPU time: 15.9-17.5 ms against 18.3-19.9 ms. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define SPMM_AVX4 1
/* Row i of the product (the AVX part: its own function, as OpenMP's
 * outlined loop body would not inherit a target attribute under clang). */
__attribute__((target("avx"))) static void spmm1_d_4_avx_row(const int *restrict rowptr, const int *restrict colind,
                                                              const double *restrict val, int i, double alpha,
                                                              const double *x, double beta, double *y)
{
    __m256d acc = _mm256_setzero_pd();
    for (int p = rowptr[i]; p < rowptr[i + 1]; p++) {
        const double *blk = val + (size_t)p * 16, *xb = x + (size_t)colind[p] * 4;
        const __m256d r0 = _mm256_loadu_pd(blk), r1 = _mm256_loadu_pd(blk + 4);
        const __m256d r2 = _mm256_loadu_pd(blk + 8), r3 = _mm256_loadu_pd(blk + 12);
        const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_broadcast_sd(xb)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t1, t3, 0x20), _mm256_broadcast_sd(xb + 1)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t0, t2, 0x31), _mm256_broadcast_sd(xb + 2)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t1, t3, 0x31), _mm256_broadcast_sd(xb + 3)));
    }
    double a[4];
    _mm256_storeu_pd(a, acc);
    double *yb = y + (size_t)i * 4;
    for (int r = 0; r < 4; r++) {
        double w = alpha * a[r];
        yb[r] = beta == 0 ? w : w + beta * yb[r];
    }
}

/* b = 5, double, one vector, with AVX: rows 0-3 in one register as b = 4
 * does (the block's left 4 x 4 part transposed in registers, its fifth
 * column gathered), row 4 in a scalar; each row still adds a_r0 x_0 ..
 * a_r4 x_4 in that order, each product and sum rounded: spmm1_d_5's bits. */
__attribute__((target("avx"))) static void spmm1_d_5_avx_row(const int *restrict rowptr, const int *restrict colind,
                                                              const double *restrict val, int i, double alpha,
                                                              const double *x, double beta, double *y)
{
    __m256d acc = _mm256_setzero_pd();
    double acc4 = 0.0;
    for (int p = rowptr[i]; p < rowptr[i + 1]; p++) {
        const double *blk = val + (size_t)p * 25, *xb = x + (size_t)colind[p] * 5;
        const __m256d r0 = _mm256_loadu_pd(blk), r1 = _mm256_loadu_pd(blk + 5);
        const __m256d r2 = _mm256_loadu_pd(blk + 10), r3 = _mm256_loadu_pd(blk + 15);
        const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        const __m256d c4 = _mm256_set_pd(blk[19], blk[14], blk[9], blk[4]);
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_broadcast_sd(xb)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t1, t3, 0x20), _mm256_broadcast_sd(xb + 1)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t0, t2, 0x31), _mm256_broadcast_sd(xb + 2)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_permute2f128_pd(t1, t3, 0x31), _mm256_broadcast_sd(xb + 3)));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(c4, _mm256_broadcast_sd(xb + 4)));
        for (int c = 0; c < 5; c++) acc4 += blk[20 + c] * xb[c];
    }
    double a[5];
    _mm256_storeu_pd(a, acc);
    a[4] = acc4;
    double *yb = y + (size_t)i * 5;
    for (int r = 0; r < 5; r++) {
        double w = alpha * a[r];
        yb[r] = beta == 0 ? w : w + beta * yb[r];
    }
}

/* The AVX rows of b = B (4 or 5) over A's block rows, A's values fetched
 * ahead as the unrolled kernels do. */
#define DEFINE_SPMM1_AVX(B)                                                                 \
    static void spmm1_d_##B##_avx(const bsr_matrix *A, double alpha, const double *x, double beta, \
                                  double *y, int par)                                       \
    {                                                                                       \
        const int *restrict rowptr = A->rowptr, *restrict colind = A->colind;               \
        const double *restrict val = (const double *)A->val;                                \
        const size_t end = (size_t)A->nnzb * (B * B) * sizeof(double);                      \
        size_t pf = 0;                                                                      \
        _Pragma("omp parallel for schedule(dynamic, 64) if (par) firstprivate(pf) num_threads(bsr_team_size())") \
        for (int i = 0; i < A->nbrows; i++) {                                               \
            spmm_pf_ahead(val, &pf, (size_t)rowptr[i] * (B * B) * sizeof(double), end);     \
            spmm1_d_##B##_avx_row(rowptr, colind, val, i, alpha, x, beta, y);               \
        }                                                                                   \
    }
DEFINE_SPMM1_AVX(4)
DEFINE_SPMM1_AVX(5)
#endif
#define SPMM1_F(B) DEFINE_SPMM1(f, float, B)
BSR_FOR_EACH_B(SPMM1_D)
BSR_FOR_EACH_B(SPMM1_F)
#define SPMM1_ENTRY_D(B) spmm1_d_##B,
#define SPMM1_ENTRY_F(B) spmm1_f_##B,
typedef void spmm1_fn_d(const bsr_matrix *, double, const double *, double, double *, int);
typedef void spmm1_fn_f(const bsr_matrix *, float, const float *, float, float *, int);
static spmm1_fn_d *const spmm1_d_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(SPMM1_ENTRY_D)};
static spmm1_fn_f *const spmm1_f_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(SPMM1_ENTRY_F)};

/* The AVX kernels of b = 4 and 5 in double where they apply (1: done). */
static int spmm1_avx_d(const bsr_matrix *A, double alpha, const double *x, double beta, double *y, int par)
{
#if defined(SPMM_AVX4)
    if ((A->b == 4 || A->b == 5) && bsr_cpu_avx()) {
        if (A->b == 4) spmm1_d_4_avx(A, alpha, x, beta, y, par);
        else spmm1_d_5_avx(A, alpha, x, beta, y, par);
        return 1;
    }
#endif
    (void)A; (void)alpha; (void)x; (void)beta; (void)y; (void)par;
    return 0;
}
/* (none in float) */
static int spmm1_avx_f(const bsr_matrix *A, float alpha, const float *x, float beta, float *y, int par)
{
    (void)A; (void)alpha; (void)x; (void)beta; (void)y; (void)par;
    return 0;
}

DEFINE_SPMM_ROW(d, double)
DEFINE_SPMM_ROW(f, float)

/* Shape and precision checks shared by CPU and GPU SpMM entry points. */
bsr_status bsr_spmm_check(const char *fn, const bsr_matrix *A, const bsr_multivec *X,
                          const bsr_multivec *Y)
{
    if (!A || !X || !Y) return bsr_error(BSR_ERR_ARG, "%s: NULL argument", fn);
    if (X == Y) return bsr_error(BSR_ERR_ARG, "%s: X and Y must not alias", fn);
    if (X->n != (int64_t)A->nbcols * A->b || Y->n != (int64_t)A->nbrows * A->b)
        return bsr_error(BSR_ERR_SIZE, "%s: A is %lld x %lld but X has %lld rows and Y %lld", fn,
                         (long long)A->nbrows * A->b, (long long)A->nbcols * A->b,
                         (long long)X->n, (long long)Y->n);
    if (X->k != Y->k) return bsr_error(BSR_ERR_SIZE, "%s: X has %d vectors, Y %d", fn, X->k, Y->k);
    if (X->prec != A->prec || Y->prec != A->prec)
        return bsr_error(BSR_ERR_ARG, "%s: A, X and Y must have the same precision", fn);
    return BSR_OK;
}

/* Y = alpha A X + beta Y on the CPU with the chosen kernel (S1 sequential or OpenMP). */
bsr_status bsr_spmm_cpu(bsr_spmm_kernel kernel, double alpha, const bsr_matrix *A,
                        const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    BSR_TRY(bsr_spmm_check("bsr_spmm_cpu", A, X, Y));
    if (!X->data || !Y->data || !(X->where & BSR_ON_HOST) || !(Y->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "bsr_spmm_cpu: X and Y must be current on the host");
    int par = kernel != BSR_SPMM_S1;
    if (A->prec == BSR_DOUBLE) spmm_d(A, alpha, X->data, beta, Y->data, X->k, par);
    else spmm_f(A, (float)alpha, X->data, (float)beta, Y->data, X->k, par);
    return BSR_OK;
}

/* Y = alpha A X + beta Y with the default kernel (BSR_SPMM_AUTO). */
bsr_status bsr_spmm(double alpha, const bsr_matrix *A, const bsr_multivec *X, double beta,
                    bsr_multivec *Y)
{
    return bsr_spmm_cpu(BSR_SPMM_AUTO, alpha, A, X, beta, Y);
}
