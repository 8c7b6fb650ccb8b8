/* SPDX-License-Identifier: BSD-3-Clause */
/* SSOR(omega) on A's own triangles, A = L + D + U (block parts):
 *   M = 1/(omega(2-omega)) (D + omega L) D^{-1} (D + omega U)
 *     = (I + omega L D^{-1}) * (D + omega U)/(omega(2-omega)),
 * i.e. a unit lower factor with blocks omega A_ij D_j^{-1} and an upper factor
 * with off-diagonal blocks A_ij/(2-omega) and inverted diagonal blocks
 * omega(2-omega) D_i^{-1}: exactly the storage the ILU triangular solves take,
 * so applying M^{-1} is one level-scheduled lower and one upper solve.  For a
 * symmetric A with symmetric diagonal blocks M is symmetric positive definite
 * (0 < omega < 2), which is what CG needs. */
#include "precond_impl.h"
#include <string.h>

typedef struct {
    double omega;
    bsr_pc_tri t;              /* the stored factors, precision t.prec */
    bsr_matrix *Dinv;          /* scratch D^{-1} in double */
} ssor;

/* Allocate L and U with A's strict lower / (diagonal + strict upper) patterns. */
static bsr_status ssor_pattern(ssor *S, const bsr_matrix *A)
{
    int n = A->nbrows, nl = 0, nu = 0;
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (A->colind[p] < i) nl++;
            else if (A->colind[p] > i) nu++;
        }
    BSR_TRY(bsr_matrix_alloc(&S->t.L, n, n, A->b, nl, S->t.prec));
    BSR_TRY(bsr_matrix_alloc(&S->t.U, n, n, A->b, nu + n, S->t.prec));
    int pl = 0, pu = 0;
    S->t.L->rowptr[0] = S->t.U->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        S->t.U->colind[pu++] = i; /* diagonal first */
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j < i) S->t.L->colind[pl++] = j;
            else if (j > i) S->t.U->colind[pu++] = j;
        }
        S->t.L->rowptr[i + 1] = pl;
        S->t.U->rowptr[i + 1] = pu;
    }
    return BSR_OK;
}

/* Numeric values of L and U from A (pattern fixed). */
static bsr_status ssor_values(ssor *S, const bsr_matrix *A)
{
    double w = S->omega;
    BSR_TRY(bsr_diag_inverse(A, 1.0, BSR_DOUBLE, &S->Dinv));
    int n = A->nbrows, b = A->b, bb = b * b;
    const double *Di = S->Dinv->val;
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        int pl = S->t.L->rowptr[i], pu = S->t.U->rowptr[i];
        for (int e = 0; e < bb; e++) /* inverted diagonal of U */
            bsr_val_set(S->t.U->val, S->t.prec, (size_t)pu * bb + e, w * (2 - w) * Di[(size_t)i * bb + e]);
        pu++;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            size_t a0 = (size_t)p * bb;
            if (j < i) { /* omega A_ij D_j^{-1} */
                const double *dj = Di + (size_t)j * bb;
                for (int r = 0; r < b; r++)
                    for (int c = 0; c < b; c++) {
                        double v = 0;
                        for (int q = 0; q < b; q++) v += bsr_val_get(A->val, A->prec, a0 + r * b + q) * dj[q * b + c];
                        bsr_val_set(S->t.L->val, S->t.prec, (size_t)pl * bb + r * b + c, w * v);
                    }
                pl++;
            } else if (j > i) {
                for (int e = 0; e < bb; e++)
                    bsr_val_set(S->t.U->val, S->t.prec, (size_t)pu * bb + e, bsr_val_get(A->val, A->prec, a0 + e) / (2 - w));
                pu++;
            }
        }
    }
    return BSR_OK;
}

static bsr_status ssor_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ssor *S = pc->data;
    return bsr_pc_tri_apply(&S->t, X, Y);
}

static bsr_status ssor_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    return ssor_values(pc->data, A);
}

static void ssor_destroy(bsr_pc *pc)
{
    ssor *S = pc->data;
    if (!S) return;
    bsr_pc_tri_free(&S->t);
    bsr_matrix_destroy(S->Dinv);
    free(S);
}

/* Setup: A's triangles as the factors (omega = o->omega, stored in
 * o->precond_precision) and their level schedules. */
static bsr_status ssor_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    const double omega = o->omega;
    if (!(omega > 0 && omega < 2)) return bsr_error(BSR_ERR_ARG, "precond=ssor: omega=%g must be in (0,2)", omega);
    ssor *S = bsr_calloc(1, sizeof *S, "SSOR preconditioner");
    if (!S) return BSR_ERR_NOMEM;
    S->omega = omega;
    S->t.prec = o->precond_precision;
    pc->data = S;
    BSR_TRY(ssor_pattern(S, A));
    BSR_TRY(ssor_values(S, A));
    BSR_TRY(bsr_levels_build(S->t.L, 0, &S->t.lvL));
    BSR_TRY(bsr_levels_build(S->t.U, 1, &S->t.lvU));
    pc->nnzb = (int64_t)S->t.L->nnzb + S->t.U->nnzb;
    snprintf(pc->info, sizeof pc->info, "omega %g, A's own triangles, levels L %d U %d", omega,
             S->t.lvL->nlevels, S->t.lvU->nlevels);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_ssor_cpu_ops = {ssor_setup, ssor_refactor, ssor_apply, ssor_destroy};
