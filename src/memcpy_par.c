/* Host memcpy split over up to 6 OpenMP threads.  One core copies ~10 GB/s,
 * below PCIe 5's ~55 GB/s: the CUDA backend's staged transfers fill their
 * pinned buffers with this so that the host side keeps up with the link.
 * Six are enough for that (H100 host: 900 MB in 22-30 ms, ~35 GB/s). */
#include "internal.h"
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void bsr_memcpy_par(void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)1 << 20;   /* below this, threads cost more than they give */
    if (bytes < 2 * piece) { memcpy(dst, src, bytes); return; }
    const long n = (long)((bytes + piece - 1) / piece);
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads() < 6 ? omp_get_max_threads() : 6;
#endif
    #pragma omp parallel for schedule(static) num_threads(nt)
    for (long i = 0; i < n; i++) {
        size_t off = (size_t)i * piece, len = bytes - off < piece ? bytes - off : piece;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}
