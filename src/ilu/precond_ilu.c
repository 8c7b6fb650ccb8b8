/* SPDX-License-Identifier: BSD-3-Clause */
/* Block ILU(0) / ILUT / ILU2 preconditioners, one row per backend: a
 * symbolic value (ilu_sym_build: ordering, matching, map of A, ILU(0)'s
 * patterns and schedules), finished before any numeric work, and a numeric
 * value of the row's backend built from (symbolic value, A) behind
 * ilu_numeric_ops.  The host row holds the CPU numeric value, the device row
 * the CUDA one (its values factored on the device, factor=gpu, with no host
 * numeric value at all, or on the host and uploaded, factor=cpu); both own
 * their symbolic value, and are otherwise the same code. */
#include "precond_impl.h"
#include "ilu_numeric.h"
#include "gpu_ilu.h"
#include <omp.h>
#include <string.h>

typedef struct {
    bsr_ilu *F;         /* the finished symbolic plan (owned) */
    ilu_numeric *num;   /* the numeric factor on the row's backend */
    bsr_solver_options o;   /* what the info line reports */
    bsr_context *ctx;   /* the device row's context (its work counts in pc->dev_s); NULL: host */
    int rcm_tried;      /* RCM variants tried by ilu_rcm_axes (0: none but the default) */
    int rcm0_L, rcm0_U; /* the default variant's levels, when another was kept */
    int rcm_lv[4];      /* ilu_rcm_axes ran: each variant's levels L + U (0: not tried) */
    int refreshed;      /* a refactor chose the pattern again on the setup's ordering */
} ilu_pc;

/* A threshold factor in RCM order whose triangles' level counts differ more
 * than this many times is set up in RCM's other variants too (ilu_rcm_axes). */
#define ILU_RCM_SKEW 3
/* A variant whose levels are within this factor of the slowest rank's takes
 * an iteration no longer than that rank does, give or take the factor
 * (bsr_rcm_variant_pick). */
#define ILU_RCM_MARGIN 1.1

/* A's device mirror in ctx made current, where device work reads it (A
 * gains a mirror: its owner keeps or releases it). */
static bsr_status ilu_mirror(bsr_context *ctx, const bsr_matrix *A)
{
    return bsr_matrix_upload(ctx, (bsr_matrix *)A);
}

/* The matching's part of the info line ("" for match=none); dev_factor: the
 * values are factored on the device, which the solver chooses for auto only
 * on a regular diagonal. */
static void match_words(char *buf, size_t len, const bsr_ilu_stats *st, const bsr_solver_options *o, int dev_factor)
{
    buf[0] = 0;
    if (o->match == BSR_MATCH_NONE) return;
    char est[64] = "";   /* auto's stability estimates, when it computed them */
    if (!dev_factor && o->match == BSR_MATCH_AUTO && (st->match_est_none >= 0 || st->match_est_mpt >= 0)) {
        char e0[16] = "failed", e1[16] = "-";
        if (st->match_est_none >= 0) snprintf(e0, sizeof e0, "%.2g", st->match_est_none);
        if (st->match_est_mpt >= 0) snprintf(e1, sizeof e1, "%.2g", st->match_est_mpt);
        snprintf(est, sizeof est, "est none %s, mpt %s; ", e0, e1);
    }
    if (st->match_used) snprintf(buf, len, ", match: %s (%s%d rows permuted, %.3f s)",
                                 o->match == BSR_MATCH_AUTO ? "auto -> mpt" : "mpt", est, st->match_nperm, st->match_s);
    else snprintf(buf, len, ", match: auto -> none (%s%s)", est,
                  dev_factor ? "no zero or singular diagonal block; factored on the device" : st->match_note);
}

/* Refresh the statistics line and counters of pc after (re)factoring with f. */
static void ilu_describe(bsr_pc *pc, const bsr_ilu *F, const bsr_solver_options *o, const ilu_numeric *f)
{
    bsr_ilu_stats st;
    if (bsr_ilu_get_stats(F, &st)) return;
    pc->nnzb = st.nnzb_L + st.nnzb_U;
    pc->pivots_regularized = f->nreg;
    pc->exact = F->mode == 1 && F->opt.tau1 == 0 && F->t2 == 0 && F->opt.cap == BSR_ILU_CAP_NONE &&
                F->opt.fill <= 0 && st.dropped == 0 && !f->nreg;
    pc->grow_passes = st.grow_passes;
    char tau[160] = "";
    const char *keep = bsr_keep_pattern(o) ? ",keep_pattern" : "";
    const double t1 = st.tau1, t2 = o->tau2 > 0 ? o->tau2 : t1 * t1;
    char cap[48], cn[16];
    snprintf(cap, sizeof cap, ",cap=%s", bsr_cap_name(F->opt.cap, cn));   /* as it ran */
    if (o->fill > 0) snprintf(cap + strlen(cap), sizeof cap - strlen(cap), ",fill<=%g", o->fill);
    if (o->precond == BSR_PC_ILUT) snprintf(tau, sizeof tau, "(tau1=%.3g%s%s)", t1, cap, keep);
    if (o->precond == BSR_PC_ILU2) snprintf(tau, sizeof tau, "(tau1=%.3g,tau2=%.3g%s%s)", t1, t2, cap, keep);
    char ord[192] = "natural";
    if (F->dsym) snprintf(ord, sizeof ord, "natural (symbolic on the device)");
    if (F->ord) {
        if (F->ord->nnodes) snprintf(ord, sizeof ord, "%s depth %d (%d leaves%s)", bsr_order_kind_name(F->ord->kind),
                                     F->ord->depth, F->ord->nleaves, F->ord->leafnd ? ", METIS order in each" : "");
        else snprintf(ord, sizeof ord, "%s", bsr_order_kind_name(F->ord->kind));
        if (F->ord->kind == BSR_ORDER_RCM && F->opt.order.variant)
            snprintf(ord + strlen(ord), sizeof ord - strlen(ord), " variant %d", F->opt.order.variant);
    }
    const ilu_pc *I = pc->data;
    if (I->rcm_tried)   /* ilu_rcm_axes: variant 0's levels */
        snprintf(ord + strlen(ord), sizeof ord - strlen(ord), " (of %d RCM variants; variant 0: levels L %d U %d)",
                 I->rcm_tried, I->rcm0_L, I->rcm0_U);
    if (F->ord && F->order_ahead_s > 0)   /* made beside the first solve: its own seconds */
        snprintf(ord + strlen(ord), sizeof ord - strlen(ord), " (%.3f s, made beside the first solve)",
                 F->order_ahead_s);
    else if (F->ord && st.order_s > 0)   /* what the ordering cost (at the setup: a refresh keeps it) */
        snprintf(ord + strlen(ord), sizeof ord - strlen(ord), " (%.3f s%s)", st.order_s,
                 I->refreshed ? " at setup" : "");
    char mw[160];
    match_words(mw, sizeof mw, &st, o, o->factor == BSR_FACTOR_GPU);
    char fac[96];
    if (f->on_device) snprintf(fac, sizeof fac, "factor on the device %.4f s", f->factor_s);
    else snprintf(fac, sizeof fac, "factor %.3f s", f->factor_s);
    if (st.work > 0 && o->work > 0)   /* under a work bound: how much of it the rows took */
        snprintf(fac + strlen(fac), sizeof fac - strlen(fac), " (work %.2g of %.2g)", st.work, o->work);
    /* what was done to weak rows, by row count: the stated perturbation of
     * pivots and the rows scaled without their diagonal block */
    char piv[128] = "";
    if (pc->pivots_regularized)
        snprintf(piv, sizeof piv, " (pivot entries below %.0e r_k set to +-%.0e r_k)", F->pivot_rel, F->pivot_rel);
    if (st.scaling_fallbacks)
        snprintf(piv + strlen(piv), sizeof piv - strlen(piv), ", %d rows scaled without their diagonal block",
                 st.scaling_fallbacks);
    char gw[96] = "";   /* grow=1|2: the growth estimate, and whether it refactored */
    if (st.grow_passes)
        snprintf(gw, sizeof gw, ", growth %.1e -> %.1e (%d growth-weighted refactorization%s)", st.grow_est0,
                 st.grow_est, st.grow_passes, st.grow_passes > 1 ? "s" : "");
    else if (st.grow_est0 > 0 && o->grow == 2)
        snprintf(gw, sizeof gw, ", L^-1 growth %.1e (weighted while factoring)", st.grow_est0);
    else if (st.grow_est0 > 0)
        snprintf(gw, sizeof gw, ", growth %.1e (kept)", st.grow_est0);
    snprintf(pc->info, sizeof pc->info,
             "%s%sorder %s%s, levels L %d U %d, L+U %lld blocks, %lld dropped, %d pivots regularized%s%s, %s%s",
             tau, tau[0] ? ", " : "", ord, mw, st.nlevels_L, st.nlevels_U, (long long)(st.nnzb_L + st.nnzb_U),
             (long long)st.dropped, pc->pivots_regularized, piv, gw, fac,
             o->precond_precision == BSR_FLOAT ? ", float factors" : "");
}

static bsr_status ilu_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ilu_pc *I = pc->data;
    if (!I->num || I->num->ops->pattern_id(I->num) != I->F->pattern_id)   /* never the factors of older values */
        return bsr_error(BSR_ERR_ARG, "ILU (%s factor): the last refactor failed; refactor (or set up) again before solving",
                         I->num ? I->num->ops->name : "cuda");
    return I->num->ops->apply(I->num, X, Y);
}

/* The numeric options of the device row's factor, from its solver options
 * and A: float factors serve double vectors (mixed) and float vectors alike;
 * trisolve=jacobi:N, N sweeps instead of the exact solves. */
static void ilu_cuda_numeric_options(const bsr_solver_options *o, const bsr_matrix *A, ilu_numeric_options *no)
{
    no->on_device = o->factor == BSR_FACTOR_GPU;
    no->factor_float = o->precond_precision == BSR_FLOAT || A->prec == BSR_FLOAT;
    no->trisolve = o->trisolve;
}

/* pc->refresh of the device row: the pattern chosen again from A's values on
 * the setup's plan (ordering, RCM variant, map of A), then a new CUDA numeric
 * value on it.  The old numeric value goes first: a device factor borrows
 * the plan's device pattern, which a pattern pass replaces.  Values factored
 * on the device: the pattern pass (on the device where it can); on the host
 * (factor=cpu): the plan's first host factorization again (which chooses its
 * pattern; ilu_numeric_cuda makes it), then uploaded. */
static bsr_status ilu_cuda_refresh(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    I->refreshed = 1;
    if (I->num) I->num->ops->destroy(I->num);
    I->num = NULL;
    ilu_numeric_options no;
    ilu_cuda_numeric_options(&I->o, A, &no);
    const double t = bsr_now();
    BSR_TRY(ilu_mirror(I->ctx, A));
    double tpat = bsr_now();
    if (no.on_device) BSR_TRY(ilu_pattern_pass(I->F, I->ctx, A));
    else I->F->valid = 0;
    tpat = bsr_now() - tpat;
    BSR_TRY(ilu_numeric_cuda(I->ctx, I->F, A, &no, &I->num));
    pc->dev_s = bsr_now() - t - tpat - I->num->host_s;
    pc->bytes_fixed = I->num->bytes_fixed;
    pc->bytes_passes = I->num->bytes_passes;
    ilu_describe(pc, I->F, &I->o, I->num);
    return BSR_OK;
}

static bsr_status ilu_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    if (!I->num) return ilu_cuda_refresh(pc, A);   /* a refresh failed: the plan's pattern is gone */
    double t = bsr_now();
    bsr_status s = I->ctx ? ilu_mirror(I->ctx, A) : BSR_OK;
    if (!s) s = I->num->ops->numeric(I->num, A);
    pc->dev_s = I->ctx ? bsr_now() - t : 0;
    BSR_TRY(s);
    ilu_describe(pc, I->F, &I->o, I->num);
    return BSR_OK;
}

/* pc->refresh of the host row: the plan's values are the numeric value's. */
static bsr_status ilu_refresh(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    I->refreshed = 1;
    I->F->opt.pattern = BSR_PATTERN_REFRESH;
    bsr_status s = ilu_refactor(pc, A);
    I->F->opt.pattern = BSR_PATTERN_FROZEN;
    return s;
}

static void ilu_destroy(bsr_pc *pc)
{
    ilu_pc *I = pc->data;
    if (!I) return;
    if (I->num) I->num->ops->destroy(I->num);
    bsr_ilu_destroy(I->F);
    free(I);
}

bsr_status bsr_ilu_options_from_solver(const bsr_solver_options *o, bsr_ilu_options *io)
{
    BSR_CHECK_ARG(o && io, "bsr_ilu_options_from_solver: NULL argument");
    BSR_CHECK_ARG(o->precond == BSR_PC_ILU0 || o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2,
                  "bsr_ilu_options_from_solver: precond=%s is not an ILU (ilu0, ilut, ilu2)", bsr_pc_name(o->precond));
    const bsr_ilu_kind kind = o->precond == BSR_PC_ILU0 ? BSR_ILU0 : o->precond == BSR_PC_ILUT ? BSR_ILUT : BSR_ILU2;
    bsr_ilu_options_default(io, kind);
    io->tau1 = o->tau1;
    io->tau2 = kind == BSR_ILUT ? 0 : o->tau2;
    io->fill = o->fill;
    io->cap = bsr_cap_resolved(o, 0, 0);
    io->keep_pattern = bsr_keep_pattern(o);
    io->prec = o->precond_precision;
    io->match = o->match;
    io->grow = o->grow;
    io->max_work = o->work;
    if (o->pivot > 0) io->pivot_rel = o->pivot;
    io->strict_pivots = o->pivot < 0;
    io->pattern = o->pattern == BSR_SOLVER_PATTERN_REFRESH ? BSR_PATTERN_REFRESH : BSR_PATTERN_FROZEN;
    if (o->reorder[0]) BSR_TRY(bsr_order_parse(o->reorder, &io->order));
    return BSR_OK;
}

/* Block rows a level of the triangular solves from which ILU(0) on the host
 * takes RCM's order rather than nested dissection (ilu0_host_rcm). */
#define ILU0_RCM_LEVEL_ROWS 640

/* Nonzero when ILU(0) factored and applied on the host should take RCM's
 * order instead of the default nested dissection: from BSR_HOST_CAP_ROWS
 * block rows on, where its level schedule has ILU0_RCM_LEVEL_ROWS rows a
 * level or more (A's rows over its breadth-first depth from row 0, about
 * RCM's levels on a mesh).  There METIS's dissection cost more than the
 * rest of the solve and its factor converged no better, 16 host threads:
 * stencil3d:100:4 7.1-8.4 -> 1.2-1.3 s, cfd3d:100,4,10 36 -> 19 s,
 * poisson3d:50 0.59-0.61 -> 0.12-0.14 s (779 rows a level).  Thinner
 * levels leave the team waiting at a barrier a level, where the
 * dissection's tree keeps it busy, whatever the block size: convdiff2d:
 * 1000,10 (499 rows a level) 30-31 s in RCM against 19-20 s, a 2D cfd3d
 * layer of 160k block rows with b = 4 (200) 8.6 s against 3.8-4.0 s
 * (bench/RESULTS.md).  A number of rows, not of threads: the order, and so
 * the iterations, must not depend on the team. */
static int ilu0_host_rcm(const bsr_matrix *A)
{
    if (A->nbrows < BSR_HOST_CAP_ROWS) return 0;
    const int depth = bsr_bfs_depth(A, 0);
    if (depth <= 0) { bsr_clear_error(); return 0; }   /* out of memory: the default order */
    return (int64_t)A->nbrows >= (int64_t)ILU0_RCM_LEVEL_ROWS * depth;
}

/* The ILU options for the kind o->precond, resolved for where the
 * values are factored (on ctx's device when o->factor is gpu; ctx NULL: the
 * host row, which factors on the host) and for A's size. */
static bsr_status ilu_resolve(const bsr_solver_options *o, bsr_context *ctx, const bsr_matrix *A,
                              bsr_ilu_options *io)
{
    BSR_TRY(bsr_ilu_options_from_solver(o, io));
    const bsr_ilu_kind kind = io->kind;
    const int dev = o->factor == BSR_FACTOR_GPU;
    if (dev && !ctx)
        return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: factor=gpu factors on the device (--backend cuda); the CPU "
                         "backend factors on the host");
    io->cap = bsr_cap_resolved(o, dev, A->nbrows);
    io->pattern = BSR_PATTERN_FROZEN;   /* the solver refreshes a pattern by a new setup (solver.c) */
    /* a matching needs the host's factors (the device apply gathers by its
     * rows, kernels/trsv/trsv_ilu.cu); factored on the device: none (solver.c
     * refuses factor=gpu with mpt, auto then says so in the info line) */
    io->match = dev ? BSR_MATCH_NONE : o->match;
    if (!ctx && o->trisolve > 0)
        return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: trisolve=jacobi:%d is a device apply (--backend cuda); the CPU "
                         "backend solves the triangles exactly (trisolve=exact)", o->trisolve);
    /* unset: the ILU default (nested dissection: the CPU factors over its
     * tree), but no METIS for an ILU whose rows are factored on the device
     * (ILU(0); ILUT/ILU2 with a cap), whose sync-free rows and solves need no
     * tree (METIS takes ~7 s at 1M block rows): ILU(0) in natural order, the
     * threshold kinds in RCM, where the capped rows of rotconv3d converge
     * (natural order broke down at 40^3) and stencil3d takes as many
     * iterations (bench/RESULTS.md); so too the host's rows capped by the
     * default (BSR_HOST_CAP_ROWS: nested dissection with a cap breaks down on
     * rotconv3d, whose separators' rows need their fill).  A cap given on
     * the host keeps nested dissection.  ILU(0) on the host: ilu0_host_rcm. */
    const int cap_default = o->cap == BSR_CAP_DEFAULT;
    if (!o->reorder[0] && dev && kind == BSR_ILU0) io->order.kind = BSR_ORDER_NATURAL;
    else if (!o->reorder[0] && (dev || cap_default) && io->cap != BSR_ILU_CAP_NONE) io->order.kind = BSR_ORDER_RCM;
    else if (!o->reorder[0] && kind == BSR_ILU0 && ilu0_host_rcm(A)) io->order.kind = BSR_ORDER_RCM;
    return BSR_OK;
}

/* The symbolic value of A for values factored on the host: ilu_sym_build,
 * except with match=auto, which chooses the matching by factoring with and
 * without it (bsr_ilu_setup: the plan then brings its first factorization,
 * which the numeric value takes over); ahead: see ilu_sym_build. */
static bsr_status ilu_host_plan(const bsr_matrix *A, const bsr_ilu_options *io, const bsr_order_ahead *ahead,
                                bsr_ilu **F)
{
    if (io->match == BSR_MATCH_AUTO) return bsr_ilu_setup(A, io, F);
    return ilu_sym_build(A, io, NULL, ahead, F);
}

/* The ILU object on pc: options kept for the info line. */
static bsr_status ilu_new(bsr_pc *pc, const bsr_solver_options *o, bsr_context *ctx, ilu_pc **out)
{
    ilu_pc *I = bsr_calloc(1, sizeof *I, "ILU preconditioner");
    if (!I) return BSR_ERR_NOMEM;
    I->o = *o;
    I->ctx = ctx;
    pc->data = I;
    *out = I;
    return BSR_OK;
}

/* The host row: the symbolic value, then the CPU numeric value made from it. */
static bsr_status ilu_cpu_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    ilu_pc *I;
    bsr_ilu_options io;
    BSR_TRY(ilu_new(pc, o, NULL, &I));
    BSR_TRY(ilu_resolve(o, NULL, A, &io));
    BSR_TRY(ilu_host_plan(A, &io, pc->ahead, &I->F));
    BSR_TRY(ilu_numeric_cpu(I->F, A, &I->num));
    ilu_describe(pc, I->F, o, I->num);
    /* without a matching the symbolic value is A's pattern's alone, so a new
     * pattern on it is the one a new setup would choose */
    if (I->F->mode == 1 && o->match == BSR_MATCH_NONE) pc->refresh = ilu_refresh;
    return BSR_OK;
}

/* Nonzero when st's triangles differ in levels more than ILU_RCM_SKEW-fold. */
static int ilu_levels_skewed(const bsr_ilu_stats *st)
{
    int lo = st->nlevels_L < st->nlevels_U ? st->nlevels_L : st->nlevels_U;
    return st->nlevels_L + st->nlevels_U - lo > ILU_RCM_SKEW * lo;
}

/* RCM numbers the mesh along the long axis its search found, from one end;
 * the device's threshold rows keep fill along the flow, which along some
 * axes chains the rows of a triangle into thousands of levels (a subdomain
 * of rotconv3d:48,4: U 2404 levels in the default variant, 326 in another),
 * and the device's solves are bound by their levels.  Where *F's triangles
 * (RCM chosen by default, its pattern made) differ in levels more than
 * ILU_RCM_SKEW-fold, the other variants (bsr_order_options.variant: the
 * graph numbered backwards, the far end, both) are set up too, their
 * patterns made on the device, and the plan with the fewest levels in all
 * is kept in I->F; every variant's levels stay in I->rcm_lv (a distributed
 * solve weighs them against the slowest rank's: bsr_rcm_variant_pick).
 * Variant 0 stays where no other has fewer, or where setting another up
 * fails (variant 0's plan is whole). */
static bsr_status ilu_rcm_axes(ilu_pc *I, const bsr_matrix *A, const bsr_ilu_options *io, bsr_context *ctx)
{
    static const int next[] = {2, 1, 3};
    bsr_ilu_stats a, b;
    BSR_TRY(bsr_ilu_get_stats(I->F, &a));
    const bsr_ilu_stats a0 = a;
    int tried = 1;
    double order_s = a.order_s;
    I->rcm_lv[0] = a0.nlevels_L + a0.nlevels_U;
    for (int v = 0; v < 3 && ilu_levels_skewed(&a0); v++) {
        bsr_ilu_options o = *io;
        o.order.variant = next[v];
        bsr_ilu *G = NULL;
        bsr_status s = ilu_sym_build(A, &o, ctx, NULL, &G);
        if (!s) s = ilu_pattern_pass(G, ctx, A);
        if (!s) s = bsr_ilu_get_stats(G, &b);
        if (s) {   /* out of memory, say: the plan in hand stands */
            bsr_ilu_destroy(G);
            bsr_clear_error();
            break;
        }
        tried++;
        order_s += b.order_s;
        I->rcm_lv[next[v]] = b.nlevels_L + b.nlevels_U;
        if (b.nlevels_L + b.nlevels_U >= a.nlevels_L + a.nlevels_U) { bsr_ilu_destroy(G); continue; }
        bsr_ilu_destroy(I->F);
        I->F = G;
        a = b;
    }
    if (tried > 1) {
        I->F->st.order_s = order_s;   /* every variant's ordering */
        I->rcm_tried = tried;
        I->rcm0_L = a0.nlevels_L;
        I->rcm0_U = a0.nlevels_U;
    }
    return BSR_OK;
}

/* The device row on ctx: the finished symbolic value (factor=gpu: an ILU(0)
 * in natural order builds its patterns on the device), A's device mirror
 * made current, a threshold kind's pattern (factor=gpu: the pattern pass),
 * then the CUDA numeric value of (symbolic value, pattern, A) with the
 * numeric options resolved here (factor=gpu: nothing numeric on the host;
 * factor=cpu: values factored on the host, then uploaded). */
static bsr_status ilu_cuda_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    ilu_pc *I;
    bsr_ilu_options io;
    BSR_TRY(ilu_new(pc, o, ctx, &I));
    BSR_TRY(ilu_resolve(o, ctx, A, &io));
    ilu_numeric_options no;
    ilu_cuda_numeric_options(o, A, &no);
    if (no.on_device) BSR_TRY(ilu_sym_build(A, &io, ctx, pc->ahead, &I->F));
    else BSR_TRY(ilu_host_plan(A, &io, pc->ahead, &I->F));
    double t = bsr_now();
    BSR_TRY(ilu_mirror(ctx, A));   /* after the plan's host work, as the device factor reads it */
    /* a threshold kind factored on the device: its pattern, chosen by the
     * thresholds from A's values (rows on ctx's device where they can), is
     * a finished value before the numeric one is made */
    double tpat = bsr_now();
    if (no.on_device && I->F->mode == 1) {
        BSR_TRY(ilu_pattern_pass(I->F, ctx, A));
        if (!o->reorder[0] && io.order.kind == BSR_ORDER_RCM) BSR_TRY(ilu_rcm_axes(I, A, &io, ctx));
    }
    tpat = bsr_now() - tpat;
    BSR_TRY(ilu_numeric_cuda(ctx, I->F, A, &no, &I->num));
    /* device seconds: the symbolic phase's on the device and the numeric
     * value's, less host work (the pattern pass, a host factorization) */
    pc->dev_s = I->F->sym_dev_s + bsr_now() - t - tpat - I->num->host_s;
    pc->bytes_fixed = I->num->bytes_fixed;
    pc->bytes_passes = I->num->bytes_passes;
    ilu_describe(pc, I->F, o, I->num);
    /* a threshold kind without a matching: its pattern chosen again on this
     * plan is a new setup's (with one, the matching is chosen from values) */
    if (I->F->mode == 1 && io.match == BSR_MATCH_NONE) pc->refresh = ilu_cuda_refresh;
    return BSR_OK;
}

int bsr_pc_rcm_levels(const bsr_pc *pc, int lv[4])
{
    memset(lv, 0, sizeof(int) * 4);
    if (!pc || pc->apply != ilu_apply) return -1;
    const ilu_pc *I = pc->data;
    if (!I->rcm_lv[0]) return -1;
    memcpy(lv, I->rcm_lv, sizeof I->rcm_lv);
    return I->F->opt.order.variant;
}

int bsr_rcm_variant_pick(const int lv[4], int kept, int slowest)
{
    for (int v = 0; v < 4; v++)
        if (lv[v] > 0 && lv[v] <= ILU_RCM_MARGIN * slowest) return v;
    return kept;
}

const bsr_pc_ops bsr_pc_ilu_cpu_ops = {ilu_cpu_setup, ilu_refactor, ilu_apply, ilu_destroy};
const bsr_pc_ops bsr_pc_ilu_cuda_ops = {ilu_cuda_setup, ilu_refactor, ilu_apply, ilu_destroy};

/* The plan of S's ILU preconditioner (its host factors when F->valid; none
 * with factor=gpu), NULL when S's preconditioner is no ILU. */
const bsr_ilu *bsr_solver_host_ilu(const bsr_solver *S)
{
    const bsr_pc *pc = S ? S->pc : NULL;
    if (!pc || pc->apply != ilu_apply) return NULL;
    return ((const ilu_pc *)pc->data)->F;
}
