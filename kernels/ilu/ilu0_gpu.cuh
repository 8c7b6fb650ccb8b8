/* SPDX-License-Identifier: BSD-3-Clause */
/* Device code of the on-device block ILU(0) (see ilu0_gpu.cu): the block
 * kernels and the launchers of one block size, instantiated once per block
 * size in kernels/ilu0_gpu_bB.cu, which CMake writes into the build tree
 * (one module each: CUDA loads a module's image on first use, so a
 * factorization does not load the other nine sizes). */
#ifndef BSR_ILU0_GPU_CUH
#define BSR_ILU0_GPU_CUH
#include "cuda_internal.h"
#include "trsv.h"
#include "ilu_impl.h"
#include "ilu0_plan.h"
#include "blocklu.h"
#include "ilu0_sym_gpu.cuh"
#include "sync_mm.cuh"
#include "sell_layout.cuh"
#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* A chunk of the dense tail's K columns: the tail's rows its L columns
 * touch (nr of them, at tRl + r0) and the columns its U rows touch (nc, at
 * tCl + c0), or all S of both (full: its product goes into T directly). */
struct ilu0_tail_chunk { int full, r0, nr, c0, nc; };

struct bsr_gpu_ilu0 {
    bsr_context *ctx;
    cudaStream_t stream;
    const bsr_ilu *F;           /* symbolic source (borrowed; must outlive D) */
    int n, b, nnzA, nL, nU;     /* nL, nU: blocks of the lower / upper part of the pattern */
    int frozen;                 /* a threshold kind's frozen pattern (else ILU(0)'s) */
    int nLs, nUs;               /* blocks of the stored L, U (frozen with a second-order part:
                                 * fewer than nL, nU; gathered through lmap, umap) */
    int *lmap, *umap;           /* device, or NULL */
    double *Lg, *Ug;            /* device: the gathered L, U (with lmap only) */
    int *done;                  /* device [n+1]: row finished (sync-free kernel), then the ticket */
    int nlevels;
    int *level_ptr;             /* host [nlevels+1] */
    /* device arrays */
    int *ap, *asrc, *adst, *adiag, *diagw, *perm;
    int *Lp, *Up;
    long long *updp;            /* [nL+1] 64-bit: large ILU2 patterns pass 2^31 updates */
    int2 *upd;                  /* NULL without lists (fly) */
    /* Without update lists (fly: the lists would take too much of the
     * device, as a complete LU's n^2 updates do on 3D grids): each row finds
     * its targets in its own pattern as it goes, from the pattern's columns
     * and classes (borrowed from F's device pattern, or owned: own_cols) */
    int fly, own_cols;
    const int *Lc, *Uc;
    const unsigned char *lk, *uk;
    unsigned char *nest;        /* device [n]: row k nests in its first off-diagonal block's row (ilu0_panel) */
    /* The dense tail (ilu0_tail.cu): the last S rows, ts = n - S, whose
     * pattern right of ts is complete (a complete LU's top separator) or,
     * in a complete factor, those its ordering lifted to the end, factored
     * as one dense matrix T after the sync-free launch has taken them as far
     * as column ts: their updates from the columns left of ts by GEMMs
     * (T -= L_SK U_KS, a chunk of the K columns at a time), then T's LU;
     * ts = n: none. */
    int ts, tS, tK, tw;         /* ts, S, K (the columns left of ts the tail's L holds), chunk width */
    int *kpos, *kcols;          /* device [ts]: position among the K columns (marked ones), [K]: those columns */
    int tq;                     /* chunks of w of the K columns, each with the tail's rows and columns it touches: */
    struct ilu0_tail_chunk *tch;/* host [tq] */
    int *tRl, *tCl;             /* device: the chunks' rows and columns (tail positions, ascending) */
    double *tT, *tL, *tU, *tC;  /* device: T (Sb x Sb), a chunk's L and U (rows x wb, wb x columns) and their
                                 * product where it is compact, column-major */
    size_t tLn, tUn, tCn;       /* doubles of tL, tU, tC (allocated for each factorization only) */
    double *tD;                 /* device: T's inverted pivots [S b b] */
    void *blas;                 /* cublasHandle_t on D's stream */
    int *lvrows;
    int borrowed;               /* ap, Lp, Up, lvrows belong to F's device symbolic phase */
    double *W;                  /* [(nL+nU)*b*b]: L then U, host layout (NULL when factored in place) */
    /* Where the factorization works: block index x < nL is L's block x at
     * Lv, else U's block x - nL at Uv (the index space of the plan: adst,
     * diagw, upd).  Workspace: Lv = W, Uv = W + nL*b*b, Lst = Ust = NULL.
     * In place (bsr_gpu_ilu0_create_into): the device preconditioner's own
     * value arrays, the plan's indices translated into its storage once, and
     * the L / U blocks of factor row i found at Lst[i] / Ust[i] + their
     * offset within the row. */
    double *Lv, *Uv;
    const int *Lst, *Ust;
    const int *Lcs, *Ucs;       /* in place: G's stored columns (messages; F's device patterns may be gone) */
    const bsr_gpu_ilu *bound;   /* in place: the preconditioner whose arrays these are, else NULL */
    const bsr_gpu_ilu *composed;/* a preconditioner whose maps read W's pattern directly (second-order
                                 * blocks left out by its gather: no Lg, Ug), else NULL */
    int own_dl;                 /* dl allocated here (else G's left scaling, in place) */
    double *dl, *rowref;        /* [n*b*b], [n] */
    int *cnt;                   /* [2]: regularized pivots, scaling fallbacks */
    unsigned long long *err;
    int nreg, nfb;
    double factor_s;
    int valid;
};

/* The dense tail (ilu0_tail.cu): its plan (D->ts = n where there is none,
 * or it would not pay), its workspace before a factorization (where there
 * is no room for it, D->ts = n from then on: the launch takes every row)
 * and given back after it, its factorization after the sync-free launch,
 * its arrays freed. */
bsr_status ilu0_tail_plan(bsr_gpu_ilu0 *D);
bsr_status ilu0_tail_work(bsr_gpu_ilu0 *D);
void ilu0_tail_release(bsr_gpu_ilu0 *D);
bsr_status ilu0_tail_factor(const bsr_gpu_ilu0 *D, double pivot_rel, int strict);
void ilu0_tail_free(bsr_gpu_ilu0 *D);

/* ---- block kernels (ports of src/core/blockops.c, same operation order) ---- */

/* LU with partial pivoting; pivots below tiny pushed to +-tiny; returns the
 * count (the host's text, src/core/blocklu.h, with b = B). */
template <int B> __device__ int blk_lu(double *a, int *piv, double tiny)
{
    return bsr_blklu_factor(B, a, piv, tiny, 0);
}

/* inv = (P^T L U)^{-1} column by column (src/core/blocklu.h, with b = B). */
template <int B> __device__ void blk_lu_inv(const double *lu, const int *piv, double *inv)
{
    bsr_blklu_inverse(B, lu, piv, inv);
}

/* c = a * m (c distinct from a and m). */
template <int B> __device__ void blk_mul(double *c, const double *a, const double *m)
{
    for (int i = 0; i < B; i++) {
        double r[B];
        for (int j = 0; j < B; j++) r[j] = 0.0;
        for (int k = 0; k < B; k++)
            for (int j = 0; j < B; j++) r[j] += a[i * B + k] * m[k * B + j];
        for (int j = 0; j < B; j++) c[i * B + j] = r[j];
    }
}

/* c -= a * m. */
template <int B> __device__ void blk_mulsub(double *c, const double *a, const double *m)
{
    for (int i = 0; i < B; i++) {
        double r[B];
        for (int j = 0; j < B; j++) r[j] = c[i * B + j];
        for (int k = 0; k < B; k++)
            for (int j = 0; j < B; j++) r[j] -= a[i * B + k] * m[k * B + j];
        for (int j = 0; j < B; j++) c[i * B + j] = r[j];
    }
}

template <int B> __device__ double blk_maxabs(const double *a)
{
    double m = 0.0;
    for (int i = 0; i < B * B; i++) if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

/* Frobenius norm, rescaled when the plain sum over- or underflows. */
template <int B> __device__ double blk_fnorm(const double *a)
{
    double s = 0.0;
    for (int i = 0; i < B * B; i++) s += a[i] * a[i];
    if (s <= 1e300 && s >= 1e-290) return sqrt(s);   /* as src/core/blockops.c: a sum that underflowed to 0 is rescaled */
    if (isnan(s)) return s;
    double m = blk_maxabs<B>(a);
    if (m == 0.0 || !isfinite(m)) return m;
    s = 0.0;
    for (int i = 0; i < B * B; i++) s += (a[i] / m) * (a[i] / m);
    return m * sqrt(s);
}

template <int B> __device__ int blk_finite(const double *a)
{
    for (int i = 0; i < B * B; i++) if (!isfinite(a[i])) return 0;
    return 1;
}

/* Error key: smallest row first, then kind, then the position. */
__device__ __forceinline__ void fail(unsigned long long *err, int row, int kind, unsigned aux)
{
    unsigned long long key = ((unsigned long long)row << 36) | ((unsigned long long)kind << 32) | aux;
    atomicMin(err, key);
}

enum { E_AVAL = 1, E_ZROW, E_OVFL, E_LBLK, E_PIV, E_STRICT, E_INV, E_UBLK };

/* Block x of the plan's index space (L's blocks, then U's: see Lv, Uv). */
__device__ __forceinline__ double *fblk(double *Lv, double *Uv, int nL, long long x, int BB)
{
    return x < nL ? Lv + (size_t)x * BB : Uv + (size_t)(x - nL) * BB;
}

/* Block q of A (of A's block row i) as doubles: from A's BSR values (sptr
 * NULL) or from its sliced copy, where that is A's only copy on the device
 * (row pointers arp, slice offsets sptr). */
template <int B, typename TA>
__device__ __forceinline__ void a_block(const TA *__restrict__ A, const int *__restrict__ arp,
                                        const int *__restrict__ sptr, int i, int q, double *blk)
{
    if (!sptr) {
        const TA *a = A + (size_t)q * B * B;
        for (int e = 0; e < B * B; e++) blk[e] = (double)a[e];
    } else {
        for (int e = 0; e < B * B; e++) blk[e] = (double)sell_value(A, arp, sptr, B, i, q, e);
    }
}

/* Step 1: W = Ds P A P^T in the factors' layout, dl = Ds, rowref (see the
 * file comment and src/ilu/ilu_setup.c ilu_scale()).  asrc NULL: the identity map
 * (natural order, symbolic phase on the device); adst NULL: W in the layout
 * of P A P^T itself; diagw NULL: no diagonal added where A lacks one. */
template <int B, typename TA>
__global__ void ilu0_scale(int n, const int *__restrict__ ap, const int *__restrict__ asrc,
                           const int *__restrict__ adst, const int *__restrict__ adiag,
                           const int *__restrict__ diagw, const int *__restrict__ perm,
                           const TA *__restrict__ A, const int *__restrict__ arp, const int *__restrict__ sptr,
                           double *Lv, double *Uv, int nL, double *__restrict__ dl,
                           double *__restrict__ rowref, int *cnt, unsigned long long *err)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int BB = B * B, r = perm ? perm[k] : k;   /* r: the row of A permuted row k comes from */
    double blk[BB], ds[BB], lu[BB];
    int piv[B];
    double smax = 0.0;
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        a_block<B, TA>(A, arp, sptr, r, asrc ? asrc[p] : p, blk);
        for (int e = 0; e < BB; e++)
            if (!isfinite(blk[e])) { fail(err, r, E_AVAL, (unsigned)p); return; }
        /* every block counts for the scaling, in the pattern or not (as on the host) */
        double nr = blk_fnorm<B>(blk);
        if (nr > smax) smax = nr;
    }
    if (smax == 0.0) { fail(err, r, E_ZROW, 0); return; }
    const int dp = adiag[k];
    int singular = 1;
    if (dp >= 0) {
        a_block<B, TA>(A, arp, sptr, r, asrc ? asrc[dp] : dp, blk);
        for (int e = 0; e < BB; e++) lu[e] = blk[e];
        double amax = blk_maxabs<B>(blk);
        blk_lu<B>(lu, piv, 0.0);
        singular = amax == 0.0;
        for (int i = 0; i < B; i++) if (fabs(lu[i * B + i]) <= 1e-14 * amax) singular = 1;
        if (!singular) blk_lu_inv<B>(lu, piv, ds);
        if (!singular && !blk_finite<B>(ds)) singular = 1;
    }
    if (singular) {
        for (int e = 0; e < BB; e++) ds[e] = 0.0;
        for (int i = 0; i < B; i++) ds[i * B + i] = 1.0 * (sqrt((double)B) / smax);
        atomicAdd(&cnt[1], 1);
    }
    double rmax = 0.0;
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        const int dst = adst ? adst[p] : p;   /* adst NULL: W in A's (permuted) layout */
        double *out = fblk(Lv, Uv, nL, dst < 0 ? 0 : dst, BB);
        a_block<B, TA>(A, arp, sptr, r, asrc ? asrc[p] : p, blk);
        if (p == dp && !singular) {
            for (int e = 0; e < BB; e++) lu[e] = 0.0;
            for (int i = 0; i < B; i++) lu[i * B + i] = 1.0;
        } else {
            blk_mul<B>(lu, ds, blk);
        }
        if (dst >= 0) for (int e = 0; e < BB; e++) out[e] = lu[e];   /* < 0: outside a frozen pattern */
        double nr = blk_fnorm<B>(lu);
        if (nr > rmax) rmax = nr;
    }
    if (dp < 0 && diagw) { /* the diagonal of the pattern is there even when A lacks it */
        double *out = fblk(Lv, Uv, nL, diagw[k], BB);
        for (int e = 0; e < BB; e++) out[e] = 0.0;
    }
    if (!isfinite(rmax)) { fail(err, r, E_OVFL, 0); return; }
    rowref[k] = rmax / sqrt((double)B);
    for (int e = 0; e < BB; e++) dl[(size_t)k * BB + e] = ds[e];
}

/* Where column j (> the column of lower block l) sits in row i's pattern:
 * the lower part after l when j < i, else the upper part (pivot first,
 * ascending), as an index of the plan (U's blocks from nL); -1 when absent.
 * Binary searches: the plan's lists (a warp's lanes look up 32 columns of
 * one upper row k at once) and the factorization without them. */
__device__ __forceinline__ int ilu0_target(int i, int l, int j, const int *__restrict__ Lp, const int *__restrict__ Lc,
                                           const int *__restrict__ Up, const int *__restrict__ Uc, int nL)
{
    int lo, hi;
    const int *c;
    if (j < i) { lo = l + 1; hi = Lp[i + 1] - 1; c = Lc; }
    else { lo = Up[i]; hi = Up[i + 1] - 1; c = Uc; }
    while (lo <= hi) {
        const int mid = (lo + hi) >> 1, v = c[mid];
        if (v == j) return j < i ? mid : nL + mid;
        if (v < j) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* The first position p in [lo, hi) of the ascending c[] with c[p] >= v (hi: none). */
__device__ __forceinline__ int first_at_least(const int *__restrict__ c, int lo, int hi, int v)
{
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (c[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* What step 2's kernels read and write: the rows in schedule order, L's and
 * U's row pointers, the updates (updp, upd), the values Lv (nL blocks) and
 * Uv, the storage offsets Lst/Ust, the rows' reference sizes, the pivot rule
 * and the counters and error key. */
#define ILU0_ROW_ARGS                                                                              \
    const int *__restrict__ rows, const int *__restrict__ Lp, const int *__restrict__ Up,          \
        const long long *__restrict__ updp, const int2 *__restrict__ upd, int nL, double *Lv, double *Uv, \
        const int *__restrict__ Lst, const int *__restrict__ Ust, const double *__restrict__ rowref, \
        double pivot_rel, int strict, int *cnt, unsigned long long *err

/* The end of row i by one thread, once its updates are done: the pivot
 * block checked, factored and inverted (the pivot rule of the host), U's
 * other blocks checked, each failure keyed in err (the first one only). */
template <int B>
__device__ __forceinline__ void thread_row_end(int i, const int *__restrict__ Up, double *Uv, long long uo,
                                               const double *__restrict__ rowref, double pivot_rel, int strict,
                                               int *cnt, unsigned long long *err)
{
    constexpr int BB = B * B;
    double lu[BB], inv[BB];
    int piv[B];
    double *d = Uv + (size_t)(Up[i] + uo) * BB;
    if (!blk_finite<B>(d)) { fail(err, i, E_PIV, 0); return; }
    const double tiny = pivot_rel * rowref[i];
    for (int e = 0; e < BB; e++) lu[e] = d[e];
    const int nreg = blk_lu<B>(lu, piv, tiny);
    if (nreg) {
        if (strict) { fail(err, i, E_STRICT, (unsigned)nreg); return; }
        atomicAdd(&cnt[0], 1);
    }
    blk_lu_inv<B>(lu, piv, inv);
    if (!blk_finite<B>(inv)) { fail(err, i, E_INV, 0); return; }
    for (int q = Up[i] + 1; q < Up[i + 1]; q++)
        if (!blk_finite<B>(Uv + (size_t)(q + uo) * BB)) { fail(err, i, E_UBLK, (unsigned)q); return; }
    for (int e = 0; e < BB; e++) d[e] = inv[e];
}

/* Step 2: the rows rows[0..nr) of one level (see the file comment and
 * src/ilu/ilu_row.c with the pattern fixed). */
template <int B>
__global__ void ilu0_level(int nr, ILU0_ROW_ARGS)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nr) return;
    const int BB = B * B, i = rows[t];
    /* row i's blocks where they are stored (in place: G's level-ordered rows) */
    const long long lo = Lst ? (long long)Lst[i] - Lp[i] : 0, uo = Ust ? (long long)Ust[i] - Up[i] : 0;
    double m[BB];
    for (int l = Lp[i]; l < Lp[i + 1]; l++) {
        double *x = Lv + (size_t)(l + lo) * BB;
        /* column k's inverted pivot is U's first block of row k: updp holds
         * it as the first entry of the list of L block l */
        const long long u0 = updp[l], u1 = updp[l + 1];
        const double *uinv = Uv + (size_t)(upd[u0].x - nL) * BB;
        blk_mul<B>(m, x, uinv);
        for (int e = 0; e < BB; e++) x[e] = m[e];
        if (!blk_finite<B>(m)) { fail(err, i, E_LBLK, (unsigned)l); return; }
        for (long long u = u0 + 1; u < u1; u++) {
            const int2 q = upd[u];
            blk_mulsub<B>(fblk(Lv, Uv, nL, q.y, BB), m, Uv + (size_t)(q.x - nL) * BB);
        }
    }
    thread_row_end<B>(i, Up, Uv, uo, rowref, pivot_rel, strict, cnt, err);
}

/* Step 2 with a warp a row (B = 1..5).  The warp is S = 32 / TW teams of
 * TW lanes, lane e of a team holding entry (e / B, e % B) of a block: the
 * block products are shuffles along the team and the blocks' loads
 * coalesced.  For each lower block, in ascending order, every team forms the
 * multiplier, and the teams then share its list of updates (team s takes
 * every S-th): the targets of one list are distinct blocks, and a barrier
 * separates the lists, so every target is still updated in ascending order
 * of the lower block, as on the CPU.  A frozen ILU2 pattern at 1M block rows
 * has a thousand levels of a few hundred rows, each row ~50 block updates:
 * the time is the chain of rows, so a row's lists are split rather than the
 * warp's lanes given to more rows (bench/RESULTS.md); the pivot block is
 * factored and inverted by lane 0. */
template <int B> struct ilu0_team { enum { W = B == 1 ? 1 : B * B <= 4 ? 4 : B * B <= 16 ? 16 : 32, S = 32 / W }; };

/* The multiplier m = x * inv(U(k,k)) of lower block x by a warp (entry e of
 * a block in each team's lane e, iv: the inverted pivot block of row k),
 * written over x by team 0 once every team has read x; mh[h] = m(e / B, h),
 * the entries a lane needs for the products.  Returns 0 where m is not
 * finite. */
template <int B>
__device__ __forceinline__ int team_multiplier(double *x, const double *iv, int lane, double *mh)
{
    constexpr int BB = B * B, TW = ilu0_team<B>::W;
    const unsigned FULL = 0xffffffffu;
    const int e = lane % TW, s = lane / TW, r = e / B, c = e % B, act = e < BB, ee = act ? e : 0;
    const double xv = x[ee], ivv = iv[ee];
    double m = 0.0;
    for (int h = 0; h < B; h++) m += __shfl_sync(FULL, xv, r * B + h, TW) * __shfl_sync(FULL, ivv, h * B + c, TW);
    __syncwarp();   /* every team has read x before team 0 overwrites it */
    if (s == 0 && act) x[e] = m;
    for (int h = 0; h < B; h++) mh[h] = __shfl_sync(FULL, m, r * B + h, TW);
    return !__any_sync(FULL, act && !isfinite(m));
}

/* Team s's targets j = s, s + S, ... of a warp's nf, G at a time with all
 * their loads issued before any product: pick(j, &t, &tgt) names the j-th,
 * and tgt -= m_p * (sb[p] + t blocks) for p = 0 .. np-1 (np <= P, mh[p]:
 * team_multiplier's entries of m_p) in that order, as np passes of one
 * multiplier each would apply them: the same bits (P = 1: team_updates;
 * more: a panel of the factorization without lists, ilu0_panel). */
template <int B, int P, int G, typename K>
__device__ __forceinline__ void team_panel(int nf, int np, int lane, const double (*mh)[B], const double *const *sb,
                                           K pick)
{
    constexpr int BB = B * B, TW = ilu0_team<B>::W, S = ilu0_team<B>::S;
    const unsigned FULL = 0xffffffffu;
    const int e = lane % TW, s = lane / TW, c = e % B, act = e < BB, ee = act ? e : 0;
    for (int base = 0; base < nf; base += S * G) {   /* the same trips in every lane */
        double sv[G][P], tv[G];
        double *tp[G];
#pragma unroll
        for (int g = 0; g < G; g++) {
            const int j = base + g * S + s;
            int t = 0;
            tp[g] = NULL;
            if (j < nf) pick(j, &t, &tp[g]);
            tv[g] = tp[g] ? tp[g][ee] : 0.0;
#pragma unroll
            for (int p = 0; p < P; p++) sv[g][p] = tp[g] && p < np ? sb[p][(size_t)t * BB + ee] : 0.0;
        }
#pragma unroll
        for (int g = 0; g < G; g++) {
            double v = tv[g];
#pragma unroll
            for (int p = 0; p < P; p++)
                if (p < np)
                    for (int h = 0; h < B; h++) v -= mh[p][h] * __shfl_sync(FULL, sv[g][p], h * B + c, TW);
            if (tp[g] && act) tp[g][e] = v;
        }
    }
}

/* A warp's nf updates by one multiplier (mh[0]: team_multiplier): for
 * j = 0 .. nf-1, pick(j, &t, &tgt) names the j-th pair and tgt -= m *
 * (sb + t blocks).  Long lists go G = 8 blocks a team at a time, so that a
 * warp keeps 8*S blocks in flight rather than S (the long rows of a
 * complete LU are a chain of a million updates each); lists of one or two
 * blocks a team (ILU(0)'s) in one round of that many, which costs them
 * fewer instructions.  The nf targets are distinct blocks of one row and no
 * source is among them: each target is updated as one block at a time
 * would, the same bits. */
template <int B, typename K>
__device__ __forceinline__ void team_updates(int nf, int lane, const double (*mh)[B], const double *sb, K pick)
{
    constexpr int S = ilu0_team<B>::S, G = 32 / S < 8 ? 32 / S : 8;
    if (nf <= S) team_panel<B, 1, 1>(nf, 1, lane, mh, &sb, pick);
    else if (nf <= 2 * S) team_panel<B, 1, 2>(nf, 1, lane, mh, &sb, pick);
    else team_panel<B, 1, G>(nf, 1, lane, mh, &sb, pick);
}

/* The end of row i by a warp, once its updates are done (bad: a failure
 * already keyed): the pivot block d checked, factored and inverted (lane 0,
 * the pivot rule of the host), and the row published (its flag in done,
 * release) even when it failed, so that its dependents go on and the error
 * key names the smallest failing row.  U's other blocks are checked after
 * the launch (ilu0_upper_finite), off the chain of rows. */
template <int B>
__device__ __forceinline__ void warp_row_end(int i, int bad, int lane, const int *__restrict__ Up, double *Uv,
                                             long long uo, const double *__restrict__ rowref, double pivot_rel,
                                             int strict, int *cnt, unsigned long long *err, int *done)
{
    constexpr int BB = B * B, TW = ilu0_team<B>::W;
    const unsigned FULL = 0xffffffffu;
    const int e = lane % TW, act = e < BB, ee = act ? e : 0;
    double *d = Uv + (size_t)(Up[i] + uo) * BB;
    if (!bad && __any_sync(FULL, act && !isfinite(d[ee]))) { if (lane == 0) fail(err, i, E_PIV, 0); bad = 1; }
    double inv[BB];
    if (!bad && lane == 0) {
        double lu[BB];
        int piv[B];
        for (int q = 0; q < BB; q++) lu[q] = d[q];
        const int nreg = blk_lu<B>(lu, piv, pivot_rel * rowref[i]);
        if (nreg && strict) { fail(err, i, E_STRICT, (unsigned)nreg); bad = 1; }
        else {
            if (nreg) atomicAdd(&cnt[0], 1);
            blk_lu_inv<B>(lu, piv, inv);
            if (!blk_finite<B>(inv)) { fail(err, i, E_INV, 0); bad = 1; }
        }
    }
    if (!bad && lane == 0) for (int q = 0; q < BB; q++) d[q] = inv[q];
    __syncwarp();         /* every lane's writes of row i, before its flag: */
    if (lane == 0) st_release(done + i, 1);   /* the release is cumulative over the barrier */
}

/* A warp's row by ticket (*ticket: rows taken in the schedule's order), or
 * -1 past the last of the n. */
__device__ __forceinline__ int warp_ticket(int n, const int *__restrict__ rows, int *ticket, int lane)
{
    int t = 0;
    if (lane == 0) t = atomicAdd(ticket, 1);
    t = __shfl_sync(0xffffffffu, t, 0);
    return t < n ? rows[t] : -1;
}

/* Lower blocks l .. r-1 of a warp's row read finished rows: r (> l)
 * returned once the flags of the next 32 lower blocks' rows (row_of) are
 * polled at once (relaxed loads), lane 0 waiting for the first where it is
 * not set, and one acquire fence taken for all those set: one L1
 * invalidation for up to 32 rows instead of one a row (sync_mm.cuh), where
 * the long rows of a complete LU read thousands.  The fence in every lane
 * and the barrier after it order the rows' data before any lane reads it.
 * Rows of at most 32 lower blocks (ILU(0)'s) poll each row's flag with
 * acquire loads instead: fewer dependent loads for a few rows. */
template <typename K>
__device__ __forceinline__ int warp_rows_ready(int l, int lend, int lane, const int *done, K row_of)
{
    const int q = l + lane;
    const unsigned set = __ballot_sync(0xffffffffu, q < lend && ld_relaxed(done + row_of(q)) != 0);
    int run = ~set ? __ffs(~set) - 1 : 32;
    if (!run) {
        if (lane == 0) while (ld_relaxed(done + row_of(l)) == 0) {}
        run = 1;
    }
    fence_acquire_gpu();
    __syncwarp();
    return l + run;
}

/* Step 2 in one launch, sync-free: warps take rows in the schedule's order by
 * ticket (done[n]), wait for each row k they read (its flag: warp_rows_ready,
 * sync_mm.cuh), factor their row (ilu0_team), and publish it (release).  A
 * row waited on holds a smaller ticket, taken by a warp already running: no
 * deadlock.  Rows of different levels overlap, so a level no longer waits for
 * its slowest row, and there is one launch instead of one a level.  A failed
 * row is published too (its dependents compute on, the error key names the
 * smallest failing row). */
template <int B>
__global__ void __launch_bounds__(128, 5) ilu0_syncfree_warp(int n, ILU0_ROW_ARGS, int *done)
{
    constexpr int BB = B * B;
    const int lane = threadIdx.x & 31, i = warp_ticket(n, rows, done + n, lane);
    if (i < 0) return;   /* the whole warp */
    const long long lo = Lst ? (long long)Lst[i] - Lp[i] : 0, uo = Ust ? (long long)Ust[i] - Up[i] : 0;
    const int many = Lp[i + 1] - Lp[i] > 32;
    int bad = 0;
    for (int l = Lp[i], ready = l; l < Lp[i + 1]; l++) {
        double *x = Lv + (size_t)(l + lo) * BB;
        const long long u0 = updp[l], u1 = updp[l + 1];
        const int2 p0 = upd[u0];   /* the list's first entry: row k's inverted pivot, and k */
        if (!many) { while (ld_acquire(done + p0.y) == 0) {} }
        else if (l == ready) ready = warp_rows_ready(l, Lp[i + 1], lane, done, [&](int h) { return upd[updp[h]].y; });
        double mh[1][B];
        if (!team_multiplier<B>(x, Uv + (size_t)(p0.x - nL) * BB, lane, mh[0])) {
            if (lane == 0) fail(err, i, E_LBLK, (unsigned)l);
            bad = 1;
            break;
        }
        team_updates<B>((int)(u1 - u0 - 1), lane, mh, Uv, [&](int j, int *t, double **tp) {
            const int2 q = upd[u0 + 1 + j];
            *t = q.x - nL;
            *tp = fblk(Lv, Uv, nL, q.y, BB);
        });
        __syncwarp();   /* this list's updates, before the next multiplier reads its block */
    }
    warp_row_end<B>(i, bad, lane, Up, Uv, uo, rowref, pivot_rel, strict, cnt, err, done);
}

/* What step 2 without update lists reads besides ILU0_ROW_ARGS (whose
 * updp, upd it does not): the pattern's columns and classes (lk, uk NULL:
 * no second-order part). */
#define ILU0_FLY_ARGS \
    const int *__restrict__ Lc, const int *__restrict__ Uc, const unsigned char *__restrict__ lk, \
        const unsigned char *__restrict__ uk

/* Row i's block at plan index x (< nL: L's, else U's), stored at its row's
 * offset lo / uo. */
__device__ __forceinline__ double *fblk_row(double *Lv, double *Uv, int nL, int x, long long lo, long long uo, int BB)
{
    return x < nL ? Lv + (size_t)(x + lo) * BB : Uv + (size_t)(x - nL + uo) * BB;
}

/* ilu0_level without update lists: the targets of row k's upper blocks
 * found in row i's pattern (ilu0_target) as the list would hold them, in
 * the same order: the same bits. */
template <int B>
__global__ void ilu0_level_fly(int nr, ILU0_ROW_ARGS, ILU0_FLY_ARGS)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nr) return;
    const int BB = B * B, i = rows[t];
    const long long lo = Lst ? (long long)Lst[i] - Lp[i] : 0, uo = Ust ? (long long)Ust[i] - Up[i] : 0;
    double m[BB];
    for (int l = Lp[i]; l < Lp[i + 1]; l++) {
        double *x = Lv + (size_t)(l + lo) * BB;
        const int k = Lc[l], second = lk && lk[l] == 1;
        const long long uok = Ust ? (long long)Ust[k] - Up[k] : 0;
        blk_mul<B>(m, x, Uv + (size_t)(Up[k] + uok) * BB);
        for (int e = 0; e < BB; e++) x[e] = m[e];
        if (!blk_finite<B>(m)) { fail(err, i, E_LBLK, (unsigned)l); return; }
        for (int q = Up[k] + 1; q < Up[k + 1]; q++) {
            if (second && uk[q]) continue;
            const int tg = ilu0_target(i, l, Uc[q], Lp, Lc, Up, Uc, nL);
            if (tg >= 0) blk_mulsub<B>(fblk_row(Lv, Uv, nL, tg, lo, uo, BB), m, Uv + (size_t)(q + uok) * BB);
        }
    }
    thread_row_end<B>(i, Up, Uv, uo, rowref, pivot_rel, strict, cnt, err);
}

/* A panel of a row: lower blocks l .. l+np-1 whose rows k_0 .. k_np-1 nest
 * (k_p+1 the first off-diagonal column of row k_p, nest[k_p] set: the rows
 * of a supernode, as a complete LU's separators hold them).  Their updates
 * share the upper blocks of row k_np-1 after its pivot, so each of those
 * targets takes its np products in one load and one store instead of np.
 * At most P rows: each holds its multiplier's row (B entries) a lane (4:
 * faster than 2 or 3 for b = 4 and 5, bench/RESULTS.md). */
template <int B> struct ilu0_panel { enum { P = 4 }; };

/* ilu0_syncfree_warp without update lists: for each lower block (i, k) the
 * warp's lanes look up 32 of row k's upper blocks at a time in row i's
 * pattern, compact the ones found in order (a ballot, through the warp's
 * shared slots), and the teams share them as they share a list: the same
 * updates in the same order per target, the same bits.  Each lane first
 * tries the position one past the last target found (one load: in a dense
 * separator every column of row k lies there), then searches
 * (ilu0_target).  Rows that nest (nest[], NULL: none) go a panel at a time
 * (ilu0_panel): the panel's multipliers first, each after the products of
 * the ones before on its own block, then the shared targets.  128 threads
 * (4 warps) a CUDA block. */
template <int B>
__global__ void __launch_bounds__(128, 5) ilu0_syncfree_fly(int n, ILU0_ROW_ARGS, ILU0_FLY_ARGS,
                                                            const unsigned char *__restrict__ nest, int *done,
                                                            int *ticket, int ts)
{
    constexpr int BB = B * B, P = ilu0_panel<B>::P;
    const unsigned FULL = 0xffffffffu;
    __shared__ int2 found[4][32];
    int2 *fw = found[(threadIdx.x >> 5) & 3];
    const int lane = threadIdx.x & 31, i = warp_ticket(n, rows, ticket, lane);
    const unsigned below = (1u << lane) - 1u;
    if (i < 0) return;   /* the whole warp */
    const long long lo = Lst ? (long long)Lst[i] - Lp[i] : 0, uo = Ust ? (long long)Ust[i] - Up[i] : 0;
    const int lb = Lp[i], le = Lp[i + 1], nli = le - lb, nui = Up[i + 1] - Up[i];
    /* a row of the dense tail (ilu0_tail.cu, i >= ts): its lower blocks
     * left of ts, updating only targets left of ts, and no pivot (the
     * tail's dense LU does the rest) */
    const int head = i >= ts, l0 = lb, l1 = head ? first_at_least(Lc, lb, le, ts) : le;
    const int many = l1 - l0 > 32;
    int bad = 0;
    for (int l = l0, ready = l0, np = 1; l < l1; l += np) {
        int k[P];
        k[0] = Lc[l];
        const int second = lk && lk[l] == 1;
        np = 1;
#pragma unroll
        for (int p = 1; p < P; p++) {   /* the panel (warp-uniform) */
            k[p] = k[0];
            if (np == p && nest && !second && l + p < l1 && nest[k[p - 1]] && Lc[l + p] == Uc[Up[k[p - 1]] + 1] &&
                !(lk && lk[l + p] == 1)) {
                k[p] = Lc[l + p];
                np = p + 1;
            }
        }
        /* the panel's rows: the first one waited for, the others taken while
         * finished (a row on the chain of a separator does not wait for more) */
        if (!many) {
            while (ld_acquire(done + k[0]) == 0) {}
            int more = 0;
#pragma unroll
            for (int p = 1; p < P; p++) {
                const int set = __shfl_sync(FULL, p < np && lane == 0 ? ld_relaxed(done + k[p]) : 0, 0);
                if (p < np && !set) np = p;
                more |= p < np;
            }
            if (more) { fence_acquire_gpu(); __syncwarp(); }
        } else {
            if (l == ready) ready = warp_rows_ready(l, l1, lane, done, [&](int h) { return Lc[h]; });
            if (np > ready - l) np = ready - l;
        }
        double mh[P][B];
        const double *sb[P];
        long long uok[P];
#pragma unroll
        for (int p = 0; p < P; p++) {
            if (p >= np || bad) break;
            uok[p] = Ust ? (long long)Ust[k[p]] - Up[k[p]] : 0;
            double *x = Lv + (size_t)(l + p + lo) * BB;
            if (p > 0) {   /* block (i, k_p) takes the products of the panel's multipliers before it */
#pragma unroll
                for (int r = 0; r < p; r++) sb[r] = Uv + (size_t)(Up[k[r]] + uok[r] + p - r) * BB;
                team_panel<B, P, 1>(1, p, lane, mh, sb, [&](int, int *t, double **tp) { *t = 0; *tp = x; });
                __syncwarp();
            }
            if (!team_multiplier<B>(x, Uv + (size_t)(Up[k[p]] + uok[p]) * BB, lane, mh[p])) {
                if (lane == 0) fail(err, i, E_LBLK, (unsigned)(l + p));
                bad = 1;
            }
        }
        if (bad) break;
        const int kl = k[np - 1], ll = l + np - 1, q1 = Up[kl] + 1;
        const int len = (head ? first_at_least(Uc, q1, Up[kl + 1], ts) : Up[kl + 1]) - q1;
#pragma unroll
        for (int r = 0; r < P; r++)
            if (r < np) sb[r] = Uv + (size_t)(Up[k[r]] + uok[r] + np - r) * BB;
        int pred = ll - lb + 1;   /* row i's next position (lower part, then upper) expected to match */
        for (int t0 = 0; t0 < len; t0 += 32) {   /* the same trips in every lane */
            const int t = t0 + lane, pp = pred + lane;
            const int valid = t < len && !(second && uk[q1 + t]), c = t < len ? Uc[q1 + t] : -1;
            int tg = -1;
            if (valid && pp < nli + nui && (pp < nli ? Lc[lb + pp] : Uc[Up[i] + pp - nli]) == c)
                tg = pp < nli ? lb + pp : nL + Up[i] + (pp - nli);
            else if (valid) tg = ilu0_target(i, ll, c, Lp, Lc, Up, Uc, nL);
            const int mp = tg < 0 ? -1 : tg < nL ? tg - lb : nli + (tg - nL - Up[i]);
            const unsigned fm = __ballot_sync(FULL, tg >= 0);
            if (fm) pred = __shfl_sync(FULL, mp, 31 - __clz(fm)) + 1;
            if (tg >= 0) fw[__popc(fm & below)] = make_int2(t, tg);
            __syncwarp();
            const auto pick = [&](int j, int *tt, double **tp) {
                const int2 f = fw[j];
                *tt = f.x;
                *tp = fblk_row(Lv, Uv, nL, f.y, lo, uo, BB);
            };
            if (np == 1)
                team_updates<B>(__popc(fm), lane, mh, sb[0], pick);
            else
                team_panel<B, P, 2>(__popc(fm), np, lane, mh, sb, pick);
            __syncwarp();   /* the slots read, before the next 32 overwrite them */
        }
        __syncwarp();   /* the panel's updates, before the next multiplier reads its block */
    }
    if (!head) warp_row_end<B>(i, bad, lane, Up, Uv, uo, rowref, pivot_rel, strict, cnt, err, done);
}

/* After the sync-free launch, a warp a row: the first non-finite upper
 * block of each row but its pivot (E_UBLK).  Checked in the row's warp,
 * one block after another, it held the long rows of a complete LU, on
 * whose chain every row waits, for thousands of loads.  A row that failed
 * before keeps its key: the kinds the warp gives (E_LBLK .. E_INV) sort
 * before E_UBLK in the same row. */
template <int B>
__global__ void ilu0_upper_finite(int n, const int *__restrict__ Up, const double *__restrict__ Uv,
                                  const int *__restrict__ Ust, unsigned long long *err)
{
    constexpr int BB = B * B;
    const int i = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (i >= n) return;
    const long long uo = Ust ? (long long)Ust[i] - Up[i] : 0;
    const double *v = Uv + (size_t)(Up[i] + 1 + uo) * BB;
    const long long ne = (long long)(Up[i + 1] - Up[i] - 1) * BB;
    long long first = LLONG_MAX;
    for (long long x = lane; x < ne; x += 32)
        if (!isfinite(v[x])) { first = x; break; }
    for (int o = 16; o; o >>= 1) {
        const long long y = __shfl_down_sync(0xffffffffu, first, o);
        if (y < first) first = y;
    }
    if (lane == 0 && first != LLONG_MAX) fail(err, i, E_UBLK, (unsigned)(Up[i] + 1 + first / BB));
}

/* Step 2 for block size B: b = 1..5 all nr rows sync-free (r0 < 0, D->done
 * zeroed by the caller), then U's blocks checked (part 0); with a dense
 * tail, part 1: the rows, the tail's only as far as its first column, and
 * part 2 after the tail's LU: the check alone.  Else the rows r0 .. r0+nr
 * of one level. */
template <int B>
void ilu0_level_launch(const bsr_gpu_ilu0 *D, int T, int r0, int nr, double pivot_rel, int strict, int part)
{
    if constexpr (B * B <= 32) {
        (void)T; (void)r0;
        if (part != 2 && D->fly)
            ilu0_syncfree_fly<B><<<(unsigned)(((int64_t)nr * 32 + 127) / 128), 128, 0, D->stream>>>(
                nr, D->lvrows, D->Lp, D->Up, NULL, NULL, D->nL, D->Lv, D->Uv, D->Lst, D->Ust, D->rowref, pivot_rel,
                strict, D->cnt, D->err, D->Lc, D->Uc, D->lk, D->uk, D->nest, D->done, D->done + D->n,
                part == 1 ? D->ts : nr);
        else if (part != 2)
            ilu0_syncfree_warp<B><<<(unsigned)(((int64_t)nr * 32 + 127) / 128), 128, 0, D->stream>>>(
                nr, D->lvrows, D->Lp, D->Up, D->updp, D->upd, D->nL, D->Lv, D->Uv, D->Lst, D->Ust, D->rowref, pivot_rel,
                strict, D->cnt, D->err, D->done);
        if (part != 1)   /* every row, after the last launch */
            ilu0_upper_finite<B><<<(unsigned)(((int64_t)D->n * 32 + 255) / 256), 256, 0, D->stream>>>(
                D->n, D->Up, D->Uv, D->Ust, D->err);
    } else if (D->fly) {
        ilu0_level_fly<B><<<(unsigned)((nr + T - 1) / T), T, 0, D->stream>>>(
            nr, D->lvrows + r0, D->Lp, D->Up, NULL, NULL, D->nL, D->Lv, D->Uv, D->Lst, D->Ust, D->rowref, pivot_rel,
            strict, D->cnt, D->err, D->Lc, D->Uc, D->lk, D->uk);
    } else {
        ilu0_level<B><<<(unsigned)((nr + T - 1) / T), T, 0, D->stream>>>(nr, D->lvrows + r0, D->Lp, D->Up, D->updp,
                                                                          D->upd, D->nL, D->Lv, D->Uv, D->Lst, D->Ust,
                                                                          D->rowref, pivot_rel, strict, D->cnt, D->err);
    }
}

/* Launch step 1 (scaling) or step 2 for block size B. */
#define ILU0_GPU_DEFINE(B)                                                                                        \
    void ilu0_scale_b##B(const bsr_gpu_ilu0 *D, unsigned nb, int T, const void *av, bsr_precision prec,          \
                         const int *arp, const int *sptr)                                                         \
    {                                                                                                             \
        if (prec == BSR_DOUBLE)                                                                                   \
            ilu0_scale<B, double><<<nb, T, 0, D->stream>>>(D->n, D->ap, D->asrc, D->adst, D->adiag, D->diagw,     \
                                                           D->perm, (const double *)av, arp, sptr, D->Lv, D->Uv,  \
                                                           D->nL, D->dl, D->rowref, D->cnt, D->err);              \
        else                                                                                                      \
            ilu0_scale<B, float><<<nb, T, 0, D->stream>>>(D->n, D->ap, D->asrc, D->adst, D->adiag, D->diagw,      \
                                                          D->perm, (const float *)av, arp, sptr, D->Lv, D->Uv,    \
                                                          D->nL, D->dl, D->rowref, D->cnt, D->err);               \
    }                                                                                                             \
    void ilu0_level_b##B(const bsr_gpu_ilu0 *D, int T, int r0, int nr, double pivot_rel, int strict, int part)    \
    {                                                                                                             \
        ilu0_level_launch<B>(D, T, r0, nr, pivot_rel, strict, part);                                              \
    }

/* The launchers, one pair per block size. */
#define ILU0_GPU_DECL(B)                                                                      \
    void ilu0_scale_b##B(const bsr_gpu_ilu0 *, unsigned, int, const void *, bsr_precision, const int *, const int *); \
    void ilu0_level_b##B(const bsr_gpu_ilu0 *, int, int, int, double, int, int);
BSR_FOR_EACH_B(ILU0_GPU_DECL)
#undef ILU0_GPU_DECL

#endif
