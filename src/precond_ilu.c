/* SPDX-License-Identifier: BSD-3-Clause */
/* Block ILU(0) / ILUT / ILU2 preconditioners: a symbolic plan (bsr_ilu after
 * setup: ordering, scaling rule, pattern, schedules) and a numeric factor of
 * one backend behind ilu_numeric_ops.  The host and the device preconditioner
 * are this same code: the host one owns the plan and holds the CPU factor
 * (none when the values are factored on the device, factor=gpu); the device
 * one borrows the plan and holds the CUDA factor. */
#include "precond_impl.h"
#include "ilu_numeric.h"
#include <string.h>

typedef struct {
    bsr_ilu *F;         /* the plan: owned by the host pc, borrowed by the device pc */
    ilu_numeric *num;   /* NULL: a host pc whose values are factored on the device */
    bsr_pc *host;       /* device pc: the host pc, whose info line is reported too */
    bsr_solver_options o;
    int on_device;      /* applied on the device */
} ilu_pc;

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

/* Refresh the statistics line and counters of pc after (re)factoring with f
 * (NULL: the plan's setup figures). */
static void ilu_describe(bsr_pc *pc, const bsr_ilu *F, const bsr_solver_options *o, const ilu_numeric *f)
{
    bsr_ilu_stats st;
    if (bsr_ilu_get_stats(F, &st)) return;
    pc->nnzb = st.nnzb_L + st.nnzb_U;
    pc->pivots_regularized = f ? f->nreg : st.pivots_regularized;
    char tau[160] = "";
    const char *keep = bsr_keep_pattern(o) ? ",keep_pattern" : "";
    const double t1 = st.tau1, t2 = o->tau2 > 0 ? o->tau2 : t1 * t1;
    char cap[48] = ",cap=auto";
    if (o->cap > 0) snprintf(cap, sizeof cap, ",cap=%d", o->cap);
    if (o->cap < 0) snprintf(cap, sizeof cap, ",cap=none");
    if (o->fill > 0) snprintf(cap + strlen(cap), sizeof cap - strlen(cap), ",fill<=%g", o->fill);
    if (o->precond == BSR_PC_ILUT) snprintf(tau, sizeof tau, "(tau1=%.3g%s%s)", t1, cap, keep);
    if (o->precond == BSR_PC_ILU2) snprintf(tau, sizeof tau, "(tau1=%.3g,tau2=%.3g%s%s)", t1, t2, cap, keep);
    char ord[64] = "natural";
    if (F->dsym) snprintf(ord, sizeof ord, "natural (symbolic on the device)");
    if (F->ord) {
        if (F->ord->nnodes) snprintf(ord, sizeof ord, "%s depth %d (%d leaves)", bsr_order_kind_name(F->ord->kind),
                                     F->ord->depth, F->ord->nleaves);
        else snprintf(ord, sizeof ord, "%s", bsr_order_kind_name(F->ord->kind));
    }
    if (F->ord && st.order_s > 0)   /* what the ordering cost: the report says it */
        snprintf(ord + strlen(ord), sizeof ord - strlen(ord), " (%.3f s)", st.order_s);
    char mw[160];
    match_words(mw, sizeof mw, &st, o, o->factor == BSR_FACTOR_GPU);
    char fac[64];
    if (f && f->on_device) snprintf(fac, sizeof fac, "factor on the device %.4f s", f->factor_s);
    else snprintf(fac, sizeof fac, "factor %.3f s", f ? f->factor_s : st.factor_s);
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
    if (!I->num)
        return bsr_error(BSR_ERR_ARG, "ILU: the factors live on the device (factor=gpu); apply the device preconditioner");
    if (I->num->ops->pattern_id(I->num) != I->F->pattern_id)   /* never the factors of older values */
        return bsr_error(BSR_ERR_ARG, "ILU (%s factor): the last refactor failed; refactor (or set up) again before solving",
                         I->num->ops->name);
    return I->num->ops->apply(I->num, X, Y);
}

static bsr_status ilu_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    if (!I->num) return BSR_OK;   /* the device pc factors */
    BSR_TRY(I->num->ops->numeric(I->num, A));
    ilu_describe(pc, I->F, &I->o, I->num);
    if (I->host) ilu_describe(I->host, I->F, &I->o, I->num);
    return BSR_OK;
}

static void ilu_destroy(bsr_pc *pc)
{
    ilu_pc *I = pc->data;
    if (!I) return;
    if (I->num) I->num->ops->destroy(I->num);
    if (!I->host) bsr_ilu_destroy(I->F);
    free(I);
}

/* A new ILU preconditioner object on pc with plan F (owned unless host). */
static bsr_status ilu_attach(bsr_pc *pc, bsr_ilu *F, bsr_pc *host, const bsr_solver_options *o, int on_device)
{
    ilu_pc *I = bsr_calloc(1, sizeof *I, "ILU preconditioner");
    if (!I) return BSR_ERR_NOMEM;
    I->F = F;
    I->host = host;
    I->o = *o;
    I->on_device = on_device;
    pc->data = I;
    pc->apply = ilu_apply;
    pc->refactor = ilu_refactor;
    pc->destroy = ilu_destroy;
    return BSR_OK;
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
    io->cap = bsr_cap_resolved(o, 0);
    io->keep_pattern = bsr_keep_pattern(o);
    io->prec = o->precond_precision;
    io->match = o->match;
    io->grow = o->grow;
    if (o->pivot > 0) io->pivot_rel = o->pivot;
    io->strict_pivots = o->pivot < 0;
    io->pattern = o->pattern == BSR_SOLVER_PATTERN_REFRESH ? BSR_PATTERN_REFRESH : BSR_PATTERN_FROZEN;
    if (o->reorder[0]) BSR_TRY(bsr_order_parse(o->reorder, &io->order));
    return BSR_OK;
}

bsr_status bsr_pc_ilu(const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx, bsr_pc **out)
{
    const int on_device = ctx != NULL;
    bsr_ilu_kind kind = o->precond == BSR_PC_ILU0 ? BSR_ILU0 : o->precond == BSR_PC_ILUT ? BSR_ILUT : BSR_ILU2;
    bsr_ilu_options io;
    BSR_TRY(bsr_ilu_options_from_solver(o, &io));
    const int dev = o->factor == BSR_FACTOR_GPU;
    io.cap = bsr_cap_resolved(o, dev);
    io.pattern = BSR_PATTERN_FROZEN;   /* the solver refreshes a pattern by a new setup (solver.c) */
    /* factored on the device: the host keeps no values (ILU(0): no numeric
     * at all; ILUT/ILU2: the thresholds' pass, whose values only choose the
     * pattern, is not copied into L and U) */
    io.symbolic_only = dev;
    /* a matching needs the host's factors (the device apply gathers by its
     * rows, kernels/trsv_ilu.cu); factored on the device: none (solver.c
     * refuses factor=gpu with mpt, auto then says so in the info line) */
    io.match = dev ? BSR_MATCH_NONE : o->match;
    if (!on_device && o->trisolve > 0)
        return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: trisolve=jacobi:%d is a device apply (--backend cuda); the CPU "
                         "backend solves the triangles exactly (trisolve=exact)", o->trisolve);
    /* unset: the ILU default (nested dissection: the CPU factors over its
     * tree), but no METIS for an ILU whose rows are factored on the device
     * (ILU(0); ILUT/ILU2 with a cap), whose sync-free rows and solves need no
     * tree (METIS takes ~7 s at 1M block rows): ILU(0) in natural order, the
     * threshold kinds in RCM, where the capped rows of rotconv3d converge
     * (natural order broke down at 40^3) and stencil3d takes as many
     * iterations (bench/RESULTS.md) */
    if (!o->reorder[0] && dev && kind == BSR_ILU0) io.order.kind = BSR_ORDER_NATURAL;
    else if (!o->reorder[0] && dev && io.cap != BSR_ILU_CAP_NONE) io.order.kind = BSR_ORDER_RCM;
    bsr_pc *pc = bsr_calloc(1, sizeof *pc, "preconditioner");
    if (!pc) return BSR_ERR_NOMEM;
    pc->name = bsr_pc_name(o->precond);
    bsr_ilu *F = NULL;
    /* ILU(0) factored on the device in natural order: its symbolic phase
     * too, when the CUDA factor is made (ilu_numeric_cuda) */
    const int defer = kind == BSR_ILU0 && dev && io.order.kind == BSR_ORDER_NATURAL;
    /* ILUT/ILU2 factored on the device: the thresholds' rows there too */
    bsr_status s = defer ? bsr_ilu_setup_deferred(A, &io, &F) : bsr_ilu_setup_on(dev && kind != BSR_ILU0 ? ctx : NULL, A, &io, &F);
    if (!s && (s = ilu_attach(pc, F, NULL, o, on_device))) bsr_ilu_destroy(F);
    ilu_pc *I = pc->data;
    if (!s && !dev) s = ilu_numeric_cpu(F, &I->num);
    if (s) { bsr_pc_destroy(pc); return s; }
    ilu_describe(pc, F, o, I->num);
    *out = pc;
    return BSR_OK;
}

bsr_status bsr_pc_ilu_device(bsr_context *ctx, const bsr_matrix *A, const bsr_solver_options *o,
                             bsr_pc *host, bsr_pc *pc)
{
    ilu_pc *H = host && host->apply == ilu_apply ? host->data : NULL;
    if (!H) return bsr_error(BSR_ERR_INTERNAL, "device ILU: host preconditioner is not an ILU");
    BSR_TRY(ilu_attach(pc, H->F, host, o, 1));
    ilu_pc *I = pc->data;
    BSR_TRY(ilu_numeric_cuda(ctx, H->F, A, o, &I->num));
    pc->bytes_fixed = I->num->bytes_fixed;
    pc->bytes_passes = I->num->bytes_passes;
    ilu_describe(pc, H->F, o, I->num);
    if (I->num->on_device) ilu_describe(host, H->F, o, I->num);
    return BSR_OK;
}

/* The host plan of S's ILU preconditioner (its host factors unless it was
 * set up symbolic_only, factor=gpu), NULL when S's preconditioner is no ILU. */
const bsr_ilu *bsr_solver_host_ilu(const bsr_solver *S)
{
    const bsr_pc *pc = S ? S->pc : NULL;
    if (!pc || pc->apply != ilu_apply) return NULL;
    return ((const ilu_pc *)pc->data)->F;
}
