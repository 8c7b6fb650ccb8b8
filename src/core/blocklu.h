/* SPDX-License-Identifier: BSD-3-Clause */
/* The b x b block LU with partial pivoting and the inverse from it, for the
 * host (blockops.c, precond.c) and the device (kernels/ilu0_gpu.cuh) alike:
 * one text, so that the device factors have the host's bits (the device
 * objects are compiled with -fmad=false: no contraction the host does not
 * do).  Row-major, double, b <= BSR_MAX_BLOCK.  Inline: the device calls them
 * with a constant b (its template's B), so the loops unroll as before. */
#ifndef BSR_BLOCKLU_H
#define BSR_BLOCKLU_H

#include "bsrsolve.h"
#include <math.h>

#include "hd.h"
#ifdef __CUDACC__
#define BSR_BLKLU_INLINE BSR_HD __forceinline__
#else
#define BSR_BLKLU_INLINE static inline
#endif

/* In-place Doolittle LU with row pivoting on the largest |entry| of each
 * column: P a = L U, L unit lower, both stored in a; piv[r] = row of the
 * original block that became row r.  A pivot with |p| < tiny is replaced by
 * copysign(tiny, p) (+tiny for 0; tiny <= 0 replaces nothing); returns the
 * number replaced.  The multipliers are a[r][c] * (1 / pivot), or with divide
 * a[r][c] / pivot (the block Jacobi inverse's bits, precond.c). */
BSR_BLKLU_INLINE int bsr_blklu_factor(int b, double *a, int *piv, double tiny, int divide)
{
    int nreg = 0;
    for (int r = 0; r < b; r++) piv[r] = r;
    for (int c = 0; c < b; c++) {
        int p = c;
        double big = fabs(a[c * b + c]);
        for (int r = c + 1; r < b; r++)
            if (fabs(a[r * b + c]) > big) { big = fabs(a[r * b + c]); p = r; }
        if (p != c) {
            for (int j = 0; j < b; j++) {
                double t = a[c * b + j]; a[c * b + j] = a[p * b + j]; a[p * b + j] = t;
            }
            int t = piv[c]; piv[c] = piv[p]; piv[p] = t;
        }
        double d = a[c * b + c];
        if (tiny > 0 && !(fabs(d) >= tiny) && !isnan(d)) {
            d = copysign(tiny, d);
            a[c * b + c] = d;
            nreg++;
        }
        double inv = 1.0 / d;
        for (int r = c + 1; r < b; r++) {
            double l = divide ? a[r * b + c] / d : a[r * b + c] * inv;
            a[r * b + c] = l;
            for (int j = c + 1; j < b; j++) a[r * b + j] -= l * a[c * b + j];
        }
    }
    return nreg;
}

/* inv = (P^T L U)^{-1} from bsr_blklu_factor's output: column j solves
 * L U x = P e_j by forward then backward substitution. */
BSR_BLKLU_INLINE void bsr_blklu_inverse(int b, const double *lu, const int *piv, double *inv)
{
    double x[BSR_MAX_BLOCK];
    for (int j = 0; j < b; j++) {
        for (int r = 0; r < b; r++) x[r] = piv[r] == j ? 1.0 : 0.0;
        for (int r = 1; r < b; r++)
            for (int c = 0; c < r; c++) x[r] -= lu[r * b + c] * x[c];
        for (int r = b - 1; r >= 0; r--) {
            for (int c = r + 1; c < b; c++) x[r] -= lu[r * b + c] * x[c];
            x[r] /= lu[r * b + r];
        }
        for (int r = 0; r < b; r++) inv[r * b + j] = x[r];
    }
}

#endif
