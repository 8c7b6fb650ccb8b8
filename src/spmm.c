/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU SpMM Y = alpha*A*X + beta*Y for BSR A and row-interleaved multivectors.
 * S1 (sequential) and OpenMP (row-parallel) run the same per-row code, so they
 * agree bit for bit; this is the reference every GPU kernel is tested against.
 * One vector runs a copy of the row code with b fixed (unrolled), same bits. */
#include "internal.h"
#include "blockops.h"
#include <string.h>

/* Rows a thread takes at a time from the parallel loops: at least 64, and
 * enough for about SPMM_CHUNK_BYTES of A's values and column indices, so
 * that short rows (b = 1: 7 entries, 84 bytes) do not make the team contend
 * for the loop's counter once every 64 rows (4M rows: 64k grabs a product).
 * Each row is computed alone: the chunk changes no result. */
#define SPMM_CHUNK_BYTES 32768
static int spmm_chunk(const bsr_matrix *A, size_t real)
{
    const double row = A->nbrows ? (double)A->nnzb * ((double)A->b * A->b * real + sizeof(int)) / A->nbrows : 1;
    const double c = SPMM_CHUNK_BYTES / (row > 1 ? row : 1);
    return c > 64 ? (c < 1 << 20 ? (int)c : 1 << 20) : 64;
}

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
            const int chunk_ = spmm_chunk(A, sizeof(REAL));                                 \
            _Pragma("omp parallel for schedule(dynamic, chunk_) num_threads(bsr_team_size())") \
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
        const int chunk_ = spmm_chunk(A, sizeof(REAL));                                     \
        _Pragma("omp parallel for schedule(dynamic, chunk_) if (par) firstprivate(pf_) num_threads(bsr_team_size())") \
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

/* b = 4 and 5, double, one vector, where the processor has AVX: rows 0-3 of
 * the block row's sums in one register, each block's columns from
 * bsr_blk_cols_avx so that column c multiplies x_c in four rows at once, row
 * 4 (b = 5) in a scalar.  Each acc_r still adds a_r0 x_0, a_r1 x_1, ... in
 * that order, each product and sum rounded (no fused multiply-add), so the
 * bits are spmm1_d_B's (test_spmm_cpu compares them with the generic loops).
 * stencil3d:64:4, one thread, thread CPU time: 15.9-17.5 ms against
 * 18.3-19.9 ms; stencil3d:64:5 against PETSc's MatMult: 1.29 -> 0.94 of its
 * time (bench/RESULTS.md). */
#if defined(BSR_BLK_AVX_COLS)
#define SPMM_AVX 1
/* Row i of the product (the AVX part: its own function, as OpenMP's
 * outlined loop body would not inherit a target attribute under clang). */
#define DEFINE_SPMM1_AVX_ROW(B)                                                             \
    __attribute__((target("avx"))) static void spmm1_d_##B##_avx_row(                      \
        const int *restrict rowptr, const int *restrict colind, const double *restrict val, \
        int i, double alpha, const double *x, double beta, double *y)                       \
    {                                                                                       \
        __m256d acc = _mm256_setzero_pd(), c[5];                                            \
        double a[5], acc4 = 0.0;                                                            \
        for (int p = rowptr[i]; p < rowptr[i + 1]; p++) {                                   \
            const double *blk = val + (size_t)p * (B * B), *xb = x + (size_t)colind[p] * B; \
            bsr_blk_cols_avx(blk, B, c);                                                    \
            BSR_BLK_UNROLL for (int q = 0; q < B; q++)                                      \
                acc = _mm256_add_pd(acc, _mm256_mul_pd(c[q], _mm256_broadcast_sd(xb + q)));  \
            if (B == 5)                                                                     \
                BSR_BLK_UNROLL for (int q = 0; q < 5; q++) acc4 += blk[20 + q] * xb[q];     \
        }                                                                                   \
        _mm256_storeu_pd(a, acc);                                                           \
        a[4] = acc4;                                                                        \
        double *yb = y + (size_t)i * B;                                                     \
        for (int r = 0; r < B; r++) {                                                       \
            double w = alpha * a[r];                                                        \
            yb[r] = beta == 0 ? w : w + beta * yb[r];                                       \
        }                                                                                   \
    }
DEFINE_SPMM1_AVX_ROW(4)
DEFINE_SPMM1_AVX_ROW(5)

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
        const int chunk = spmm_chunk(A, sizeof(double));                                    \
        _Pragma("omp parallel for schedule(dynamic, chunk) if (par) firstprivate(pf) num_threads(bsr_team_size())") \
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
#if defined(SPMM_AVX)
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
