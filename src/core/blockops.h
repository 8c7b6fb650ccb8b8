/* SPDX-License-Identifier: BSD-3-Clause */
/* Small dense b x b block kernels (row-major, double), b <= BSR_MAX_BLOCK.
 * Used by the ILU factorizations and reusable by any module that needs
 * block pivots (block Jacobi, SSOR, ...). */
#ifndef BSR_BLOCKOPS_H
#define BSR_BLOCKOPS_H

#include "bsrsolve.h" /* BSR_MAX_BLOCK */
#include <math.h>

/* Unroll the next loop fully (GCC; b <= 10). */
#if defined(__GNUC__) && !defined(__clang__)
#define BSR_BLK_UNROLL _Pragma("GCC unroll 10")
#else
#define BSR_BLK_UNROLL
#endif

/* In-place LU with partial pivoting of the b x b block a: P a = L U, L unit
 * lower, both stored in a; piv[r] = row of the original block that became row r.
 * A pivot with |p| < tiny is replaced by copysign(tiny, p) (+tiny for 0);
 * returns the number of pivots replaced (0 for a healthy block).  tiny <= 0
 * replaces nothing (an exact zero pivot then gives Inf/NaN downstream). */
int bsr_blk_lu(int b, double *a, int *piv, double tiny);
/* inv = (P^T L U)^{-1} from the output of bsr_blk_lu. */
void bsr_blk_lu_inv(int b, const double *lu, const int *piv, double *inv);
/* inv = a^{-1} by LU with partial pivoting (tiny as in bsr_blk_lu); returns
 * the number of regularized pivots.  a is not modified. */
int bsr_blk_inv(int b, const double *a, double *inv, double tiny);
/* c = a * m (c must not overlap a or m; likewise below). */
void bsr_blk_mul(int b, double *c, const double *a, const double *m);
/* c -= a * m. */
void bsr_blk_mulsub(int b, double *c, const double *a, const double *m);
/* The text of both, inline for callers whose b is a constant (blockops.c
 * unrolls it per b): c_ij = (((+0 + a_i0 m_0j) + a_i1 m_1j) + ...), or with
 * sub c_ij = ((c_ij - a_i0 m_0j) - a_i1 m_1j) - ... (c_ij read as +0 when
 * !load), k ascending: every form of the block products has these bits. */
static inline void bsr_blk_mul_inl(int b, double *restrict c, const double *restrict a, const double *restrict m,
                                   int sub, int load)
{
    for (int i = 0; i < b; i++) {
        double r[BSR_MAX_BLOCK];
        for (int j = 0; j < b; j++) r[j] = sub && load ? c[i * b + j] : 0.0;
        BSR_BLK_UNROLL for (int k = 0; k < b; k++)
            BSR_BLK_UNROLL for (int j = 0; j < b; j++) {
                if (sub) r[j] -= a[i * b + k] * m[k * b + j];
                else r[j] += a[i * b + k] * m[k * b + j];
            }
        for (int j = 0; j < b; j++) c[i * b + j] = r[j];
    }
}
/* c_{cs[t]} -= a * m_{ms[t]} for t < n (c_i, m_i: the i-th b x b blocks of
 * c and m; targets distinct), each with bsr_blk_mulsub's bits; cs[t] < 0:
 * block ~cs[t], unset, becomes 0 - a * m (a zeroed block's bits). */
void bsr_blk_mulsub_n(int b, int n, double *c, const int *cs, const double *a, const double *m,
                      const int *ms);
/* Pick bsr_blk_mulsub_n's form: 0 the scalar loops, 1 pairs of columns
 * (SSE2), 2 AVX; form < 0 restores the automatic choice.  Returns the best
 * form this processor and build have (-1 when form exceeds it: the
 * automatic choice then).  Every form gives the same bits; for tests and
 * benchmarks (not thread-safe against running updates). */
int bsr_blk_mulsub_force(int form);
/* Nonzero when the AVX form is the one in use (the processor has AVX and no
 * test forced another): the one switch of the CPU kernels' AVX paths (the
 * block updates, the b = 4 SpMV). */
int bsr_cpu_avx(void);
/* bsr_blk_fnorm's slow path: ||a||_F when the plain sum of squares s
 * over- or underflowed (or is 0, or not a number). */
double bsr_blk_fnorm_scaled(int b, const double *a, double s);
/* Frobenius norm of a: the square root of the serial sum of squares, redone
 * with scaling when that sum leaves the safe range.  Inline: the scaling of
 * the ILU calls it for every block of A, twice (a call cost as much as the
 * sum at small b: 15% of a b = 1 refactor). */
static inline double bsr_blk_fnorm(int b, const double *a)
{
    double s = 0.0;
    for (int i = 0; i < b * b; i++) s += a[i] * a[i];
    if (s <= 1e300 && s >= 1e-290) return sqrt(s);
    return bsr_blk_fnorm_scaled(b, a, s);
}
/* Sum of squares of a's entries in four interleaved partial sums (the
 * compiler vectorizes them): within a few ulps of ||a||_F^2, for bounds with
 * a margin, not the bits of the serial sum bsr_blk_fnorm squares.  Inline:
 * the ILU row kernel calls it for every candidate block, where a call costs
 * as much as the sum. */
static inline double bsr_blk_sumsq(int b, const double *a)
{
    const int n = b * b;
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int t = 0; t < 4; t++) s[t] += a[i + t] * a[i + t];
    for (; i < n; i++) s[0] += a[i] * a[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}
/* 1 when ||a||_F is finite: the quick sum of squares settles it unless it
 * is huge or not a number, where bsr_blk_fnorm's scaled sum decides (the ILU
 * row kernels' test of a multiplier). */
static inline int bsr_blk_fnorm_finite(int b, const double *a)
{
    return bsr_blk_sumsq(b, a) <= 1e300 || isfinite(bsr_blk_fnorm(b, a));
}
/* out[a] = sum_c d[a B + c] x[c], each sum from +0 over the columns
 * ascending in double, stored in out's type: a b x b block (row-major) times
 * one vector's block (the ILU apply's scaled gather, with B a constant where
 * the loops should unroll). */
#define BSR_BLK_MATVEC(B, d, x, out) BSR_BLK_MATCOLS(B, d, x, 1, out, 1, 1, )
/* The same for kk columns: out[a*os + j] = sum_c d[a*B + c] x[c*xs + j] for
 * a < B, j < kk, each sum from 0 over c ascending in double (the U rows'
 * finish of the triangular solves, the ILU apply's gather of k vectors);
 * UNR: an unroll pragma for the c loop, or nothing. */
#define BSR_BLK_MATCOLS(B, d, x, xs, out, os, kk, UNR)                                             \
    do {                                                                                           \
        for (int a_ = 0; a_ < (B); a_++)                                                           \
            for (int j_ = 0; j_ < (kk); j_++) {                                                    \
                double s_ = 0.0;                                                                   \
                UNR for (int c_ = 0; c_ < (B); c_++) s_ += (double)(d)[a_ * (B) + c_] * (x)[c_ * (xs) + j_]; \
                (out)[a_ * (os) + j_] = s_;                                                        \
            }                                                                                      \
    } while (0)
/* An upper bound of ||a||_2^2 up to a few ulps: min(||a||_F^2, ||a||_1 ||a||_inf). */
double bsr_blk_norm2_bound_sq(int b, const double *a);
/* Largest |a_ij| (inline: the ILU scaling calls it for every block of A). */
static inline double bsr_blk_maxabs(int b, const double *a)
{
    double m = 0.0;
    for (int i = 0; i < b * b; i++) if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}
/* Nonzero when every entry of a is finite. */
static inline int bsr_blk_finite(int b, const double *a)
{
    for (int i = 0; i < b * b; i++) if (!isfinite(a[i])) return 0;
    return 1;
}
/* a = I. */
static inline void bsr_blk_identity(int b, double *a)
{
    for (int i = 0; i < b * b; i++) a[i] = 0.0;
    for (int i = 0; i < b; i++) a[i * b + i] = 1.0;
}

/* The columns of rows 0-3 of a row-major block of row stride s = 4 or 5,
 * where the compiler targets x86 (the callers run it only where
 * bsr_cpu_avx()): c[0..3] = columns 0-3, its left 4 x 4 part transposed in
 * registers; with s = 5 also c[4] = column 4, gathered.  The AVX rows of the
 * CPU SpMV (b = 4, 5) and of the fused ILU apply (b = 5) multiply by them. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define BSR_BLK_AVX_COLS 1
__attribute__((target("avx"))) static inline void bsr_blk_cols_avx(const double *m, int s, __m256d *c)
{
    const __m256d r0 = _mm256_loadu_pd(m), r1 = _mm256_loadu_pd(m + s);
    const __m256d r2 = _mm256_loadu_pd(m + 2 * s), r3 = _mm256_loadu_pd(m + 3 * s);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    c[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    c[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    c[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    c[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
    if (s == 5) c[4] = _mm256_set_pd(m[19], m[14], m[9], m[4]);
}
#endif

#endif
