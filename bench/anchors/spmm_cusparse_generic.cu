/* SPDX-License-Identifier: BSD-3-Clause */
/* Anchors of `bench spmm` stronger than the deprecated bsrmv/bsrmm (issue 22):
 * cuSPARSE's generic API on the same product Y = A X, with a BSR descriptor
 * of A as it is (CUSPARSE_SPMV_BSR_ALG1 at k = 1, CUSPARSE_SPMM_BSR_ALG1
 * above) and with A's scalar CSR form (built on the device, outside the
 * timing).  X and Y are our row-interleaved multivectors, i.e. row-major
 * dense matrices with ld = k: read and written in place when cuSPARSE takes
 * that layout; otherwise through column-major copies outside the timed region
 * (the algorithm name then says so).  Every algorithm that applies is timed
 * and the fastest reported; Y receives its result for the caller's check. */
#include "cuda_internal.h"
#include "anchors.h"
#include <algorithm>
#include <string.h>

/* Scalar CSR of the BSR matrix (row-major blocks): row R = i*b + r holds, for
 * each block p of block row i in order, the b entries of the block's row r. */
template <typename T>
__global__ void bsr_to_csr_kernel(int nb, int b, const int *__restrict__ brp, const int *__restrict__ bci,
                                  const T *__restrict__ bval, int *__restrict__ rp, int *__restrict__ ci,
                                  T *__restrict__ val)
{
    const int64_t R = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (R >= (int64_t)nb * b) return;
    const int i = (int)(R / b), r = (int)(R - (int64_t)i * b);
    const int p0 = brp[i], len = brp[i + 1] - p0;
    const int64_t start = (int64_t)p0 * b * b + (int64_t)r * len * b;
    rp[R] = (int)start;
    if (R == (int64_t)nb * b - 1) rp[R + 1] = (int)((int64_t)brp[nb] * b * b);
    int64_t q = start;
    for (int p = p0; p < p0 + len; p++)
        for (int c = 0; c < b; c++, q++) {
            ci[q] = bci[p] * b + c;
            val[q] = bval[(size_t)p * b * b + r * b + c];
        }
}

struct gen_arg {
    cusparseHandle_t h;
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t x, y;   /* k = 1 */
    cusparseDnMatDescr_t X, Y;   /* k > 1 */
    cudaDataType dt;
    int alg;
    void *buf;
    int ok;
};

/* One product with the chosen algorithm (alpha = 1, beta = 0). */
static bsr_status gen_once(void *p)
{
    gen_arg *g = (gen_arg *)p;
    double one_d = 1, zero_d = 0;
    float one_f = 1, zero_f = 0;
    const void *one = g->dt == CUDA_R_64F ? (const void *)&one_d : (const void *)&one_f;
    const void *zero = g->dt == CUDA_R_64F ? (const void *)&zero_d : (const void *)&zero_f;
    if (g->x)
        CUSP_TRY(cusparseSpMV(g->h, CUSPARSE_OPERATION_NON_TRANSPOSE, one, g->A, g->x, zero, g->y, g->dt,
                              (cusparseSpMVAlg_t)g->alg, g->buf));
    else
        CUSP_TRY(cusparseSpMM(g->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, one, g->A,
                              g->X, zero, g->Y, g->dt, (cusparseSpMMAlg_t)g->alg, g->buf));
    return BSR_OK;
}

/* Workspace size of algorithm g->alg, or a cuSPARSE status (not supported). */
static cusparseStatus_t gen_bufsize(gen_arg *g, size_t *bytes)
{
    double one_d = 1, zero_d = 0;
    float one_f = 1, zero_f = 0;
    const void *one = g->dt == CUDA_R_64F ? (const void *)&one_d : (const void *)&one_f;
    const void *zero = g->dt == CUDA_R_64F ? (const void *)&zero_d : (const void *)&zero_f;
    if (g->x)
        return cusparseSpMV_bufferSize(g->h, CUSPARSE_OPERATION_NON_TRANSPOSE, one, g->A, g->x, zero, g->y, g->dt,
                                       (cusparseSpMVAlg_t)g->alg, bytes);
    return cusparseSpMM_bufferSize(g->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, one,
                                   g->A, g->X, zero, g->Y, g->dt, (cusparseSpMMAlg_t)g->alg, bytes);
}

typedef struct { int alg; const char *name; } alg_name;
static const alg_name spmv_bsr[] = {{CUSPARSE_SPMV_BSR_ALG1, "SpMV BSR_ALG1"}, {CUSPARSE_SPMV_ALG_DEFAULT, "SpMV DEFAULT"}};
static const alg_name spmv_csr[] = {{CUSPARSE_SPMV_CSR_ALG1, "SpMV CSR_ALG1"}, {CUSPARSE_SPMV_CSR_ALG2, "SpMV CSR_ALG2"}};
static const alg_name spmm_bsr[] = {{CUSPARSE_SPMM_BSR_ALG1, "SpMM BSR_ALG1"}, {CUSPARSE_SPMM_ALG_DEFAULT, "SpMM DEFAULT"}};
static const alg_name spmm_csr[] = {{CUSPARSE_SPMM_CSR_ALG1, "SpMM CSR_ALG1"}, {CUSPARSE_SPMM_CSR_ALG2, "SpMM CSR_ALG2"},
                                    {CUSPARSE_SPMM_CSR_ALG3, "SpMM CSR_ALG3"}};

/* Time every algorithm of list (n entries) on g; the best into *ms / name.
 * Returns the number that ran. */
static int time_algs(bsr_context *ctx, gen_arg *g, const alg_name *list, int n, int warm, int reps, double *ms,
                     char *name, size_t nlen, const char *suffix)
{
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    int ran = 0;
    if (!t) return 0;
    for (int a = 0; a < n; a++) {
        g->alg = list[a].alg;
        size_t bytes = 0;
        if (gen_bufsize(g, &bytes) != CUSPARSE_STATUS_SUCCESS) continue;
        void *buf = NULL;
        if (bsr_cu_malloc(&buf, bytes ? bytes : 8) != cudaSuccess) { cudaGetLastError(); continue; }
        g->buf = buf;
        if (bsr_cuda_time(ctx, gen_once, g, warm, reps, t) == BSR_OK) {
            std::sort(t, t + reps);
            if (!ran || t[reps / 2] < *ms) {
                *ms = t[reps / 2];
                snprintf(name, nlen, "%s%s", list[a].name, suffix);
            }
            ran++;
        }
        cudaStreamSynchronize(bsr_cuda_stream(ctx));
        bsr_cu_free(buf);
        g->buf = NULL;
    }
    free(t);
    return ran;
}

/* g's dense X (cols x k) and Y (rows x k) over x and y: row-major with
 * leading dimension k (our layout), or column-major copies (colmajor). */
static bsr_status dense_pair(gen_arg *g, int64_t rows, int64_t cols, int k, void *x, void *y, int colmajor)
{
    const cusparseOrder_t ord = colmajor ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
    cusparseStatus_t cs;
    if ((cs = cusparseCreateDnMat(&g->X, cols, k, colmajor ? cols : k, x, g->dt, ord)) != CUSPARSE_STATUS_SUCCESS ||
        (cs = cusparseCreateDnMat(&g->Y, rows, k, colmajor ? rows : k, y, g->dt, ord)) != CUSPARSE_STATUS_SUCCESS)
        return bsr_cusparse_fail(cs, "cusparseCreateDnMat", __FILE__, __LINE__);
    return BSR_OK;
}

/* time_algs over the SpMM algorithms of A's format (CSR: 3, BSR: 2). */
static int time_spmm(bsr_context *ctx, gen_arg *g, int csr, int warm, int reps, double *ms, char *name, size_t nlen,
                     const char *suffix)
{
    return csr ? time_algs(ctx, g, spmm_csr, 3, warm, reps, ms, name, nlen, suffix)
               : time_algs(ctx, g, spmm_bsr, 2, warm, reps, ms, name, nlen, suffix);
}

extern "C" bsr_status bsr_cuda_cusparse_generic_bench(bsr_context *ctx, int csr, const bsr_matrix *A,
                                                      const bsr_multivec *X, bsr_multivec *Y, int warm, int reps,
                                                      double *ms, char *name, size_t nlen)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    if (!bsr_matrix_on_device(A) || !bsr_multivec_on_device(X) || !Y->dev)
        return bsr_error(BSR_ERR_ARG, "bsr_cuda_cusparse_generic_bench: A, X and Y must be on the device");
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    const int nb = A->nbrows, b = A->b, k = X->k;
    const int64_t rows = (int64_t)nb * b, cols = (int64_t)A->nbcols * b, nnz = (int64_t)A->nnzb * b * b;
    const size_t es = bsr_precision_size(A->prec);
    const cudaDataType dt = A->prec == BSR_DOUBLE ? CUDA_R_64F : CUDA_R_32F;
    if (csr && nnz > 2147483647LL) return bsr_error(BSR_ERR_UNSUPPORTED, "generic cuSPARSE CSR: more than 2^31 entries");
    cudaStream_t st = bsr_cuda_stream(ctx);
    int *rp = NULL, *ci = NULL;
    void *cv = NULL, *xc = NULL, *yc = NULL;
    gen_arg g;
    memset(&g, 0, sizeof g);
    g.h = bsr_cuda_cusparse(ctx);
    g.dt = dt;
    bsr_status s = BSR_OK;
    cusparseStatus_t cs;
    int ran = 0;
    void *x = bsr_cuda_multivec_data(X), *y = bsr_cuda_multivec_data(Y);
    name[0] = 0;
    if (csr) {
        if (bsr_cu_malloc(&rp, (size_t)(rows + 1) * sizeof(int)) != cudaSuccess ||
            bsr_cu_malloc(&ci, (size_t)(nnz ? nnz : 1) * sizeof(int)) != cudaSuccess ||
            bsr_cu_malloc(&cv, (size_t)(nnz ? nnz : 1) * es) != cudaSuccess) {
            cudaGetLastError();
            s = bsr_error(BSR_ERR_NOMEM, "generic cuSPARSE CSR: no device memory for the CSR form of A");
            goto done;
        }
        if (rows) {
            unsigned nblk = (unsigned)((rows + 255) / 256);
            if (A->prec == BSR_DOUBLE)
                bsr_to_csr_kernel<double><<<nblk, 256, 0, st>>>(nb, b, d->rowptr, d->colind, (const double *)d->val, rp, ci, (double *)cv);
            else
                bsr_to_csr_kernel<float><<<nblk, 256, 0, st>>>(nb, b, d->rowptr, d->colind, (const float *)d->val, rp, ci, (float *)cv);
            if (cudaGetLastError() != cudaSuccess) { s = bsr_error(BSR_ERR_CUDA, "generic cuSPARSE CSR: conversion kernel"); goto done; }
        }
        cs = cusparseCreateCsr(&g.A, rows, cols, nnz, rp, ci, cv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_BASE_ZERO, dt);
    } else {
        cs = cusparseCreateBsr(&g.A, nb, A->nbcols, A->nnzb, b, b, d->rowptr, d->colind, d->val, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt, CUSPARSE_ORDER_ROW);
    }
    if (cs != CUSPARSE_STATUS_SUCCESS) { s = bsr_cusparse_fail(cs, csr ? "cusparseCreateCsr" : "cusparseCreateBsr", __FILE__, __LINE__); goto done; }
    if (k == 1) {
        if ((cs = cusparseCreateDnVec(&g.x, cols, x, dt)) != CUSPARSE_STATUS_SUCCESS ||
            (cs = cusparseCreateDnVec(&g.y, rows, y, dt)) != CUSPARSE_STATUS_SUCCESS) {
            s = bsr_cusparse_fail(cs, "cusparseCreateDnVec", __FILE__, __LINE__);
            goto done;
        }
        ran = csr ? time_algs(ctx, &g, spmv_csr, 2, warm, reps, ms, name, nlen, "")
                  : time_algs(ctx, &g, spmv_bsr, 2, warm, reps, ms, name, nlen, "");
    } else {
        /* row-major in place first (our layout) */
        if ((s = dense_pair(&g, rows, cols, k, x, y, 0))) goto done;
        ran = time_spmm(ctx, &g, csr, warm, reps, ms, name, nlen, " (row-major)");
        if (!ran) {
            /* column-major copies, converted outside the timing */
            cusparseDestroyDnMat(g.X);
            cusparseDestroyDnMat(g.Y);
            g.X = g.Y = NULL;
            if (bsr_cu_malloc(&xc, (size_t)cols * k * es) != cudaSuccess || bsr_cu_malloc(&yc, (size_t)rows * k * es) != cudaSuccess) {
                cudaGetLastError();
                s = bsr_error(BSR_ERR_NOMEM, "generic cuSPARSE: column-major copies");
                goto done;
            }
            if ((s = bsr_cuda_to_colmajor(ctx, X->prec, cols, k, x, xc))) goto done;
            if ((s = dense_pair(&g, rows, cols, k, xc, yc, 1))) goto done;
            ran = time_spmm(ctx, &g, csr, warm, reps, ms, name, nlen, " (column-major copies)");
            /* Y = the result of the last algorithm timed */
            if (ran && (s = bsr_cuda_from_colmajor(ctx, Y->prec, rows, k, yc, y))) goto done;
        }
    }
    if (!ran) s = bsr_error(BSR_ERR_UNSUPPORTED, "generic cuSPARSE %s: no algorithm accepted this product (b = %d, k = %d)",
                            csr ? "CSR" : "BSR", b, k);
    else Y->where = BSR_ON_DEVICE;
done:
    cudaStreamSynchronize(st);
    if (g.x) cusparseDestroyDnVec(g.x);
    if (g.y) cusparseDestroyDnVec(g.y);
    if (g.X) cusparseDestroyDnMat(g.X);
    if (g.Y) cusparseDestroyDnMat(g.Y);
    if (g.A) cusparseDestroySpMat(g.A);
    bsr_cu_free(rp); bsr_cu_free(ci); bsr_cu_free(cv); bsr_cu_free(xc); bsr_cu_free(yc);
    return s;
}
