/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU block triangular solves for k right-hand sides: Y = L^{-1} X with L
 * unit lower (strict blocks stored) and Y = U^{-1} X with U's diagonal block
 * (first in each row) holding the inverted pivot.  The sequential S2
 * reference and the level-scheduled OpenMP solve run the same per-row code
 * (accumulation in double, blocks in column order), so they agree bit for bit. */
#include "internal.h"
#include <string.h>

#define KC 16   /* right-hand sides per accumulator chunk */
/* Levels narrower than this run on one thread, consecutive ones together
 * (one barrier instead of one per level); which thread computes a row never
 * changes its bits. */
#define TRSV_MIN_PAR 32

/* Row i of the solve: acc = x_i - sum_{off-diagonal p} T_p y_col(p); then
 * y_i = acc (lower) or y_i = T_diag acc (upper, diagonal = inverted pivot). */
#define DEFINE_TRSV_ROW(SUF, REAL)                                                          \
    static void trsv_row_##SUF(const bsr_matrix *T, int upper, int i, const REAL *x,        \
                               REAL *y, int k)                                              \
    {                                                                                       \
        const int b = T->b, bb = b * b;                                                     \
        const REAL *val = (const REAL *)T->val;                                             \
        double acc[BSR_MAX_BLOCK * KC];                                                     \
        int p0 = T->rowptr[i] + (upper ? 1 : 0), p1 = T->rowptr[i + 1];                     \
        for (int j0 = 0; j0 < k; j0 += KC) {                                                \
            int kk = k - j0 < KC ? k - j0 : KC;                                             \
            const REAL *xi = x + (size_t)i * b * k + j0;                                    \
            for (int r = 0; r < b; r++)                                                     \
                for (int j = 0; j < kk; j++) acc[r * kk + j] = xi[r * k + j];               \
            for (int p = p0; p < p1; p++) {                                                 \
                const REAL *blk = val + (size_t)p * bb;                                     \
                const REAL *yc = y + (size_t)T->colind[p] * b * k + j0;                     \
                for (int r = 0; r < b; r++)                                                 \
                    for (int c = 0; c < b; c++) {                                           \
                        double a = blk[r * b + c];                                          \
                        for (int j = 0; j < kk; j++) acc[r * kk + j] -= a * yc[c * k + j];  \
                    }                                                                       \
            }                                                                               \
            REAL *yi = y + (size_t)i * b * k + j0;                                          \
            if (!upper) {                                                                   \
                for (int r = 0; r < b; r++)                                                 \
                    for (int j = 0; j < kk; j++) yi[r * k + j] = (REAL)acc[r * kk + j];     \
            } else {                                                                        \
                const REAL *dinv = val + (size_t)T->rowptr[i] * bb;                         \
                for (int r = 0; r < b; r++)                                                 \
                    for (int j = 0; j < kk; j++) {                                          \
                        double s = 0.0;                                                     \
                        for (int c = 0; c < b; c++) s += (double)dinv[r * b + c] * acc[c * kk + j]; \
                        yi[r * k + j] = (REAL)s;                                            \
                    }                                                                       \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static void trsv_##SUF(const bsr_matrix *T, const bsr_levels *lv, int upper,            \
                           const REAL *x, REAL *y, int k)                                   \
    {                                                                                       \
        const int n = T->nbrows;                                                            \
        if (!lv) {                                                                          \
            if (!upper) for (int i = 0; i < n; i++) trsv_row_##SUF(T, 0, i, x, y, k);       \
            else for (int i = n - 1; i >= 0; i--) trsv_row_##SUF(T, 1, i, x, y, k);         \
            return;                                                                         \
        }                                                                                   \
        const int *lp = lv->level_ptr;                                                      \
        /* a team only when some level is wide and the solve worth one */                  \
        const int par = lv->max_width >= TRSV_MIN_PAR &&                                    \
                        bsr_par_worth((int64_t)T->nnzb * T->b * T->b * k);                  \
        _Pragma("omp parallel if (par)")                                                    \
        for (int l = 0; l < lv->nlevels;) {                                                 \
            if (lp[l + 1] - lp[l] >= TRSV_MIN_PAR) {                                        \
                _Pragma("omp for schedule(static)")                                         \
                for (int q = lp[l]; q < lp[l + 1]; q++)                                     \
                    trsv_row_##SUF(T, upper, lv->rows[q], x, y, k);                         \
                l++;                                                                        \
            } else { /* a run of narrow levels: one thread, one barrier */                  \
                int l1 = l;                                                                 \
                while (l1 < lv->nlevels && lp[l1 + 1] - lp[l1] < TRSV_MIN_PAR) l1++;        \
                _Pragma("omp single")                                                       \
                for (int q = lp[l]; q < lp[l1]; q++)                                        \
                    trsv_row_##SUF(T, upper, lv->rows[q], x, y, k);                         \
                l = l1;                                                                     \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_TRSV_ROW(d, double)
DEFINE_TRSV_ROW(f, float)

/* Checks shared by both solves. */
static bsr_status trsv_check(const char *fn, const bsr_matrix *T, const bsr_levels *lv, int upper,
                             const bsr_multivec *X, const bsr_multivec *Y)
{
    if (!T || !X || !Y) return bsr_error(BSR_ERR_ARG, "%s: NULL argument", fn);
    if (T->nbrows != T->nbcols)
        return bsr_error(BSR_ERR_SIZE, "%s: triangle is %d x %d blocks", fn, T->nbrows, T->nbcols);
    if (X->n != (int64_t)T->nbrows * T->b || Y->n != X->n || X->k != Y->k)
        return bsr_error(BSR_ERR_SIZE, "%s: triangle has %lld rows, X is %lld x %d, Y %lld x %d", fn,
                         (long long)T->nbrows * T->b, (long long)X->n, X->k, (long long)Y->n, Y->k);
    if (X->prec != T->prec || Y->prec != T->prec)
        return bsr_error(BSR_ERR_ARG, "%s: triangle, X and Y must have the same precision", fn);
    if (!X->data || !Y->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "%s: X and Y must be on the host", fn);
    if (lv && lv->n != T->nbrows)
        return bsr_error(BSR_ERR_SIZE, "%s: level schedule is for %d rows, triangle has %d", fn,
                         lv->n, T->nbrows);
    /* structure: strict triangle (upper: diagonal first) */
    for (int i = 0; i < T->nbrows; i++) {
        int p0 = T->rowptr[i], p1 = T->rowptr[i + 1];
        if (upper && (p0 == p1 || T->colind[p0] != i))
            return bsr_error(BSR_ERR_STRUCTURE, "%s: block row %d of U does not start with its diagonal", fn, i);
        if (!upper && p1 > p0 && T->colind[p1 - 1] >= i)
            return bsr_error(BSR_ERR_STRUCTURE, "%s: block row %d of L has block column %d (not strictly lower)",
                             fn, i, T->colind[p1 - 1]);
    }
    return BSR_OK;
}

/* Both solves: copy X into Y (if distinct), then solve in place in Y (a
 * row reads its own x_i before writing y_i, and only finished y_j). */
static bsr_status trsv(const char *fn, const bsr_matrix *T, const bsr_levels *lv, int upper,
                       const bsr_multivec *X, bsr_multivec *Y)
{
    BSR_TRY(trsv_check(fn, T, lv, upper, X, Y));
    if (Y != X) memcpy(Y->data, X->data, bsr_precision_size(X->prec) * (size_t)X->n * X->k);
    if (T->prec == BSR_DOUBLE) trsv_d(T, lv, upper, Y->data, Y->data, Y->k);
    else trsv_f(T, lv, upper, Y->data, Y->data, Y->k);
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}

/* Y = L^{-1} X for unit lower block L (strict part stored); lv NULL: sequential S2, else
 * level-scheduled OpenMP. */
bsr_status bsr_trsv_lower(const bsr_matrix *L, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y)
{
    return trsv("bsr_trsv_lower", L, lv, 0, X, Y);
}

/* Y = U^{-1} X for block upper U whose diagonal holds inverted pivots; lv NULL: S2, else
 * level-scheduled. */
bsr_status bsr_trsv_upper(const bsr_matrix *U, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y)
{
    return trsv("bsr_trsv_upper", U, lv, 1, X, Y);
}
