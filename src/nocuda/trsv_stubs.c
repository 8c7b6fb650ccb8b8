/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the GPU triangular solves and device ILU (issue 6) report
 * BSR_ERR_NODEVICE. */
#include "internal.h"
#include "../../kernels/trsv.h"
#include <string.h>

/* Nothing to tune without the kernels. */
void bsr_trsv_set_tuning(const bsr_trsv_tuning *t)
{
    (void)t;
}

static bsr_status nodev(const char *fn)
{
    return bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn);
}

/* Same defaults as the CUDA build, so option handling code runs everywhere. */
void bsr_gpu_ilu_options_default(bsr_gpu_ilu_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->kernel = BSR_TRSV_LEVEL;
    o->sched = BSR_TRSV_SYNCFREE;
    o->renumber = 1;
}

bsr_status bsr_gpu_ilu_create(bsr_context *ctx, const bsr_ilu *F, const bsr_gpu_ilu_options *o,
                              bsr_gpu_ilu **G)
{
    (void)ctx; (void)F; (void)o;
    if (G) *G = NULL;
    return nodev("bsr_gpu_ilu_create");
}
bsr_status bsr_gpu_ilu_refactor(bsr_gpu_ilu *G, const bsr_ilu *F)
{
    (void)G; (void)F;
    return nodev("bsr_gpu_ilu_refactor");
}
bsr_status bsr_gpu_ilu_set_kernel(bsr_gpu_ilu *G, bsr_trsv_kernel kernel, bsr_trsv_sched sched)
{
    (void)G; (void)kernel; (void)sched;
    return nodev("bsr_gpu_ilu_set_kernel");
}
bsr_status bsr_gpu_ilu_apply_dev(bsr_gpu_ilu *G, const void *x, void *y, int k, bsr_precision vprec)
{
    (void)G; (void)x; (void)y; (void)k; (void)vprec;
    return nodev("bsr_gpu_ilu_apply_dev");
}
bsr_status bsr_gpu_ilu_apply(bsr_gpu_ilu *G, const bsr_multivec *X, bsr_multivec *Y)
{
    (void)G; (void)X; (void)Y;
    return nodev("bsr_gpu_ilu_apply");
}
bsr_status bsr_gpu_ilu_trsv(bsr_gpu_ilu *G, int upper, const bsr_multivec *X, bsr_multivec *Y)
{
    (void)G; (void)upper; (void)X; (void)Y;
    return nodev("bsr_gpu_ilu_trsv");
}
bsr_status bsr_gpu_ilu_setup_times(const bsr_gpu_ilu *G, double *upload_s, double *analysis_s)
{
    (void)G; (void)upload_s; (void)analysis_s;
    return nodev("bsr_gpu_ilu_setup_times");
}
void bsr_gpu_ilu_destroy(bsr_gpu_ilu *G) { (void)G; }

bsr_status bsr_trsv_dev_solve(const bsr_trsv_tri *T, int kernel, int sched, const void *x, void *y,
                              int k, bsr_precision vprec, void *stream)
{
    (void)T; (void)kernel; (void)sched; (void)x; (void)y; (void)k; (void)vprec; (void)stream;
    return nodev("bsr_trsv_dev_solve");
}
bsr_status bsr_trsv_dev_permscale(int n, int b, int k, const int *perm, const void *S,
                                  bsr_precision fprec, const void *in, void *out,
                                  bsr_precision vprec, int scatter, void *stream)
{
    (void)n; (void)b; (void)k; (void)perm; (void)S; (void)fprec; (void)in; (void)out;
    (void)vprec; (void)scatter; (void)stream;
    return nodev("bsr_trsv_dev_permscale");
}
bsr_status bsr_gpu_ilu_time(bsr_gpu_ilu *G, int k, bsr_precision vprec, int reps, double max_s,
                            int with_apply, bsr_trsv_timing *t)
{
    (void)G; (void)k; (void)vprec; (void)reps; (void)max_s; (void)with_apply; (void)t;
    return nodev("bsr_gpu_ilu_time");
}
const bsr_trsv_tri *bsr_gpu_ilu_tri(const bsr_gpu_ilu *G, int upper)
{
    (void)G; (void)upper;
    return NULL;
}
bsr_status bsr_gpu_ilu_breakdown(const bsr_gpu_ilu *G, bsr_gpu_ilu_setup_breakdown *b)
{
    (void)G;
    if (b) memset(b, 0, sizeof *b);
    return nodev("bsr_gpu_ilu_breakdown");
}
