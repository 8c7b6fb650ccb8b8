/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of GPU triangular-solve kernels (src/trsv/trsv_kernels.h).  Each row
 * is tested against the host solve by tests/test_gpu_trsv.c. */
#include "trsv_kernels.h"
#include <string.h>

static const bsr_trsv_kernel_row rows[] = {
    {"level-syncfree", BSR_TRSV_LEVEL, BSR_TRSV_SYNCFREE},
    {"level-graph", BSR_TRSV_LEVEL, BSR_TRSV_GRAPH},
    {"level-launch", BSR_TRSV_LEVEL, BSR_TRSV_LAUNCH},
    {"level-syncflags", BSR_TRSV_LEVEL, BSR_TRSV_SYNCFLAGS},
    {"p21", BSR_TRSV_P21, BSR_TRSV_SYNCFREE},
    {"p22", BSR_TRSV_P22, BSR_TRSV_SYNCFREE},
    {"p23", BSR_TRSV_P23, BSR_TRSV_SYNCFREE},
    {"p24", BSR_TRSV_P24, BSR_TRSV_SYNCFREE},
};

/* The table and its length. */
const bsr_trsv_kernel_row *bsr_trsv_kernel_rows(int *n)
{
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

/* Linear search by name (eight rows). */
const bsr_trsv_kernel_row *bsr_trsv_kernel_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}
