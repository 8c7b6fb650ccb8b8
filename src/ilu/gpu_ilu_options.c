/* SPDX-License-Identifier: BSD-3-Clause */
/* The device ILU's default options (src/ilu/gpu_ilu.h), one definition for the
 * CUDA and the CPU-only build, so option handling runs the same everywhere. */
#include "gpu_ilu.h"
#include <string.h>

/* Level kernel, sync-free, factors in their host precision, renumbered. */
void bsr_gpu_ilu_options_default(bsr_gpu_ilu_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->kernel = BSR_TRSV_LEVEL;
    o->sched = BSR_TRSV_SYNCFREE;
    o->factor_float = 0;
    o->renumber = 1;
}
