/* SPDX-License-Identifier: BSD-3-Clause */
/* The matching step of the ILU setup (bsr_ilu_options.match): before the
 * ordering, a maximum-product transversal P and scalings Dr, Dc
 * (reorder/match.c) put large blocks on the diagonal; the ordering Q is then
 * computed on P A's graph, so that the factored matrix Q (P Dr A Dc) Q^T is
 * symmetric-permuted as before (ND tree, level schedules unchanged in kind).
 * The permutation and scalings are chosen at setup and kept by refactor
 * (new values are scaled by the setup's Dr, Dc).
 *
 * auto (ilu_setup_auto) considers the matching only where the block-Jacobi
 * scaling would fall back: a block row whose diagonal block is missing, zero
 * or numerically singular (an LU pivot <= 1e-14 of the block's largest entry,
 * the test of ilu_setup.c's scale).  A matrix with every diagonal block
 * regular, e.g. every diagonally dominant generator, is left exactly as it
 * was, at no extra cost.  Otherwise the factors without the matching are
 * computed first and judged by Chow & Saad's stability estimate
 * est = ||(LU)^{-1} e||_inf (ilu_condest): a zero diagonal does not decide
 * alone, since on e05r0000, e05r0500 and fidap004 the matching made BiCGStab
 * 5-15x slower while fasp_lns__131 needs it (it diverges without), and the
 * pivot counts do not tell them apart; est does (ILU2 tau1=1e-2, none / mpt:
 * lns__131 1.0e4 / 10, e05r0000 2.1e3 / 2.6e10, e05r0500 2.3e5 / 2.2e8,
 * fidap004 1.0e3 / 1.6e9).  No threshold on the first est alone separates
 * them (matrices that converge without matching reach 1e7), so above
 * AUTO_EST_MIN the matched factors are computed too and the smaller est wins;
 * below it the factors are plainly stable and the second setup is spared. */
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* est = ||(LU)^{-1} e||_inf below which auto keeps the unmatched factors without
 * trying the matching (hifir_stokes_A, with zero diagonals: 16). */
#define AUTO_EST_MIN 100.0

/* Nonzero when some block row of A has a missing, zero or singular diagonal block. */
int bsr_ilu_diagonal_weak(const bsr_matrix *A)
{
    const int b = A->b, bb = b * b;
    int weak = 0;
    #pragma omp parallel for schedule(static) reduction(| : weak) num_threads(bsr_team(A->nbrows, BSR_ROW_GRAIN))
    for (int i = 0; i < A->nbrows; i++) {
        int diag = -1;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] == i) diag = p;
        if (diag < 0) { weak = 1; continue; }
        double lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        int piv[BSR_MAX_BLOCK];
        for (int e = 0; e < bb; e++)
            lu[e] = A->prec == BSR_DOUBLE ? ((const double *)A->val)[(size_t)diag * bb + e]
                                          : (double)((const float *)A->val)[(size_t)diag * bb + e];
        double amax = bsr_blk_maxabs(b, lu);
        bsr_blk_lu(b, lu, piv, 0.0);
        int singular = amax == 0.0;
        for (int k = 0; k < b; k++) if (fabs(lu[k * b + k]) <= 1e-14 * amax) singular = 1;
        weak |= singular;
    }
    return weak;
}

/* P A's pattern: row j is A's row match[j] (values not set: for the ordering). */
static bsr_status permuted_pattern(const bsr_matrix *A, const int *match, bsr_matrix **PA)
{
    const int n = A->nbrows;
    bsr_matrix *B = bsr_calloc(1, sizeof *B, "matched pattern");
    if (!B) return BSR_ERR_NOMEM;
    *B = (bsr_matrix){.nbrows = n, .nbcols = n, .b = A->b, .nnzb = A->nnzb, .prec = A->prec};
    B->rowptr = bsr_malloc(sizeof(int) * ((size_t)n + 1), "matched pattern");
    B->colind = bsr_malloc(sizeof(int) * ((size_t)A->nnzb + 1), "matched pattern");
    if (!B->rowptr || !B->colind) { free(B->rowptr); free(B->colind); free(B); return BSR_ERR_NOMEM; }
    B->rowptr[0] = 0;
    for (int j = 0; j < n; j++) {
        int r = match[j], len = A->rowptr[r + 1] - A->rowptr[r];
        memcpy(B->colind + B->rowptr[j], A->colind + A->rowptr[r], sizeof(int) * (size_t)len);
        B->rowptr[j + 1] = B->rowptr[j] + len;
    }
    *PA = B;
    return BSR_OK;
}

static void pattern_free(bsr_matrix *B)
{
    if (!B) return;
    free(B->rowptr); free(B->colind); free(B);
}

bsr_status ilu_match_start(bsr_ilu *F, const bsr_matrix *A, bsr_matrix **PA, int **match)
{
    *PA = NULL;
    *match = NULL;
    F->st.match_note = "";
    F->st.match_est_none = F->st.match_est_mpt = -1.0;   /* set by ilu_setup_auto only */
    const int m = F->opt.match;
    if (m == BSR_MATCH_NONE) return BSR_OK;
    double t0 = bsr_now();
    bsr_status s = BSR_OK;
    if (m == BSR_MATCH_AUTO && !bsr_ilu_diagonal_weak(A)) {
        F->st.match_note = "no zero or singular diagonal block";
    } else {
        bsr_matching *M = NULL;
        s = bsr_match_mpt(A, &M);
        if (s == BSR_ERR_SINGULAR && m == BSR_MATCH_AUTO) {
            bsr_clear_error();
            s = BSR_OK;
            F->st.match_note = "structurally singular";
        } else if (!s) {
            s = permuted_pattern(A, M->match, PA);
            if (!s) {
                F->dr = M->dr; F->dc = M->dc; *match = M->match;
                M->dr = M->dc = NULL; M->match = NULL;
                F->st.match_used = 1;
                F->st.match_nperm = M->nperm;
            }
        }
        bsr_matching_free(M);
    }
    F->st.match_s = bsr_now() - t0;
    bsr_prof_mark("ilu setup: matching");
    return s;
}

bsr_status ilu_match_finish(bsr_ilu *F, bsr_matrix *PA, int *match)
{
    bsr_status s = BSR_OK;
    if (PA) {
        F->rsrc = bsr_malloc(sizeof(int) * ((size_t)F->n + 1), "ILU matched rows");
        if (!F->rsrc) s = BSR_ERR_NOMEM;
        else for (int k = 0; k < F->n; k++) F->rsrc[k] = match[F->ord ? F->ord->perm[k] : k];
        /* Dc as blocks in factor order: the scatter's scaling on the device */
        const int b = F->b, bb = b * b;
        if (!s) F->scale_right = bsr_calloc((size_t)F->n * bb, bsr_precision_size(F->prec), "ILU column scaling");
        if (!s && !F->scale_right) s = BSR_ERR_NOMEM;
        for (int k = 0; k < F->n && !s; k++) {
            double c = F->dc[F->ord ? F->ord->perm[k] : k];
            for (int a = 0; a < b; a++) {
                size_t e = (size_t)k * bb + (size_t)a * b + a;
                if (F->prec == BSR_DOUBLE) ((double *)F->scale_right)[e] = c;
                else ((float *)F->scale_right)[e] = (float)c;
            }
        }
    }
    pattern_free(PA);
    free(match);
    return s;
}

/* Chow & Saad's stability estimate of the stored factors: ||(LU)^{-1} e||_inf
 * with e = ones, in the scaled, permuted numbering the factors live in (the
 * left scaling puts every regular diagonal block at I, so the figure is
 * comparable with and without the matching); +inf when it is not finite. */
bsr_status ilu_condest(const bsr_ilu *F, double *est)
{
    const int64_t n = (int64_t)F->n * F->b;
    struct bsr_multivec Tw = {n, 1, F->prec, NULL, NULL, BSR_ON_HOST};
    Tw.data = bsr_malloc(bsr_precision_size(F->prec) * (size_t)(n > 0 ? n : 1), "ILU estimate vector");
    if (!Tw.data) return BSR_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        if (F->prec == BSR_DOUBLE) ((double *)Tw.data)[i] = 1.0;
        else ((float *)Tw.data)[i] = 1.0f;
    }
    bsr_status s = bsr_trsv_lower(F->L, F->lvL, &Tw, &Tw);
    if (!s) s = bsr_trsv_upper(F->U, F->lvU, &Tw, &Tw);
    double m = 0.0;
    for (int64_t i = 0; i < n && !s; i++) {
        double v = F->prec == BSR_DOUBLE ? ((double *)Tw.data)[i] : ((float *)Tw.data)[i];
        if (!isfinite(v)) { m = INFINITY; break; }
        if (fabs(v) > m) m = fabs(v);
    }
    free(Tw.data);
    *est = m;
    return s;
}

/* The setup of match=auto on the host (see the top of this file): F factored
 * without the matching, or with it when A has a weak diagonal, the unmatched
 * factors' est exceeds AUTO_EST_MIN (or they cannot be computed) and the
 * matched ones' est is smaller.  The statistics name the choice and both
 * estimates; refactor keeps the choice (F's permutation and scalings). */
bsr_status ilu_setup_auto(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **Fout)
{
    double t0 = bsr_now();
    bsr_ilu_options o = *opt;
    o.match = BSR_MATCH_NONE;
    bsr_ilu *F = NULL, *G = NULL;
    if (!bsr_ilu_diagonal_weak(A)) {
        BSR_TRY(bsr_ilu_setup(A, &o, &F));
        F->st.match_note = "no zero or singular diagonal block";
        F->st.match_s = bsr_now() - t0 - F->st.setup_s;
        goto done;
    }
    double est0 = -1.0, est1 = -1.0;   /* -1: not computed */
    bsr_status s0 = bsr_ilu_setup(A, &o, &F);
    if (s0 == BSR_ERR_NOMEM) return s0;
    if (s0) bsr_clear_error();   /* the unmatched factorization failed: the matching may still work */
    else if ((s0 = ilu_condest(F, &est0))) { bsr_ilu_destroy(F); return s0; }
    if (F && est0 <= AUTO_EST_MIN) {
        F->st.match_note = "diagonal weak but factors stable";
    } else {
        o.match = BSR_MATCH_MPT;
        bsr_status s1 = bsr_ilu_setup(A, &o, &G);
        if (s1 && F) {   /* keep the unmatched factors */
            if (s1 == BSR_ERR_NOMEM) { bsr_ilu_destroy(F); return s1; }
            bsr_clear_error();
            F->st.match_note = s1 == BSR_ERR_SINGULAR ? "structurally singular" : "the matched factorization failed";
        } else if (s1) {
            return s1;   /* neither factorization: the matched one's error */
        } else {
            bsr_status se = ilu_condest(G, &est1);
            if (se) { bsr_ilu_destroy(F); bsr_ilu_destroy(G); return se; }
            if (!F || est1 < est0) { bsr_ilu_destroy(F); F = G; }
            else { bsr_ilu_destroy(G); F->st.match_note = "matched factors less stable"; }
        }
    }
    F->st.match_est_none = est0;
    F->st.match_est_mpt = est1;
    F->st.match_s = bsr_now() - t0 - F->st.setup_s;
done:
    F->opt.match = opt->match;
    F->st.setup_s = bsr_now() - t0;
    *Fout = F;
    return BSR_OK;
}
