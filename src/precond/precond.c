/* SPDX-License-Identifier: BSD-3-Clause */
/* Preconditioner "none", destroy, and helpers shared by the kinds: dense
 * block inversion and the mixed-precision apply wrapper (the factory is the
 * table, precond_table.c). */
#include "precond_impl.h"
#include "blocklu.h"
#include <math.h>
#include <string.h>

/* "none": M = I on every backend (apply NULL: the Krylov code copies). */
static bsr_status none_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)pc; (void)A; (void)o; (void)ctx;
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_none_ops = {none_setup, NULL, NULL, NULL};

void bsr_pc_destroy(bsr_pc *pc)
{
    if (!pc) return;
    if (pc->holders > 0) {   /* shared: another holder keeps it */
        pc->holders--;
        return;
    }
    if (pc->destroy) pc->destroy(pc);
    free(pc);
}

/* inv = a^{-1} by the shared block LU (blocklu.h, dividing by the pivots);
 * 1 when a pivot is at most 1e-14 max|a_ij| (numerically zero) or the
 * inverse is not finite, 0 otherwise. */
int bsr_block_invert(int b, const double *a, double *inv)
{
    double lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    int piv[BSR_MAX_BLOCK];
    memcpy(lu, a, sizeof(double) * (size_t)b * b);
    double amax = 0;
    for (int e = 0; e < b * b; e++) amax = fmax(amax, fabs(a[e]));
    bsr_blklu_factor(b, lu, piv, 0.0, 1);
    /* each pivot is U's diagonal entry (later steps leave row c alone) */
    for (int c = 0; c < b; c++)
        if (!(fabs(lu[c * b + c]) > 1e-14 * amax)) return 1;
    bsr_blklu_inverse(b, lu, piv, inv);
    for (int e = 0; e < b * b; e++)
        if (!isfinite(inv[e])) return 1;
    return 0;
}

double bsr_val_get(const void *val, bsr_precision p, size_t e)
{
    return p == BSR_DOUBLE ? ((const double *)val)[e] : ((const float *)val)[e];
}

void bsr_val_set(void *val, bsr_precision p, size_t e, double v)
{
    if (p == BSR_DOUBLE) ((double *)val)[e] = v;
    else ((float *)val)[e] = (float)v;
}

bsr_status bsr_pc_mixed_apply(bsr_pc_mixed *m, bsr_precision store, const bsr_multivec *X,
                              bsr_multivec *Y, bsr_status (*fn)(void *, const bsr_multivec *, bsr_multivec *),
                              void *data)
{
    if (X->prec == store && Y->prec == store) return fn(data, X, Y);
    if (!m->X || m->X->k != X->k || m->X->n != X->n) {
        bsr_multivec_destroy(m->X); bsr_multivec_destroy(m->Y);
        m->X = m->Y = NULL;
        BSR_TRY(bsr_multivec_create(&m->X, X->n, X->k, store));
        BSR_TRY(bsr_multivec_create(&m->Y, X->n, X->k, store));
    }
    BSR_TRY(bsr_multivec_copy(m->X, X));
    BSR_TRY(fn(data, m->X, m->Y));
    return bsr_multivec_copy(Y, m->Y);
}

void bsr_pc_mixed_free(bsr_pc_mixed *m)
{
    bsr_multivec_destroy(m->X);
    bsr_multivec_destroy(m->Y);
    m->X = m->Y = NULL;
}

/* Y = U^{-1} L^{-1} X in the storage precision (bsr_pc_mixed_apply's fn). */
static bsr_status tri_solve(void *data, const bsr_multivec *X, bsr_multivec *Y)
{
    const bsr_pc_tri *T = data;
    BSR_TRY(bsr_trsv_lower(T->L, T->lvL, X, Y));
    return bsr_trsv_upper(T->U, T->lvU, Y, Y);
}

bsr_status bsr_pc_tri_apply(bsr_pc_tri *T, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_pc_mixed_apply(&T->mix, T->prec, X, Y, tri_solve, T);
}

void bsr_pc_tri_free(bsr_pc_tri *T)
{
    bsr_matrix_destroy(T->L);
    bsr_matrix_destroy(T->U);
    bsr_levels_free(T->lvL);
    bsr_levels_free(T->lvU);
    bsr_pc_mixed_free(&T->mix);
    T->L = T->U = NULL;
    T->lvL = T->lvU = NULL;
}

bsr_status bsr_diag_inverse(const bsr_matrix *A, double scale, bsr_precision prec, bsr_matrix **Dinv)
{
    int n = A->nbrows, b = A->b, bb = b * b;
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "block diagonal: matrix is not square (%d x %d blocks)", A->nbrows, A->nbcols);
    if (!*Dinv) {
        BSR_TRY(bsr_matrix_alloc(Dinv, n, n, b, n, prec));
        for (int i = 0; i <= n; i++) (*Dinv)->rowptr[i] = i;
        for (int i = 0; i < n; i++) (*Dinv)->colind[i] = i;
    }
    bsr_matrix *D = *Dinv;
    int bad = -1, missing = 0;
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        double a[BSR_MAX_BLOCK * BSR_MAX_BLOCK], inv[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        int p = bsr_matrix_find(A, i, i);
        int fail = p < 0;
        if (!fail) {
            for (int e = 0; e < bb; e++) a[e] = bsr_val_get(A->val, A->prec, (size_t)p * bb + e);
            fail = bsr_block_invert(b, a, inv);
        }
        if (fail) {
#pragma omp critical(bsr_diag_bad)
            if (bad < 0 || i < bad) { bad = i; missing = p < 0; }
            continue;
        }
        for (int e = 0; e < bb; e++) bsr_val_set(D->val, prec, (size_t)i * bb + e, scale * inv[e]);
    }
    if (bad >= 0)
        return bsr_error(BSR_ERR_SINGULAR, missing ? "block row %d has no diagonal block"
                                                   : "diagonal block of block row %d is singular", bad);
    return BSR_OK;
}
