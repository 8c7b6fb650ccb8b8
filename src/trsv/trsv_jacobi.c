/* SPDX-License-Identifier: BSD-3-Clause */
/* Host reference of the Jacobi triangular sweeps (trisolve=jacobi:N;
 * the device version is kernels/trsv/trsv_jacobi.cu):
 *   L (unit lower, strict blocks stored):   y_0 = x,       y_m = x - L y_{m-1}
 *   U (inverted pivot first in each row):   z_0 = D^-1 x,  z_m = D^-1 (x - U_off z_{m-1})
 * for m = 1..sweeps.  Every output is summed in double in the device's order
 * (blocks in row order, then columns; for U the row vector first, then D^-1
 * applied), so the two agree to rounding (the device may fuse multiply-adds). */
#include "internal.h"
#include "gpu_ilu.h"
#include <string.h>

/* One sweep: out = x - T_off yin (lower) or D^-1 (x - T_off yin) (upper;
 * diag_only: D^-1 x), over values of REAL (factor) and VREAL (vectors). */
#define DEFINE_SWEEP(SUF, REAL, VREAL)                                                          \
    static void sweep_##SUF(const bsr_matrix *T, int upper, int diag_only, const VREAL *x,       \
                            const VREAL *yin, VREAL *out, int k)                                 \
    {                                                                                           \
        const int b = T->b, bb = b * b, bk = b * k;                                             \
        const REAL *val = (const REAL *)T->val;                                                 \
        _Pragma("omp parallel for schedule(static) if (bsr_par_worth((int64_t)T->nnzb * bb * k)) num_threads(bsr_team_size())") \
        for (int i = 0; i < T->nbrows; i++) {                                                   \
            const int p0 = T->rowptr[i] + (upper ? 1 : 0), p1 = diag_only ? p0 : T->rowptr[i + 1]; \
            for (int j = 0; j < k; j++) {                                                       \
                double w[BSR_MAX_BLOCK];                                                        \
                for (int r = 0; r < b; r++) w[r] = x[(size_t)i * bk + r * k + j];              \
                for (int p = p0; p < p1; p++) {                                                 \
                    const REAL *blk = val + (size_t)p * bb;                                     \
                    const VREAL *yc = yin + (size_t)T->colind[p] * bk + j;                      \
                    for (int r = 0; r < b; r++)                                                 \
                        for (int c = 0; c < b; c++) w[r] -= (double)blk[r * b + c] * (double)yc[c * k]; \
                }                                                                               \
                for (int r = 0; r < b; r++) {                                                   \
                    double s = w[r];                                                            \
                    if (upper) {                                                                \
                        const REAL *d = val + (size_t)T->rowptr[i] * bb + r * b;                \
                        s = 0;                                                                  \
                        for (int c = 0; c < b; c++) s += (double)d[c] * w[c];                   \
                    }                                                                           \
                    out[(size_t)i * bk + r * k + j] = (VREAL)s;                                 \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

DEFINE_SWEEP(dd, double, double)
DEFINE_SWEEP(ff, float, float)
DEFINE_SWEEP(fd, float, double)

/* One sweep in T's and the vectors' precisions (0, or -1 for double factors
 * with float vectors, which the device refuses too). */
static int sweep(const bsr_matrix *T, int upper, int diag_only, const void *x, const void *yin, void *out, int k,
                 bsr_precision vp)
{
    if (T->prec == BSR_DOUBLE && vp == BSR_DOUBLE) sweep_dd(T, upper, diag_only, x, yin, out, k);
    else if (T->prec == BSR_FLOAT && vp == BSR_FLOAT) sweep_ff(T, upper, diag_only, x, yin, out, k);
    else if (T->prec == BSR_FLOAT && vp == BSR_DOUBLE) sweep_fd(T, upper, diag_only, x, yin, out, k);
    else return -1;
    return 0;
}

bsr_status bsr_trsv_jacobi_host(const bsr_matrix *T, int upper, int sweeps, const bsr_multivec *X, bsr_multivec *Y)
{
    BSR_CHECK_ARG(T && X && Y && X != Y && sweeps >= 1, "bsr_trsv_jacobi_host: bad arguments");
    const int64_t n = (int64_t)T->nbrows * T->b;
    if (X->n != n || Y->n != n || X->k != Y->k || X->prec != Y->prec || !X->data || !Y->data)
        return bsr_error(BSR_ERR_SIZE, "bsr_trsv_jacobi_host: X and Y must be host %lld x k multivectors alike",
                         (long long)n);
    const int k = X->k;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * k * bsr_precision_size(X->prec);
    void *w = bsr_malloc(bytes, "Jacobi sweeps: work vector");
    if (!w) return BSR_ERR_NOMEM;
    /* as on the device: outputs alternate between Y and w, the last in Y */
    const void *prev = X->data;
    int rc = 0;
    for (int m = upper ? 0 : 1; m <= sweeps && !rc; m++) {
        void *dst = (sweeps - m) % 2 == 0 ? Y->data : w;
        rc = sweep(T, upper, upper && m == 0, X->data, prev, dst, k, X->prec);
        prev = dst;
    }
    free(w);
    if (rc) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_jacobi_host: double factors with float vectors");
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}
