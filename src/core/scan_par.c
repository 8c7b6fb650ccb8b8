/* SPDX-License-Identifier: BSD-3-Clause */
/* Inclusive prefix sum of ints split over the OpenMP threads: row pointers of
 * the setup's CSR-like arrays (ILU map, L/U patterns, update lists, device
 * layouts) from per-row counts computed in parallel. */
#include "internal.h"

#define SCAN_CHUNKS 64   /* fixed, so the chunking never depends on the threads */

int64_t bsr_scan_par(int *a, int n)
{
    if (n <= 0) return 0;
    const int team = bsr_team(n, BSR_ROW_GRAIN);
    if (team < 2) {
        int64_t s = 0;
        for (int i = 0; i < n; i++) a[i] = (int)(s += a[i]);
        return s;
    }
    const int csize = (n + SCAN_CHUNKS - 1) / SCAN_CHUNKS;
    int64_t off[SCAN_CHUNKS + 1];
    off[0] = 0;
    #pragma omp parallel for schedule(static) num_threads(team)
    for (int c = 0; c < SCAN_CHUNKS; c++) {
        int64_t s = 0;
        for (int i = c * csize; i < n && i < (c + 1) * csize; i++) s += a[i];
        off[c + 1] = s;
    }
    for (int c = 0; c < SCAN_CHUNKS; c++) off[c + 1] += off[c];
    #pragma omp parallel for schedule(static) num_threads(team)
    for (int c = 0; c < SCAN_CHUNKS; c++) {
        int64_t s = off[c];
        for (int i = c * csize; i < n && i < (c + 1) * csize; i++) a[i] = (int)(s += a[i]);
    }
    return off[SCAN_CHUNKS];
}
