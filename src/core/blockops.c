/* SPDX-License-Identifier: BSD-3-Clause */
/* Small dense b x b block kernels: LU with partial pivoting, inverse,
 * products, norms.  Row-major, double; loops kept simple so the compiler
 * unrolls them for the small b (1..10) of CFD systems. */
#include "blockops.h"
#include "internal.h" /* BSR_FOR_EACH_B */
#include "blocklu.h"
#include <math.h>
#include <string.h>

/* LU with partial pivoting, tiny pivots pushed to +-tiny (blocklu.h). */
int bsr_blk_lu(int b, double *a, int *piv, double tiny)
{
    return bsr_blklu_factor(b, a, piv, tiny, 0);
}

/* The inverse from bsr_blk_lu's factors (blocklu.h). */
void bsr_blk_lu_inv(int b, const double *lu, const int *piv, double *inv)
{
    bsr_blklu_inverse(b, lu, piv, inv);
}

/* inv = a^{-1} for a b x b block by LU with partial pivoting; returns the number of pivots
 * regularized (below tiny). */
int bsr_blk_inv(int b, const double *a, double *inv, double tiny)
{
    double lu[16 * 16];
    int piv[16];
    memcpy(lu, a, sizeof(double) * b * b);
    int nreg = bsr_blk_lu(b, lu, piv, tiny);
    bsr_blk_lu_inv(b, lu, piv, inv);
    return nreg;
}

/* c = a*m and c -= a*m with b fixed at compile time (b = 1..10, the CFD
 * range) so that the loops unroll; every variant accumulates c_ij over k in
 * ascending order, so all of them give the same bits as the generic loop. */
#if defined(__GNUC__) && !defined(__clang__)
#define BLK_UNROLL _Pragma("GCC unroll 10")
#else
#define BLK_UNROLL
#endif
#define DEFINE_BLK(B)                                                                   \
    static void mul_##B(double *restrict c, const double *restrict a,                   \
                        const double *restrict m)                                       \
    {                                                                                   \
        for (int i = 0; i < B; i++) {                                                   \
            double r[B];                                                                \
            for (int j = 0; j < B; j++) r[j] = 0.0;                                     \
            BLK_UNROLL for (int k = 0; k < B; k++)                                      \
                BLK_UNROLL for (int j = 0; j < B; j++) r[j] += a[i * B + k] * m[k * B + j]; \
            for (int j = 0; j < B; j++) c[i * B + j] = r[j];                            \
        }                                                                               \
    }                                                                                   \
    /* c -= a * m (load) or c = 0 - a * m (!load: mulsub_B's bits on a zeroed   \
     * c, 0 - x is not -x for x = +0); inlined with load constant */               \
    static inline void msub_##B(double *restrict c, const double *restrict a,          \
                                const double *restrict m, int load)                     \
    {                                                                                   \
        for (int i = 0; i < B; i++) {                                                   \
            double r[B];                                                                \
            for (int j = 0; j < B; j++) r[j] = load ? c[i * B + j] : 0.0;               \
            BLK_UNROLL for (int k = 0; k < B; k++)                                      \
                BLK_UNROLL for (int j = 0; j < B; j++) r[j] -= a[i * B + k] * m[k * B + j]; \
            for (int j = 0; j < B; j++) c[i * B + j] = r[j];                            \
        }                                                                               \
    }                                                                                   \
    static void mulsub_##B(double *restrict c, const double *restrict a,                \
                           const double *restrict m) { msub_##B(c, a, m, 1); }          \
    static void mulsub0_##B(double *restrict c, const double *restrict a,               \
                            const double *restrict m) { msub_##B(c, a, m, 0); }
BSR_FOR_EACH_B(DEFINE_BLK)

/* The n updates of bsr_blk_mulsub_n with b fixed: one dispatch for all of
 * them. */
#define DEFINE_BLK_N(B)                                                                 \
    static void mulsub_n_##B(int n, double *c, const int *cs, const double *restrict a, \
                             const double *m, const int *ms)                            \
    {                                                                                   \
        for (int t = 0; t < n; t++) {                                                   \
            const double *mt = m + (size_t)ms[t] * (B * B);                              \
            if (cs[t] >= 0) mulsub_##B(c + (size_t)cs[t] * (B * B), a, mt);              \
            else mulsub0_##B(c + (size_t)~cs[t] * (B * B), a, mt);                       \
        }                                                                               \
    }
BSR_FOR_EACH_B(DEFINE_BLK_N)

/* c = a * m for b x b row-major blocks (unrolled per b through DEFINE_BLK). */
void bsr_blk_mul(int b, double *c, const double *a, const double *m)
{
#define MUL_CASE(B) case B: mul_##B(c, a, m); return;
    switch (b) { BSR_FOR_EACH_B(MUL_CASE) }
#undef MUL_CASE
    for (int i = 0; i < b; i++) {
        double *ci = c + i * b;
        for (int j = 0; j < b; j++) ci[j] = 0.0;
        for (int k = 0; k < b; k++) {
            double aik = a[i * b + k];
            const double *mk = m + k * b;
            for (int j = 0; j < b; j++) ci[j] += aik * mk[j];
        }
    }
}

/* c -= a * m for b x b row-major blocks. */
void bsr_blk_mulsub(int b, double *c, const double *a, const double *m)
{
#define MULSUB_CASE(B) case B: mulsub_##B(c, a, m); return;
    switch (b) { BSR_FOR_EACH_B(MULSUB_CASE) }
#undef MULSUB_CASE
    for (int i = 0; i < b; i++) {
        double *ci = c + i * b;
        for (int k = 0; k < b; k++) {
            double aik = a[i * b + k];
            const double *mk = m + k * b;
            for (int j = 0; j < b; j++) ci[j] -= aik * mk[j];
        }
    }
}

/* c_{cs[t]} -= a * m_{ms[t]} for t < n, c_i and m_i the i-th b x b blocks of
 * c and m (the targets distinct, none overlapping a or an m block); a target
 * cs[t] < 0 is block ~cs[t], unset before: it gets the bits of a zeroed block
 * less a * m (the caller saves the zeroing). */
void bsr_blk_mulsub_n(int b, int n, double *c, const int *cs, const double *a, const double *m,
                      const int *ms)
{
#define MULSUB_N_CASE(B) case B: mulsub_n_##B(n, c, cs, a, m, ms); return;
    switch (b) { BSR_FOR_EACH_B(MULSUB_N_CASE) }
#undef MULSUB_N_CASE
    const size_t bb = (size_t)b * b;
    for (int t = 0; t < n; t++) {
        double *ct = c + (size_t)(cs[t] >= 0 ? cs[t] : ~cs[t]) * bb;
        if (cs[t] < 0) memset(ct, 0, sizeof(double) * bb);
        bsr_blk_mulsub(b, ct, a, m + ms[t] * bb);
    }
}

/* Plain sum of squares, redone with scaling when it over- or underflows
 * (entries beyond ~1e150 or below ~1e-150 are legal input; a sum of 0 is
 * checked too: the squares of entries below ~1e-162 all underflow to 0, and
 * such a block is not zero). */
double bsr_blk_fnorm(int b, const double *a)
{
    double s = 0.0;
    for (int i = 0; i < b * b; i++) s += a[i] * a[i];
    if (s <= 1e300 && s >= 1e-290) return sqrt(s);
    if (isnan(s)) return s;
    double m = bsr_blk_maxabs(b, a);
    if (m == 0.0 || !isfinite(m)) return m;
    s = 0.0;
    for (int i = 0; i < b * b; i++) s += (a[i] / m) * (a[i] / m);
    return m * sqrt(s);
}

/* min(||a||_F^2, ||a||_1 ||a||_inf), each an upper bound of ||a||_2^2 (up to
 * the rounding of these few sums); the second is the tighter one for the
 * near-diagonal inverse pivots of a scaled matrix. */
double bsr_blk_norm2_bound_sq(int b, const double *a)
{
    double n1 = 0.0, ninf = 0.0;
    for (int j = 0; j < b; j++) {
        double c = 0.0, r = 0.0;
        for (int i = 0; i < b; i++) { c += fabs(a[i * b + j]); r += fabs(a[j * b + i]); }
        if (c > n1) n1 = c;
        if (r > ninf) ninf = r;
    }
    double f = bsr_blk_sumsq(b, a), p = n1 * ninf;
    return p < f ? p : f;
}

/* Largest |entry| of a b x b block. */
double bsr_blk_maxabs(int b, const double *a)
{
    double m = 0.0;
    for (int i = 0; i < b * b; i++) if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

/* 1 when every entry of a b x b block is finite. */
int bsr_blk_finite(int b, const double *a)
{
    for (int i = 0; i < b * b; i++) if (!isfinite(a[i])) return 0;
    return 1;
}

/* a = I (b x b). */
void bsr_blk_identity(int b, double *a)
{
    for (int i = 0; i < b * b; i++) a[i] = 0.0;
    for (int i = 0; i < b; i++) a[i * b + i] = 1.0;
}
