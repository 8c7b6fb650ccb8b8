/* SPDX-License-Identifier: BSD-3-Clause */
/* What the incomplete Cholesky kinds (precond_ic0.c, precond_ic2.c) share:
 * the symmetry check of A, the positive-definiteness test of a pivot block,
 * and the transposed block update. */
#include "precond_impl.h"
#include <math.h>
#include <string.h>

/* Whether block row i's upper blocks have their transposes (0), or the
 * first that does not (1: no block (j,i); 2: an entry differs by more than
 * tol relative), with its position in *pp, *pq, *pr, *pc. */
static int row_asym(const bsr_matrix *A, int i, double tol, int *pp, int *pq, int *pr, int *pc)
{
    const int b = A->b, bb = b * b;
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        const int j = A->colind[p];
        if (j < i) continue;
        const int q = bsr_matrix_find(A, j, i);
        *pp = p; *pq = q;
        if (q < 0) return 1;
        for (int r = 0; r < b; r++)
            for (int c = 0; c < b; c++) {
                const double x = bsr_val_get(A->val, A->prec, (size_t)p * bb + r * b + c);
                const double y = bsr_val_get(A->val, A->prec, (size_t)q * bb + c * b + r);
                if (!(fabs(x - y) <= tol * fmax(fabs(x), fabs(y)))) { *pr = r; *pc = c; return 2; }
            }
    }
    return 0;
}

/* Rows checked in parallel (a refactor checks every time: 1M-row pressure
 * systems), the first failing row named as a serial walk would. */
bsr_status bsr_pc_check_symmetric(const bsr_matrix *A, const char *who)
{
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "precond=%s: matrix is not square (%d x %d blocks)", who, A->nbrows, A->nbcols);
    const int n = A->nbrows, b = A->b, bb = b * b;
    const double tol = A->prec == BSR_DOUBLE ? 1.5e-8 : 3.5e-4;
    int first = n;
    #pragma omp parallel for schedule(static) reduction(min : first) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        int p, q, r, c;
        if (i < first && row_asym(A, i, tol, &p, &q, &r, &c)) first = i;
    }
    if (first == n) return BSR_OK;
    int p = 0, q = 0, r = 0, c = 0;
    const int i = first, kind = row_asym(A, i, tol, &p, &q, &r, &c), j = A->colind[p];
    if (kind == 1)
        return bsr_error(BSR_ERR_STRUCTURE, "precond=%s needs a symmetric matrix: block (%d,%d) is "
                         "stored but (%d,%d) is not (use ssor, jacobi or an ILU with bicgstab/gmres)",
                         who, i, j, j, i);
    return bsr_error(BSR_ERR_VALUE, "precond=%s needs a symmetric matrix: block (%d,%d) "
                     "entry (%d,%d) = %.17g but block (%d,%d) entry (%d,%d) = %.17g "
                     "(use ssor, jacobi or an ILU with bicgstab/gmres)",
                     who, i, j, r, c, bsr_val_get(A->val, A->prec, (size_t)p * bb + r * b + c), j, i, c, r,
                     bsr_val_get(A->val, A->prec, (size_t)q * bb + c * b + r));
}

void bsr_blk_mulsub_t(int b, double *c, const double *a, const double *m)
{
    for (int r = 0; r < b; r++)
        for (int s = 0; s < b; s++) {
            double v = 0;
            for (int q = 0; q < b; q++) v += a[r * b + q] * m[s * b + q];
            c[r * b + s] -= v;
        }
}

int bsr_blk_spd(int b, const double *a)
{
    double c[BSR_MAX_BLOCK * BSR_MAX_BLOCK], dmax = 0;
    memcpy(c, a, sizeof(double) * (size_t)b * b);
    for (int r = 0; r < b; r++) dmax = fmax(dmax, fabs(a[r * b + r]));
    for (int k = 0; k < b; k++) {
        double d = c[k * b + k];
        for (int q = 0; q < k; q++) d -= c[k * b + q] * c[k * b + q];
        if (!(d > 1e-14 * dmax)) return 0;
        d = sqrt(d);
        c[k * b + k] = d;
        for (int r = k + 1; r < b; r++) {
            double v = c[r * b + k];
            for (int q = 0; q < k; q++) v -= c[r * b + q] * c[k * b + q];
            c[r * b + k] = v / d;
        }
    }
    return 1;
}

bsr_status bsr_pc_pivot_sym(int b, double *d, double *dinv)
{
    for (int r = 0; r < b; r++)
        for (int c = r + 1; c < b; c++) d[r * b + c] = d[c * b + r] = 0.5 * (d[r * b + c] + d[c * b + r]);
    if (!bsr_blk_spd(b, d) || bsr_block_invert(b, d, dinv)) return BSR_ERR_SINGULAR;
    for (int r = 0; r < b; r++)
        for (int c = r + 1; c < b; c++) dinv[r * b + c] = dinv[c * b + r] = 0.5 * (dinv[r * b + c] + dinv[c * b + r]);
    return BSR_OK;
}
