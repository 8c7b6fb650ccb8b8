/* SPDX-License-Identifier: BSD-3-Clause */
/* Transparent huge pages for the large host arrays (matrix and factor values,
 * vectors): bsr_malloc, bsr_calloc and bsr_realloc advise the kernel
 * (madvise MADV_HUGEPAGE) on the 2 MB-aligned inside of every allocation of
 * BSR_HUGE_MIN bytes or more.  The CPU kernels stream A's and the factors'
 * values while gathering x: with 4 KB pages each stream's hardware prefetch
 * stops at every page boundary and each page costs a TLB walk; with 2 MB
 * pages one thread's SpMV of stencil3d:64:5 took 10.2-10.7 ms against
 * 11.2-13.9 (this build VM), and on the H200's 16-core host the CPU's ILU2
 * setup at 1M block rows 1.0 s against 1.2-1.7, the first touches faulting
 * once per 2 MB (bench/RESULTS.md).  Where the system's THP setting is "always" this
 * changes nothing, where it is "never" the advice is ignored; either way no
 * result changes.  BSR_HUGEPAGES=0 in the environment turns it off (to
 * measure). */
#define _DEFAULT_SOURCE   /* madvise */
#include "internal.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* 1 unless BSR_HUGEPAGES=0 (read once; allocations run on many threads at
 * once, so the cached answer is atomic: each thread reads the same). */
static int huge_on(void)
{
    static atomic_int on = -1;
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("BSR_HUGEPAGES");
        v = !(e && e[0] == '0');
        atomic_store_explicit(&on, v, memory_order_relaxed);
    }
    return v;
}

void bsr_mem_advise(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || bytes < BSR_HUGE_MIN || !huge_on()) return;
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);   /* advice only: a failure changes nothing */
#else
    (void)p;
    (void)bytes;
#endif
}
