/* SPDX-License-Identifier: BSD-3-Clause */
/* Host memcpy split over OpenMP threads.  One core copies ~10 GB/s, below
 * PCIe 5's ~55 GB/s: the CUDA backend's staged transfers fill their pinned
 * buffers with this so that the host side keeps up with the link (H100 host,
 * 900 MB: 22 ms with 16 threads, 30-34 ms with 6 on a quiet host).  At most
 * XFER_THREADS threads: on the lent 16-core VM a copy over all cores waited
 * for whichever thread the host had descheduled (32 MB vectors 5.5 -> 17-34
 * ms in some cold runs; bench/RESULTS.md).  BSR_XFER_THREADS overrides. */
#include "internal.h"
#include <omp.h>
#include <string.h>

#define XFER_THREADS 8

static int copy_threads(void)
{
    static int nt = 0;
    if (!nt) {
        const char *e = getenv("BSR_XFER_THREADS");
        int t = e ? atoi(e) : XFER_THREADS;
        nt = t >= 1 ? t : XFER_THREADS;
    }
    const int m = omp_get_max_threads();
    return nt < m ? nt : m;
}

void bsr_memcpy_par(void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)1 << 20;   /* below this, threads cost more than they give */
    if (bytes < 2 * piece) { memcpy(dst, src, bytes); return; }
    const long n = (long)((bytes + piece - 1) / piece);
    const int ct = copy_threads(), team = n < ct ? (int)n : ct;   /* a piece a thread at least */
    #pragma omp parallel for schedule(static) num_threads(team)
    for (long i = 0; i < n; i++) {
        size_t off = (size_t)i * piece, len = bytes - off < piece ? bytes - off : piece;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}
