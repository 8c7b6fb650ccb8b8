/* SPDX-License-Identifier: BSD-3-Clause */
/* Stability diagnostics of a host ILU factorization: per block row k of the
 * stored factors (scaled, permuted numbering) an incremental estimate of the
 * growth of the inverse factors and the condition number of the pivot block.
 *
 * The estimator is the one ILUPACK's and INMOST's MPTILUC monitor while
 * factoring (Bollhoefer, "A robust ILU with pivoting based on monitoring the
 * growth of the inverse factors", 2001): solve L x = c with c_k in {-1,+1}^b
 * chosen row by row, greedily, so that |x_k| is as large as it can be given
 * x_0..x_{k-1}.  Since ||c||_inf = 1, |x_{k,i}| <= ||e_{k,i}^T L^{-1}||_1: each
 * row's figure is a lower bound of that row's norm of L^{-1}, and their
 * running maximum one of ||L^{-1}||_inf over the rows so far.  U is treated
 * alike through U^T y = c, giving lower bounds of the column norms
 * ||U^{-1} e_{k,i}||_1.  Both are one pass over the factor, O(nnz b^2). */
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <string.h>

/* Block p of a factor as double. */
static void stab_block(const bsr_matrix *M, int64_t p, double *out)
{
    const int bb = M->b * M->b;
    if (M->prec == BSR_DOUBLE) memcpy(out, (const double *)M->val + (size_t)p * bb, sizeof(double) * bb);
    else for (int e = 0; e < bb; e++) out[e] = ((const float *)M->val)[(size_t)p * bb + e];
}

/* Decade bin of v: floor(log10 v) clamped to 0..BSR_STAB_DECADES-2, the last
 * bin for Inf/NaN. */
static int stab_bin(double v)
{
    if (!isfinite(v)) return BSR_STAB_DECADES - 1;
    if (v < 10.0) return 0;
    int d = (int)floor(log10(v));
    return d > BSR_STAB_DECADES - 2 ? BSR_STAB_DECADES - 2 : d;
}

/* v > m, Inf/NaN above every finite value (a NaN estimate is an overflowed one). */
static int stab_above(double v, double m)
{
    if (!isfinite(v)) return isfinite(m);
    return v > m;
}

/* Tree level of factor row k when it lies in a separator of ord's tree,
 * -1 when it lies in a leaf or there is no tree. */
static int stab_sep_level(const bsr_ordering *ord, int k)
{
    if (!ord || !ord->nnodes) return -1;
    for (int t = 0; t < ord->nnodes; t++) {
        const bsr_tree_node *nd = &ord->nodes[t];
        if (k >= nd->sep_first && k < nd->last)
            return nd->child[0] < 0 && nd->child[1] < 0 ? -1 : nd->level;
    }
    return -1;
}

/* lev[k] = stab_sep_level(ord, k) for every row, in O(n + nodes) instead of
 * O(n nodes) (1M rows, 511 nodes: 5e8 steps), each node's own rows
 * [sep_first, last) being disjoint from the others'. */
static void stab_sep_levels(const bsr_ordering *ord, int n, int *lev)
{
    for (int k = 0; k < n; k++) lev[k] = -1;
    if (!ord || !ord->nnodes) return;
    for (int t = 0; t < ord->nnodes; t++) {
        const bsr_tree_node *nd = &ord->nodes[t];
        if (nd->child[0] < 0 && nd->child[1] < 0) continue;   /* a leaf: -1 */
        for (int k = nd->sep_first; k < nd->last && k < n; k++)
            if (k >= 0) lev[k] = nd->level;
    }
}

/* The greedy step of U^T y = c for one block row: with M = D_k^{-T} and the
 * accumulated s (b entries), choose c in {-1,+1}^b maximizing ||M (c - s)||_inf
 * (for component i the best is sum_j |M_ij| + |(M s)_i|), write y = M (c - s)
 * and return ||y||_inf. */
static double stab_step_u(int b, const double *M, const double *s, double *y)
{
    double ms[BSR_MAX_BLOCK], best = -1.0;
    int bi = 0;
    for (int i = 0; i < b; i++) {
        double a = 0.0, r = 0.0;
        for (int j = 0; j < b; j++) { a += M[i * b + j] * s[j]; r += fabs(M[i * b + j]); }
        ms[i] = a;
        double v = r + fabs(a);
        if (!(v <= best)) { best = v; bi = i; }   /* NaN wins: it is reported */
    }
    double sg = ms[bi] > 0 ? -1.0 : 1.0, c[BSR_MAX_BLOCK];
    for (int j = 0; j < b; j++) c[j] = sg * (M[bi * b + j] < 0 ? -1.0 : 1.0) - s[j];
    double m = 0.0;
    for (int i = 0; i < b; i++) {
        double a = 0.0;
        for (int j = 0; j < b; j++) a += M[i * b + j] * c[j];
        y[i] = a;
        if (!isfinite(a)) m = INFINITY;
        else if (fabs(a) > m) m = fabs(a);
    }
    return m;
}

/* 1-norm (largest column sum) of a b x b block. */
static double stab_norm1(int b, const double *a)
{
    double m = 0.0;
    for (int j = 0; j < b; j++) {
        double s = 0.0;
        for (int i = 0; i < b; i++) s += fabs(a[i * b + j]);
        if (!isfinite(s)) return INFINITY;
        if (s > m) m = s;
    }
    return m;
}

/* Fill out with the growth estimates of L^{-1} and U^{-1} and the pivot
 * condition numbers of F's stored factors (see the top of this file); the
 * per-row arrays out->l_row, u_row, piv_cond are filled when the caller set
 * them (n entries each); out->thresh <= 0 means 1e4. */
bsr_status bsr_ilu_stability(const bsr_ilu *F, bsr_ilu_stab *out)
{
    BSR_CHECK_ARG(F && out, "bsr_ilu_stability: NULL argument");
    BSR_CHECK_ARG(F->valid && F->L && F->U,
                  "bsr_ilu_stability: no host factors (values computed on the device, or a failed factorization)");
    double *lr = out->l_row, *ur = out->u_row, *pc = out->piv_cond;
    double th = out->thresh > 0 ? out->thresh : 1e4;
    memset(out, 0, sizeof *out);
    out->l_row = lr; out->u_row = ur; out->piv_cond = pc;
    out->thresh = th;
    const int n = F->n, b = F->b, bb = b * b;
    out->n = n;
    out->b = b;
    out->l_at = out->u_at = out->piv_at = out->first = -1;
    out->l_max = out->u_max = out->piv_max = 0.0;
    out->max_leaf = out->max_sep = 0.0;
    double *x = bsr_malloc(sizeof(double) * ((size_t)n * b * 2 + 4 * (size_t)bb + 1), "ILU stability estimate");
    int *levs = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU stability estimate");
    if (!x || !levs) { free(x); free(levs); return BSR_ERR_NOMEM; }
    stab_sep_levels(F->ord, n, levs);
    double *s = x + (size_t)n * b, *blk = s + (size_t)n * b, *dinv = blk + bb, *d = dinv + bb, *mt = d + bb;
    memset(s, 0, sizeof(double) * (size_t)n * b);
    const bsr_matrix *L = F->L, *U = F->U;
    for (int k = 0; k < n; k++) {
        /* L: x_k = c_k - sum_j L_kj x_j, c_k = -sign of the sum (unit diagonal) */
        double sk[BSR_MAX_BLOCK] = {0};
        for (int p = L->rowptr[k]; p < L->rowptr[k + 1]; p++) {
            stab_block(L, p, blk);
            const double *xj = x + (size_t)L->colind[p] * b;
            for (int i = 0; i < b; i++)
                for (int j = 0; j < b; j++) sk[i] += blk[i * b + j] * xj[j];
        }
        double le = 0.0;
        for (int i = 0; i < b; i++) {
            double v = sk[i] > 0 ? -1.0 - sk[i] : 1.0 - sk[i];
            x[(size_t)k * b + i] = v;
            if (!isfinite(v)) le = INFINITY;
            else if (fabs(v) > le) le = fabs(v);
        }
        /* U^T: y_k = D_k^{-T} (c_k - s_k), then s_j += U_kj^T y_k for j > k */
        int p0 = U->rowptr[k];
        stab_block(U, p0, dinv);        /* the stored, inverted pivot */
        for (int i = 0; i < b; i++)
            for (int j = 0; j < b; j++) mt[i * b + j] = dinv[j * b + i];
        double yk[BSR_MAX_BLOCK];
        double ue = stab_step_u(b, mt, s + (size_t)k * b, yk);
        for (int p = p0 + 1; p < U->rowptr[k + 1]; p++) {
            stab_block(U, p, blk);
            double *sj = s + (size_t)U->colind[p] * b;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) sj[c] += blk[r * b + c] * yk[r];
        }
        /* pivot: ||D_k||_1 ||D_k^{-1}||_1 with D_k the inverse of the stored inverse */
        double pcnd;
        if (!bsr_blk_finite(b, dinv)) pcnd = INFINITY;
        else {
            bsr_blk_inv(b, dinv, d, 0.0);
            pcnd = stab_norm1(b, d) * stab_norm1(b, dinv);
            if (!isfinite(pcnd)) pcnd = INFINITY;
        }
        if (lr) lr[k] = le;
        if (ur) ur[k] = ue;
        if (pc) pc[k] = pcnd;
        out->hist_l[stab_bin(le)]++;
        out->hist_u[stab_bin(ue)]++;
        out->hist_piv[stab_bin(pcnd)]++;
        if (out->l_at < 0 || stab_above(le, out->l_max)) { out->l_max = le; out->l_at = k; }
        if (out->u_at < 0 || stab_above(ue, out->u_max)) { out->u_max = ue; out->u_at = k; }
        if (out->piv_at < 0 || stab_above(pcnd, out->piv_max)) { out->piv_max = pcnd; out->piv_at = k; }
        double g = stab_above(ue, le) ? ue : le;
        int lev = levs[k];
        if (lev < 0) { if (stab_above(g, out->max_leaf)) out->max_leaf = g; }
        else if (stab_above(g, out->max_sep)) out->max_sep = g;
        if (stab_above(g, th)) {
            out->over++;
            if (lev >= 0) out->over_sep++;
            if (out->first < 0) { out->first = k; out->first_which = stab_above(ue, le) ? 'U' : 'L'; }
        }
        if (lev >= 0) out->sep_rows++;
    }
    free(x);
    free(levs);
    if (n > 0) {
        out->l_src = ilu_src_row(F, out->l_at);
        out->u_src = ilu_src_row(F, out->u_at);
        out->piv_src = ilu_src_row(F, out->piv_at);
    }
    out->first_src = out->first >= 0 ? ilu_src_row(F, out->first) : -1;
    out->first_sep_level = out->first >= 0 ? stab_sep_level(F->ord, out->first) : -1;
    out->l_sep_level = n > 0 ? stab_sep_level(F->ord, out->l_at) : -1;
    out->u_sep_level = n > 0 ? stab_sep_level(F->ord, out->u_at) : -1;
    return BSR_OK;
}
