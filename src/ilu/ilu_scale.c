/* SPDX-License-Identifier: BSD-3-Clause */
/* The host scaling every ILU factorization starts from (the rule: ilu_setup.c's
 * file comment): row k of Ds P A P^T with Ds_k = A_kk^{-1}, or I / s_k when
 * A_kk is missing or numerically singular.
 *
 * One text, scale_row, instantiated with b a constant for b = 1..5 (the loops
 * unroll; at b = 1 the generic calls cost more than the arithmetic) and with
 * b a variable beyond: the same operations in the same order, hence the same
 * bits for every b.  A row's largest block norm is the square root of its
 * largest sum of squares (sqrt is correctly rounded, hence monotone: the same
 * number as the largest of the blocks' square roots) wherever the plain sums
 * are in bsr_blk_fnorm's safe range; the blocks outside it take
 * bsr_blk_fnorm's scaled path as before.  One square root per row and pass
 * instead of one per block (0.060 -> 0.028 s of the b = 1 refactor of
 * poisson3d:80 on one thread, with the unrolled products).  A row whose
 * diagonal block is regular and normal and whose scaled blocks are all in
 * the safe range (nearly every row) takes a single pass: Ds_k from A_kk
 * first, each block scaled as it is read from A, the first pass's checks
 * following from those conditions (scale_row_quick; a one-thread refactor
 * 187 -> 146 ms at b = 2, 242 -> 186 ms at b = 3).  ILU(0)'s rows are put
 * at their places in L and U as they are made (place_row0), while in the
 * cache.  ILU(0) at b = 1 on one thread scales each row inside its single
 * pass instead (ilu_scaled0.c). */
#include "ilu_impl.h"
#include "blockops.h"
#include "blocklu.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#if defined(__GNUC__)
#define SCALE_INLINE static inline __attribute__((always_inline))
#else
#define SCALE_INLINE static inline
#endif

/* The largest norm of the blocks of row k of F->aval, given fast, the
 * largest of their plain sums in the safe range, and slow, whether some are
 * outside it: those take bsr_blk_fnorm's scaled path (a NaN is skipped, as
 * "nr > max" skips it).  Out of the blocks' loop: its call would keep the
 * loop's values in memory. */
static double row_norm_max(const bsr_ilu *F, int k, int b, double fast, int slow)
{
    double m = sqrt(fast);
    for (int p = F->ap[k]; slow && p < F->ap[k + 1]; p++) {
        const double *a = F->aval + (size_t)p * b * b;
        double s = 0.0;
        for (int e = 0; e < b * b; e++) s += a[e] * a[e];
        if (ILU_SAFE_SUM(s)) continue;
        double nr = bsr_blk_fnorm_scaled(b, a, s);
        if (nr > m) m = nr;
    }
    return m;
}

/* Row k of the scaling where A's diagonal block is numerically regular with
 * a normal largest entry, its inverse finite, and every block of Ds_k A_k
 * has its sum of squares in the safe range (the common case), plain only;
 * 0 when not (scale_row's passes then, from the start).  Those leave its
 * first pass nothing to find: the row is not zero, not of subnormal values
 * only, has no fallback, and a value that is not finite would have made a
 * block of Ds_k A_k that is not (Ds_k is finite and regular), outside the
 * safe range.  So Ds_k comes from A_kk straight, each block is scaled as it
 * is read from A, and the row is passed once, with scale_row's operations
 * and bits. */
SCALE_INLINE int scale_row_quick(bsr_ilu *F, const bsr_matrix *A, int k, const int b)
{
    const int bb = b * b, p0 = F->ap[k], p1 = F->ap[k + 1];
    const double *Ad = A->val;
    int diag = -1;
    for (int p = p0; p < p1 && diag < 0; p++)
        if (F->ac[p] == k) diag = p;
    if (diag < 0) return 0;
    double *ds = F->dl + (size_t)k * bb, lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    int piv[BSR_MAX_BLOCK];
    const double *akk = Ad + (size_t)F->asrc[diag] * bb;
    const double amax = bsr_blk_maxabs(b, akk);
    if (!(amax >= DBL_MIN && amax <= DBL_MAX)) return 0;
    memcpy(lu, akk, sizeof(double) * bb);
    bsr_blklu_factor(b, lu, piv, 0.0, 0);   /* bsr_blk_lu's text */
    for (int i = 0; i < b; i++) if (fabs(lu[i * b + i]) <= 1e-14 * amax) return 0;
    bsr_blklu_inverse(b, lu, piv, ds);
    if (!bsr_blk_finite(b, ds)) return 0;
    double fast = 0.0;
    for (int p = p0; p < p1; p++) {
        double *a = F->aval + (size_t)p * bb, s = 0.0;
        if (p == diag) bsr_blk_identity(b, a);
        else bsr_blk_mul_inl(b, a, ds, Ad + (size_t)F->asrc[p] * bb, 0, 0);
        for (int e = 0; e < bb; e++) s += a[e] * a[e];
        if (!ILU_SAFE_SUM(s)) return 0;
        if (s > fast) fast = s;
    }
    F->rowref[k] = sqrt(fast) / sqrt((double)b);
    if (F->prec == BSR_DOUBLE) memcpy((double *)F->scale_left + (size_t)k * bb, ds, sizeof(double) * bb);
    else for (int e = 0; e < bb; e++) ((float *)F->scale_left)[(size_t)k * bb + e] = (float)ds[e];
    return 1;
}

/* Row k of the scaling (see the file comment): F->aval's row, Ds_k in F->dl,
 * rowref[k] and scale_left; returns 0, or the error kind (1 a non-finite
 * value in A's block column *col, 2 a zero row, 3 overflow of Ds_k A_kj, 4
 * only subnormal values); *fallback = 1 when Ds_k = I / s_k.  plain: A in
 * double and no matching (the common case, its loads without tests). */
SCALE_INLINE int scale_row(bsr_ilu *F, const bsr_matrix *A, int k, const int b, const int plain, int *col,
                           int *fallback)
{
    const int bb = b * b;
    if (plain && scale_row_quick(F, A, k, b)) { *fallback = 0; return 0; }
    const int r = ilu_src_row(F, k);
    double *ds = F->dl + (size_t)k * bb;
    int diag = -1;
    double rowmax = 0.0, fast = 0.0;
    int slow = 0;
    const int p0 = F->ap[k], p1 = F->ap[k + 1];
    const double *Ad = A->val;
    const float *Af = A->val;
    for (int p = p0; p < p1; p++) {
        const size_t src = (size_t)F->asrc[p] * bb;
        double *a = F->aval + (size_t)p * bb, s = 0.0, m = 0.0;
        const double f = !plain && F->dr ? F->dr[r] * F->dc[A->colind[F->asrc[p]]] : 1.0;
        int bad = 0;
        for (int e = 0; e < bb; e++) {
            double v = plain || A->prec == BSR_DOUBLE ? Ad[src + e] : Af[src + e];
            bad |= !isfinite(v);
            if (!plain && F->dr) v *= f;
            a[e] = v;
            s += v * v;
            if (fabs(v) > m) m = fabs(v);   /* the block's largest, then the row's: a short chain */
        }
        if (m > rowmax) rowmax = m;
        if (bad) { *col = A->colind[F->asrc[p]]; return 1; }
        if (ILU_SAFE_SUM(s)) { if (s > fast) fast = s; }
        else slow = 1;
        if (F->ac[p] == k) diag = p;
    }
    const double smax = row_norm_max(F, k, b, fast, slow);
    if (smax == 0.0) return 2;
    /* only subnormal values: their inverse overflows (kind 3 would blame
     * the diagonal block) */
    if (rowmax < DBL_MIN) return 4;
    int singular = 1;
    if (diag >= 0) {
        double lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        int piv[BSR_MAX_BLOCK];
        double amax = bsr_blk_maxabs(b, F->aval + (size_t)diag * bb);
        memcpy(lu, F->aval + (size_t)diag * bb, sizeof(double) * bb);
        bsr_blklu_factor(b, lu, piv, 0.0, 0);   /* bsr_blk_lu's text */
        singular = amax == 0.0;
        for (int i = 0; i < b; i++) if (fabs(lu[i * b + i]) <= 1e-14 * amax) singular = 1;
        if (!singular) bsr_blklu_inverse(b, lu, piv, ds);
        if (!singular && !bsr_blk_finite(b, ds)) singular = 1;
    }
    if (singular) {
        bsr_blk_identity(b, ds);
        for (int e = 0; e < bb; e++) ds[e] *= sqrt((double)b) / smax;
    }
    *fallback = singular;
    fast = 0.0;
    slow = 0;
    for (int p = p0; p < p1; p++) {
        double *a = F->aval + (size_t)p * bb, s = 0.0;
        if (p == diag && !singular) bsr_blk_identity(b, a);   /* Ds_k A_kk = I by construction */
        else {   /* into c, then back: a copy of a first stalled the loads of the product */
            double c[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
            bsr_blk_mul_inl(b, c, ds, a, 0, 0);
            memcpy(a, c, sizeof(double) * bb);
        }
        for (int e = 0; e < bb; e++) s += a[e] * a[e];
        if (ILU_SAFE_SUM(s)) { if (s > fast) fast = s; }
        else slow = 1;
    }
    const double rmax = row_norm_max(F, k, b, fast, slow);
    if (!isfinite(rmax)) return 3;   /* Ds_k A_kj overflowed: A_kk is nearly singular */
    F->rowref[k] = rmax / sqrt((double)b);
    if (F->dr) {   /* scale_left = Ds Dr: ds is not needed any more */
        for (int e = 0; e < bb; e++) ds[e] *= F->dr[r];
    }
    if (F->prec == BSR_DOUBLE) memcpy((double *)F->scale_left + (size_t)k * bb, ds, sizeof(double) * bb);
    else for (int e = 0; e < bb; e++) ((float *)F->scale_left)[(size_t)k * bb + e] = (float)ds[e];
    return 0;
}

/* What a run of rows found: the smallest bad row of A (INT_MAX: none) with
 * its kind and column, and the fallbacks. */
typedef struct { int bad_row, bad_kind, bad_col, fallbacks; } scale_acc;

/* ILU(0)'s row k of the scaled A into its places in L and U (ilu_row0.c's
 * row kernel starts from them there), while the row is in the cache. */
SCALE_INLINE void place_row0(bsr_ilu *F, int k, const int b)
{
    const ilu_row_t *rk = &F->rows[k];
    const int nl = rk->nl, hasd = F->ap[k + 1] - F->ap[k] > rk->nu - 1 + nl;
    ilu_place_row0(F, k, nl, hasd, rk->nu - 1, b);
}

/* Rows [k0, k1) into acc. */
SCALE_INLINE void scale_rows(bsr_ilu *F, const bsr_matrix *A, int k0, int k1, const int b, const int plain,
                             scale_acc *acc)
{
    for (int k = k0; k < k1; k++) {
        int col = 0, fb = 0, kind = scale_row(F, A, k, b, plain, &col, &fb);
        if (!kind && F->rows_placed) place_row0(F, k, b);
        acc->fallbacks += fb;
        if (kind && ilu_src_row(F, k) < acc->bad_row) {
            acc->bad_row = ilu_src_row(F, k);
            acc->bad_kind = kind;
            acc->bad_col = col;
        }
    }
}

typedef void (*scale_rows_fn)(bsr_ilu *F, const bsr_matrix *A, int k0, int k1, scale_acc *acc);
#define DEFINE_SCALE_ROWS(B)                                                                \
    static void scale_rows_##B(bsr_ilu *F, const bsr_matrix *A, int k0, int k1, scale_acc *acc) \
    {                                                                                       \
        if (A->prec == BSR_DOUBLE && !F->dr) scale_rows(F, A, k0, k1, B, 1, acc);          \
        else scale_rows(F, A, k0, k1, B, 0, acc);                                           \
    }
DEFINE_SCALE_ROWS(1) DEFINE_SCALE_ROWS(2) DEFINE_SCALE_ROWS(3) DEFINE_SCALE_ROWS(4) DEFINE_SCALE_ROWS(5)

/* Any b: the same text with b a variable. */
static void scale_rows_any(bsr_ilu *F, const bsr_matrix *A, int k0, int k1, scale_acc *acc)
{
    scale_rows(F, A, k0, k1, F->b, 0, acc);
}

/* Tests only: the variable-b instances for every b (ilu_impl.h). */
int ilu_generic_kernels;
void bsr_ilu_test_generic_kernels(int on) { ilu_generic_kernels = on; }

/* Rows a scheduling chunk of the scaling. */
#define SCALE_CHUNK 64

bsr_status ilu_scale(bsr_ilu *F, const bsr_matrix *A)
{
    const int n = F->n, b = F->b, bb = b * b;
    scale_rows_fn fn = scale_rows_any;
    if (!ilu_generic_kernels) {
        static const scale_rows_fn by_b[6] = {NULL, scale_rows_1, scale_rows_2, scale_rows_3, scale_rows_4,
                                              scale_rows_5};
        if (b >= 1 && b <= 5) fn = by_b[b];
    }
    F->rows_placed = F->mode == 0 && F->rows;
    const int nchunk = (int)(((int64_t)n + SCALE_CHUNK - 1) / SCALE_CHUNK);
    scale_acc all = {INT_MAX, 0, 0, 0};
    #pragma omp parallel num_threads(bsr_team((int64_t)F->nnzbA * bb, ILU_TEAM_GRAIN))
    {
        scale_acc acc = {INT_MAX, 0, 0, 0};
        #pragma omp for schedule(dynamic, 1) nowait
        for (int c = 0; c < nchunk; c++) {
            const int k0 = c * SCALE_CHUNK;
            fn(F, A, k0, n - k0 < SCALE_CHUNK ? n : k0 + SCALE_CHUNK, &acc);
        }
        #pragma omp critical(bsr_ilu_scale)
        {
            all.fallbacks += acc.fallbacks;
            if (acc.bad_row < all.bad_row) all = (scale_acc){acc.bad_row, acc.bad_kind, acc.bad_col, all.fallbacks};
        }
    }
    const int bad_row = all.bad_row, bad_col = all.bad_col;
    if (all.bad_kind == 1)
        return bsr_error(BSR_ERR_VALUE, "ILU: A has a non-finite value in block (%d,%d)", bad_row, bad_col);
    if (all.bad_kind == 2)
        return bsr_error(BSR_ERR_SINGULAR, "ILU: block row %d of A is zero: A is singular", bad_row);
    if (all.bad_kind == 3)
        return bsr_error(BSR_ERR_SINGULAR, "ILU: scaling block row %d by its inverse diagonal block "
                         "overflows (diagonal block nearly singular)", bad_row);
    if (all.bad_kind == 4)
        return bsr_error(BSR_ERR_VALUE, "ILU: block row %d of A has only subnormal values (|a| < %.3g): rescale A",
                         bad_row, DBL_MIN);
    F->st.scaling_fallbacks = all.fallbacks;
    return BSR_OK;
}
