/* SPDX-License-Identifier: BSD-3-Clause */
/* Row k of a threshold factorization's frozen pattern (ilu_impl.h,
 * ilu_pattern) from the row's column lists, shared by the host
 * (ilu_pattern.c) and the device (kernels/ilu/ilut_pattern_gpu.cu), which
 * must make the same arrays. */
#ifndef BSR_ILU_PATTERN_ROW_H
#define BSR_ILU_PATTERN_ROW_H

#include <limits.h>

#include "hd.h"

/* Merge the ascending lists a (class 0), r (class 1) and x (class 2) into
 * col/cls; where the i-th entry of a lands goes to amap[i] (when amap is
 * set), as base + its index in the merged row. */
static inline BSR_HD void ilu_merge_row(const int *a, int na, const int *r, int nr, const int *x, int nx, int *col,
                                        unsigned char *cls, int *amap, int base)
{
    int i = 0, j = 0, h = 0, t = 0;
    while (i < na || j < nr || h < nx) {
        const int va = i < na ? a[i] : INT_MAX, vr = j < nr ? r[j] : INT_MAX, vx = h < nx ? x[h] : INT_MAX;
        if (va <= vr && va <= vx) {
            if (amap) amap[i] = base + t;
            col[t] = a[i++]; cls[t++] = 0;
        } else if (vr <= vx) {
            col[t] = r[j++]; cls[t++] = 1;
        } else {
            col[t] = x[h++]; cls[t++] = 2;
        }
    }
}

/* Row k of the pattern, starting at lb (lower part) and ub (upper part):
 * lower = L (l, nl), R (r, nr) and the capped-out blocks (x, nx) merged;
 * upper = the pivot, then U (u + 1, nu - 1: u[0] is the pivot) and W (w,
 * nw) merged.  lmap, umap (NULL: not kept) point at row k's first L / U
 * block's entry. */
static inline BSR_HD void ilu_pattern_row_fill(int k, const int *l, int nl, const int *r, int nr, const int *x, int nx,
                                               const int *u, int nu, const int *w, int nw, int lb, int ub, int *lc,
                                               unsigned char *lk, int *uc, unsigned char *uk, int *lmap, int *umap)
{
    ilu_merge_row(l, nl, r, nr, x, nx, lc + lb, lk + lb, lmap, lb);
    uc[ub] = k;   /* the pivot: always first order */
    uk[ub] = 0;
    if (umap) umap[0] = ub;
    ilu_merge_row(u + 1, nu - 1, w, nw, NULL, 0, uc + ub + 1, uk + ub + 1, umap ? umap + 1 : NULL, ub + 1);
}

#endif
