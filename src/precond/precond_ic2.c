/* SPDX-License-Identifier: BSD-3-Clause */
/* Block incomplete Cholesky with ILU2's two thresholds (precond=ic2): the
 * symmetric form of ILU2, for symmetric positive definite A under CG.
 *
 * B = P A P^T (the ordering of reorder=, default RCM) is factored row by row
 * (up-looking; the rows holding a block in column i are found through
 * linked columns, as in Jones and Plassmann's ICF) into M = U^T D^{-1} U,
 * U's row i being the pivot D_i and the blocks u_ij, j > i; in L D L^T form
 * L_ji = (D_i^{-1} u_ij)^T.  Row i starts from B's upper row i and takes the
 * update of every earlier row k holding a block c_ki, with l_ik = c_ki^T D_k^{-1}:
 *   c_ki first order (kept in U):   w_ij -= l_ik c_kj for every block of row k with j >= i;
 *   c_ki second order (W, used for updates only): w_ij -= l_ik u_kj over row k's
 *     first-order blocks with j > i (a second-order block times a second-order
 *     block is never formed, ILU2's rule).
 * D_i = w_ii, symmetrized and checked positive definite; each w_ij, j > i,
 * is classified on its multiplier in the Jacobi-scaled matrix
 * (s = |diag B|^{-1/2}), key = ||s_j (D_i^{-1} w_ij)^T / s_i||_F:
 *   key >= tau1 sqrt(b), or (i,j) a block of B (keep_pattern): first order;
 *   key >= tau2 sqrt(b): second order; else dropped.
 * (k,i) and its transpose are one decision, so M is symmetric by
 * construction.  A pivot that is not positive definite restarts the
 * factorization of B + alpha diag(B) (Manteuffel's shift), alpha = 1e-3
 * multiplied by 4 up to 5 times (0.256); the shift is reported.  Refactor factors
 * new values into the setup's pattern and classes (nothing created, nothing
 * dropped), with the same shift rule, the rows of a level of its schedule on
 * the library's team (ic2_factor.c): the same bits on any number of threads.
 * Applying M^{-1} is one level-scheduled lower and one upper solve on the
 * stored L and U = D L^T, between the ordering's permutations. */
#include "ic2_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Y = M^{-1} X: the ordering's permutation, the two triangular solves, back. */
static bsr_status ic2_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ic2 *S = pc->data;
    if (!S->valid)
        return bsr_error(BSR_ERR_ARG, "precond=ic2: the last factorization failed; refactor (or set up) again before solving");
    if (!S->ord) return bsr_pc_tri_apply(&S->t, X, Y);
    const int k = bsr_multivec_cols(X);
    const bsr_precision p = bsr_multivec_precision(X);
    if (!S->px || bsr_multivec_cols(S->px) != k || bsr_multivec_precision(S->px) != p) {
        bsr_multivec_destroy(S->px);
        bsr_multivec_destroy(S->py);
        S->px = S->py = NULL;
        BSR_TRY(bsr_multivec_create(&S->px, bsr_multivec_rows(X), k, p));
        BSR_TRY(bsr_multivec_create(&S->py, bsr_multivec_rows(X), k, p));
    }
    BSR_TRY(bsr_permute_vec(S->ord, S->b, X, S->px));
    BSR_TRY(bsr_pc_tri_apply(&S->t, S->px, S->py));
    return bsr_permute_vec_inv(S->ord, S->b, S->py, Y);
}

/* New values of A on the pattern of setup: factored into the setup's
 * pattern and classes. */
static bsr_status ic2_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ic2 *S = pc->data;
    S->valid = 0;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic2"));
    return ic2_numeric(S, A, 1);
}

static void ic2_destroy(bsr_pc *pc)
{
    ic2 *S = pc->data;
    if (!S) return;
    bsr_pc_tri_free(&S->t);
    bsr_ordering_free(S->ord);
    bsr_multivec_destroy(S->px);
    bsr_multivec_destroy(S->py);
    ic2_free_factor(S);
    free(S);
}

void bsr_pc_ic2_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U, const int **perm)
{
    const int mine = pc && pc->apply == ic2_apply;
    const ic2 *S = mine ? pc->data : NULL;
    *L = S ? S->t.L : NULL;
    *U = S ? S->t.U : NULL;
    *perm = S && S->ord ? S->ord->perm : NULL;
}

/* Setup: the symmetry check, the ordering (reorder=, default RCM), the
 * factorization by the thresholds (stored in o->precond_precision) and the
 * triangular solves' level schedules. */
static bsr_status ic2_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic2"));
    ic2 *S = bsr_calloc(1, sizeof *S, "IC2 preconditioner");
    if (!S) return BSR_ERR_NOMEM;
    pc->data = S;
    const int n = A->nbrows, b = A->b;
    S->n = n;
    S->b = b;
    S->t.prec = o->precond_precision;
    S->keep = bsr_keep_pattern(o);
    S->cap = o->cap == BSR_CAP_DEFAULT ? 0 : o->cap;   /* bounded work unless asked otherwise */
    S->t1 = o->tau1 * sqrt((double)b);
    S->t2 = bsr_ilu_tau2(BSR_ILU2, o->tau1, o->tau2) * sqrt((double)b);
    bsr_order_options oo;
    bsr_order_options_default(&oo, BSR_ORDER_RCM);
    if (o->reorder[0]) BSR_TRY(bsr_order_parse(o->reorder, &oo));
    if (oo.kind != BSR_ORDER_NATURAL) BSR_TRY(bsr_order(A, &oo, &S->ord));
    BSR_TRY(ic2_numeric(S, A, 0));
    BSR_TRY(bsr_levels_build_pair(S->t.L, S->t.U, &S->t.lvL, &S->t.lvU));
    pc->nnzb = (int64_t)S->t.L->nnzb + S->t.U->nnzb;
    char capname[16];
    const double fill = A->nnzb ? (double)(2 * S->n1 + n) / A->nnzb : 0;
    snprintf(pc->info, sizeof pc->info,
             "block IC2 (tau1=%g,tau2=%g,cap=%s), M = L D L^T, order %s, fill %.2f (second-order blocks %lld), "
             "shift %g, levels L %d U %d", o->tau1, bsr_ilu_tau2(BSR_ILU2, o->tau1, o->tau2),
             bsr_cap_name(S->cap, capname), S->ord ? bsr_order_kind_name(S->ord->kind) : "natural", fill, (long long)S->n2, S->alpha,
             S->t.lvL->nlevels, S->t.lvU->nlevels);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_ic2_cpu_ops = {ic2_setup, ic2_refactor, ic2_apply, ic2_destroy};
