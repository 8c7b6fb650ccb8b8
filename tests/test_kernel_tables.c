/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels selected by name: the GPU triangular-solve table
 * (src/trsv/trsv_kernels.c, `bsrsolve bench trsv --kernels`) and the SpMM kernel
 * names (bsr_kernel_name / bsr_kernel_parse, the rows of
 * kernels/spmm/spmm_dispatch.cu).  Host only: the rows' numerics are checked
 * against the CPU reference by test_gpu_trsv and test_gpu_spmm. */
#include "harness.h"
#include "internal.h"   /* the GPU variants 3..8: BSR_KERNEL_P11 ... */
#include "trsv_kernels.h"
#include <string.h>

/* Test: every triangular-solve row is found by its name, names are unique,
 * the level kernel's four schedules come first, then P21-P24 once each. */
static void test_trsv_rows(void)
{
    int n = 0;
    const bsr_trsv_kernel_row *r = bsr_trsv_kernel_rows(&n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(n, 8);
    int sched_seen[4] = {0, 0, 0, 0}, tree_seen[5] = {0, 0, 0, 0, 0}, levels = 0;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_PTR_EQUAL(bsr_trsv_kernel_find(r[i].name), &r[i]);
        for (int j = 0; j < i; j++) CU_ASSERT(strcmp(r[i].name, r[j].name) != 0);
        if (r[i].kernel == BSR_TRSV_LEVEL) {
            CU_ASSERT_EQUAL(levels, i);   /* contiguous, first */
            levels++;
            CU_ASSERT_FATAL(r[i].sched >= BSR_TRSV_SYNCFREE && r[i].sched <= BSR_TRSV_SYNCFLAGS);
            sched_seen[r[i].sched]++;
            CU_ASSERT_EQUAL(strncmp(r[i].name, "level-", 6), 0);
        } else {
            CU_ASSERT_FATAL(r[i].kernel >= BSR_TRSV_P21 && r[i].kernel <= BSR_TRSV_P24);
            tree_seen[r[i].kernel]++;
            CU_ASSERT_EQUAL(r[i].sched, BSR_TRSV_SYNCFREE);
            char want[8];
            snprintf(want, sizeof want, "p2%d", (int)r[i].kernel);
            CU_ASSERT_STRING_EQUAL(r[i].name, want);
        }
    }
    for (int s = 0; s < 4; s++) CU_ASSERT_EQUAL(sched_seen[s], 1);
    for (int k = BSR_TRSV_P21; k <= BSR_TRSV_P24; k++) CU_ASSERT_EQUAL(tree_seen[k], 1);
    CU_ASSERT_PTR_NULL(bsr_trsv_kernel_find("p25"));
    CU_ASSERT_PTR_NULL(bsr_trsv_kernel_find("level"));
    CU_ASSERT_PTR_NULL(bsr_trsv_kernel_find(""));
    CU_ASSERT_PTR_NULL(bsr_trsv_kernel_find(NULL));
}

/* Test: every SpMM kernel's name parses back to it; the GPU rows' names are
 * the options' strings; an unknown name is refused, naming the known ones. */
static void test_spmm_names(void)
{
    for (int k = 0; k < BSR_KERNEL_COUNT; k++) {
        bsr_kernel back = BSR_KERNEL_COUNT;
        BSR_ASSERT_OK(bsr_kernel_parse(bsr_kernel_name((bsr_kernel)k), &back));
        CU_ASSERT_EQUAL(back, k);
    }
    static const char *const gpu[] = {"p11", "p12", "p13", "p14", "warp", "rowj", "cusparse"};
    static const bsr_kernel want[] = {BSR_KERNEL_P11, BSR_KERNEL_P12, BSR_KERNEL_P13, BSR_KERNEL_P14,
                                      BSR_KERNEL_WARP, BSR_KERNEL_ROWJ, BSR_KERNEL_CUSPARSE};
    for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++) {
        bsr_kernel k = BSR_KERNEL_COUNT;
        BSR_ASSERT_OK(bsr_kernel_parse(gpu[i], &k));
        CU_ASSERT_EQUAL(k, want[i]);
    }
    bsr_kernel k;
    CU_ASSERT_EQUAL(bsr_kernel_parse("p15", &k), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "unknown SpMM kernel 'p15'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "cusparse"));
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"triangular-solve kernels: one named row each", test_trsv_rows},
        {"SpMM kernels: names parse back", test_spmm_names},
        {NULL, NULL},
    };
    return bsr_test_main("kernel_tables", tests, argc, argv);
}
