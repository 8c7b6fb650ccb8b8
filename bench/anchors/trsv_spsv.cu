/* SPDX-License-Identifier: BSD-3-Clause */
/* Anchor of `bench trsv` stronger than the deprecated bsrsv2/bsrsm2 (issue 22):
 * cuSPARSE's generic triangular solve (cusparseSpSV at k = 1, cusparseSpSM
 * above) on the scalar CSR form of the same block ILU factors.
 *
 * In scalar terms L (unit lower, strict blocks) is unit lower triangular, but
 * U = D + U_off is not triangular (its diagonal blocks are dense).  With
 * U = D (I + D^-1 U_off), the solve U z = y is z = Uh^-1 (D^-1 y) where
 * Uh = I + D^-1 U_off is unit upper triangular in scalar terms.  So one apply
 * is SpSV(L), a product with the block diagonal D^-1 (cusparseSpMV/SpMM on its
 * CSR form) and SpSV(Uh); the factors are converted on the host and the
 * solves' analysis timed apart, as for bsrsv2.  The result is checked against
 * the host solve (bsr_trsv_lower/upper). */
#include "trsv_cuda.h"
#include "bench_fail.h"
#include "anchors.h"
#include <math.h>
#include <string.h>

/* Host scalar CSR of a block triangle.  lower: L's strict blocks as they are;
 * else the off-diagonal blocks of U premultiplied by the row's inverted pivot
 * (Uh's strict part), the pivot (first block) skipped; diag: the inverted
 * pivots alone (the block diagonal D^-1). */
template <typename T>
static int to_csr(const bsr_matrix *M, int lower, int diag, int *rp, int *ci, T *v)
{
    const int n = M->nbrows, b = M->b, bb = b * b;
    const T *val = (const T *)M->val;
    int64_t q = 0;
    rp[0] = 0;
    for (int i = 0; i < n; i++) {
        const int p0 = M->rowptr[i] + (lower ? 0 : 1), p1 = diag ? p0 : M->rowptr[i + 1];
        const T *dinv = lower ? NULL : val + (size_t)M->rowptr[i] * bb;
        for (int r = 0; r < b; r++) {
            if (diag)
                for (int c = 0; c < b; c++) { ci[q] = i * b + c; v[q++] = dinv[r * b + c]; }
            for (int p = p0; p < p1; p++) {
                const T *blk = val + (size_t)p * bb;
                for (int c = 0; c < b; c++) {
                    double s = 0;
                    if (lower) s = blk[r * b + c];
                    else for (int t = 0; t < b; t++) s += (double)dinv[r * b + t] * blk[t * b + c];
                    ci[q] = M->colind[p] * b + c;
                    v[q++] = (T)s;
                }
            }
            rp[i * b + r + 1] = (int)q;
        }
    }
    return 0;
}

/* A device CSR triangle / block diagonal: arrays and descriptor. */
struct dcsr {
    int *rp, *ci;
    void *v;
    cusparseSpMatDescr_t d;
};

template <typename T>
static bsr_status spsv_time(const bsr_ilu_factors *F, int k, int reps, bsr_trsv_spsv *r)
{
    const bsr_matrix *L = F->L, *U = F->U;
    const int n = L->nbrows, b = L->b, bb = b * b;
    const int64_t N = (int64_t)n * b, vlen = N * k;
    const cudaDataType dt = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
    const T one = 1, zero = 0;
    const int64_t nz[3] = {(int64_t)L->nnzb * bb, (int64_t)(U->nnzb - n) * bb, (int64_t)n * bb};
    dcsr m[3];
    memset(m, 0, sizeof m);
    int *hrp = NULL, *hci = NULL;
    T *hv = NULL, *hx = NULL, *hy = NULL;
    void *x = NULL, *t1 = NULL, *t2 = NULL, *y = NULL, *buf[3] = {NULL, NULL, NULL};
    cusparseHandle_t h = NULL;
    cusparseSpSVDescr_t sv[2] = {NULL, NULL};
    cusparseSpSMDescr_t sm[2] = {NULL, NULL};
    cusparseDnVecDescr_t vx = NULL, vt1 = NULL, vt2 = NULL, vy = NULL;
    cusparseDnMatDescr_t mx = NULL, mt1 = NULL, mt2 = NULL, my = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *ms = NULL;
    bsr_multivec *X = NULL, *Tm = NULL, *Y = NULL;
    r->ok = 0;
    r->why[0] = 0;
    if (nz[0] > 2147483647LL || nz[1] > 2147483647LL) CS_FAIL("more than 2^31 scalar entries");
    {
        const int64_t mx_nz = nz[0] > nz[1] ? (nz[0] > nz[2] ? nz[0] : nz[2]) : (nz[1] > nz[2] ? nz[1] : nz[2]);
        hrp = (int *)malloc(sizeof(int) * (size_t)(N + 1));
        hci = (int *)malloc(sizeof(int) * (size_t)(mx_nz ? mx_nz : 1));
        hv = (T *)malloc(sizeof(T) * (size_t)(mx_nz ? mx_nz : 1));
        hx = (T *)malloc(sizeof(T) * (size_t)(vlen ? vlen : 1));
        hy = (T *)malloc(sizeof(T) * (size_t)(vlen ? vlen : 1));
        ms = (double *)malloc(sizeof(double) * (size_t)reps);
    }
    if (!hrp || !hci || !hv || !hx || !hy || !ms) CS_FAIL("out of host memory");
    CS_SP(cusparseCreate(&h));
    /* 0: L, 1: Uh, 2: D^-1 */
    for (int w = 0; w < 3; w++) {
        to_csr<T>(w == 0 ? L : U, w == 0, w == 2, hrp, hci, hv);
        CS_CU(bsr_cu_malloc(&m[w].rp, sizeof(int) * (size_t)(N + 1)));
        CS_CU(bsr_cu_malloc(&m[w].ci, sizeof(int) * (size_t)(nz[w] ? nz[w] : 1)));
        CS_CU(bsr_cu_malloc(&m[w].v, sizeof(T) * (size_t)(nz[w] ? nz[w] : 1)));
        CS_CU(cudaMemcpy(m[w].rp, hrp, sizeof(int) * (size_t)(N + 1), cudaMemcpyHostToDevice));
        CS_CU(cudaMemcpy(m[w].ci, hci, sizeof(int) * (size_t)nz[w], cudaMemcpyHostToDevice));
        CS_CU(cudaMemcpy(m[w].v, hv, sizeof(T) * (size_t)nz[w], cudaMemcpyHostToDevice));
        CS_SP(cusparseCreateCsr(&m[w].d, N, N, nz[w], m[w].rp, m[w].ci, m[w].v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, dt));
        if (w < 2) {
            cusparseFillMode_t fm = w == 0 ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
            cusparseDiagType_t dg = CUSPARSE_DIAG_TYPE_UNIT;
            CS_SP(cusparseSpMatSetAttribute(m[w].d, CUSPARSE_SPMAT_FILL_MODE, &fm, sizeof fm));
            CS_SP(cusparseSpMatSetAttribute(m[w].d, CUSPARSE_SPMAT_DIAG_TYPE, &dg, sizeof dg));
        }
    }
    for (int64_t e = 0; e < vlen; e++) hx[e] = (T)(((e * 2654435761u) % 2001) / 1000.0 - 1.0);
    CS_CU(bsr_cu_malloc(&x, sizeof(T) * (size_t)(vlen ? vlen : 1)));
    CS_CU(bsr_cu_malloc(&t1, sizeof(T) * (size_t)(vlen ? vlen : 1)));
    CS_CU(bsr_cu_malloc(&t2, sizeof(T) * (size_t)(vlen ? vlen : 1)));
    CS_CU(bsr_cu_malloc(&y, sizeof(T) * (size_t)(vlen ? vlen : 1)));
    CS_CU(cudaMemcpy(x, hx, sizeof(T) * (size_t)vlen, cudaMemcpyHostToDevice));
    CS_CU(cudaEventCreate(&e0));
    CS_CU(cudaEventCreate(&e1));
    {
        size_t bs[3] = {0, 0, 0};
        if (k == 1) {
            CS_SP(cusparseCreateDnVec(&vx, N, x, dt));
            CS_SP(cusparseCreateDnVec(&vt1, N, t1, dt));
            CS_SP(cusparseCreateDnVec(&vt2, N, t2, dt));
            CS_SP(cusparseCreateDnVec(&vy, N, y, dt));
            for (int w = 0; w < 2; w++) {
                CS_SP(cusparseSpSV_createDescr(&sv[w]));
                CS_SP(cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[w].d, w ? vt2 : vx,
                                              w ? vy : vt1, dt, CUSPARSE_SPSV_ALG_DEFAULT, sv[w], &bs[w]));
            }
            CS_SP(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[2].d, vt1, &zero, vt2, dt,
                                          CUSPARSE_SPMV_CSR_ALG2, &bs[2]));
            snprintf(r->alg, sizeof r->alg, "SpSV + SpMV(D^-1) CSR_ALG2 + SpSV");
        } else {
            /* row-interleaved vectors = row-major N x k (ld = k) */
            CS_SP(cusparseCreateDnMat(&mx, N, k, k, x, dt, CUSPARSE_ORDER_ROW));
            CS_SP(cusparseCreateDnMat(&mt1, N, k, k, t1, dt, CUSPARSE_ORDER_ROW));
            CS_SP(cusparseCreateDnMat(&mt2, N, k, k, t2, dt, CUSPARSE_ORDER_ROW));
            CS_SP(cusparseCreateDnMat(&my, N, k, k, y, dt, CUSPARSE_ORDER_ROW));
            for (int w = 0; w < 2; w++) {
                CS_SP(cusparseSpSM_createDescr(&sm[w]));
                CS_SP(cusparseSpSM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                              &one, m[w].d, w ? mt2 : mx, w ? my : mt1, dt, CUSPARSE_SPSM_ALG_DEFAULT,
                                              sm[w], &bs[w]));
            }
            CS_SP(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                          m[2].d, mt1, &zero, mt2, dt, CUSPARSE_SPMM_CSR_ALG2, &bs[2]));
            snprintf(r->alg, sizeof r->alg, "SpSM + SpMM(D^-1) CSR_ALG2 + SpSM (row-major)");
        }
        for (int w = 0; w < 3; w++) CS_CU(bsr_cu_malloc(&buf[w], bs[w] ? bs[w] : 8));
    }
    CS_CU(cudaDeviceSynchronize());
    cudaEventRecord(e0, 0);
    for (int w = 0; w < 2; w++) {
        if (k == 1)
            CS_SP(cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[w].d, w ? vt2 : vx, w ? vy : vt1,
                                        dt, CUSPARSE_SPSV_ALG_DEFAULT, sv[w], buf[w]));
        else
            CS_SP(cusparseSpSM_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                        m[w].d, w ? mt2 : mx, w ? my : mt1, dt, CUSPARSE_SPSM_ALG_DEFAULT, sm[w], buf[w]));
    }
    {
        float fa;
        CS_CU(bench_elapsed(e0, e1, &fa));
        r->ms_analysis = fa;
    }
    for (int rep = -1; rep < reps; rep++) {
        cudaEventRecord(e0, 0);
        if (k == 1) {
            CS_SP(cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[0].d, vx, vt1, dt,
                                     CUSPARSE_SPSV_ALG_DEFAULT, sv[0]));
            CS_SP(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[2].d, vt1, &zero, vt2, dt,
                               CUSPARSE_SPMV_CSR_ALG2, buf[2]));
            CS_SP(cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[1].d, vt2, vy, dt,
                                     CUSPARSE_SPSV_ALG_DEFAULT, sv[1]));
        } else {
            CS_SP(cusparseSpSM_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                     m[0].d, mx, mt1, dt, CUSPARSE_SPSM_ALG_DEFAULT, sm[0]));
            CS_SP(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m[2].d, mt1,
                               &zero, mt2, dt, CUSPARSE_SPMM_CSR_ALG2, buf[2]));
            CS_SP(cusparseSpSM_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                     m[1].d, mt2, my, dt, CUSPARSE_SPSM_ALG_DEFAULT, sm[1]));
        }
        float f;
        CS_CU(bench_elapsed(e0, e1, &f));
        if (rep >= 0) ms[rep] = f;
    }
    r->ms_solve = bsr_median(ms, reps);
    /* check against the host solve of the block factors */
    CS_CU(cudaMemcpy(hy, y, sizeof(T) * (size_t)vlen, cudaMemcpyDeviceToHost));
    {
        const bsr_precision p = sizeof(T) == 8 ? BSR_DOUBLE : BSR_FLOAT;
        if (bsr_multivec_create(&X, N, k, p) || bsr_multivec_create(&Tm, N, k, p) || bsr_multivec_create(&Y, N, k, p))
            CS_FAIL("out of host memory (check)");
        memcpy(bsr_multivec_data(X), hx, sizeof(T) * (size_t)vlen);
        if (bsr_trsv_lower(L, NULL, X, Tm) || bsr_trsv_upper(U, NULL, Tm, Y)) CS_FAIL("host reference: %s", bsr_last_error());
        const T *ref = (const T *)bsr_multivec_cdata(Y);
        double dmax = 0, rmax = 0;
        for (int64_t e = 0; e < vlen; e++) {
            double d = fabs((double)hy[e] - (double)ref[e]);
            if (!(d <= dmax)) dmax = isnan(d) ? INFINITY : d;
            if (fabs((double)ref[e]) > rmax) rmax = fabs((double)ref[e]);
        }
        r->rel_err = dmax / (rmax > 0 ? rmax : 1);
    }
    r->ok = 1;
done:
    cudaDeviceSynchronize();
    for (int w = 0; w < 2; w++) {
        if (sv[w]) cusparseSpSV_destroyDescr(sv[w]);
        if (sm[w]) cusparseSpSM_destroyDescr(sm[w]);
    }
    if (vx) cusparseDestroyDnVec(vx);
    if (vt1) cusparseDestroyDnVec(vt1);
    if (vt2) cusparseDestroyDnVec(vt2);
    if (vy) cusparseDestroyDnVec(vy);
    if (mx) cusparseDestroyDnMat(mx);
    if (mt1) cusparseDestroyDnMat(mt1);
    if (mt2) cusparseDestroyDnMat(mt2);
    if (my) cusparseDestroyDnMat(my);
    for (int w = 0; w < 3; w++) {
        if (m[w].d) cusparseDestroySpMat(m[w].d);
        bsr_cu_free(m[w].rp); bsr_cu_free(m[w].ci); bsr_cu_free(m[w].v); bsr_cu_free(buf[w]);
    }
    if (h) cusparseDestroy(h);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    bsr_cu_free(x); bsr_cu_free(t1); bsr_cu_free(t2); bsr_cu_free(y);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Tm); bsr_multivec_destroy(Y);
    free(hrp); free(hci); free(hv); free(hx); free(hy); free(ms);
    return BSR_OK;
}

extern "C" bsr_status bsr_trsv_spsv_time(const bsr_ilu_factors *F, int k, int reps, bsr_trsv_spsv *r)
{
    BSR_CHECK_ARG(F && F->L && F->U && r && reps >= 1 && k >= 1, "bsr_trsv_spsv_time: bad argument");
    memset(r, 0, sizeof *r);
    if (F->L->prec == BSR_DOUBLE) return spsv_time<double>(F, k, reps, r);
    return spsv_time<float>(F, k, reps, r);
}
