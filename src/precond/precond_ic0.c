/* SPDX-License-Identifier: BSD-3-Clause */
/* Block incomplete Cholesky IC(0) for symmetric positive definite block
 * matrices: M = L D L^T with L unit lower on A's strict lower pattern (no
 * fill, natural order) and D block diagonal, chosen so that M equals A on
 * A's lower pattern up to the dropped fill:
 *   F_ij = A_ij - sum_{k<j} F_ik L_jk^T     (j < i, (i,j) and (j,k), (i,k) in the pattern)
 *   L_ij = F_ij D_j^{-1}
 *   D_i  = A_ii - sum_{k<i} F_ik L_ik^T     (then symmetrized, checked positive definite)
 * Stored as the ILU triangular solves take it: L (strict lower) and
 * U = D L^T (diagonal blocks hold D_i^{-1}, U_ij = D_i L_ji^T), so applying
 * M^{-1} is one level-scheduled lower and one upper solve.  Only A's lower
 * triangle enters the factors; setup and refactor check that A is square
 * and symmetric (pattern exactly, values to sqrt(eps) of A's precision) so
 * that M approximates A and not its lower half's symmetric extension.  The
 * factorization is sequential in natural order: deterministic bits. */
#include "precond_impl.h"
#include "blockops.h"
#include <math.h>
#include <string.h>

typedef struct {
    bsr_pc_tri t;          /* the stored factors L and U = D L^T, precision t.prec */
    int *amap;             /* A's position of L's entry p */
    int *adiag;            /* A's position of block row i's diagonal block */
    int *umap;             /* U's position of the transpose of L's entry p */
    double *Lw, *D, *Dinv; /* L, D and D^{-1} in double (factorization workspace) */
    double *F;             /* one row's unscaled F_ij, longest row of L */
    int *pos;              /* pos[k]: index in the current row of L's column k, or -1 */
} ic0;

/* Patterns of L (A's strict lower part) and U (diagonal, then A's strict
 * upper part), the maps from their entries to A's and from L's entries to
 * their transposes in U, and the workspace. */
static bsr_status ic0_pattern(ic0 *S, const bsr_matrix *A)
{
    int n = A->nbrows, b = A->b, bb = b * b, nl = 0, nu = 0, maxrow = 0;
    for (int i = 0; i < n; i++) {
        int rl = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (A->colind[p] < i) { nl++; rl++; }
            else if (A->colind[p] > i) nu++;
        }
        if (rl > maxrow) maxrow = rl;
    }
    BSR_TRY(bsr_matrix_alloc(&S->t.L, n, n, b, nl, S->t.prec));
    BSR_TRY(bsr_matrix_alloc(&S->t.U, n, n, b, nu + n, S->t.prec));
    S->amap = bsr_malloc(sizeof(int) * (size_t)(nl ? nl : 1), "IC(0) map");
    S->umap = bsr_malloc(sizeof(int) * (size_t)(nl ? nl : 1), "IC(0) map");
    S->adiag = bsr_malloc(sizeof(int) * (size_t)(n ? n : 1), "IC(0) map");
    S->pos = bsr_malloc(sizeof(int) * (size_t)(n ? n : 1), "IC(0) workspace");
    S->Lw = bsr_malloc(sizeof(double) * ((size_t)nl * bb + 1), "IC(0) workspace");
    S->D = bsr_malloc(sizeof(double) * ((size_t)n * bb + 1), "IC(0) workspace");
    S->Dinv = bsr_malloc(sizeof(double) * ((size_t)n * bb + 1), "IC(0) workspace");
    S->F = bsr_malloc(sizeof(double) * ((size_t)maxrow * bb + 1), "IC(0) workspace");
    if (!S->amap || !S->umap || !S->adiag || !S->pos || !S->Lw || !S->D || !S->Dinv || !S->F) return BSR_ERR_NOMEM;
    int pl = 0, pu = 0;
    S->t.L->rowptr[0] = S->t.U->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        S->adiag[i] = -1;
        S->pos[i] = -1;
        S->t.U->colind[pu++] = i; /* diagonal first: the row stays sorted */
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j < i) { S->amap[pl] = p; S->t.L->colind[pl++] = j; }
            else if (j > i) S->t.U->colind[pu++] = j;
            else S->adiag[i] = p;
        }
        S->t.L->rowptr[i + 1] = pl;
        S->t.U->rowptr[i + 1] = pu;
        if (S->adiag[i] < 0)
            return bsr_error(BSR_ERR_SINGULAR, "precond=ic0: block row %d has no diagonal block", i);
    }
    for (int i = 0; i < n; i++)
        for (int p = S->t.L->rowptr[i]; p < S->t.L->rowptr[i + 1]; p++) {
            int q = bsr_matrix_find(S->t.U, S->t.L->colind[p], i);
            if (q < 0) return bsr_error(BSR_ERR_INTERNAL, "precond=ic0: U lacks the transpose of L(%d,%d)", i, S->t.L->colind[p]);
            S->umap[p] = q;
        }
    return BSR_OK;
}

/* The numeric factorization of A's values into the fixed pattern, then the
 * stored L and U = D L^T in the storage precision.  BSR_ERR_SINGULAR names
 * the first block row whose pivot D_i is not positive definite. */
static bsr_status ic0_values(ic0 *S, const bsr_matrix *A)
{
    const int n = A->nbrows, b = A->b, bb = b * b;
    const int *Lp = S->t.L->rowptr, *Lc = S->t.L->colind;
    for (int i = 0; i < n; i++) {
        const int p0 = Lp[i], p1 = Lp[i + 1];
        double *F = S->F;
        for (int p = p0; p < p1; p++) {
            S->pos[Lc[p]] = p - p0;
            for (int e = 0; e < bb; e++) F[(size_t)(p - p0) * bb + e] = bsr_val_get(A->val, A->prec, (size_t)S->amap[p] * bb + e);
        }
        /* F_ij -= F_ik L_jk^T over the k < j shared by rows i and j, then L_ij = F_ij D_j^{-1} */
        for (int p = p0; p < p1; p++) {
            const int j = Lc[p];
            double *Fij = F + (size_t)(p - p0) * bb;
            for (int q = Lp[j]; q < Lp[j + 1]; q++) {
                int t = S->pos[Lc[q]];
                if (t >= 0) bsr_blk_mulsub_t(b, Fij, F + (size_t)t * bb, S->Lw + (size_t)q * bb);
            }
            bsr_blk_mul(b, S->Lw + (size_t)p * bb, Fij, S->Dinv + (size_t)j * bb);
        }
        /* D_i = A_ii - sum_k F_ik L_ik^T, symmetrized */
        double *Di = S->D + (size_t)i * bb, *Dv = S->Dinv + (size_t)i * bb;
        for (int e = 0; e < bb; e++) Di[e] = bsr_val_get(A->val, A->prec, (size_t)S->adiag[i] * bb + e);
        for (int p = p0; p < p1; p++) {
            bsr_blk_mulsub_t(b, Di, F + (size_t)(p - p0) * bb, S->Lw + (size_t)p * bb);
            S->pos[Lc[p]] = -1;
        }
        if (bsr_pc_pivot_sym(b, Di, Dv))
            return bsr_error(BSR_ERR_SINGULAR, "precond=ic0: the pivot block of block row %d is not positive "
                             "definite (A is not SPD, or IC(0) breaks down on it: use ic2, ssor or jacobi)", i);
    }
    /* stored factors: L, U's inverted diagonal, U_ji = D_j L_ij^T */
    const size_t nl = (size_t)S->t.L->nnzb * bb;
    for (size_t e = 0; e < nl; e++) bsr_val_set(S->t.L->val, S->t.prec, e, S->Lw[e]);
    for (int i = 0; i < n; i++) {
        size_t u0 = (size_t)S->t.U->rowptr[i] * bb;
        for (int e = 0; e < bb; e++) bsr_val_set(S->t.U->val, S->t.prec, u0 + e, S->Dinv[(size_t)i * bb + e]);
    }
    for (int i = 0; i < n; i++)
        for (int p = Lp[i]; p < Lp[i + 1]; p++) {
            const double *Dj = S->D + (size_t)Lc[p] * bb, *l = S->Lw + (size_t)p * bb;
            size_t u0 = (size_t)S->umap[p] * bb;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) {
                    double v = 0;
                    for (int q = 0; q < b; q++) v += Dj[r * b + q] * l[c * b + q];
                    bsr_val_set(S->t.U->val, S->t.prec, u0 + r * b + c, v);
                }
        }
    return BSR_OK;
}

/* Y = M^{-1} X in the vectors' precision. */
static bsr_status ic0_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ic0 *S = pc->data;
    return bsr_pc_tri_apply(&S->t, X, Y);
}

/* New values of A on the pattern of setup: the same factorization, so the
 * same bits as a fresh setup with these values. */
static bsr_status ic0_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    BSR_TRY(bsr_pc_check_symmetric(A, "ic0"));
    return ic0_values(pc->data, A);
}

/* Free the factors, maps, workspace and schedules. */
static void ic0_destroy(bsr_pc *pc)
{
    ic0 *S = pc->data;
    if (!S) return;
    bsr_pc_tri_free(&S->t);
    free(S->amap); free(S->umap); free(S->adiag); free(S->pos);
    free(S->Lw); free(S->D); free(S->Dinv); free(S->F);
    free(S);
}

/* The stored factors of an IC(0) preconditioner: L (unit lower, strict part)
 * and U = D L^T (inverted diagonal blocks); both NULL for other kinds. */
void bsr_pc_ic0_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U)
{
    const int mine = pc && pc->apply == ic0_apply;
    *L = mine ? ((const ic0 *)pc->data)->t.L : NULL;
    *U = mine ? ((const ic0 *)pc->data)->t.U : NULL;
}

/* Setup: the symmetry check, patterns, numeric factorization (stored in
 * o->precond_precision) and the triangular solves' level schedules. */
static bsr_status ic0_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic0"));
    ic0 *S = bsr_calloc(1, sizeof *S, "IC(0) preconditioner");
    if (!S) return BSR_ERR_NOMEM;
    S->t.prec = o->precond_precision;
    pc->data = S;
    BSR_TRY(ic0_pattern(S, A));
    BSR_TRY(ic0_values(S, A));
    BSR_TRY(bsr_levels_build_pair(S->t.L, S->t.U, &S->t.lvL, &S->t.lvU));
    pc->nnzb = (int64_t)S->t.L->nnzb + S->t.U->nnzb;
    snprintf(pc->info, sizeof pc->info, "block IC(0), M = L D L^T on A's pattern, natural order, levels L %d U %d",
             S->t.lvL->nlevels, S->t.lvU->nlevels);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_ic0_cpu_ops = {ic0_setup, ic0_refactor, ic0_apply, ic0_destroy};
