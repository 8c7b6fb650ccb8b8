/* SPDX-License-Identifier: BSD-3-Clause */
/* The rounding floor of a true residual: b - A x computed in working precision
 * carries an error of about eps * || |A| |x| + |b| ||, so a tolerance below that
 * cannot be verified (ill-conditioned systems, e.g. fasp_lns__131, reach it
 * with a residual above rtol*||b|| that no x representable in that precision
 * improves).  A column whose true residual lies under the floor is reported as
 * BSR_CONVERGED_FLOOR instead of stagnating or restarting without end. */
#include "solver_impl.h"
#include <float.h>
#include <math.h>

/* Block rows a chunk of the floor's sum: the partial sums of fixed chunks,
 * added in chunk order, make the result independent of the threads. */
#define ABS_CHUNK 4096

/* out[j] = || |A| |X(:,j)| + |B(:,j)| ||_2 for host data of precision A->prec,
 * row-interleaved with k columns: squares summed in row order within chunks
 * of ABS_CHUNK block rows, the chunks in order (deterministic; the chunks in
 * parallel). */
#define DEFINE_ABSNORM(SUF, REAL)                                                                  \
    static bsr_status absnorm_##SUF(const bsr_matrix *A, const REAL *B, const REAL *X, int k,      \
                                    double *out)                                                   \
    {                                                                                              \
        const int b = A->b, nc = (A->nbrows + ABS_CHUNK - 1) / ABS_CHUNK;                          \
        const REAL *val = A->val;                                                                  \
        double *part = bsr_calloc((size_t)(nc > 0 ? nc : 1) * BSR_KMAX, sizeof(double), "residual floor"); \
        if (!part) return BSR_ERR_NOMEM;                                                           \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(bsr_team(A->nnzb * (int64_t)b * b, BSR_PAR_WORK))") \
        for (int ch = 0; ch < nc; ch++) {                                                          \
            double *acc = part + (size_t)ch * BSR_KMAX, v[BSR_KMAX];                               \
            const int i1 = (ch + 1) * ABS_CHUNK < A->nbrows ? (ch + 1) * ABS_CHUNK : A->nbrows;    \
            for (int i = ch * ABS_CHUNK; i < i1; i++)                                              \
                for (int r = 0; r < b; r++) {                                                      \
                    int64_t row = (int64_t)i * b + r;                                              \
                    for (int j = 0; j < k; j++) v[j] = fabs((double)B[row * k + j]);               \
                    for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {                        \
                        const REAL *blk = val + ((size_t)q * b + r) * b;                           \
                        int64_t c0 = (int64_t)A->colind[q] * b;                                    \
                        for (int c = 0; c < b; c++) {                                              \
                            double a = fabs((double)blk[c]);                                       \
                            for (int j = 0; j < k; j++) v[j] += a * fabs((double)X[(c0 + c) * k + j]); \
                        }                                                                          \
                    }                                                                              \
                    for (int j = 0; j < k; j++) acc[j] += v[j] * v[j];                             \
                }                                                                                  \
        }                                                                                          \
        for (int j = 0; j < k; j++) {                                                              \
            double t = 0;                                                                          \
            for (int ch = 0; ch < nc; ch++) t += part[(size_t)ch * BSR_KMAX + j];                  \
            out[j] = sqrt(t);                                                                      \
        }                                                                                          \
        free(part);                                                                                \
        return BSR_OK;                                                                             \
    }
DEFINE_ABSNORM(d, double)
DEFINE_ABSNORM(f, float)

bsr_status bsr_absnorm_host(const bsr_matrix *A, const void *B, const void *X, int k, double *out)
{
    if (A->prec == BSR_DOUBLE) return absnorm_d(A, B, X, k, out);
    return absnorm_f(A, B, X, k, out);
}

bsr_status bsr_kops_floor(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X, double *floor)
{
    for (int j = 0; j < o->k; j++) floor[j] = 0;
    if (!o->absnorm) return BSR_OK;
    BSR_TRY(o->absnorm(o, B, X, floor));
    const double eps = o->prec == BSR_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
    for (int j = 0; j < o->k; j++) floor[j] *= eps;
    return BSR_OK;
}

/* The floor verdict also needs x to be a real answer.  Two stops run into the
 * floor without one:
 *  - the residual is no better than x = 0's (||r|| >= ||b||): nothing was solved;
 *  - x has grown without bound along a (near) null direction of a singular A
 *    (GMRES/ILU on an inconsistent singular system): the floor grows with
 *    ||x|| until it passes any residual.
 * A bounded x cannot do that: x = A^{-1}(b - r) with ||r|| < ||b|| gives
 * ||x|| < 2 ||b|| / sigma_min(A), so eps || |A||x| || >= BSR_FLOOR_MAX ||b||
 * means sigma_min(A) <= (2 eps / BSR_FLOOR_MAX) || |A| ||: A is within 20 eps
 * (relative) of a singular matrix, and a residual at the floor says nothing
 * about x.  Measured: legitimate floors sit at eps||.||/||b|| 7e-7 (fasp_lns__131,
 * double) to 0.09 (bcsstk13 in float), the growing iterates at 0.87
 * (fidapm05, GMRES + ILU(0) in float) and beyond.  Such a column keeps its
 * reason (maxit or stagnated) and is marked singular. */
#define BSR_FLOOR_MAX 0.1

int bsr_floor_accept(bsr_col_stats *c, double tol, double resnorm, double floor)
{
    if (!(resnorm > tol) || !(resnorm <= floor)) return 0;
    if (!(resnorm < c->bnorm) || !(floor <= BSR_FLOOR_MAX * c->bnorm)) {
        c->singular = c->bnorm > 0;   /* b = 0: x = 0 is the answer, no diagnosis */
        return 0;
    }
    c->reason = BSR_CONVERGED_FLOOR;
    return 1;
}
