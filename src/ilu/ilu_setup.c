/* SPDX-License-Identifier: BSD-3-Clause */
/* Block ILU set-up in two phases: the symbolic value (ilu_sym_build:
 * options, matching, ordering, map of A, ILU(0)'s patterns and schedules),
 * finished before any numbers exist, and the host numeric value made from it
 * (ilu_num_host: scaling, factorization, statistics; its arrays allocated by
 * the first call); bsr_ilu_setup = both, refactor = the numeric one again.
 * Also the pattern pass of values computed on a device, and the accessors.
 *
 * Scaling (chosen once for all kinds; ilu_scale.c): block Jacobi from the left,
 *     Ahat = Ds P A P^T,   Ds = diag(A_kk^{-1}),
 * so that every scaled diagonal block is the identity and the thresholds
 * compare blocks on the scale of I (||I||_F = sqrt(b): a block is
 * first-order when its scaled Frobenius norm is >= tau1*sqrt(b)).  Left
 * scaling only: it leaves the right-preconditioned Krylov iterate untouched,
 * and M^{-1} = P^T U^{-1} L^{-1} Ds P undoes it in the solve (the factors'
 * scale_left is Ds, scale_right NULL).  A missing or numerically singular
 * A_kk (pivot below 1e-14 of its largest entry) falls back to Ds_k = I / s_k
 * with s_k the largest block norm of the row / sqrt(b), and is counted.
 *
 * Refactor: ordering, symbolic map of A onto the permuted rows, the
 * scaled-A / scaling / pivot arrays, the per-thread workspaces, the L/U
 * arrays and level schedules are reused (values overwritten in place).
 * ILUT/ILU2: the pattern the setup's thresholds chose is frozen (F->fz) and
 * the new values factored into it; pattern = refresh re-runs the dropping
 * from scratch instead (so it equals a fresh setup bit for bit) and keeps
 * L/U arrays and level schedules only when the new pattern is the same.
 * Memory beyond L and U: A in double (scaled, permuted), three n*b*b double
 * arrays (scaling, pivots, scaling in the factors' precision), and while
 * factoring the rows in double (freed after L and U are assembled). */
#include "ilu_impl.h"
#include "order_ahead.h"
#include "blockops.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

/* Defaults for kind: natural order, tau1/tau2, pivot rule, threads. */
void bsr_ilu_options_default(bsr_ilu_options *o, bsr_ilu_kind kind)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->tau1 = 1e-2;
    o->tau2 = 0.0;
    bsr_order_options_default(&o->order, BSR_ORDER_ND);
    o->parallel = 1;
    o->pivot_rel = 1e-8;
    o->strict_pivots = 0;
    o->prec = -1;
    o->cap = BSR_ILU_CAP_NONE;   /* as the solver's (bsr_solver_options.cap) */
}

/* The second-order drop tolerance in force: tau2 (> 0) or tau1^2 for ILU2,
 * tau1 for the other kinds. */
double bsr_ilu_tau2(bsr_ilu_kind kind, double tau1, double tau2)
{
    return kind == BSR_ILU2 ? (tau2 > 0 ? tau2 : tau1 * tau1) : tau1;
}

/* Free the pattern F holds, wherever it lives (host L, U, their schedules
 * and the frozen pattern; the device's): at destroy, and before a pattern
 * pass, which chooses it again and may make it elsewhere than the last one
 * (the host's rows where the device's overflow). */
static void pattern_forget(bsr_ilu *F)
{
    bsr_matrix_destroy(F->L); bsr_matrix_destroy(F->U);
    F->L = F->U = NULL;
    if (F->lvL) bsr_levels_free(F->lvL);
    if (F->lvU) bsr_levels_free(F->lvU);
    F->lvL = F->lvU = NULL;
    ilu_pattern_free(F->fz);
    F->fz = NULL;
    if (F->dsym && F->dsym_free) F->dsym_free(F->dsym);
    F->dsym = NULL;
}

/* Free a factorization and everything it owns (NULL-safe). */
void bsr_ilu_destroy(bsr_ilu *F)
{
    if (!F) return;
    ilu_rows_free(F, 1);
    ilu_work_release(F);
    free(F->pool);
    free(F->apply_ws);
    if (F->ord) bsr_ordering_free(F->ord);
    bsr_tree_levels_free(&F->tlv);
    free(F->ap); free(F->ac); free(F->asrc); free(F->aval); free(F->rowref);
    free(F->dl); free(F->scale_left); free(F->piv); free(F->xrow);
    free(F->rsrc); free(F->dr); free(F->dc); free(F->scale_right);
    pattern_forget(F);
    free(F);
}

/* Check options and derive the thresholds. */
static bsr_status check_options(const bsr_ilu_options *o, int b, bsr_ilu *F)
{
    BSR_CHECK_ARG(o->kind == BSR_ILU0 || o->kind == BSR_ILUT || o->kind == BSR_ILU2,
                  "bsr_ilu_setup: unknown kind %d", (int)o->kind);
    BSR_CHECK_ARG(isfinite(o->tau1) && o->tau1 >= 0, "bsr_ilu_setup: tau1 = %g must be >= 0", o->tau1);
    BSR_CHECK_ARG(!isnan(o->tau2), "bsr_ilu_setup: tau2 is NaN");
    BSR_CHECK_ARG(o->prec == -1 || o->prec == BSR_DOUBLE || o->prec == BSR_FLOAT,
                  "bsr_ilu_setup: bad factor precision %d", o->prec);
    BSR_CHECK_ARG(isfinite(o->pivot_rel) && o->pivot_rel < 1, "bsr_ilu_setup: pivot_rel = %g must be < 1", o->pivot_rel);
    double tau2 = bsr_ilu_tau2(o->kind, o->tau1, o->tau2);
    BSR_CHECK_ARG(tau2 <= o->tau1, "bsr_ilu_setup: tau2 = %g must be <= tau1 = %g", tau2, o->tau1);
    BSR_CHECK_ARG(o->pattern == BSR_PATTERN_FROZEN || o->pattern == BSR_PATTERN_REFRESH,
                  "bsr_ilu_setup: pattern = %d (0 frozen, 1 refresh)", o->pattern);
    BSR_CHECK_ARG(isfinite(o->fill) && o->fill >= 0, "bsr_ilu_setup: fill = %g must be >= 0", o->fill);
    BSR_CHECK_ARG(o->max_work >= 0 && o->max_work <= 1e18, "bsr_ilu_setup: max_work = %g must be in [0, 1e18]",
                  o->max_work);
    BSR_CHECK_ARG(o->cap >= BSR_ILU_CAP_NONE, "bsr_ilu_setup: cap = %d (0 auto, P > 0, %d none)", o->cap,
                  BSR_ILU_CAP_NONE);
    F->mode = o->kind == BSR_ILU0 ? 0 : 1;
    F->t1 = o->tau1 * sqrt((double)b);
    F->t2 = tau2 * sqrt((double)b);
    F->st.tau1 = o->kind == BSR_ILU0 ? 0 : o->tau1;
    F->pivot_rel = o->pivot_rel > 0 ? o->pivot_rel : 1e-8;
    return BSR_OK;
}

/* Row k of the map: A's row ilu_src_row(k) as (new column, source block), sorted by
 * new column (insertion: rows are short), at ap[k]; marks A's columns seen;
 * returns 1 when the row's source blocks are its own places (asrc[p] = p).
 * A mark is written only when missing: in RCM or centre order the rows of
 * one thread's chunk have their columns all over A, on the cache lines of
 * every other thread's, and writing each column's mark once per block (7
 * times on a 3D stencil) kept those lines moving between the cores. */
static int map_row(bsr_ilu *F, const bsr_matrix *A, int k, unsigned char *seen)
{
    const int *iperm = F->ord ? F->ord->iperm : NULL;
    int r = ilu_src_row(F, k), p0 = A->rowptr[r], len = A->rowptr[r + 1] - p0, q0 = F->ap[k];
    int moved = 0;
    for (int t = 0; t < len; t++) {
        int c = A->colind[p0 + t], nc = iperm ? iperm[c] : c, q = q0 + t;
        if (!__atomic_load_n(&seen[c], __ATOMIC_RELAXED)) __atomic_store_n(&seen[c], 1, __ATOMIC_RELAXED);
        while (q > q0 && F->ac[q - 1] > nc) { F->ac[q] = F->ac[q - 1]; F->asrc[q] = F->asrc[q - 1]; q--; }
        moved |= q != q0 + t;
        F->ac[q] = nc;
        F->asrc[q] = p0 + t;
    }
    return !moved && p0 == q0;
}

/* Map A onto the permuted rows: row k of P A P^T lists (new column, source
 * block) sorted by new column.  Empty rows/columns are structural singularity
 * (the smallest permuted row, then the smallest column, is named, as a serial
 * sweep would).  Row lengths, prefix sum, rows filled in parallel: the first
 * touch of the big arrays ac/asrc is spread over the threads. */
static bsr_status build_map(bsr_ilu *F, const bsr_matrix *A)
{
    const int n = F->n;
    F->ap = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU map");
    F->ac = bsr_malloc(sizeof(int) * ((size_t)A->nnzb + 1), "ILU map");
    F->asrc = bsr_malloc(sizeof(int) * ((size_t)A->nnzb + 1), "ILU map");
    unsigned char *seen = bsr_calloc((size_t)n + 1, 1, "ILU map");
    if (!F->ap || !F->ac || !F->asrc || !seen) { free(seen); return BSR_ERR_NOMEM; }
    int empty = n, nocol = n;
    F->ap[0] = 0;
    #pragma omp parallel for schedule(static) reduction(min : empty) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) {
        int r = ilu_src_row(F, k);
        F->ap[k + 1] = A->rowptr[r + 1] - A->rowptr[r];
        if (F->ap[k + 1] == 0 && k < empty) empty = k;
    }
    if (empty < n) {
        free(seen);
        return bsr_error(BSR_ERR_SINGULAR, "ILU: block row %d of A is empty: A is structurally singular",
                         ilu_src_row(F, empty));
    }
    bsr_scan_par(F->ap + 1, n);   /* the total is A's nnzb */
    int ident = 1;
    #pragma omp parallel for schedule(static) reduction(&& : ident) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) ident = map_row(F, A, k, seen) && ident;
    F->asrc_id = ident;
    #pragma omp parallel for schedule(static) reduction(min : nocol) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int c = 0; c < n; c++)
        if (!seen[c] && c < nocol) nocol = c;
    free(seen);
    if (nocol < n)
        return bsr_error(BSR_ERR_SINGULAR, "ILU: block column %d of A is empty: A is structurally singular", nocol);
    return BSR_OK;
}

/* Nonzero when the ND tree can drive the parallel factorization: P A P^T
 * is in p-bordered form for it (reorder's checker, run on a view of the
 * permuted pattern; fill then stays inside the same ancestor relation), and
 * the children of each node exactly cover [first, sep_first) so that the
 * recursion reaches every row once. */
static int tree_usable(const bsr_ilu *F)
{
    const bsr_ordering *o = F->ord;
    if (!o || o->nnodes <= 0 || !o->nodes) return 0;
    bsr_matrix view = {0};
    view.nbrows = view.nbcols = F->n;
    view.b = F->b;
    view.nnzb = F->nnzbA;
    view.prec = BSR_DOUBLE;
    view.rowptr = F->ap;
    view.colind = F->ac;
    view.val = NULL;   /* the check reads the pattern only */
    if (bsr_pbordered_check(&view, o, NULL) != BSR_OK) { bsr_clear_error(); return 0; }
    const bsr_tree_node *nd = o->nodes;
    if (nd[0].first != 0 || nd[0].last != F->n) return 0;
    for (int t = 0; t < o->nnodes; t++) {
        int at = nd[t].first;
        for (int c = 0; c < 2; c++) {
            int ch = nd[t].child[c];
            if (ch < 0) continue;
            if (ch <= 0 || ch >= o->nnodes || nd[ch].first != at) return 0;
            at = nd[ch].last;
        }
        if (at != nd[t].sep_first || nd[t].sep_first > nd[t].last) return 0;
    }
    return 1;
}

/* A process-unique pattern id (never 0): numeric factors name the pattern
 * their values belong to by it. */
static uint64_t new_pattern_id(void)
{
    static _Atomic uint64_t next = 1;
    return atomic_fetch_add(&next, 1);
}

/* The arrays of the host numeric value: scaled A, scaling (double and in
 * the factors' precision), pivots, and ILU(0)'s rows; made by its first
 * factorization, kept for the refactors. */
static bsr_status numeric_arrays(bsr_ilu *F)
{
    if (F->aval) return BSR_OK;
    size_t bb = (size_t)F->b * F->b, n = (size_t)F->n + 1;
    F->scale_left = bsr_malloc(bsr_precision_size(F->prec) * n * bb, "ILU scaling");
    F->aval = bsr_malloc(sizeof(double) * ((size_t)F->nnzbA + 1) * bb, "ILU scaled A");
    F->rowref = bsr_malloc(sizeof(double) * n, "ILU scaling");
    F->dl = bsr_malloc(sizeof(double) * n * bb, "ILU scaling");
    F->piv = bsr_malloc(sizeof(double) * n * bb, "ILU pivots");
    if (!F->scale_left || !F->aval || !F->rowref || !F->dl || !F->piv) return BSR_ERR_NOMEM;
    return F->mode == 0 ? ilu_rows0(F) : BSR_OK;
}

/* A factorization on the host: scale, factor, statistics.  frozen: into the
 * pattern of the last threshold factorization (F->fz).  Its values land in
 * L and U unless F->pattern_only (a pattern pass). */
static bsr_status numeric(bsr_ilu *F, const bsr_matrix *A, int frozen)
{
    F->valid = 0;
    if (F->mode == 0 && !F->L)
        return bsr_error(BSR_ERR_ARG, "ILU(0): the plan's patterns live on the device (its symbolic phase was done "
                         "there): no host factorization");
    BSR_TRY(numeric_arrays(F));
    F->use_fz = frozen && F->fz;
    /* rows made on the device start from A scaled there */
    F->araw = F->mode == 1 && !F->use_fz && F->dev && F->pattern_only && !F->dr &&
              F->opt.cap != BSR_ILU_CAP_NONE ? A : NULL;
    /* ILU(0) at b = 1 on one thread: scaled row by row as it is factored */
    F->aone = !F->araw && ilu_scaled0_ok(F, A) ? A : NULL;
    if (!F->araw && !F->aone) BSR_TRY(ilu_scale(F, A));
    bsr_prof_mark("ilu numeric: scaling");
    double t0 = bsr_now();
    /* the work bound counts a threshold factorization's rows, not a frozen refactor's */
    const int64_t bbb = (int64_t)F->b * F->b * F->b;
    F->nprod_max = F->opt.max_work > 0 ? (int64_t)ceil(F->opt.max_work / (double)bbb) : 0;
    F->nprod = 0;
    BSR_TRY(ilu_grow_begin(F));
    bsr_status fs = ilu_factor(F);
    F->araw = F->aone = NULL;
    fs = ilu_grow_stabilize(F, fs);
    BSR_TRY(fs);
    if (F->mode == 1 && !F->use_fz) F->pattern_id = new_pattern_id();   /* the thresholds chose it anew */
    F->st.factor_s = bsr_now() - t0;
    F->valid = !F->pattern_only;
    if (!F->L) return BSR_OK;   /* the pattern made on the device: its statistics set there */
    F->st.nnzb_A = A->nnzb;
    F->st.nnzb_L = F->L->nnzb;
    F->st.nnzb_U = F->U->nnzb;
    F->st.fill = A->nnzb ? (double)(F->L->nnzb + F->U->nnzb) / A->nnzb : 0.0;
    size_t vs = bsr_precision_size(F->prec) * (size_t)F->b * F->b;
    F->st.bytes_factors = (size_t)(F->L->nnzb + F->U->nnzb) * (vs + sizeof(int)) +
                          2 * sizeof(int) * ((size_t)F->n + 1) + (size_t)F->n * vs;
    F->st.nlevels_L = F->lvL ? F->lvL->nlevels : 0;
    F->st.nlevels_U = F->lvU ? F->lvU->nlevels : 0;
    return BSR_OK;
}

bsr_status ilu_num_host(bsr_ilu *F, const bsr_matrix *A)
{
    BSR_CHECK_ARG(!F->pattern_only, "ILU: F holds patterns only (its values are computed on the device): no host "
                  "factorization");
    const double t0 = bsr_now();
    bsr_status s = numeric(F, A, 0);
    bsr_prof_mark("ilu setup: numeric");
    if (!s) F->st.setup_s += bsr_now() - t0;   /* the setup: both phases */
    return s;
}

bsr_status ilu_pattern_pass(bsr_ilu *F, bsr_context *dev, const bsr_matrix *A)
{
    BSR_CHECK_ARG(F->mode == 1, "ILU pattern pass: ILU(0)'s pattern is the symbolic phase's");
    pattern_forget(F);
    F->pattern_only = 1;
    F->dev = dev;
    bsr_status s = numeric(F, A, 0);
    F->dev = NULL;
    return s;
}

/* Statistics of the ILU(0) patterns: nL + nU blocks, schedules of nlevL and
 * nlevU levels (a host factorization sets the same figures again). */
void bsr_ilu_symbolic_stats(bsr_ilu *F, int nL, int nU, int nlevL, int nlevU)
{
    F->st.nnzb_A = F->nnzbA;
    F->st.nnzb_L = nL;
    F->st.nnzb_U = nU;
    F->st.fill = F->nnzbA ? (double)((int64_t)nL + nU) / F->nnzbA : 0.0;
    size_t vs = bsr_precision_size(F->prec) * (size_t)F->b * F->b;
    F->st.bytes_factors = (size_t)((int64_t)nL + nU) * (vs + sizeof(int)) +
                          2 * sizeof(int) * ((size_t)F->n + 1) + (size_t)F->n * vs;
    F->st.nlevels_L = nlevL;
    F->st.nlevels_U = nlevU;
}

/* The symbolic phase on the host after the ordering: map of A, and for
 * ILU(0) the L and U patterns, their schedules and statistics (threshold
 * kinds find their pattern while factoring). */
static bsr_status symbolic_host(bsr_ilu *F, const bsr_matrix *A)
{
    bsr_status s = build_map(F, A);
    bsr_prof_mark("ilu setup: map of A");
    if (!s) F->tree_ok = tree_usable(F);
    bsr_tree_levels_free(&F->tlv);
    if (!s && F->tree_ok) s = bsr_tree_levels_build(F->ord, &F->tlv);
    if (!s && F->mode == 0) s = ilu_symbolic0(F);
    if (!s && F->mode == 0)
        bsr_ilu_symbolic_stats(F, F->L->nnzb, F->U->nnzb, F->lvL ? F->lvL->nlevels : 0, F->lvU ? F->lvU->nlevels : 0);
    bsr_prof_mark("ilu setup: allocation + symbolic");
    return s;
}

/* Tests only: ILU(0)'s patterns on the host even with a device. */
static int symbolic_on_host;
void bsr_ilu_test_symbolic_host(int on) { symbolic_on_host = on; }

/* ILU(0) in natural order without a matching, with a device: the symbolic
 * phase on ctx's device from A's device mirror (made current here; A gains
 * a mirror, which its owner keeps or releases), on the host where the device
 * declines (a block row without its diagonal block); F->sym_dev_s its seconds. */
static bsr_status symbolic_dev(bsr_context *ctx, bsr_ilu *F, const bsr_matrix *A)
{
    double t = bsr_now();
    bsr_status s = symbolic_on_host ? BSR_ERR_UNSUPPORTED : bsr_matrix_upload(ctx, (bsr_matrix *)A);
    if (!s) s = bsr_ilu0_symbolic_dev(ctx, F, A);
    if (s == BSR_ERR_UNSUPPORTED) s = symbolic_host(F, A);
    F->sym_dev_s = bsr_now() - t;
    return s;
}

bsr_status ilu_sym_build(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_context *ctx,
                         const bsr_order_ahead *ahead, bsr_ilu **Fout)
{
    BSR_CHECK_ARG(Fout, "bsr_ilu_setup: F is NULL");
    *Fout = NULL;
    BSR_CHECK_ARG(A, "bsr_ilu_setup: A is NULL");
    BSR_CHECK_ARG(A->nbrows == A->nbcols, "bsr_ilu_setup: A is %d x %d blocks, not square",
                  A->nbrows, A->nbcols);
    double t0 = bsr_now();
    bsr_ilu_options def;
    if (!opt) { bsr_ilu_options_default(&def, BSR_ILU2); opt = &def; }
    bsr_ilu *F = bsr_calloc(1, sizeof *F, "bsr_ilu");
    if (!F) return BSR_ERR_NOMEM;
    F->opt = *opt;
    F->n = A->nbrows;
    F->b = A->b;
    F->nnzbA = A->nnzb;
    F->prec = opt->prec < 0 ? A->prec : (bsr_precision)opt->prec;
    bsr_status s = check_options(opt, A->b, F);
    bsr_matrix *PA = NULL;   /* P A's pattern when a matching is applied: the ordering's graph */
    int *match = NULL;
    if (!s) s = ilu_match_start(F, A, &PA, &match);
    if (!s) s = ilu_complete_bound(F, PA ? PA : A, PA ? NULL : ahead);
    if (!s && opt->order.kind != BSR_ORDER_NATURAL) {
        double t = bsr_now();
        if (!PA) F->ord = bsr_order_ahead_copy(ahead, &opt->order, A->nbrows, &F->order_ahead_s);
        if (!F->ord) s = bsr_order(PA ? PA : A, &opt->order, &F->ord);
        F->st.order_s = bsr_now() - t;
    }
    bsr_status sm = ilu_match_finish(F, PA, match);
    if (!s) s = sm;
    bsr_prof_mark("ilu setup: ordering");
    if (!s) s = ctx && F->mode == 0 && !F->ord && !F->rsrc ? symbolic_dev(ctx, F, A) : symbolic_host(F, A);
    if (s) { bsr_ilu_destroy(F); return s; }
    F->pattern_id = new_pattern_id();
    F->st.setup_s = bsr_now() - t0;
    *Fout = F;
    return BSR_OK;
}

/* The symbolic value, then the host numeric value of A (its first factorization). */
static bsr_status setup_host(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **Fout)
{
    BSR_TRY(ilu_sym_build(A, opt, NULL, NULL, Fout));
    bsr_status s = ilu_num_host(*Fout, A);
    if (s) { bsr_ilu_destroy(*Fout); *Fout = NULL; }
    return s;
}

/* bsr_ilu_options.symbolic_only (deprecated: the library's device
 * preconditioner builds the symbolic value and a device numeric value
 * instead): the symbolic value, and for the threshold kinds the pattern
 * pass on the host; no host values.  A matching needs them: mpt is refused,
 * auto is none. */
static bsr_status setup_pattern_only(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **Fout)
{
    BSR_CHECK_ARG(Fout, "bsr_ilu_setup: F is NULL");
    *Fout = NULL;
    if (opt->match == BSR_MATCH_MPT)
        return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: match=mpt needs the values factored on the host "
                         "(the device factorization takes one symmetric permutation): use factor=cpu "
                         "on the CPU backend, or match=none");
    double t0 = bsr_now();
    bsr_ilu_options o = *opt;
    o.match = BSR_MATCH_NONE;
    BSR_TRY(ilu_sym_build(A, &o, NULL, NULL, Fout));
    bsr_ilu *F = *Fout;
    F->opt.match = opt->match;
    if (opt->match == BSR_MATCH_AUTO) F->st.match_note = "values factored on the device";
    bsr_status s = BSR_OK;
    if (F->mode == 1) s = ilu_pattern_pass(F, NULL, A);
    F->pattern_only = 1;
    bsr_prof_mark("ilu setup: numeric");
    if (s) { bsr_ilu_destroy(F); *Fout = NULL; return s; }
    F->st.setup_s = bsr_now() - t0;
    return BSR_OK;
}

bsr_status bsr_ilu_setup(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **Fout)
{
    if (opt && opt->symbolic_only) return setup_pattern_only(A, opt, Fout);
    /* auto compares host factorizations (ilu_match.c) */
    if (A && Fout && opt && opt->match == BSR_MATCH_AUTO) return ilu_setup_auto(A, opt, Fout);
    return setup_host(A, opt, Fout);
}

/* Rows a chunk of the refactor's pattern check. */
#define CHECK_CHUNK 4096

/* New values of A on the setup's pattern: rescale and refactor, reusing ordering and
 * allocations. */
bsr_status bsr_ilu_refactor(bsr_ilu *F, const bsr_matrix *A)
{
    BSR_CHECK_ARG(F && A, "bsr_ilu_refactor: NULL argument");
    BSR_CHECK_ARG(A->nbrows == F->n && A->nbcols == F->n && A->b == F->b && A->nnzb == F->nnzbA,
                  "bsr_ilu_refactor: A (%d x %d blocks of %d, %d blocks) is not the pattern of the "
                  "setup (%d blocks of %d, %d blocks)", A->nbrows, A->nbcols, A->b, A->nnzb, F->n,
                  F->b, F->nnzbA);
    BSR_CHECK_ARG(!F->pattern_only && F->ap, "bsr_ilu_refactor: F holds patterns only (its values are "
                  "computed on the device: bsr_gpu_ilu0_factor)");
    /* the first row (in factor order) whose pattern differs, as a serial
     * walk would find it, the rows checked in parallel by chunks; where A's
     * rows are F's as they are (asrc[p] = p, no ordering, no matching) a
     * chunk's row pointers and columns are compared whole first (two
     * memcmp: 25 -> 11 ms of a one-thread b = 1 refactor of 4.1M rows), row
     * by row only when they differ */
    const int n = F->n, nchunk = (n + CHECK_CHUNK - 1) / CHECK_CHUNK;
    int first = n;
    #pragma omp parallel for schedule(static) reduction(min : first) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int ch = 0; ch < nchunk; ch++) {
        const int k0 = ch * CHECK_CHUNK, k1 = n - k0 < CHECK_CHUNK ? n : k0 + CHECK_CHUNK;
        if (F->asrc_id && !F->ord && !F->rsrc && !memcmp(A->rowptr + k0, F->ap + k0, sizeof(int) * ((size_t)(k1 - k0) + 1)) &&
            !memcmp(A->colind + F->ap[k0], F->ac + F->ap[k0], sizeof(int) * (size_t)(F->ap[k1] - F->ap[k0])))
            continue;
        for (int k = k0; k < k1 && k < first; k++) {
            const int r = ilu_src_row(F, k);
            int same = A->rowptr[r + 1] - A->rowptr[r] == F->ap[k + 1] - F->ap[k];
            for (int p = F->ap[k]; p < F->ap[k + 1] && same; p++) {
                const int c = A->colind[F->asrc[p]];
                same = (F->ord ? F->ord->iperm[c] : c) == F->ac[p];
            }
            if (!same) first = k;
        }
    }
    if (first < F->n)
        return bsr_error(BSR_ERR_STRUCTURE, "bsr_ilu_refactor: block row %d differs from the setup's pattern",
                         ilu_src_row(F, first));
    double t0 = bsr_now();
    BSR_TRY(numeric(F, A, F->opt.pattern == BSR_PATTERN_FROZEN));
    F->st.setup_s = bsr_now() - t0;
    return BSR_OK;
}

void ilu_plan_factors(const bsr_ilu *F, bsr_ilu_factors *out)
{
    out->L = F->L;
    out->U = F->U;
    out->lvL = F->lvL;
    out->lvU = F->lvU;
    out->ord = F->ord;
    out->scale_left = F->scale_left;
    out->scale_right = F->scale_right;
    out->gather = F->rsrc;
}

/* Borrowed views of L, U, ordering, scaling and level schedules (patterns
 * only when F holds no values: symbolic_only). */
bsr_status bsr_ilu_get_factors(const bsr_ilu *F, bsr_ilu_factors *out)
{
    BSR_CHECK_ARG(F && out, "bsr_ilu_get_factors: NULL argument");
    BSR_CHECK_ARG(F->valid || (F->pattern_only && F->L), "bsr_ilu_get_factors: F holds no factors (none made yet, "
                  "or the last factorization failed: refactor first)");
    ilu_plan_factors(F, out);
    return BSR_OK;
}

/* Copy of the factorization statistics (fill, dropped, regularized pivots, times). */
bsr_status bsr_ilu_get_stats(const bsr_ilu *F, bsr_ilu_stats *st)
{
    BSR_CHECK_ARG(F && st, "bsr_ilu_get_stats: NULL argument");
    *st = F->st;
    return BSR_OK;
}
