/* SPDX-License-Identifier: BSD-3-Clause */
/* Small dense b x b block kernels: LU with partial pivoting, inverse,
 * products, norms.  Row-major, double; loops kept simple so the compiler
 * unrolls them for the small b (1..10) of CFD systems. */
#include "blockops.h"
#include "internal.h" /* BSR_FOR_EACH_B */
#include "blocklu.h"
#include <math.h>
#include <string.h>

/* The LU and the inverse from it with b fixed at compile time (b = 1..10),
 * so that blocklu.h's loops unroll; the same text, the same operations in
 * the same order, hence the same bits as with b a variable. */
#define DEFINE_BLKLU(B)                                                                 \
    static int lu_##B(double *a, int *piv, double tiny) { return bsr_blklu_factor(B, a, piv, tiny, 0); } \
    static void lu_inv_##B(const double *lu, const int *piv, double *inv) { bsr_blklu_inverse(B, lu, piv, inv); }
BSR_FOR_EACH_B(DEFINE_BLKLU)

/* LU with partial pivoting, tiny pivots pushed to +-tiny (blocklu.h). */
int bsr_blk_lu(int b, double *a, int *piv, double tiny)
{
#define LU_CASE(B) case B: return lu_##B(a, piv, tiny);
    switch (b) { BSR_FOR_EACH_B(LU_CASE) }
#undef LU_CASE
    return bsr_blklu_factor(b, a, piv, tiny, 0);
}

/* The inverse from bsr_blk_lu's factors (blocklu.h). */
void bsr_blk_lu_inv(int b, const double *lu, const int *piv, double *inv)
{
#define LU_INV_CASE(B) case B: lu_inv_##B(lu, piv, inv); return;
    switch (b) { BSR_FOR_EACH_B(LU_INV_CASE) }
#undef LU_INV_CASE
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
 * range) so that the loops unroll: bsr_blk_mul_inl's text, hence the bits of
 * the generic loop. */
#define DEFINE_BLK(B)                                                                   \
    static void mul_##B(double *restrict c, const double *restrict a,                   \
                        const double *restrict m) { bsr_blk_mul_inl(B, c, a, m, 0, 0); } \
    /* c -= a * m (load) or c = 0 - a * m (!load: mulsub_B's bits on a zeroed   \
     * c, 0 - x is not -x for x = +0); inlined with load constant */               \
    static inline void msub_##B(double *restrict c, const double *restrict a,          \
                                const double *restrict m, int load)                     \
    {                                                                                   \
        bsr_blk_mul_inl(B, c, a, m, 1, load);                                           \
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

/* The same updates on short vectors (GCC and Clang vector extensions): row i
 * of c less a_ik times row k of m, k ascending, a few adjacent c_ij at once.
 * Each c_ij still gets c_ij - a_i0 m_0j - a_i1 m_1j - ... rounded after every
 * product and every subtraction, in that order (no fused multiply-add: the
 * library is compiled without contraction), so the bits are msub_B's.  Two
 * forms: pairs (SSE2, every x86-64) with m's rows held in registers, for
 * b <= 6, and, where the processor has AVX (checked at run time), quads then
 * a pair then a single column, for b >= 3.  One thread, 8 updates a call
 * from L1, against the scalar loops (tests: test_blockops_vec checks the
 * bits): pairs 1.2-1.5x for b = 2..6; AVX 2.0x (b = 3), 3.0x (b = 4),
 * 1.6-2.7x (b = 5..10). */
#if defined(__GNUC__)
#define BLK_VEC 1
typedef double blk_v2 __attribute__((vector_size(16)));
/* unaligned loads and stores of a pair (memcpy: no alignment assumed) */
static inline blk_v2 blk_ld2(const double *p) { blk_v2 v; memcpy(&v, p, sizeof v); return v; }
static inline void blk_st2(double *p, blk_v2 v) { memcpy(p, &v, sizeof v); }
/* mulsub_n_FORM_B: the n updates of bsr_blk_mulsub_n by the block kernel
 * msub_FORM_B (cs[t] >= 0: c[cs[t]] -= a m[ms[t]]; else c[~cs[t]] =
 * -a m[ms[t]]); ATTR: the kernel's target attribute, or nothing. */
#define BLK_MULSUB_N(ATTR, FORM, B)                                                     \
    ATTR static void mulsub_n_##FORM##_##B(int n, double *c, const int *cs,            \
                                           const double *restrict a, const double *m,  \
                                           const int *ms)                              \
    {                                                                                   \
        for (int t = 0; t < n; t++) {                                                   \
            const double *mt = m + (size_t)ms[t] * (B * B);                              \
            if (cs[t] >= 0) msub_##FORM##_##B(c + (size_t)cs[t] * (B * B), a, mt, 1);   \
            else msub_##FORM##_##B(c + (size_t)~cs[t] * (B * B), a, mt, 0);             \
        }                                                                               \
    }
#define DEFINE_BLK_V2(B)                                                                \
    static inline void msub_v2_##B(double *restrict c, const double *restrict a,       \
                                   const double *restrict m, int load)                  \
    {                                                                                   \
        enum { P = B / 2, T = B % 2, PP = P > 0 ? P : 1 };                              \
        blk_v2 mr[B][PP];                                                               \
        double mt[B];                                                                   \
        BSR_BLK_UNROLL for (int k = 0; k < B; k++) {                                        \
            BSR_BLK_UNROLL for (int q = 0; q < P; q++) mr[k][q] = blk_ld2(m + k * B + 2 * q); \
            mt[k] = T ? m[k * B + B - 1] : 0.0;                                         \
        }                                                                               \
        BSR_BLK_UNROLL for (int i = 0; i < B; i++) {                                        \
            blk_v2 r[PP];                                                               \
            double rt = 0.0;                                                            \
            BSR_BLK_UNROLL for (int q = 0; q < P; q++)                                      \
                r[q] = load ? blk_ld2(c + i * B + 2 * q) : (blk_v2){0.0, 0.0};          \
            if (T) rt = load ? c[i * B + B - 1] : 0.0;                                  \
            BSR_BLK_UNROLL for (int k = 0; k < B; k++) {                                    \
                const double s = a[i * B + k];                                          \
                const blk_v2 sv = {s, s};                                               \
                BSR_BLK_UNROLL for (int q = 0; q < P; q++) r[q] -= sv * mr[k][q];           \
                if (T) rt -= s * mt[k];                                                 \
            }                                                                           \
            BSR_BLK_UNROLL for (int q = 0; q < P; q++) blk_st2(c + i * B + 2 * q, r[q]);    \
            if (T) c[i * B + B - 1] = rt;                                               \
        }                                                                               \
    }                                                                                   \
    BLK_MULSUB_N(, v2, B)
#define BSR_FOR_B_V2(X) X(1) X(2) X(3) X(4) X(5) X(6)
BSR_FOR_B_V2(DEFINE_BLK_V2)

#if defined(__x86_64__) || defined(__i386__)
#define BLK_AVX 1
typedef double blk_v4 __attribute__((vector_size(32)));
#define DEFINE_BLK_V4(B)                                                                \
    __attribute__((target("avx"))) static inline void msub_v4_##B(                      \
        double *restrict c, const double *restrict a, const double *restrict m, int load) \
    {                                                                                   \
        enum { Q = B / 4, P = (B % 4) / 2, T = B % 2, QQ = Q > 0 ? Q : 1, HOLD = B <= 5 }; \
        blk_v4 mh[B][QQ]; /* HOLD: m's rows loaded once, not once a row of c */        \
        if (HOLD)                                                                       \
            BSR_BLK_UNROLL for (int k = 0; k < B; k++)                                      \
                BSR_BLK_UNROLL for (int q = 0; q < Q; q++) memcpy(&mh[k][q], m + k * B + 4 * q, sizeof mh[k][q]); \
        BSR_BLK_UNROLL for (int i = 0; i < B; i++) {                                        \
            blk_v4 r[QQ];                                                               \
            blk_v2 r2 = {0.0, 0.0};                                                     \
            double rt = 0.0;                                                            \
            BSR_BLK_UNROLL for (int q = 0; q < Q; q++) {                                    \
                if (load) memcpy(&r[q], c + i * B + 4 * q, sizeof r[q]);                \
                else r[q] = (blk_v4){0.0, 0.0, 0.0, 0.0};                               \
            }                                                                           \
            if (P && load) memcpy(&r2, c + i * B + 4 * Q, sizeof r2);                   \
            if (T) rt = load ? c[i * B + B - 1] : 0.0;                                  \
            BSR_BLK_UNROLL for (int k = 0; k < B; k++) {                                    \
                const double s = a[i * B + k];                                          \
                const blk_v4 sv = {s, s, s, s};                                         \
                BSR_BLK_UNROLL for (int q = 0; q < Q; q++) {                                \
                    blk_v4 mv;                                                          \
                    if (HOLD) mv = mh[k][q];                                            \
                    else memcpy(&mv, m + k * B + 4 * q, sizeof mv);                     \
                    r[q] -= sv * mv;                                                    \
                }                                                                       \
                if (P) {                                                                \
                    blk_v2 mv;                                                          \
                    memcpy(&mv, m + k * B + 4 * Q, sizeof mv);                          \
                    r2 -= (blk_v2){s, s} * mv;                                          \
                }                                                                       \
                if (T) rt -= s * m[k * B + B - 1];                                      \
            }                                                                           \
            BSR_BLK_UNROLL for (int q = 0; q < Q; q++) memcpy(c + i * B + 4 * q, &r[q], sizeof r[q]); \
            if (P) memcpy(c + i * B + 4 * Q, &r2, sizeof r2);                           \
            if (T) c[i * B + B - 1] = rt;                                               \
        }                                                                               \
    }                                                                                   \
    BLK_MULSUB_N(__attribute__((target("avx"))), v4, B)
#define BSR_FOR_B_V4(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10)
BSR_FOR_B_V4(DEFINE_BLK_V4)
#endif
#endif

/* Which form bsr_blk_mulsub_n takes (bsr_blk_mulsub_form); 0 until the
 * first call, which picks the fastest one the processor has. */
static int blk_form;

/* The form of the n-update kernel in use: 0 scalar, 1 pairs, 2 AVX; forced
 * by bsr_blk_mulsub_force (tests compare the forms' bits). */
static int blk_form_pick(void)
{
    int f = __atomic_load_n(&blk_form, __ATOMIC_RELAXED);
    if (f) return f - 1;
#if defined(BLK_AVX)
    f = __builtin_cpu_supports("avx") ? 2 : 1;
#elif defined(BLK_VEC)
    f = 1;
#else
    f = 0;
#endif
    __atomic_store_n(&blk_form, f + 1, __ATOMIC_RELAXED);
    return f;
}

int bsr_cpu_avx(void) { return blk_form_pick() == 2; }

int bsr_blk_mulsub_force(int form)
{
    int best;
    __atomic_store_n(&blk_form, 0, __ATOMIC_RELAXED);
    best = blk_form_pick();
    if (form >= 0) {
        if (form > best) return -1;
        __atomic_store_n(&blk_form, form + 1, __ATOMIC_RELAXED);
    }
    return best;
}

/* Any b outside the unrolled list: c = a * m (sub 0, c zeroed first) or
 * c -= a * m (sub 1), k ascending, as the unrolled forms. */
static void blk_generic(int b, double *c, const double *a, const double *m, int sub)
{
    for (int i = 0; i < b; i++) {
        double *ci = c + i * b;
        if (!sub)
            for (int j = 0; j < b; j++) ci[j] = 0.0;
        for (int k = 0; k < b; k++) {
            double aik = a[i * b + k];
            const double *mk = m + k * b;
            for (int j = 0; j < b; j++) ci[j] = sub ? ci[j] - aik * mk[j] : ci[j] + aik * mk[j];
        }
    }
}

/* c = a * m for b x b row-major blocks (unrolled per b through DEFINE_BLK). */
void bsr_blk_mul(int b, double *c, const double *a, const double *m)
{
#define MUL_CASE(B) case B: mul_##B(c, a, m); return;
    switch (b) { BSR_FOR_EACH_B(MUL_CASE) }
#undef MUL_CASE
    blk_generic(b, c, a, m, 0);
}

/* c -= a * m for b x b row-major blocks. */
void bsr_blk_mulsub(int b, double *c, const double *a, const double *m)
{
#define MULSUB_CASE(B) case B: mulsub_##B(c, a, m); return;
    switch (b) { BSR_FOR_EACH_B(MULSUB_CASE) }
#undef MULSUB_CASE
    blk_generic(b, c, a, m, 1);
}

/* c_{cs[t]} -= a * m_{ms[t]} for t < n, c_i and m_i the i-th b x b blocks of
 * c and m (the targets distinct, none overlapping a or an m block); a target
 * cs[t] < 0 is block ~cs[t], unset before: it gets the bits of a zeroed block
 * less a * m (the caller saves the zeroing). */
void bsr_blk_mulsub_n(int b, int n, double *c, const int *cs, const double *a, const double *m,
                      const int *ms)
{
    const int form = blk_form_pick();
#if defined(BLK_AVX)
#define MULSUB_N_V4_CASE(B) case B: mulsub_n_v4_##B(n, c, cs, a, m, ms); return;
    if (form == 2) switch (b) { BSR_FOR_B_V4(MULSUB_N_V4_CASE) }
#undef MULSUB_N_V4_CASE
#endif
#if defined(BLK_VEC)
#define MULSUB_N_V2_CASE(B) case B: mulsub_n_v2_##B(n, c, cs, a, m, ms); return;
    if (form >= 1) switch (b) { BSR_FOR_B_V2(MULSUB_N_V2_CASE) }
#undef MULSUB_N_V2_CASE
#endif
    (void)form;
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

/* The scaled sum of squares behind bsr_blk_fnorm (blockops.h) when the
 * plain one, s, over- or underflowed (entries beyond ~1e150 or below
 * ~1e-150 are legal input; a sum of 0 is checked too: the squares of entries
 * below ~1e-162 all underflow to 0, and such a block is not zero). */
double bsr_blk_fnorm_scaled(int b, const double *a, double s)
{
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
