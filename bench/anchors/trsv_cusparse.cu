/* SPDX-License-Identifier: BSD-3-Clause */
/* cuSPARSE anchor of `bsrsolve bench trsv` (issue 6): bsrsv2 (k = 1) or
 * bsrsm2 (k > 1) on the same ILU factors, L then U.  cuSPARSE wants U with
 * its pivot blocks as they are (not inverted): they are inverted back on the
 * host; L's unit diagonal is its diag type (no diagonal blocks stored).
 * Only the solves are timed; the analysis of both triangles is reported. */
#define DISABLE_CUSPARSE_DEPRECATED
#include "trsv_cuda.h"
#include "bench_fail.h"
#include "anchors.h"
#include <cusparse.h>
#include <math.h>
#include <string.h>

/* Invert the b x b row-major block a in place (Gauss-Jordan, partial pivoting);
 * 0 if singular. */
static int invert_block(double *a, int b)
{
    double inv[TRSV_MAXB * TRSV_MAXB], m[TRSV_MAXB * TRSV_MAXB];
    memcpy(m, a, sizeof(double) * b * b);
    for (int i = 0; i < b * b; i++) inv[i] = 0;
    for (int i = 0; i < b; i++) inv[i * b + i] = 1;
    for (int c = 0; c < b; c++) {
        int piv = c;
        for (int r = c + 1; r < b; r++) if (fabs(m[r * b + c]) > fabs(m[piv * b + c])) piv = r;
        if (m[piv * b + c] == 0) return 0;
        for (int j = 0; j < b; j++) {
            double t = m[c * b + j]; m[c * b + j] = m[piv * b + j]; m[piv * b + j] = t;
            t = inv[c * b + j]; inv[c * b + j] = inv[piv * b + j]; inv[piv * b + j] = t;
        }
        double d = 1.0 / m[c * b + c];
        for (int j = 0; j < b; j++) { m[c * b + j] *= d; inv[c * b + j] *= d; }
        for (int r = 0; r < b; r++) {
            if (r == c) continue;
            double f = m[r * b + c];
            if (f == 0) continue;
            for (int j = 0; j < b; j++) { m[r * b + j] -= f * m[c * b + j]; inv[r * b + j] -= f * inv[c * b + j]; }
        }
    }
    memcpy(a, inv, sizeof(double) * b * b);
    return 1;
}

/* One precision: T = double or float, P = D or S in cuSPARSE's names (one
 * macro writes both specializations: they differ only in those). */
template <typename T> struct cs;
#define CS_PRECISION(T, P)                                                                                          \
    template <> struct cs<T> {                                                                                      \
        static cusparseStatus_t sv_buf(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o, int mb,   \
                                       int nnzb, cusparseMatDescr_t ds, T *v, const int *rp, const int *ci, int b, \
                                       bsrsv2Info_t i, int *bs)                                                     \
        { return cusparse##P##bsrsv2_bufferSize(h, d, o, mb, nnzb, ds, v, rp, ci, b, i, bs); }                     \
        static cusparseStatus_t sv_ana(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o, int mb,   \
                                       int nnzb, cusparseMatDescr_t ds, const T *v, const int *rp, const int *ci,  \
                                       int b, bsrsv2Info_t i, cusparseSolvePolicy_t p, void *buf)                   \
        { return cusparse##P##bsrsv2_analysis(h, d, o, mb, nnzb, ds, v, rp, ci, b, i, p, buf); }                   \
        static cusparseStatus_t sv_solve(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o, int mb, \
                                         int nnzb, cusparseMatDescr_t ds, const T *v, const int *rp, const int *ci, \
                                         int b, bsrsv2Info_t i, const T *x, T *y, cusparseSolvePolicy_t p,         \
                                         void *buf)                                                                 \
        {                                                                                                           \
            const T one = 1;                                                                                        \
            return cusparse##P##bsrsv2_solve(h, d, o, mb, nnzb, &one, ds, v, rp, ci, b, i, x, y, p, buf);          \
        }                                                                                                           \
        static cusparseStatus_t sm_buf(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o,           \
                                       cusparseOperation_t ox, int mb, int n, int nnzb, cusparseMatDescr_t ds,     \
                                       T *v, const int *rp, const int *ci, int b, bsrsm2Info_t i, int *bs)          \
        { return cusparse##P##bsrsm2_bufferSize(h, d, o, ox, mb, n, nnzb, ds, v, rp, ci, b, i, bs); }              \
        static cusparseStatus_t sm_ana(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o,           \
                                       cusparseOperation_t ox, int mb, int n, int nnzb, cusparseMatDescr_t ds,     \
                                       const T *v, const int *rp, const int *ci, int b, bsrsm2Info_t i,            \
                                       cusparseSolvePolicy_t p, void *buf)                                          \
        { return cusparse##P##bsrsm2_analysis(h, d, o, ox, mb, n, nnzb, ds, v, rp, ci, b, i, p, buf); }            \
        static cusparseStatus_t sm_solve(cusparseHandle_t h, cusparseDirection_t d, cusparseOperation_t o,         \
                                         cusparseOperation_t ox, int mb, int n, int nnzb, cusparseMatDescr_t ds,   \
                                         const T *v, const int *rp, const int *ci, int b, bsrsm2Info_t i,          \
                                         const T *x, int ldx, T *y, int ldy, cusparseSolvePolicy_t p, void *buf)   \
        {                                                                                                           \
            const T one = 1;                                                                                        \
            return cusparse##P##bsrsm2_solve(h, d, o, ox, mb, n, nnzb, &one, ds, v, rp, ci, b, i, x, ldx, y, ldy, \
                                             p, buf);                                                               \
        }                                                                                                           \
    };
CS_PRECISION(double, D)
CS_PRECISION(float, S)
#undef CS_PRECISION

template <typename T>
static bsr_status cs_time(const bsr_ilu_factors *F, int k, int reps, int level_policy, bsr_trsv_cusparse *r)
{
    const bsr_matrix *L = F->L, *U = F->U;
    const int n = L->nbrows, b = L->b, bb = b * b;
    const cusparseDirection_t dir = CUSPARSE_DIRECTION_ROW;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    /* row-interleaved n*b x k = column-major k x n*b: op(X) = X^T with ld = k */
    const cusparseOperation_t opx = CUSPARSE_OPERATION_TRANSPOSE;
    const cusparseSolvePolicy_t pol = level_policy ? CUSPARSE_SOLVE_POLICY_USE_LEVEL : CUSPARSE_SOLVE_POLICY_NO_LEVEL;
    cusparseHandle_t h = NULL;
    cusparseMatDescr_t dL = NULL, dU = NULL;
    bsrsv2Info_t vL = NULL, vU = NULL;
    bsrsm2Info_t mL = NULL, mU = NULL;
    int *rpL = NULL, *ciL = NULL, *rpU = NULL, *ciU = NULL, sL = 0, sU = 0, pos = -1;
    T *vaL = NULL, *vaU = NULL, *x = NULL, *t = NULL, *y = NULL, *hu = NULL, *hx = NULL;
    void *buf = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *ms = NULL;
    const size_t vlen = (size_t)n * b * k;
    r->ok = 0;
    r->why[0] = 0;
    /* U with its pivots as cuSPARSE wants them */
    hu = (T *)malloc(sizeof(T) * (size_t)(U->nnzb ? U->nnzb : 1) * bb);
    hx = (T *)malloc(sizeof(T) * (vlen ? vlen : 1));
    ms = (double *)malloc(sizeof(double) * reps);
    if (!hu || !hx || !ms) CS_FAIL("out of host memory");
    memcpy(hu, U->val, sizeof(T) * (size_t)U->nnzb * bb);
    for (int i = 0; i < n; i++) {
        double blk[TRSV_MAXB * TRSV_MAXB];
        T *d = hu + (size_t)U->rowptr[i] * bb;
        for (int e = 0; e < bb; e++) blk[e] = d[e];
        if (!invert_block(blk, b)) CS_FAIL("U pivot block of row %d is singular", i);
        for (int e = 0; e < bb; e++) d[e] = (T)blk[e];
    }
    for (size_t e = 0; e < vlen; e++) hx[e] = (T)(((e * 2654435761u) % 2001) / 1000.0 - 1.0);
    CS_CU(bsr_cu_malloc(&rpL, sizeof(int) * (n + 1)));
    CS_CU(bsr_cu_malloc(&rpU, sizeof(int) * (n + 1)));
    CS_CU(bsr_cu_malloc(&ciL, sizeof(int) * (L->nnzb ? L->nnzb : 1)));
    CS_CU(bsr_cu_malloc(&ciU, sizeof(int) * (U->nnzb ? U->nnzb : 1)));
    CS_CU(bsr_cu_malloc(&vaL, sizeof(T) * (size_t)(L->nnzb ? L->nnzb : 1) * bb));
    CS_CU(bsr_cu_malloc(&vaU, sizeof(T) * (size_t)(U->nnzb ? U->nnzb : 1) * bb));
    CS_CU(bsr_cu_malloc(&x, sizeof(T) * (vlen ? vlen : 1)));
    CS_CU(bsr_cu_malloc(&t, sizeof(T) * (vlen ? vlen : 1)));
    CS_CU(bsr_cu_malloc(&y, sizeof(T) * (vlen ? vlen : 1)));
    CS_CU(cudaMemcpy(rpL, L->rowptr, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(rpU, U->rowptr, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(ciL, L->colind, sizeof(int) * L->nnzb, cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(ciU, U->colind, sizeof(int) * U->nnzb, cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(vaL, L->val, sizeof(T) * (size_t)L->nnzb * bb, cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(vaU, hu, sizeof(T) * (size_t)U->nnzb * bb, cudaMemcpyHostToDevice));
    CS_CU(cudaMemcpy(x, hx, sizeof(T) * vlen, cudaMemcpyHostToDevice));
    CS_SP(cusparseCreate(&h));
    CS_SP(cusparseCreateMatDescr(&dL));
    CS_SP(cusparseCreateMatDescr(&dU));
    CS_SP(cusparseSetMatFillMode(dL, CUSPARSE_FILL_MODE_LOWER));
    CS_SP(cusparseSetMatDiagType(dL, CUSPARSE_DIAG_TYPE_UNIT));
    CS_SP(cusparseSetMatFillMode(dU, CUSPARSE_FILL_MODE_UPPER));
    CS_SP(cusparseSetMatDiagType(dU, CUSPARSE_DIAG_TYPE_NON_UNIT));
    CS_CU(cudaEventCreate(&e0));
    CS_CU(cudaEventCreate(&e1));
    if (k == 1) {
        CS_SP(cusparseCreateBsrsv2Info(&vL));
        CS_SP(cusparseCreateBsrsv2Info(&vU));
        CS_SP(cs<T>::sv_buf(h, dir, op, n, L->nnzb, dL, vaL, rpL, ciL, b, vL, &sL));
        CS_SP(cs<T>::sv_buf(h, dir, op, n, U->nnzb, dU, vaU, rpU, ciU, b, vU, &sU));
    } else {
        CS_SP(cusparseCreateBsrsm2Info(&mL));
        CS_SP(cusparseCreateBsrsm2Info(&mU));
        CS_SP(cs<T>::sm_buf(h, dir, op, opx, n, k, L->nnzb, dL, vaL, rpL, ciL, b, mL, &sL));
        CS_SP(cs<T>::sm_buf(h, dir, op, opx, n, k, U->nnzb, dU, vaU, rpU, ciU, b, mU, &sU));
    }
    CS_CU(bsr_cu_malloc(&buf, (size_t)(sL > sU ? sL : sU) + 1));
    CS_CU(cudaDeviceSynchronize());
    cudaEventRecord(e0, 0);
    if (k == 1) {
        CS_SP(cs<T>::sv_ana(h, dir, op, n, L->nnzb, dL, vaL, rpL, ciL, b, vL, pol, buf));
        CS_SP(cs<T>::sv_ana(h, dir, op, n, U->nnzb, dU, vaU, rpU, ciU, b, vU, pol, buf));
    } else {
        CS_SP(cs<T>::sm_ana(h, dir, op, opx, n, k, L->nnzb, dL, vaL, rpL, ciL, b, mL, pol, buf));
        CS_SP(cs<T>::sm_ana(h, dir, op, opx, n, k, U->nnzb, dU, vaU, rpU, ciU, b, mU, pol, buf));
    }
    {
        float fa;
        CS_CU(bench_elapsed(e0, e1, &fa));
        r->ms_analysis = fa;
    }
    if (k == 1 && cusparseXbsrsv2_zeroPivot(h, vU, &pos) == CUSPARSE_STATUS_ZERO_PIVOT)
        CS_FAIL("cuSPARSE reports a zero pivot in U at block row %d", pos);
    for (int rep = -1; rep < reps; rep++) {
        cudaEventRecord(e0, 0);
        if (k == 1) {
            CS_SP(cs<T>::sv_solve(h, dir, op, n, L->nnzb, dL, vaL, rpL, ciL, b, vL, x, t, pol, buf));
            CS_SP(cs<T>::sv_solve(h, dir, op, n, U->nnzb, dU, vaU, rpU, ciU, b, vU, t, y, pol, buf));
        } else {
            CS_SP(cs<T>::sm_solve(h, dir, op, opx, n, k, L->nnzb, dL, vaL, rpL, ciL, b, mL, x, k, t, k, pol, buf));
            CS_SP(cs<T>::sm_solve(h, dir, op, opx, n, k, U->nnzb, dU, vaU, rpU, ciU, b, mU, t, k, y, k, pol, buf));
        }
        float f;
        CS_CU(bench_elapsed(e0, e1, &f));
        if (rep >= 0) ms[rep] = f;
    }
    r->ms_solve = bsr_median(ms, reps);
    r->ok = 1;
done:
    if (vL) cusparseDestroyBsrsv2Info(vL);
    if (vU) cusparseDestroyBsrsv2Info(vU);
    if (mL) cusparseDestroyBsrsm2Info(mL);
    if (mU) cusparseDestroyBsrsm2Info(mU);
    if (dL) cusparseDestroyMatDescr(dL);
    if (dU) cusparseDestroyMatDescr(dU);
    if (h) cusparseDestroy(h);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    bsr_cu_free(rpL); bsr_cu_free(rpU); bsr_cu_free(ciL); bsr_cu_free(ciU); bsr_cu_free(vaL); bsr_cu_free(vaU);
    bsr_cu_free(x); bsr_cu_free(t); bsr_cu_free(y); bsr_cu_free(buf);
    free(hu); free(hx); free(ms);
    return BSR_OK;
}

extern "C" bsr_status bsr_trsv_cusparse_time(const bsr_ilu_factors *F, int k, int reps, int level_policy,
                                             bsr_trsv_cusparse *r)
{
    BSR_CHECK_ARG(F && F->L && F->U && r && reps >= 1 && k >= 1, "bsr_trsv_cusparse_time: bad argument");
    memset(r, 0, sizeof *r);
    if (F->L->prec == BSR_DOUBLE) return cs_time<double>(F, k, reps, level_policy, r);
    return cs_time<float>(F, k, reps, level_policy, r);
}
