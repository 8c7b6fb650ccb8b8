/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU triangular-solve kernels as named rows (src/trsv/trsv_kernels.c): the
 * production level-scheduled kernel under each schedule and the seed's tree
 * kernels P21-P24, selected by name (bench trsv --kernels) and switched to
 * with bsr_gpu_ilu_set_kernel.  Internal, not the public API. */
#ifndef BSR_TRSV_KERNELS_H
#define BSR_TRSV_KERNELS_H

#include "gpu_ilu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;        /* "level-syncfree", ..., "p21", ... */
    bsr_trsv_kernel kernel;
    bsr_trsv_sched sched;    /* the level kernel's; the tree kernels' is SYNCFREE */
} bsr_trsv_kernel_row;

/* Every row, the level kernel's first (*n rows). */
const bsr_trsv_kernel_row *bsr_trsv_kernel_rows(int *n);
/* The row called name, or NULL. */
const bsr_trsv_kernel_row *bsr_trsv_kernel_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
