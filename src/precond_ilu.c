/* Block ILU(0) / ILUT / ILU2 preconditioners through bsr_ilu (scaling,
 * ordering, pattern, factors and triangular solves live in the ILU module);
 * factors stored in precond_precision (bsr_ilu_apply converts vectors of
 * another precision).  The device version holds the same pattern with
 * device factors (bsr_gpu_ilu), computed on the device (factor=gpu:
 * bsr_gpu_ilu0 factors into ILU(0)'s pattern or ILUT/ILU2's frozen one, at
 * setup and every refactor) or uploaded from the host's (factor=cpu). */
#include "precond_impl.h"
#include "ilu_impl.h"
#include <string.h>

typedef struct {
    bsr_ilu *F;
    bsr_gpu_ilu *G;   /* device version only (F then borrowed from the host pc) */
    bsr_gpu_ilu0 *D;  /* device version with factor=gpu: the on-device numeric factorization */
    bsr_pc *cpu;      /* device version: the host pc (its info and counters are reported) */
    bsr_solver_options o;
    int valid;        /* device version: G holds the factors of the last (re)factor */
} ilu_pc;

/* A device factorization's figures for the info line. */
typedef struct { int nreg; double factor_s; } dev_factor;

static bsr_status ilu_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_ilu_apply(((ilu_pc *)pc->data)->F, X, Y);
}

/* Refresh the statistics line and counters after (re)factoring (d: the
 * values were factored on the device, NULL: on the host). */
static void ilu_describe(bsr_pc *pc, const bsr_ilu *F, const bsr_solver_options *o, const dev_factor *d)
{
    bsr_ilu_stats st;
    bsr_ilu_factors fa;
    if (bsr_ilu_get_stats(F, &st) || bsr_ilu_get_factors(F, &fa)) return;
    pc->nnzb = st.nnzb_L + st.nnzb_U;
    pc->pivots_regularized = st.pivots_regularized;
    char tau[80] = "";
    const char *keep = bsr_keep_pattern(o) ? ",keep_pattern" : "";
    const double t1 = st.tau1, t2 = o->tau2 > 0 && o->fill <= 0 ? o->tau2 : t1 * t1;
    const char *chosen = o->fill > 0 ? ",chosen for fill" : "";
    if (o->precond == BSR_PC_ILUT) snprintf(tau, sizeof tau, "(tau1=%.3g%s%s)", t1, chosen, keep);
    if (o->precond == BSR_PC_ILU2) snprintf(tau, sizeof tau, "(tau1=%.3g,tau2=%.3g%s%s)", t1, t2, chosen, keep);
    char ord[64] = "natural";
    if (F->dsym) snprintf(ord, sizeof ord, "natural (symbolic on the device)");
    if (fa.ord) {
        if (fa.ord->nnodes) snprintf(ord, sizeof ord, "%s depth %d (%d leaves)", bsr_order_kind_name(fa.ord->kind),
                                     fa.ord->depth, fa.ord->nleaves);
        else snprintf(ord, sizeof ord, "%s", bsr_order_kind_name(fa.ord->kind));
    }
    if (d) pc->pivots_regularized = d->nreg;
    char fac[64];
    if (d) snprintf(fac, sizeof fac, "factor on the device %.4f s", d->factor_s);
    else snprintf(fac, sizeof fac, "factor %.3f s", st.factor_s);
    snprintf(pc->info, sizeof pc->info,
             "%s%sorder %s, levels L %d U %d, L+U %lld blocks, %lld dropped, %d pivots regularized, %s%s",
             tau, tau[0] ? ", " : "", ord, st.nlevels_L, st.nlevels_U, (long long)(st.nnzb_L + st.nnzb_U),
             (long long)st.dropped, pc->pivots_regularized, fac,
             o->precond_precision == BSR_FLOAT ? ", float factors" : "");
}

static bsr_status ilu_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    if (I->o.factor == BSR_FACTOR_GPU) return BSR_OK; /* the device pc factors (gilu_refactor) */
    BSR_TRY(bsr_ilu_refactor(I->F, A));
    ilu_describe(pc, I->F, &I->o, NULL);
    return BSR_OK;
}

static void ilu_destroy(bsr_pc *pc)
{
    ilu_pc *I = pc->data;
    if (!I) return;
    bsr_ilu_destroy(I->F);
    free(I);
}

/* The factorization behind an ILU preconditioner. */
static bsr_ilu *ilu_of(const bsr_pc *pc)
{
    return pc && pc->apply == ilu_apply ? ((ilu_pc *)pc->data)->F : NULL;
}

bsr_status bsr_pc_ilu(const bsr_matrix *A, const bsr_solver_options *o, bsr_pc **out)
{
    bsr_ilu_kind kind = o->precond == BSR_PC_ILU0 ? BSR_ILU0 : o->precond == BSR_PC_ILUT ? BSR_ILUT : BSR_ILU2;
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, kind);
    io.tau1 = o->tau1;
    io.fill = o->fill;
    io.tau2 = o->precond == BSR_PC_ILUT ? 0 : o->tau2;
    io.keep_pattern = bsr_keep_pattern(o);
    io.prec = o->precond_precision;
    io.symbolic_only = kind == BSR_ILU0 && o->factor == BSR_FACTOR_GPU;
    /* unset: the ILU default (nested dissection: the CPU factors over its tree),
     * but natural order for an ILU(0) factored on the device, whose level
     * schedule needs no tree: its setup stays on the device (~0.05 s at 1M
     * block rows against ~7 s of METIS and host work for ND), and the 3D
     * stencils converged in as many or fewer iterations (bench/RESULTS.md) */
    if (o->reorder[0]) BSR_TRY(bsr_order_parse(o->reorder, &io.order));
    else if (io.symbolic_only) io.order.kind = BSR_ORDER_NATURAL;
    bsr_pc *pc = bsr_calloc(1, sizeof *pc, "preconditioner");
    ilu_pc *I = bsr_calloc(1, sizeof *I, "ILU preconditioner");
    if (!pc || !I) { free(pc); free(I); return BSR_ERR_NOMEM; }
    pc->name = bsr_pc_name(o->precond);
    I->o = *o;
    pc->data = I;
    pc->symmetric = 0;
    pc->apply = ilu_apply;
    pc->refactor = ilu_refactor;
    pc->destroy = ilu_destroy;
    /* ILU(0) factored on the device in natural order: its symbolic phase too
     * (bsr_pc_ilu_device), unless BSR_ILU0_SYM=host (to compare) */
    const char *where = getenv("BSR_ILU0_SYM");
    const int defer = io.symbolic_only && io.order.kind == BSR_ORDER_NATURAL && !(where && !strcmp(where, "host"));
    bsr_status s = defer ? bsr_ilu_setup_deferred(A, &io, &I->F) : bsr_ilu_setup(A, &io, &I->F);
    if (s) { bsr_pc_destroy(pc); return s; }
    ilu_describe(pc, I->F, o, NULL);
    *out = pc;
    return BSR_OK;
}

/* ---- device version --------------------------------------------------------- */
static bsr_status gilu_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ilu_pc *I = pc->data;
    if (!I->valid)   /* never the factors of older values */
        return bsr_error(BSR_ERR_ARG, "device ILU: the last refactor failed; refactor (or set up) again before solving");
    return bsr_gpu_ilu_apply(I->G, X, Y);
}

/* factor=gpu: scale and factor A (device mirror current) on the device into
 * G's factors; the host pc's counters and info line report it. */
static bsr_status gilu_factor(ilu_pc *I, bsr_pc *pc, const bsr_matrix *A)
{
    I->valid = 0;
    BSR_TRY(bsr_gpu_ilu0_factor(I->D, A, I->G));
    I->valid = 1;
    dev_factor d;
    bsr_gpu_ilu0_stats(I->D, &d.nreg, NULL, &d.factor_s);
    ilu_describe(pc, I->F, &I->o, &d);
    if (I->cpu) ilu_describe(I->cpu, I->F, &I->o, &d);
    return BSR_OK;
}

static bsr_status gilu_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ilu_pc *I = pc->data;
    if (I->D) return gilu_factor(I, pc, A);
    /* the host factors were refactored first: re-upload values */
    I->valid = 0;
    BSR_TRY(bsr_gpu_ilu_refactor(I->G, I->F));
    I->valid = 1;
    return BSR_OK;
}

static void gilu_destroy(bsr_pc *pc)
{
    ilu_pc *I = pc->data;
    if (!I) return;
    bsr_gpu_ilu0_destroy(I->D);
    bsr_gpu_ilu_destroy(I->G);
    free(I);
}

bsr_status bsr_pc_ilu_device(bsr_context *ctx, const bsr_matrix *A, const bsr_solver_options *o,
                             bsr_pc *cpu, bsr_pc *pc)
{
    bsr_ilu *F = ilu_of(cpu);
    if (!F) return bsr_error(BSR_ERR_INTERNAL, "device ILU: host preconditioner is not an ILU");
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    /* float factors serve double vectors (mixed) and float vectors alike */
    go.factor_float = o->precond_precision == BSR_FLOAT || A->prec == BSR_FLOAT;
    ilu_pc *I = bsr_calloc(1, sizeof *I, "device ILU preconditioner");
    if (!I) return BSR_ERR_NOMEM;
    I->F = F;
    pc->data = I;
    pc->apply = gilu_apply;
    pc->refactor = gilu_refactor;
    pc->destroy = gilu_destroy;
    I->o = *o;
    I->cpu = cpu;
    const int dev = o->factor == BSR_FACTOR_GPU;
    go.values_later = dev;
    if (F->deferred) {   /* the symbolic phase on the device, else on the host after all */
        bsr_status s = bsr_ilu0_symbolic_dev(ctx, F, A);
        if (s == BSR_ERR_UNSUPPORTED) s = bsr_ilu_symbolic_host(F, A);
        BSR_TRY(s);
    }
    BSR_TRY(bsr_gpu_ilu_create(ctx, F, &go, &I->G));
    I->valid = !dev;
    if (!dev) return BSR_OK;
    BSR_TRY(bsr_gpu_ilu0_create(ctx, F, &I->D));
    bsr_status s = gilu_factor(I, pc, A);
    bsr_prof_mark("device ILU: factorization");
    return s;
}
