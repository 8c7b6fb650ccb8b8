/* SPDX-License-Identifier: BSD-3-Clause */
/* Growth-weighted (inverse-based) dropping for a threshold factorization
 * that came out unstable.
 *
 * Bollhoefer's rule ("A robust ILU with pivoting based on monitoring the
 * growth of the inverse factors", 2001; ILUPACK, INMOST's MPTILUC) drops an
 * entry of L by its effect on L^{-1}: dropping l_ki perturbs L^{-1} by about
 * L^{-1} e_k l_ki e_i^T L^{-1}, so the test is ||l_ki|| ||e_i^T L^{-1}|| < tau
 * rather than ||l_ki|| < tau; an entry u_kj of U likewise by
 * ||u_kj|| ||U^{-1} e_k||.  Where the inverse factors grow (on indefinite
 * coupled systems: in the separators of the nested dissection, where the
 * Schur complements carry the operator's near-zero smooth modes) fewer
 * blocks are dropped, and where they do not the factor is as before.
 *
 * The row form of the factorization forms row k from finished rows, and the
 * column estimate of U^{-1} at k needs column k of U, which it does not
 * have; so the estimates come from a first factorization with the plain
 * thresholds (ilu_stab.c: the greedy lower bounds l_k, u_k of the row norms
 * of L^{-1} and column norms of U^{-1}), and only when they show growth past
 * ILU_GROW_TRIGGER the rows are factored again with the weights
 *     g^L_i = clamp(l_i / ILU_GROW_REF, 1, ILU_GROW_MAX),   (for l_ki)
 *     g^U_k = clamp(u_k / ILU_GROW_REF, 1, ILU_GROW_MAX),   (for u_kj)
 * (ilu_row: a block's norm is compared with the thresholds times its
 * weight).  The weights only grow from pass to pass (the estimates of the
 * new factor join the old ones), at most ILU_GROW_PASSES refactorizations.
 * A factorization whose estimates stay below the trigger is left exactly as
 * it was: the estimate is read-only, so the stable systems' factors, and the
 * solves with them, are unchanged bit for bit. */
#include "ilu_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef ILU_GROW_TRIGGER
#define ILU_GROW_TRIGGER 1e3    /* estimate past which the weights are used */
#endif
#ifndef ILU_GROW_REF
#define ILU_GROW_REF 10.0       /* estimates up to this weigh 1 (leaves of ND stay as they were) */
#endif
#ifndef ILU_GROW_MAX
#define ILU_GROW_MAX 1e3        /* largest weight: tau1 1e-2 becomes at most 1e-5 */
#endif
#ifndef ILU_GROW_PASSES
#define ILU_GROW_PASSES 1       /* a second pass gave the same iterations (coupled3d:12,5,shift=0: 22, 22) */
#endif

/* Weight of estimate e (Inf/NaN: the largest). */
static double grow_weight(double e, double ref, double gmax)
{
    if (!(e <= gmax * ref)) return gmax;
    return e > ref ? e / ref : 1.0;
}

bsr_status ilu_grow_begin(bsr_ilu *F)
{
    if (F->mode != 1 || F->use_fz || F->opt.grow != 2 || F->pattern_only) return BSR_OK;
    const size_t n = (size_t)F->n + 1;
    F->grow_l = bsr_malloc(sizeof(double) * n, "ILU growth weights");
    F->grow_x = bsr_malloc(sizeof(double) * n * F->b, "ILU growth estimate");
    if (!F->grow_l || !F->grow_x) {
        free(F->grow_l); free(F->grow_x);
        F->grow_l = F->grow_x = NULL;
        return BSR_ERR_NOMEM;
    }
    for (size_t k = 0; k < n; k++) F->grow_l[k] = 1.0;   /* set again by each row as it is done */
    return BSR_OK;
}

void ilu_grow_row(bsr_ilu *F, int k, const ilu_row_t *r)
{
    const int b = F->b, bb = b * b;
    double sk[BSR_MAX_BLOCK] = {0}, e = 0.0;
    for (int q = 0; q < r->nl; q++) {
        const double *l = r->lval + (size_t)q * bb, *xi = F->grow_x + (size_t)r->lcol[q] * b;
        for (int i = 0; i < b; i++)
            for (int j = 0; j < b; j++) sk[i] += l[i * b + j] * xi[j];
    }
    double *xk = F->grow_x + (size_t)k * b;
    for (int i = 0; i < b; i++) {   /* the sign making |x_ki| largest, as ilu_stab.c chooses it */
        xk[i] = sk[i] > 0 ? -1.0 - sk[i] : 1.0 - sk[i];
        if (!(fabs(xk[i]) <= e)) e = fabs(xk[i]);   /* NaN: the largest weight */
    }
    F->grow_l[k] = grow_weight(e, ILU_GROW_REF, ILU_GROW_MAX);
}

/* After a threshold factorization of F (its L and U assembled): estimate
 * the growth and, past the trigger, factor again with growth weights (see
 * the top of the file); the statistics say how many passes ran. */
bsr_status ilu_grow_stabilize(bsr_ilu *F, bsr_status fs)
{
    F->st.grow_passes = 0;
    F->st.grow_est0 = F->st.grow_est = 0.0;
    if (fs) {
        free(F->grow_l); free(F->grow_x);
        F->grow_l = F->grow_x = NULL;
        return fs;
    }
    if (F->grow_x) {   /* grow=2: the weights were made while factoring; their largest estimate */
        double e = 0.0;
        for (int64_t q = 0; q < (int64_t)F->n * F->b; q++)
            if (!(fabs(F->grow_x[q]) <= e)) e = fabs(F->grow_x[q]);
        F->st.grow_est0 = F->st.grow_est = e;
        free(F->grow_l); free(F->grow_x);
        F->grow_l = F->grow_x = NULL;
        return BSR_OK;
    }
    if (F->mode != 1 || F->use_fz || F->opt.grow != 1 || F->pattern_only) return BSR_OK;
    const double trig = ILU_GROW_TRIGGER, ref = ILU_GROW_REF, gmax = ILU_GROW_MAX;
    const int passes = ILU_GROW_PASSES;
    const int n = F->n;
    double *lr = bsr_malloc(sizeof(double) * ((size_t)n + 1) * 2, "ILU growth estimates");
    double *g = bsr_malloc(sizeof(double) * ((size_t)n + 1) * 2, "ILU growth weights");
    if (!lr || !g) { free(lr); free(g); return BSR_ERR_NOMEM; }
    double *ur = lr + n + 1;
    for (int k = 0; k < 2 * (n + 1); k++) g[k] = 1.0;
    bsr_status s = BSR_OK;
    for (int pass = 0;; pass++) {
        bsr_ilu_stab st;
        memset(&st, 0, sizeof st);
        st.l_row = lr; st.u_row = ur;
        F->valid = 1;   /* the factors just made (bsr_ilu_stability asks); numeric() sets it again on success */
        s = bsr_ilu_stability(F, &st);
        F->valid = 0;
        if (s) break;
        double e = st.l_max > st.u_max || !isfinite(st.l_max) ? st.l_max : st.u_max;
        if (pass == 0) F->st.grow_est0 = e;
        F->st.grow_est = e;
        if (e <= trig || pass >= passes) break;
        for (int k = 0; k < n; k++) {
            double wl = grow_weight(lr[k], ref, gmax), wu = grow_weight(ur[k], ref, gmax);
            if (wl > g[k]) g[k] = wl;
            if (wu > g[n + 1 + k]) g[n + 1 + k] = wu;
        }
        F->grow_l = g;
        F->grow_u = g + n + 1;
        F->st.grow_passes = pass + 1;
        s = ilu_factor(F);
        if (s) break;
    }
    free(lr);
    free(g);   /* the weights served the refactorizations only */
    F->grow_l = F->grow_u = NULL;
    return s;
}
