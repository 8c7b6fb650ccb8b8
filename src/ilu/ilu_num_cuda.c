/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA numeric ILU factor (ilu_numeric.h): device factors and scaling in
 * the layout of the plan's pattern (bsr_gpu_ilu, applied by the level or
 * sync-free triangular solves), their values computed on the device
 * (bsr_gpu_ilu0: ILU(0)'s pattern or ILUT/ILU2's frozen one) or, with
 * factor=cpu, on the host (into the plan) and uploaded.  In a CPU-only build the calls report
 * BSR_ERR_NODEVICE, so this file compiles everywhere. */
#include "ilu_numeric.h"

typedef struct {
    ilu_numeric base;
    bsr_gpu_ilu *G;    /* device factors, scaling, schedules */
    bsr_gpu_ilu0 *D;   /* the on-device numeric factorization (factor=gpu), else NULL */
} cuda_numeric;

static bsr_status cuda_numeric_fn(ilu_numeric *f, const bsr_matrix *A)
{
    cuda_numeric *c = (cuda_numeric *)f;
    f->pattern = 0;
    if (c->D) {
        BSR_TRY(bsr_gpu_ilu0_factor(c->D, A, c->G));
        bsr_gpu_ilu0_stats(c->D, &f->nreg, NULL, &f->factor_s);
    } else {   /* factored on the host (factor=cpu): the plan's values, then uploaded */
        BSR_TRY(bsr_ilu_refactor(f->plan, A));
        BSR_TRY(bsr_gpu_ilu_refactor(c->G, f->plan));
        ilu_numeric_host_figures(f);
    }
    f->pattern = f->plan->pattern_id;
    return BSR_OK;
}

static bsr_status cuda_apply(ilu_numeric *f, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_gpu_ilu_apply(((cuda_numeric *)f)->G, X, Y);
}

static uint64_t cuda_pattern(const ilu_numeric *f) { return f->pattern; }

static void cuda_destroy(ilu_numeric *f)
{
    cuda_numeric *c = (cuda_numeric *)f;
    if (!c) return;
    bsr_gpu_ilu0_destroy(c->D);
    bsr_gpu_ilu_destroy(c->G);
    free(c);
}

static const ilu_numeric_ops cuda_ops = {"cuda", cuda_numeric_fn, cuda_apply, cuda_pattern, cuda_destroy};

bsr_status ilu_numeric_cuda(bsr_context *ctx, bsr_ilu *plan, const bsr_matrix *A, const ilu_numeric_options *no,
                            ilu_numeric **out)
{
    *out = NULL;
    const int dev = no->on_device;
    if (dev && plan->rsrc)
        return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: match=mpt needs the values factored on the host "
                         "(the device factorization takes one symmetric permutation): use factor=cpu, or match=none");
    cuda_numeric *c = bsr_calloc(1, sizeof *c, "device ILU factor");
    if (!c) return BSR_ERR_NOMEM;
    ilu_numeric *f = &c->base;
    f->ops = &cuda_ops;
    f->plan = plan;
    f->on_device = dev;
    bsr_status s = BSR_OK;
    const double t = bsr_now();
    if (dev && plan->mode == 1 && !plan->pattern_only)
        s = bsr_error(BSR_ERR_ARG, "ILU: a threshold kind factored on the device needs its pattern chosen first "
                      "(ilu_pattern_pass)");
    else if (!dev && !plan->valid) s = ilu_num_host(plan, A);   /* the values the factors upload */
    f->host_s = bsr_now() - t;
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    go.factor_float = no->factor_float;
    go.values_later = dev;
    go.jacobi = no->trisolve;
    if (!s) s = bsr_gpu_ilu_create(ctx, plan, &go, &c->G);
    /* in place in G's arrays where it can: no second copy of the factors */
    if (!s && dev) s = bsr_gpu_ilu0_create_into(ctx, plan, c->G, &c->D);
    if (!s && dev) s = cuda_numeric_fn(f, A);
    /* factored in place: D and G hold what they need of a device symbolic
     * phase; the patterns only their creation read go */
    if (!s && dev && bsr_gpu_ilu0_in_place(c->D)) bsr_ilu0_dsym_trim(plan);
    if (dev) bsr_prof_mark("device ILU: factorization");
    if (!s && !dev) {   /* the host's values went up with the factors */
        f->pattern = plan->pattern_id;
        ilu_numeric_host_figures(f);
    }
    if (s) { cuda_destroy(f); return s; }
    bsr_gpu_ilu_apply_bytes(c->G, &f->bytes_fixed, &f->bytes_passes);
    *out = f;
    return BSR_OK;
}
