/* SPDX-License-Identifier: BSD-3-Clause */
/* Level-scheduled block triangular solve on the GPU (the production
 * kernel "level-scheduled P24"): a team of TS lanes (TS = 4..32, a power of
 * two chosen from b*k and the mean row length) per block row; the lanes of a
 * team split over (blocks of the row) x (row of the block) x (vector), every
 * row of a level in parallel.  Schedules sharing the row code:
 *  - per level: one launch per level (launched each time, or captured once in
 *    a CUDA graph by the caller);
 *  - sync-free (default): one launch per triangle; CUDA blocks or warps take
 *    chunks of the level order through a ticket counter, or (narrow levels,
 *    a persistent grid launched cooperatively) round robin; the output is
 *    first filled with a sentinel (all bits set, a NaN no arithmetic
 *    produces) and a lane waits until the values of y it reads are no longer
 *    the sentinel: the data is its own completion flag (no fences, no flag
 *    round trip);
 *  - sync-free with flags (works in place, x == y): one warp per row, per-row
 *    completion flags published by a release store;
 *  - the tail (bsr_trsv_tri.tail: a chain of long rows, a nested-dissection
 *    factor's top separators): one CUDA block a row (tail_kernel), launched
 *    after the sync-free kernel of the rows before it (L) or before that of
 *    the rows after it (U).
 * Every value or flag that one thread polls while another stores it is
 * accessed through the memory model's strong operations (sync_mm.cuh: relaxed
 * for the sentinel-carrying values, release/acquire for the flags), never
 * through `volatile`.
 * Each output is summed in a fixed order, so results are bitwise reproducible. */
#ifndef BSR_TRSV_LEVEL_CUH
#define BSR_TRSV_LEVEL_CUH
#include "trsv_cuda.h"
#include "sync_mm.cuh"
#include "trsv_row.cuh"
#include <limits.h>

#define LS_WARPS 8 /* warps per CUDA block */
/* Lane layouts of a row (team_row's MODE): b*k <= TS lanes; b*k > 32 with a
 * loop over the outputs; b*k > 32 with two vectors per lane. */
#define TM_NARROW 0
#define TM_LOOP 1
#define TM_PAIR 2
/* b*k > 32 split by vectors: nh teams per row, each the narrow layout on kc
 * of the k vectors (the D product of an upper row mixes only the same vector,
 * so the teams are independent); sync-free ticket kernel only. */
#define TM_SPLIT 3
/* b*k > 32, one lane per vector: a team of k lanes per row (32/k rows a
 * warp), lane j computes the b outputs of vector j; sync-free ticket kernel
 * only (vec_syncfree_kernel). */
#define TM_VEC 4
/* Resident blocks per SM asked of the register allocator: rows in flight are
 * what hides the latency of the dependency chain (6 = 48 warps per SM). */
#define LS_MINBLOCKS(B) ((B) <= 4 ? 6 : 4)
/* The persistent kernel keeps its rows' data in registers across the wait
 * (64 registers: no spills in the polling loop for b <= 4); its rows in
 * flight come from the teams per warp instead. */
#define LS_PMINBLOCKS 4
/* Two vectors per lane (TM_PAIR) hold twice the loads across the wait: with
 * the limits above they spilled (72-108 bytes) and ran slower than the loop
 * layout; they get the registers of fewer resident blocks instead, and so
 * does the split layout (48 bytes spilled at b = 4 with 6 blocks, none at 4). */
#define LS_MINBLOCKS_M(B, MODE) ((MODE) == TM_PAIR ? 3 : (MODE) == TM_SPLIT ? 4 : LS_MINBLOCKS(B))
#define LS_PMINBLOCKS_M(MODE) ((MODE) == TM_PAIR ? 3 : LS_PMINBLOCKS)
/* The pipelined persistent kernel holds two rows' data across the wait. */
#define LS_PIPE_MINBLOCKS 3


/* All bits set: a NaN that floating-point arithmetic never returns. */
__device__ __forceinline__ bool is_sentinel(double v) { return __double_as_longlong(v) == -1LL; }
__device__ __forceinline__ bool is_sentinel(float v) { return __float_as_int(v) == -1; }
/* A computed value that happens to be the sentinel (only from a NaN input kept
 * bit for bit) is stored as an ordinary NaN, so no reader can wait forever. */
template <typename TV> __device__ __forceinline__ TV unsentinel(TV v) { return is_sentinel(v) ? (TV)NAN : v; }

/* y_i = D s for an upper row: s (B*k values) staged in sm by the warp, the
 * inverted pivot D times it by lanes tl, tl+32, ...; SENT: a stored value is
 * never the sentinel, and it is stored strong (other rows poll it). */
template <int B, typename TF, typename TV, bool SENT>
__device__ __forceinline__ void pivot_store(const TF *D, const TV *sm, TV *yi, int k, int tl)
{
    __syncwarp();
    for (int o = tl; o < B * k; o += 32) {
        const int r = o / k, j = o - r * k;
        TV v = 0;
#pragma unroll
        for (int c = 0; c < B; c++) v += (TV)D[r * B + c] * sm[c * k + j];
        if (SENT) st_relaxed(yi + o, unsentinel(v));
        else yi[o] = v;
    }
    __syncwarp();
}

/* Solve block row i: y_i = x_i - sum_p A_p y_{col_p} (then times the inverted
 * pivot D for an upper triangle).  Called by a full warp; sm holds B*k values. */
template <int B, typename TF, typename TV, bool SF>
__device__ __forceinline__ void ls_row(int i, int upper, const int *__restrict__ rstart,
                                       const int *__restrict__ rend, const int *__restrict__ colind,
                                       const TF *__restrict__ val, const TV *x, TV *y, int k,
                                       int *flags, TV *sm)
{
    const int lane = threadIdx.x & 31;
    int s0 = rstart[i];
    const int s1 = rend[i];
    const TF *D = NULL;
    if (upper) { D = val + (size_t)s0 * B * B; s0++; }
    const int m = s1 - s0, bk = B * k;
    if (SF) {
        /* wait until every row this one reads is final: relaxed polls, then
         * one acquire fence (the values are read after it), then the warp
         * barrier hands every lane's acquisition to the whole warp */
        for (int q = lane; q < m; q += 32)
            while (ld_relaxed(flags + colind[s0 + q]) == 0) __nanosleep(32);
        fence_acquire_gpu();
        __syncwarp();
    }
    if (bk <= 32) {
        /* G lane groups of bk lanes: group g takes blocks g, g+G, ...; lane o of a
         * group computes output (r, j) = (o / k, o % k).  Groups are combined by
         * a fixed shuffle tree. */
        int G = 1;
        while (2 * G * bk <= 32) G *= 2;
        const int g = lane / bk, o = lane - g * bk, r = o / k, j = o - r * k;
        TV acc = 0;
        if (g < G) acc = row_dot<B, SF>(val, colind, y, s0 + g, s1, G, r, j, k);
        for (int off = G / 2; off >= 1; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off * bk);
        if (lane < bk) row_put(upper, i, o, bk, x, acc, sm, y);
    } else {
        for (int o = lane; o < bk; o += 32) {
            const int r = o / k, j = o - r * k;
            row_put(upper, i, o, bk, x, row_dot<B, SF>(val, colind, y, s0, s1, 1, r, j, k), sm, y);
        }
    }
    if (upper) pivot_store<B, TF, TV, false>(D, sm, y + (size_t)i * bk, k, lane);
    if (SF) {
        /* publish: the warp barrier orders every lane's values before lane 0's
         * release store of the flag (cumulative: one fence on the dependency
         * chain; a fence in every lane before it as well cost 11% at 96^3) */
        __syncwarp();
        if (lane == 0) st_release(flags + i, 1);
    }
}

/* Whole triangle, sync-free with per-row flags (x == y allowed): CUDA blocks take consecutive chunks of the level
 * order by ticket, so every row a warp waits on belongs to a running or
 * finished warp (no deadlock whatever the block scheduling order). */
template <int B, typename TF, typename TV>
__global__ void __launch_bounds__(LS_WARPS * 32)
ls_syncfree_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ rstart,
                   const int *__restrict__ rend, const int *__restrict__ colind,
                   const TF *__restrict__ val, const TV *x, TV *y, int k, int *flags, int *counter)
{
    __shared__ TV sm[LS_WARPS][B * TRSV_MAXK];
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1);
    __syncthreads();
    const int w = threadIdx.x >> 5;
    const int p = ticket * LS_WARPS + w;
    if (p >= n) return;
    ls_row<B, TF, TV, true>(rows[p], upper, rstart, rend, colind, val, x, y, k, flags, sm[w]);
}


/* ---- team kernels (sentinel sync-free and per-level) ------------------------ */

/* One poll of y_c(0..B-1, j) (stride k; relaxed device-scope loads, through
 * L2): true when none is the sentinel any more. */
template <int B, typename TV>
__device__ __forceinline__ bool poll_yc(const TV *yc, int k, TV *yv)
{
    bool ok = true;
#pragma unroll
    for (int c = 0; c < B; c++) {
        yv[c] = ld_relaxed(yc + c * k);
        ok &= !is_sentinel(yv[c]);
    }
    return ok;
}

/* Load y_c(0..B-1, j) (stride k); WAIT: poll until none is the sentinel,
 * sleeping nap ns between polls (fewer polls through L2). */
template <int B, typename TV, bool WAIT>
__device__ __forceinline__ void load_yc(const TV *yc, int k, TV *yv, int nap)
{
    if constexpr (!WAIT) {
#pragma unroll
        for (int c = 0; c < B; c++) yv[c] = yc[c * k];
    } else {
        while (!poll_yc<B, TV>(yc, k, yv))
            if (nap) __nanosleep(nap);
    }
}

/* load_yc for two vectors at once (columns j0 and j1 of the block row). */
template <int B, typename TV, bool WAIT>
__device__ __forceinline__ void load_yc2(const TV *y0p, const TV *y1p, int k, TV *y0, TV *y1, int nap)
{
    if constexpr (!WAIT) {
#pragma unroll
        for (int c = 0; c < B; c++) { y0[c] = y0p[c * k]; y1[c] = y1p[c * k]; }
    } else {
        /* & (not &&): both columns are polled every round */
        while (!(poll_yc<B, TV>(y0p, k, y0) & poll_yc<B, TV>(y1p, k, y1)))
            if (nap) __nanosleep(nap);
    }
}

/* The narrow lane layout (b*kc <= TS, vectors j0 .. j0+kc-1 of k; kc = 0:
 * all): G = TS / (b*kc) rounded down to a power of two lane groups, group g
 * takes blocks g, g+G, ... of the row; lane o of a group computes output
 * (r, j0 + jj) = (o / kc, j0 + o % kc).  Groups are combined by a fixed
 * shuffle tree.  Split in two so that a persistent team can load a row's
 * data (everything that does not depend on other rows) while it still waits
 * on the previous row. */
struct narrow_geom {
    int bkc, G, g, o, r, j, e;
    __device__ __forceinline__ narrow_geom(int B, int k, int TS, int tl, int j0, int kc)
    {
        bkc = B * kc;
        G = 1;
        while (2 * G * bkc <= TS) G *= 2;
        g = tl / bkc; o = tl - g * bkc; r = o / kc;
        const int jj = o - r * kc;
        j = j0 + jj; e = r * k + j;
    }
};

/* A row's independent data: pivot row r (upper), x entry, the group's first
 * block (column col, row r of the block); col < 0: no first block.  Bit 31
 * of s1 is a flag of the caller's (the pipelined kernel's level start),
 * ignored here. */
template <int B, typename TF, typename TV> struct narrow_pre {
    int i, s0, s1, col;
    TV xv;
    TF av[B], dv[B];
};

/* Load row i's independent data ([s0, s1): the row's blocks, pivot first
 * when upper) in the lane geometry ge; P (lower rows only): the right-hand
 * side's row of factor row i is x's row P[i].  The geometry is the caller's: a
 * persistent team builds it once (rebuilt for every row, its two integer
 * divisions and loop were a third of the row loop's instructions).  S (lower
 * rows only): the block-diagonal scaling of the right-hand side, whose row r
 * of block i takes the pivot row's registers (a lower row has no pivot). */
template <int B, typename TF, typename TV, bool PIV = true>
__device__ __forceinline__ void narrow_load(narrow_pre<B, TF, TV> &q, int i, int s0, int s1, int upper,
                                            const int *__restrict__ colind, const TF *__restrict__ val,
                                            const TV *x, int k, int tl, const narrow_geom &ge,
                                            const TF *__restrict__ S = nullptr, const int *__restrict__ P = nullptr)
{
    q.i = i;
    if (upper || S) {
        if (PIV) {
            const TF *D = upper ? val + (size_t)s0 * B * B + ge.r * B : S + (size_t)i * B * B + ge.r * B;
#pragma unroll
            for (int c = 0; c < B; c++) q.dv[c] = D[c];
        }
        if (upper) s0++;
    }
    q.s0 = s0; q.s1 = s1;
    q.xv = tl < ge.bkc ? x[(size_t)(P ? P[i] : i) * B * k + ge.e] : (TV)0;
    const int p = s0 + ge.g;
    q.col = -1;
    if (ge.g < ge.G && p < (s1 & INT_MAX)) {
        q.col = colind[p];
        const TF *a = val + (size_t)p * B * B + ge.r * B;
#pragma unroll
        for (int c = 0; c < B; c++) q.av[c] = a[c];
    }
}

/* The pivot row of an upper row loaded by narrow_load<.., false> (its blocks
 * start after the pivot, at q.s0). */
template <int B, typename TF, typename TV>
__device__ __forceinline__ void narrow_pivot(narrow_pre<B, TF, TV> &q, const TF *__restrict__ val,
                                             const narrow_geom &ge)
{
    const TF *D = val + (size_t)(q.s0 - 1) * B * B + ge.r * B;
#pragma unroll
    for (int c = 0; c < B; c++) q.dv[c] = D[c];
}

/* The same for the scaling row of a lower row (narrow_load<.., false> with S). */
template <int B, typename TF, typename TV>
__device__ __forceinline__ void narrow_scale(narrow_pre<B, TF, TV> &q, const TF *__restrict__ S,
                                             const narrow_geom &ge)
{
    const TF *D = S + (size_t)q.i * B * B + ge.r * B;
#pragma unroll
    for (int c = 0; c < B; c++) q.dv[c] = D[c];
}

/* Finish the row loaded by narrow_load: wait for (WAIT) and gather the
 * solved values, reduce, apply the pivot (upper), store.  FULL: the whole
 * warp calls it and votes together (tmask and vmask all lanes), so every
 * shuffle and the vote take the constant full mask; with a mask known only
 * at run time the compiler checks before each shuffle that the mask's lanes
 * are converged (MATCH.ANY, REDUX.OR and a divergent-path branch on sm_90:
 * four such checks on an upper row's path after its poll). */
template <int B, typename TF, typename TV, bool WAIT, bool GP = false, bool FULL = false, bool SC = false>
__device__ __forceinline__ void narrow_finish(const narrow_pre<B, TF, TV> &q, int upper,
                                              const int *__restrict__ colind, const TF *__restrict__ val,
                                              TV *y, int k, int TS, int tl, unsigned tmask, int nap, int j0, int kc,
                                              const narrow_geom &ge, unsigned vmask = 0)
{
    if (FULL) tmask = vmask = 0xffffffffu;
    if (vmask == 0) vmask = tmask;
    const int bk = B * k;
    TV acc = 0;
    TV yv[B];
    const TV *yc = y + (size_t)(q.col < 0 ? 0 : q.col) * bk + ge.j;
    /* SC: the right-hand side S_i x_i (q.dv the scaling row, q.xv x_i), summed
     * in the order of the gather kernel (permscale_kernel), so the bits are
     * those of a gather followed by the plain solve */
    TV xv = q.xv;
    const auto scale_rhs = [&]() {
        if constexpr (SC) {
            TV v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)q.dv[c] * __shfl_sync(tmask, q.xv, c * kc + (ge.j - j0), TS);
            xv = v;
        }
    };
    if constexpr (WAIT) {
        /* The lanes of a team poll their first blocks together and sleep
         * together (one vote per round): G divergent poll loops per team, one
         * per lane group, ran one after another (H100, natural 96^3 b=4 k=1:
         * 1.28 ms L+U against 1.44).  A team never waits on its own row, so
         * the vote cannot deadlock; teams may vote together (vmask) only
         * when their rows are in one level: a chunk may hold a row and the
         * row it reads. */
        bool ok = q.col < 0;
        if constexpr (GP && B > 1) {
            /* GP: lane (r, j) of a group polls only y_c(r, j), one load a lane
             * instead of B (the group's B*kc lanes cover the block's values in
             * one request), then gathers y_c(0..B-1, j) from its group (H100,
             * natural b=4 k=1, pipelined round robin: 96^3 1.126 vs 1.14-1.24
             * ms, 64^3 0.50 vs 0.535, 40^3 0.27 vs 0.305) */
            const TV *ye = y + (size_t)(q.col < 0 ? 0 : q.col) * bk + ge.e;
            TV v = 0;
            /* the first poll is in flight while the right-hand side is scaled */
            if (!ok) v = ld_relaxed(ye);
            scale_rhs();
            if (!ok) ok = !is_sentinel(v);
            for (;;) {
                if (__all_sync(vmask, ok)) break;
                if (nap) __nanosleep(nap);
                if (!ok) { v = ld_relaxed(ye); ok = !is_sentinel(v); }
            }
            const int base = ge.g * ge.bkc + (ge.j - j0);
#pragma unroll
            for (int c = 0; c < B; c++) yv[c] = __shfl_sync(tmask, v, base + c * kc, TS);
        } else {
            scale_rhs();
            for (;;) {
                if (!ok) ok = poll_yc<B, TV>(yc, k, yv);
                if (__all_sync(vmask, ok)) break;
                if (nap) __nanosleep(nap);
            }
        }
    } else {
        scale_rhs();
        if (q.col >= 0) load_yc<B, TV, false>(yc, k, yv, nap);
    }
    if (q.col >= 0) {
#pragma unroll
        for (int c = 0; c < B; c++) acc += (TV)q.av[c] * yv[c];
        for (int p = q.s0 + ge.g + ge.G, s1 = q.s1 & INT_MAX; p < s1; p += ge.G) {
            TF av[B];
            const TF *a = val + (size_t)p * B * B + ge.r * B;
#pragma unroll
            for (int c = 0; c < B; c++) av[c] = a[c];
            load_yc<B, TV, WAIT>(y + (size_t)colind[p] * bk + ge.j, k, yv, nap);
#pragma unroll
            for (int c = 0; c < B; c++) acc += (TV)av[c] * yv[c];
        }
    }
    for (int off = ge.G / 2; off >= 1; off /= 2) acc += __shfl_down_sync(tmask, acc, off * ge.bkc, TS);
    TV s = xv - acc; /* valid in lanes tl < bkc */
    if (upper) {
        TV v = 0;
        const int jj = ge.j - j0;
#pragma unroll
        for (int c = 0; c < B; c++) v += (TV)q.dv[c] * __shfl_sync(tmask, s, c * kc + jj, TS);
        s = v;
    }
    if (tl < ge.bkc) {
        if (WAIT) st_relaxed(y + (size_t)q.i * bk + ge.e, unsentinel(s));
        else y[(size_t)q.i * bk + ge.e] = s;
    }
}

/* Row i by a team of TS lanes (lane tl of the team, team mask tmask):
 * y_i = x_i - sum_p A_p y_col(p)  (times the inverted pivot D for upper).
 * Blocks [s0, s1) (pivot first when upper).  sm: B*k values per warp, used
 * only when b*k > TS (then TS == 32). */
template <int B, typename TF, typename TV, bool WAIT, int MODE>
__device__ __forceinline__ void team_row(int i, int s0, int s1, int upper, const int *__restrict__ colind,
                                         const TF *__restrict__ val, const TV *x, TV *y, int k, int TS,
                                         int tl, unsigned tmask, TV *sm, int nap, int j0 = 0, int kc = 0)
{
    if constexpr (MODE == TM_NARROW) {
        if (kc == 0) kc = k;
        const narrow_geom ge(B, k, TS, tl, j0, kc);
        narrow_pre<B, TF, TV> q;
        narrow_load<B, TF, TV>(q, i, s0, s1, upper, colind, val, x, k, tl, ge);
        narrow_finish<B, TF, TV, WAIT>(q, upper, colind, val, y, k, TS, tl, tmask, nap, j0, kc, ge);
        return;
    }
    const TF *D = NULL;
    if (upper) { D = val + (size_t)s0 * B * B; s0++; }
    const int bk = B * k;
    if constexpr (MODE == TM_PAIR) {
    /* b*k > 32, b*ceil(k/2) <= 32: lane o = (r, jg) of the first B*nj lanes
     * computes the outputs (r, 2jg) and (r, 2jg+1): every y and A value is
     * loaded once per pass, one pass over the row (the loop mode needs two). */
        const int nj = (k + 1) / 2, lanes = B * nj;
        int G = 1;
        while (2 * G * lanes <= 32) G *= 2;
        const int g = tl / lanes, o = tl - g * lanes, r = o / nj, jg = o - r * nj, j0 = 2 * jg;
        const int j1 = j0 + 1 < k ? j0 + 1 : j0; /* odd k: the last lane repeats j0 */
        TV xv0 = 0, xv1 = 0;
        if (tl < lanes) { xv0 = x[(size_t)i * bk + r * k + j0]; xv1 = x[(size_t)i * bk + r * k + j1]; }
        TV acc0 = 0, acc1 = 0;
        if (g < G) {
            int p = s0 + g;
            if constexpr (WAIT) {
                /* two blocks a round, one poll loop for both: otherwise a
                 * row's polls are round trips one after another (H100, natural
                 * 96^3 b=4: k=9 2.788 vs 2.890 ms, k=16 2.897 vs 3.003); same
                 * sums in the same order */
#pragma unroll 1
                for (; p + G < s1; p += 2 * G) {
                    TF av[B], bv[B];
                    TV y0[B], y1[B], z0[B], z1[B];
                    const TF *a = val + (size_t)p * B * B + r * B, *b2 = a + (size_t)G * B * B;
#pragma unroll
                    for (int c = 0; c < B; c++) { av[c] = a[c]; bv[c] = b2[c]; }
                    const TV *yc = y + (size_t)colind[p] * bk, *zc = y + (size_t)colind[p + G] * bk;
                    while (!(poll_yc<B, TV>(yc + j0, k, y0) & poll_yc<B, TV>(yc + j1, k, y1) &
                             poll_yc<B, TV>(zc + j0, k, z0) & poll_yc<B, TV>(zc + j1, k, z1)))
                        if (nap) __nanosleep(nap);
#pragma unroll
                    for (int c = 0; c < B; c++) { acc0 += (TV)av[c] * y0[c]; acc1 += (TV)av[c] * y1[c]; }
#pragma unroll
                    for (int c = 0; c < B; c++) { acc0 += (TV)bv[c] * z0[c]; acc1 += (TV)bv[c] * z1[c]; }
                }
            }
#pragma unroll 1
            for (; p < s1; p += G) {
                TF av[B];
                TV y0[B], y1[B];
                const TF *a = val + (size_t)p * B * B + r * B;
#pragma unroll
                for (int c = 0; c < B; c++) av[c] = a[c];
                const TV *yc = y + (size_t)colind[p] * bk;
                load_yc2<B, TV, WAIT>(yc + j0, yc + j1, k, y0, y1, nap);
#pragma unroll
                for (int c = 0; c < B; c++) { acc0 += (TV)av[c] * y0[c]; acc1 += (TV)av[c] * y1[c]; }
            }
        }
        for (int off = G / 2; off >= 1; off /= 2) {
            acc0 += __shfl_down_sync(0xffffffffu, acc0, off * lanes);
            acc1 += __shfl_down_sync(0xffffffffu, acc1, off * lanes);
        }
        TV s0v = xv0 - acc0, s1v = xv1 - acc1; /* valid in lanes tl < lanes */
        if (upper) { /* the pivot is loaded only now: registers for the wait */
            TV v0 = 0, v1 = 0;
#pragma unroll
            for (int c = 0; c < B; c++) {
                const TF dv = D[r * B + c];
                v0 += (TV)dv * __shfl_sync(0xffffffffu, s0v, c * nj + jg);
                v1 += (TV)dv * __shfl_sync(0xffffffffu, s1v, c * nj + jg);
            }
            s0v = v0; s1v = v1;
        }
        if (tl < lanes) {
            if (WAIT) {
                st_relaxed(y + (size_t)i * bk + r * k + j0, unsentinel(s0v));
                if (j1 != j0) st_relaxed(y + (size_t)i * bk + r * k + j1, unsentinel(s1v));
            } else {
                y[(size_t)i * bk + r * k + j0] = s0v;
                if (j1 != j0) y[(size_t)i * bk + r * k + j1] = s1v;
            }
        }
        return;
    } else {
    /* b*k > 32: the whole warp is the team, several outputs per lane */
    for (int o = tl; o < bk; o += 32) {
        const int r = o / k, j = o - r * k;
        /* x first, off the wait, where the registers allow it (b > 4 runs 4
         * blocks an SM: ND k=9 b=5 0.97 -> 0.88 ms, b=9 0.94 -> 0.92; at b <= 4
         * and b = 10 it spilled) */
        TV xv = 0;
        if constexpr (B > 4 && B < 10) xv = x[(size_t)i * bk + o];
        TV acc = 0;
        for (int p = s0; p < s1; p++) {
            TF av[B];
            TV yv[B];
            const TF *a = val + (size_t)p * B * B + r * B;
#pragma unroll
            for (int c = 0; c < B; c++) av[c] = a[c];
            load_yc<B, TV, WAIT>(y + (size_t)colind[p] * bk + j, k, yv, nap);
#pragma unroll
            for (int c = 0; c < B; c++) acc += (TV)av[c] * yv[c];
        }
        const TV s = (B > 4 && B < 10 ? xv : x[(size_t)i * bk + o]) - acc;
        if (upper) sm[o] = s;
        else if (WAIT) st_relaxed(y + (size_t)i * bk + o, unsentinel(s));
        else y[(size_t)i * bk + o] = s;
    }
    if (upper) pivot_store<B, TF, TV, WAIT>(D, sm, y + (size_t)i * bk, k, tl);
    }
}

/* Team geometry of the calling lane: team t of the warp, lane tl in it, mask. */
__device__ __forceinline__ void team_of(int TS, int *t, int *tl, unsigned *tmask)
{
    const int lane = threadIdx.x & 31;
    *t = lane / TS;
    *tl = lane - *t * TS;
    *tmask = TS == 32 ? 0xffffffffu : (((1u << TS) - 1u) << (*t * TS));
}

/* One level: team q of the grid solves the row at position p0 + q. */
template <int B, typename TF, typename TV, int MODE>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_MINBLOCKS_M(B, MODE))
team_level_kernel(int p0, int p1, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
                  const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
                  const TV *x, TV *y, int k, int TS)
{
    __shared__ TV sm[LS_WARPS][B * TRSV_MAXK];
    int t, tl;
    unsigned tmask;
    team_of(TS, &t, &tl, &tmask);
    const int w = threadIdx.x >> 5;
    const int p = p0 + (blockIdx.x * LS_WARPS + w) * (32 / TS) + t;
    if (p >= p1) return; /* whole team leaves together */
    team_row<B, TF, TV, false, MODE>(rows[p], pbeg[p], pend[p], upper, colind, val, x, y, k, TS, tl, tmask, sm[w], 0);
}

/* Whole triangle, sync-free on sentinel values (y != x, y pre-filled with the
 * sentinel).  Chunks of the level order go to CUDA blocks by ticket, so any
 * row a team waits for belongs to a running or finished team. */
template <int B, typename TF, typename TV, int MODE>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_MINBLOCKS_M(B, MODE))
team_syncfree_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
                     const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
                     const TV *x, TV *y, int k, int TS, int *counter, int nap, int nh, int kc)
{
    __shared__ TV sm[LS_WARPS][B * TRSV_MAXK];
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1);
    __syncthreads();
    int t, tl;
    unsigned tmask;
    team_of(TS, &t, &tl, &tmask);
    const int w = threadIdx.x >> 5;
    const int q = (ticket * LS_WARPS + w) * (32 / TS) + t;
    if constexpr (MODE == TM_SPLIT) { /* team q: row q / nh, vectors of part q % nh */
        if (q >= n * nh) return;
        const int p = q / nh, j0 = (q - p * nh) * kc;
        team_row<B, TF, TV, true, TM_NARROW>(rows[p], pbeg[p], pend[p], upper, colind, val, x, y, k, TS, tl, tmask,
                                             sm[w], nap, j0, k - j0 < kc ? k - j0 : kc);
    } else {
        if (q >= n) return;
        team_row<B, TF, TV, true, MODE>(rows[q], pbeg[q], pend[q], upper, colind, val, x, y, k, TS, tl, tmask, sm[w], nap);
    }
}

/* The tail of a triangle (bsr_trsv_tri.tail, k = 1): one CUDA block a row,
 * rows of the level order by ticket (every row a block waits on belongs to a
 * running or finished block).  A warp's lanes were too few for these rows:
 * a row's time went as 1 / its lanes (bench/RESULTS.md).  TAIL_G(B) groups
 * of B threads, group g takes blocks g, g + G, ... (L in that order, U in
 * the reverse); the groups' sums meet in a fixed tree in shared memory (the
 * same bits whatever the schedule). */
#define LS_TAIL_THREADS 256
#define TAIL_G(B) ((B) == 1 ? 256 : (B) == 2 ? 128 : (B) <= 4 ? 64 : (B) <= 8 ? 32 : 16)
template <int B, typename TF, typename TV>
__global__ void __launch_bounds__(LS_TAIL_THREADS)
tail_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
            const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
            const TV *x, TV *y, int *counter, int nap)
{
    constexpr int G = TAIL_G(B);
    __shared__ TV part[G * B];
    __shared__ TV s[B];
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1);
    __syncthreads();
    const int q = ticket;
    if (q >= n) return;   /* the whole block */
    const int i = rows[q], s1 = pend[q];
    int s0 = pbeg[q];
    if (upper) s0++;
    const int g = threadIdx.x / B, r = threadIdx.x - g * B;
    TV acc = 0;
    if (g < G) {
        /* acc += row r of block p times y at its column, once that is solved */
        auto add = [&](int p) {
            TV yv[B];
            load_yc<B, TV, true>(y + (size_t)colind[p] * B, 1, yv, nap);
            const TF *a = val + (size_t)p * B * B + r * B;
#pragma unroll
            for (int c = 0; c < B; c++) acc += (TV)a[c] * yv[c];
        };
        /* each group sums its blocks in the order their columns were solved,
         * so that it waits on the row's latest dependency last: L's is its
         * last block (column i - 1), U's its first (column i + 1), and a
         * group waiting on that first would then load all its other blocks
         * one after the other on the chain's critical path */
        if (!upper) {
            for (int p = s0 + g; p < s1; p += G) add(p);
        } else if (g < s1 - s0) {
            for (int p = s0 + g + (s1 - 1 - s0 - g) / G * G; p >= s0; p -= G) add(p);
        }
        part[g * B + r] = acc;
    }
    __syncthreads();
    for (int h = G / 2; h >= 1; h /= 2) {
        if (g < h) part[g * B + r] += part[(g + h) * B + r];
        __syncthreads();
    }
    if (threadIdx.x < B) s[threadIdx.x] = x[(size_t)i * B + threadIdx.x] - part[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < B) {
        TV v = s[threadIdx.x];
        if (upper) {
            const TF *D = val + (size_t)pbeg[q] * B * B + threadIdx.x * B;
            v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)D[c] * s[c];
        }
        st_relaxed(y + (size_t)i * B + threadIdx.x, unsentinel(v));
    }
}

/* Next chunk of 32/TS rows for the calling warp (dynamic persistent mode). */
__device__ __forceinline__ int next_chunk(int *counter)
{
    int v = 0;
    if ((threadIdx.x & 31) == 0) v = atomicAdd(counter, 1);
    return __shfl_sync(0xffffffffu, v, 0);
}

/* Whole triangle, sync-free on sentinels, persistent: a grid of at most the
 * resident CUDA blocks, each warp looping over chunks of 32/TS rows of the
 * level order, taken by ticket (dyn: deadlock-free whatever runs beside it)
 * or round robin (chunk w, w + warps, ...: needs the whole grid resident,
 * which the launch sizes it for).  Either way a warp's chunks increase, so
 * the lowest unsolved row always belongs to a running team whose inputs are
 * solved.  The next chunk's ticket and row data are fetched before waiting
 * on the current row, so no block launch or index load sits between rows. */
template <int B, typename TF, typename TV, int MODE>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_PMINBLOCKS_M(MODE))
team_persist_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
                    const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
                    const TV *x, TV *y, int k, int TS, int *counter, int dyn, int grab, int nap)
{
    __shared__ TV sm[LS_WARPS][B * TRSV_MAXK];
    int t, tl;
    unsigned tmask;
    team_of(TS, &t, &tl, &tmask);
    const int w = threadIdx.x >> 5, rpw = 32 / TS;
    const int nchunks = (n + rpw - 1) / rpw, stride = gridDim.x * LS_WARPS;
    /* chunk c of the level order; dyn: a ticket is worth `grab` consecutive
     * chunks [c, cend) (fewer atomics on one address) */
    int c = dyn ? next_chunk(counter) * grab : blockIdx.x * LS_WARPS + w, cend = c + grab;
    int p = c * rpw + t, ri = 0, b0 = 0, b1 = 0;
    if (c < nchunks && p < n) { ri = rows[p]; b0 = pbeg[p]; b1 = pend[p]; }
    while (c < nchunks) { /* warp-uniform */
        int cn = c + stride, cendn = cend;
        if (dyn) {
            if (c + 1 < cend) cn = c + 1;
            else { cn = next_chunk(counter) * grab; cendn = cn + grab; }
        }
        const int pn = cn * rpw + t;
        int rn = 0, b0n = 0, b1n = 0;
        if (cn < nchunks && pn < n) { rn = rows[pn]; b0n = pbeg[pn]; b1n = pend[pn]; }
        if (p < n) team_row<B, TF, TV, true, MODE>(ri, b0, b1, upper, colind, val, x, y, k, TS, tl, tmask, sm[w], nap);
        c = cn; cend = cendn; p = pn; ri = rn; b0 = b0n; b1 = b1n;
    }
}

/* Lanes of the level segment of team t in its chunk: the teams from the
 * last segment start at or before t to the next one after it.  start: the
 * calling team's row starts a segment (it begins a level or the chunk, or
 * lies past the last row).  Called by the whole warp. */
__device__ __forceinline__ unsigned level_vmask(bool start, int TS, int t, int tl)
{
    /* bit t*TS: team t starts a segment; team 0 always does */
    const unsigned S = __ballot_sync(0xffffffffu, start && tl == 0) | 1u;
    const unsigned upto = (2u << (t * TS)) - 1u;
    const int lo = 31 - __clz(S & upto), hi = S & ~upto ? __ffs(S & ~upto) - 1 : 32;
    const unsigned hib = hi >= 32 ? 0xffffffffu : (1u << hi) - 1u;
    return hib & ~((1u << lo) - 1u);
}

/* Persistent narrow-layout kernel with a row pipeline per team: while a team
 * waits on row R it already holds R+1's independent data (loads in flight),
 * R+2's indices and R+3's chunk, so a row that becomes ready costs the
 * dependency chain only its wait, its products and its store (the plain
 * persistent kernel fetches the ticket, the indices and the row's blocks
 * after the previous row is done).  Chunks by ticket as in
 * team_persist_kernel (grab 1), or, counter NULL, round robin over the grid
 * (warp w: chunks w, w + warps, ...): no atomic on one address a chunk, which
 * at 2 rows a chunk cost 20% (H100, natural 96^3 b=4 k=1: 0.956 vs 1.196 ms
 * L+U), but it needs every block resident at once, which only a cooperative
 * launch guarantees.  Either way a warp's chunks increase, so the lowest
 * unfinished chunk is always the current one of a running warp, whose
 * inputs are solved.
 * SC (lower triangles): y = L^{-1} (S x) with S block diagonal, each row's
 * right-hand side scaled as it is formed (the scaling row rides in the pivot
 * row's registers): no gather pass over x before the solve.  P (lower
 * triangles, NULL: none): the rows of x permuted as they are read, the
 * gather of an ordering, also without a pass of its own.  TSC > 0: k = 1
 * and TS = TSC are constants, so the lane geometry, the shuffle widths and
 * offsets and the index arithmetic of a row's path fold at compile time. */
template <int B, typename TF, typename TV, bool UP, bool SC = false, int TSC = 0>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_PIPE_MINBLOCKS)
team_pipe_kernel(int n, const int *__restrict__ rows, const int *__restrict__ pbeg, const int *__restrict__ pend,
                 const int *__restrict__ colind, const TF *__restrict__ val, const TV *x, TV *y, int k_arg,
                 int TS_arg, int *counter, int nap, const int *__restrict__ pendl, const TF *__restrict__ S,
                 const int *__restrict__ P)
{
    static_assert(!(UP && SC), "the scaled right-hand side is the lower triangle's");
    const int k = TSC ? 1 : k_arg, TS = TSC ? TSC : TS_arg;
    int t, tl;
    unsigned tmask;
    team_of(TS, &t, &tl, &tmask);
    /* pendl set: the teams of a warp whose rows are in one level poll with
     * one vote (none reads another, so the vote cannot deadlock): one poll
     * loop a level segment of the chunk instead of one a team (H100, 16-lane
     * teams, pairs of teams: natural 96^3 b=4 k=1 1.239 vs 1.276 ms L+U,
     * 64^3 0.574 vs 0.603).  The level starts come as bit 31 of the row ends
     * (pendl), loaded two rows ahead with the other indices: a flag array of
     * its own was read a row ahead, but the compiler waited for that load at
     * once, a memory round trip in every row's path.  Tuning pair = 0 turns
     * the vote off. */
    const int *__restrict__ pe = pendl ? pendl : pend;
    const int rpw = 32 / TS, nchunks = (n + rpw - 1) / rpw;
    const int rs = gridDim.x * LS_WARPS, rb = blockIdx.x * LS_WARPS + (threadIdx.x >> 5);
    int c0 = counter ? next_chunk(counter) : rb, c1 = counter ? next_chunk(counter) : rb + rs,
        c2 = counter ? next_chunk(counter) : rb + 2 * rs, tk = 0;
    if (counter && (threadIdx.x & 31) == 0) tk = atomicAdd(counter, 1);
    /* b > 4: the next row's pivot is loaded only once it is the current row,
     * still a whole wait ahead of its use, so that one pivot row, not two,
     * holds registers (H100, natural 64^3 b=5 k=1: 0.574 vs 0.610 ms L+U; at
     * b=4 it cost: 96^3 0.989-0.994 vs 0.960-0.963) */
    constexpr bool PIV_AHEAD = B <= 4;
    const narrow_geom ge(B, k, TS, tl, 0, k);   /* once: see narrow_load */
    narrow_pre<B, TF, TV> cur, nxt;
    const TF *__restrict__ Sc = SC ? S : nullptr;
    const int *__restrict__ Pc = UP ? nullptr : P;
    int p = c0 * rpw + t;
    if (c0 < nchunks && p < n)
        narrow_load<B, TF, TV>(cur, rows[p], pbeg[p], pe[p], UP, colind, val, x, k, tl, ge, Sc, Pc);
    int p1 = c1 * rpw + t, i1 = 0, a1 = 0, e1 = 0;
    if (c1 < nchunks && p1 < n) { i1 = rows[p1]; a1 = pbeg[p1]; e1 = pe[p1]; }
    while (c0 < nchunks) { /* warp-uniform */
        const int p2 = c2 * rpw + t;
        int i2 = 0, a2 = 0, e2 = 0;
        if (c2 < nchunks && p2 < n) { i2 = rows[p2]; a2 = pbeg[p2]; e2 = pe[p2]; }
        if (c1 < nchunks && p1 < n)
            narrow_load<B, TF, TV, PIV_AHEAD>(nxt, i1, a1, e1, UP, colind, val, x, k, tl, ge, Sc, Pc);
        /* a row past n is a segment of its own (its team does not vote) */
        const unsigned vmask = pendl ? level_vmask(p >= n || cur.s1 < 0 || t == 0, TS, t, tl) : tmask;
        /* one level segment over the whole warp (every chunk but about one
         * a level): all its rows exist, since a row past n starts a segment
         * (H100, natural L+U: 100^3 b=4 1.063 -> 1.014 ms, 128^3 b=1 1.01 ->
         * 0.90, 100^3 b=2 0.775 -> 0.690) */
        if (vmask == 0xffffffffu)
            narrow_finish<B, TF, TV, true, true, true, SC>(cur, UP, colind, val, y, k, TS, tl, tmask, nap, 0, k, ge);
        else if (p < n)
            narrow_finish<B, TF, TV, true, true, false, SC>(cur, UP, colind, val, y, k, TS, tl, tmask, nap, 0, k, ge,
                                                            vmask);
        const int c3 = counter ? __shfl_sync(0xffffffffu, tk, 0) : c2 + rs; /* ticket issued one row ago */
        if (counter && (threadIdx.x & 31) == 0) tk = atomicAdd(counter, 1);
        cur = nxt; p = p1; c0 = c1;
        if (!PIV_AHEAD && UP && c0 < nchunks && p < n) narrow_pivot<B, TF, TV>(cur, val, ge);
        if (!PIV_AHEAD && SC && c0 < nchunks && p < n) narrow_scale<B, TF, TV>(cur, S, ge);
        p1 = p2; i1 = i2; a1 = a2; e1 = e2; c1 = c2;
        c2 = c3;
    }
}

/* Row i in the lane-per-vector layout (TM_VEC): lane j of the row's team
 * gathers y_c(0..B-1, j) of each block (the team reads a block's B*B values
 * together, one broadcast) and keeps the B sums, then the pivot product, in
 * registers: no shuffles, and 32/k rows a warp where the loop layout has one.
 * Sums in the loop layout's order, so both give the same bits. */
template <int B, typename TF, typename TV>
__device__ __forceinline__ void vec_row(int i, int s0, int s1, int upper, const int *__restrict__ colind,
                                        const TF *__restrict__ val, const TV *x, TV *y, int k, int j, int nap)
{
    const int bk = B * k;
    const TF *D = NULL;
    if (upper) { D = val + (size_t)s0 * B * B; s0++; }
    TV xv[B], acc[B];
#pragma unroll
    for (int r = 0; r < B; r++) { xv[r] = x[(size_t)i * bk + r * k + j]; acc[r] = 0; }
    for (int p = s0; p < s1; p++) {
        TV yv[B];
        load_yc<B, TV, true>(y + (size_t)colind[p] * bk + j, k, yv, nap);
        const TF *a = val + (size_t)p * B * B;
#pragma unroll
        for (int r = 0; r < B; r++)
#pragma unroll
            for (int c = 0; c < B; c++) acc[r] += (TV)a[r * B + c] * yv[c];
    }
#pragma unroll
    for (int r = 0; r < B; r++) xv[r] -= acc[r];
#pragma unroll
    for (int r = 0; r < B; r++) {
        TV v = xv[r];
        if (upper) {
            v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)D[r * B + c] * xv[c];
        }
        st_relaxed(y + (size_t)i * bk + r * k + j, unsentinel(v));
    }
}

/* Whole triangle, sync-free on sentinels, lane-per-vector layout: chunks of
 * LS_WARPS * (32/k) rows of the level order by ticket, as team_syncfree_kernel. */
template <int B, typename TF, typename TV>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_MINBLOCKS(B))
vec_syncfree_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
                    const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
                    const TV *x, TV *y, int k, int *counter, int nap)
{
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1);
    __syncthreads();
    const int lane = threadIdx.x & 31, tpw = 32 / k, t = lane / k;
    if (t >= tpw) return;
    const int q = (ticket * LS_WARPS + (threadIdx.x >> 5)) * tpw + t;
    if (q >= n) return;
    vec_row<B, TF, TV>(rows[q], pbeg[q], pend[q], upper, colind, val, x, y, k, lane - t * k, nap);
}

/* The benchmark driver's overrides of the rules below (bsr_trsv_set_tuning in
 * src/ilu/gpu_ilu.h, defined in trsv_level.cu): a plain read, no environment. */
extern bsr_trsv_tuning bsr_trsv_tune;

/* Override v, or dflt when v < 0 (no override). */
static int knob(int v, int dflt)
{
    return v >= 0 ? v : dflt;
}

/* Forced lanes per row (team 4|8|16|32), or 0 for the rule below. */
static int team_override(void)
{
    const int t = bsr_trsv_tune.team;
    return (t == 4 || t == 8 || t == 16 || t == 32) ? t : 0;
}

/* Chunks per ticket in the persistent ticket mode (1: more only spreads the
 * rows in flight over more levels: 3.5x slower at 4). */
#define TRSV_GRAB_DEFAULT 1
/* ns between polls of a value not yet solved (0 and 100 measured within
 * noise of 20). */
#define TRSV_SLEEP_DEFAULT 20
/* The pipelined kernel polls without a sleep (H100, natural b=4 k=1 with
 * round robin: 96^3 0.957 vs 0.967 ms, 64^3 0.459 vs 0.472, 40^3 0.256 vs 0.264). */
#define TRSV_PIPE_SLEEP_DEFAULT 0
/* The tail kernel's polls sleep longer: its CUDA blocks wait with every lane
 * group at once on the chain's latest rows, and their polls load the L2
 * the chain's own stores go through.  The sync-free kernel keeps its own
 * default: its rows are short and many, and a longer sleep cost it on
 * stencil factors (bench/RESULTS.md, the sleep sweep). */
#define TRSV_TAIL_SLEEP_DEFAULT 1000

/* Lanes per row: b*k rounded up to a power of two, times the blocks of a
 * row handled at once (mean off-diagonal row length, rounded up), at most 32;
 * a forced size is raised to b*k's power of two when smaller. */
static int team_size(int bk, double mean_len, int forced)
{
    int pb = 1;
    while (pb < bk) pb *= 2;
    if (pb >= 32) return 32;
    if (forced) return forced > pb ? forced : pb;
    int g = 1;
    while (g < mean_len && pb * g * 2 <= 32) g *= 2;
    return pb * g;
}

/* Default schedule and lanes per row of the sync-free kernel, from the
 * H100 tuning sweep (bench/RESULTS.md, stencil3d:96:4, b = 4):
 * with b*k <= 8, levels narrower than 8192 rows on average (natural 3D
 * ordering: 286 levels of <= 6912 rows, the dependency chain dominates) run
 * the persistent ticket kernel (natural k=1: 1.45 vs 1.58 ms); wider levels
 * (ND: 60 levels of up to 89429 rows, bandwidth dominates) one CUDA block per
 * chunk with half the lane groups per row, i.e. twice the rows in flight (ND
 * k=1: 0.60 vs 0.66 ms; persistent: 0.76 and 1.18 ms).  b*k > 8 (k = 9 at
 * b = 4 measured): one CUDA block per chunk, as before. */
/* Levels narrower than 8192 rows on average: the dependency chain dominates. */
static int levels_narrow(const bsr_trsv_tri *T)
{
    return (double)T->n < 8192.0 * (T->nlevels > 0 ? T->nlevels : 1);
}

static void sf_rule(const bsr_trsv_tri *T, int bk, int *persist, int *halve)
{
    const int narrow = levels_narrow(T);
    *persist = bk <= 8 && narrow ? 2 : 0;
    *halve = bk <= 8 && !narrow;
}

/* Split of k vectors for TM_SPLIT: nh parts of at most kc vectors, each
 * part's b*kc lanes within one warp, parts as even as possible. */
static void split_shape(int B, int k, int *nh, int *kc)
{
    const int per = 32 / B > 0 ? 32 / B : 1;
    *nh = (k + per - 1) / per;
    *kc = (k + *nh - 1) / *nh;
}

/* Lane layout of rows with b*k > 32 (H100 sweeps, k = 9 and 16 on
 * stencil3d:96:4, 64:5 and 48:9, natural and ND).  With b <= 4 and levels
 * narrower than 8192 rows on average: two vectors per lane, one pass over the
 * row (b=4 natural k=16: 3.00 vs 3.40 ms loop, 3.70 split, 3.26 lane per
 * vector; k=9: 2.89 vs 2.94, 3.26 split, 4.15 lane per vector).  With b > 4
 * and levels narrower than 2000 rows: the split layout (natural k=9: b=5,
 * 1380 rows a level, 1.26 vs 2.01 ms loop, 2.49 lane per vector; b=9, 779
 * rows, 1.46 vs 2.99, 7.89).  Wider levels, b <= 5: a lane per vector, 32/k
 * rows a warp where the loop layout has one (ND k=9: b=4, 14745 rows, 1.43 vs
 * 2.11 ms loop, 2.70 pair; k=16 1.85 vs 2.58; b=5, 6553 rows, 0.71 vs 0.88
 * loop, 1.15 split).  Wider levels, b > 5: the loop layout, whose B*B-value
 * blocks stay spread over the lanes (b=9 ND k=9, 3253 rows: 0.91 vs 1.22
 * lane per vector, 1.05 split). */
static int wide_rule(const bsr_trsv_tri *T, int B, int sched)
{
    const int w = knob(bsr_trsv_tune.wide, 0);
    if ((w == 3 || w == 4) && sched == TRSV_S_SYNCFREE) return w;
    if (w >= 1 && w <= 4) return w == 2 && B <= 4 ? 2 : 1;
    if (sched != TRSV_S_SYNCFREE) return 1;
    const double rows_per_level = (double)T->n / (T->nlevels > 0 ? T->nlevels : 1);
    if (B <= 4 && levels_narrow(T)) return 2;
    if (B > 4 && rows_per_level < 2000.0) return 3;
    return B <= 5 ? 4 : 1;
}

/* Grid of at most nb CUDA blocks that are all resident at once (occ: the
 * kernel's resident blocks per SM, found once per instantiation). */
template <typename K> static bsr_status resident_grid(K kernel, int &occ, int *nb)
{
    if (occ < 1) {
        int o = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, kernel, LS_WARPS * 32, 0) != cudaSuccess || o < 1) {
            cudaGetLastError();
            o = 1;
        }
        occ = o;
    }
    int dev = 0, sms = 1;
    CU_TRY(cudaGetDevice(&dev));
    CU_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (*nb > occ * sms) *nb = occ * sms;
    return BSR_OK;
}

/* Persistent sync-free launch: a grid of at most the resident blocks. */
template <int B, typename TF, typename TV, int MODE>
static bsr_status persist_launch(const bsr_trsv_tri *T, int persist, const TV *x, TV *y, int k, int TS, int nb,
                                 int grab, int nap, cudaStream_t st)
{
    static int occ = 0;
    BSR_TRY(resident_grid(team_persist_kernel<B, TF, TV, MODE>, occ, &nb));
    team_persist_kernel<B, TF, TV, MODE><<<nb, LS_WARPS * 32, 0, st>>>(
        T->n, T->upper, T->rows, T->pbeg, T->pend, T->colind, (const TF *)T->val, x, y, k, TS, T->counter,
        persist == 2, grab, nap);
    CU_LAUNCHED("team_persist_kernel");
    return BSR_OK;
}

/* Pipelined persistent launch (narrow layout).  Teams take their chunks
 * round robin, the grid launched cooperatively so that every block is
 * resident (else a warp could wait for a row of a block that never starts;
 * H100, natural k=1, round robin vs tickets: 96^3 b=4 0.956 vs 1.196 ms,
 * 64^3 b=5 0.603 vs 0.715; with the level-segment vote also for narrow teams,
 * 128^3 b=1 1.134 vs 1.365, 100^3 b=2 0.757 vs 0.869).  A refused
 * cooperative launch takes tickets.  Tuning rr = 0|1 forces either. */
template <int B, typename TF, typename TV, bool UP, bool SC = false>
static bsr_status pipe_launch(const bsr_trsv_tri *T, const TV *x, TV *y, int k, int TS, int nb, int nap,
                              cudaStream_t st, const TF *S = nullptr, const int *P = nullptr)
{
    static int occ[3] = {0, 0, 0}, coop = -1; /* found once, like the occupancy (two launches an apply) */
    /* one vector with 8 or 16 lanes a row: the kernel with both constant */
    const int v = k == 1 && TS == 16 ? 1 : k == 1 && TS == 8 ? 2 : 0;
    const auto kern = v == 1 ? team_pipe_kernel<B, TF, TV, UP, SC, 16>
                      : v == 2 ? team_pipe_kernel<B, TF, TV, UP, SC, 8> : team_pipe_kernel<B, TF, TV, UP, SC>;
    BSR_TRY(resident_grid(kern, occ[v], &nb));
    const int *lvs = knob(bsr_trsv_tune.pair, 1) && 2 * TS <= 32 ? T->pendl : NULL;
    const int rr = knob(bsr_trsv_tune.rr, 1);
    if (coop < 0) {
        int dev = 0, c = 0;
        CU_TRY(cudaGetDevice(&dev));
        CU_TRY(cudaDeviceGetAttribute(&c, cudaDevAttrCooperativeLaunch, dev));
        coop = c;
    }
    if (rr && coop) {
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeCooperative;
        at[0].val.cooperative = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(nb);
        cfg.blockDim = dim3(LS_WARPS * 32);
        cfg.stream = st;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        const cudaError_t e = cudaLaunchKernelEx(&cfg, kern, T->n, T->rows, T->pbeg, T->pend, T->colind,
                                                 (const TF *)T->val, x, y, k, TS, (int *)NULL, nap, lvs, S, P);
        if (e == cudaSuccess) return BSR_OK;
        if (e != cudaErrorCooperativeLaunchTooLarge)
            return bsr_error(BSR_ERR_CUDA, "team_pipe_kernel (cooperative launch): %s", cudaGetErrorString(e));
        cudaGetLastError(); /* too large after all: tickets */
    }
    /* round robin needs no counter: it is zeroed only for the tickets */
    CU_TRY(cudaMemsetAsync(T->counter, 0, sizeof(int), st));
    kern<<<nb, LS_WARPS * 32, 0, st>>>(T->n, T->rows, T->pbeg, T->pend, T->colind, (const TF *)T->val, x, y, k, TS,
                                       T->counter, nap, lvs, S, P);
    CU_LAUNCHED("team_pipe_kernel");
    return BSR_OK;
}

/* Lane-per-vector launch (sentinels already in y, counter zeroed). */
template <int B, typename TF, typename TV>
static bsr_status vec_launch(const bsr_trsv_tri *T, const TV *x, TV *y, int k, int nap, cudaStream_t st)
{
    const int rpb = LS_WARPS * (32 / k);
    const int nb = (T->n + rpb - 1) / rpb;
    vec_syncfree_kernel<B, TF, TV><<<nb, LS_WARPS * 32, 0, st>>>(T->n, T->upper, T->rows, T->pbeg, T->pend,
                                                                 T->colind, (const TF *)T->val, x, y, k,
                                                                 T->counter, nap);
    CU_LAUNCHED("vec_syncfree_kernel");
    return BSR_OK;
}

/* Poll sleep of the sync-free kernels (tuning sleep; dflt without one). */
static int poll_nap(int dflt = TRSV_SLEEP_DEFAULT)
{
    const int nap = knob(bsr_trsv_tune.sleep, dflt);
    return nap < 0 || nap > 10000 ? dflt : nap;
}

/* Sync-free launch (sentinels already in y) with lane layout MODE; S, P:
 * the lower triangle's right-hand side scaling and gather permutation, taken
 * by the pipelined kernel only (ls_launch gathers for every other kernel). */
template <int B, typename TF, typename TV, int MODE>
static bsr_status sf_launch(const bsr_trsv_tri *T, int persist, const TV *x, TV *y, int k, int TS,
                            cudaStream_t st, const TF *S = nullptr, const int *P = nullptr)
{
    int nap = poll_nap(), grab = knob(bsr_trsv_tune.grab, TRSV_GRAB_DEFAULT);
    if (grab < 1 || grab > 1024) grab = TRSV_GRAB_DEFAULT;
    const int rows_per_block = LS_WARPS * (32 / TS);
    int nh = 1, kc = k;
    if (MODE == TM_SPLIT) split_shape(B, k, &nh, &kc);
    const int nb = (int)(((int64_t)T->n * nh + rows_per_block - 1) / rows_per_block);
    /* tuning pipe = 0: the plain persistent kernel for the narrow layout too */
    if constexpr (MODE == TM_NARROW)
        if (persist == 2 && knob(bsr_trsv_tune.pipe, 1)) {
            nap = poll_nap(TRSV_PIPE_SLEEP_DEFAULT);
            if (T->upper) return pipe_launch<B, TF, TV, true>(T, x, y, k, TS, nb, nap, st);
            if (S) return pipe_launch<B, TF, TV, false, true>(T, x, y, k, TS, nb, nap, st, S, P);
            return pipe_launch<B, TF, TV, false>(T, x, y, k, TS, nb, nap, st, nullptr, P);
        }
    if constexpr (MODE != TM_SPLIT) /* no persistent split kernel */
        if (persist) return persist_launch<B, TF, TV, MODE>(T, persist, x, y, k, TS, nb, grab, nap, st);
    team_syncfree_kernel<B, TF, TV, MODE><<<nb, LS_WARPS * 32, 0, st>>>(
        T->n, T->upper, T->rows, T->pbeg, T->pend, T->colind, (const TF *)T->val, x, y, k, TS, T->counter, nap, nh, kc);
    CU_LAUNCHED("team_syncfree_kernel");
    return BSR_OK;
}

/* The kernel ls_launch runs for schedule sched: persistent (0 no, 1 round
 * robin, 2 tickets or pipelined), lanes per row, lane layout (0 narrow, else
 * wide_rule's), and whether that is the pipelined kernel. */
template <int B>
static void lane_plan(const bsr_trsv_tri *T, int sched, int k, int *persist_out, int *TS_out, int *wide_out,
                      int *pipe_out)
{
    const double mean_len = (double)(T->nnzb - (T->upper ? T->n : 0)) / T->n;
    int persist = 0, halve = 0, pipe_rule = 0;
    if (sched == TRSV_S_SYNCFREE) {
        sf_rule(T, B * k, &persist, &halve);
        pipe_rule = persist == 2;
        const int ep = bsr_trsv_tune.persist;
        if (ep >= 0 && ep <= 2) persist = ep;
    }
    const int forced = team_override();
    int TS = team_size(B * k, mean_len, forced);
    if (halve && !forced && TS > 4 && TS / 2 >= B * k) TS /= 2;
    /* where the rule picks the pipelined kernel, at least 8 lanes a row (4
     * rows a warp; H100, natural 128^3 b=1 round robin: 1.000 vs 1.134 ms
     * with 4 lanes, 8 rows a warp); the same for the other sync-free
     * schedules, so that every schedule of a triangle sums in one order */
    if (pipe_rule && !forced && TS < 8) TS = 8;
    int wide = B * k <= TS ? 0 : wide_rule(T, B, sched);
    if (wide == 3) { /* split by vectors: the lanes of one part; the ticket kernel only */
        int nh, kc;
        split_shape(B, k, &nh, &kc);
        TS = team_size(B * kc, mean_len, forced);
        persist = 0;
    }
    *persist_out = persist;
    *TS_out = TS;
    *wide_out = wide;
    *pipe_out = sched == TRSV_S_SYNCFREE && wide == 0 && persist == 2 && knob(bsr_trsv_tune.pipe, 1);
}

/* Whether ls_launch solves lower triangle T with the pipelined kernel, which
 * gathers and scales the right-hand side itself (x != y: it reads x while y
 * fills).  With a permutation only for b <= 4: x's row is then a load that
 * waits for P's, which pays for the pass it saves at b <= 4 only (H100,
 * centre order, an apply: 64^3 b = 5 0.472-0.477 against
 * 0.446-0.447 ms with the gather pass, 50^3 b = 7 0.379-0.388 against 0.366,
 * 40^3 b = 9 the same; 100^3 b = 4: 0.755 against 0.792 ms). */
template <int B>
static int pipe_gathers(const bsr_trsv_tri *T, int sched, int k, const void *x, const void *y, const int *P)
{
    if (T->upper || x == y || (P && B > 4)) return 0;
    int persist, TS, wide, pipe;
    lane_plan<B>(T, sched, k, &persist, &TS, &wide, &pipe);
    return pipe;
}

/* Whether the sync-free solve of T runs its tail (bsr_trsv_tri.tail) in
 * tail_kernel: one vector, out of place (tuning tail 0: never). */
static int tail_on(const bsr_trsv_tri *T, int sched, int k, const void *x, const void *y)
{
    return T->tail > 0 && sched == TRSV_S_SYNCFREE && k == 1 && x != y && knob(bsr_trsv_tune.tail, 1);
}

/* Positions [a, b) of T's level order as a triangle of their own (level
 * boundaries: the pipelined kernel's level starts stay right). */
static bsr_trsv_tri sub_tri(const bsr_trsv_tri *T, int a, int b)
{
    bsr_trsv_tri S = *T;
    S.n = b - a;
    S.rows = T->rows + a;
    S.pbeg = T->pbeg + a;
    S.pend = T->pend + a;
    if (T->pendl) S.pendl = T->pendl + a;
    return S;
}

/* tail_kernel over positions [a, b) of T (sentinels in y, x gathered). */
template <int B, typename TF, typename TV>
static bsr_status tail_launch(const bsr_trsv_tri *T, int a, int b, const TV *x, TV *y, cudaStream_t st)
{
    if (b <= a) return BSR_OK;
    CU_TRY(cudaMemsetAsync(T->counter, 0, sizeof(int), st));
    tail_kernel<B, TF, TV><<<b - a, LS_TAIL_THREADS, 0, st>>>(b - a, T->upper, T->rows + a, T->pbeg + a, T->pend + a,
                                                             T->colind, (const TF *)T->val, x, y, T->counter,
                                                             poll_nap(TRSV_TAIL_SLEEP_DEFAULT));
    CU_LAUNCHED("tail_kernel");
    return BSR_OK;
}

/* The sync-free kernel of lane plan (persist, TS, wide, pipe) over T
 * (sentinels in y); S, P: the pipelined kernel's gather (narrow layout). */
template <int B, typename TF, typename TV>
static bsr_status sf_rows(const bsr_trsv_tri *T, int persist, int TS, int wide, int pipe, const TV *x, TV *y, int k,
                          cudaStream_t st, const TF *S, const int *P)
{
    /* the pipelined kernel zeroes the counter itself when it takes tickets */
    if ((persist != 1 && !pipe) || wide == 4) CU_TRY(cudaMemsetAsync(T->counter, 0, sizeof(int), st));
    if (wide == 4) return vec_launch<B, TF, TV>(T, x, y, k, poll_nap(), st);
    if (wide == 3) return sf_launch<B, TF, TV, TM_SPLIT>(T, persist, x, y, k, TS, st);
    if (wide == 2) return sf_launch<B, TF, TV, TM_PAIR>(T, persist, x, y, k, TS, st);
    if (wide == 1) return sf_launch<B, TF, TV, TM_LOOP>(T, persist, x, y, k, TS, st);
    return sf_launch<B, TF, TV, TM_NARROW>(T, persist, x, y, k, TS, st, S, P);
}

/* Launch the level kernel over T with the given schedule: y = T^{-1} (S P x)
 * (S, P NULL: none).  The pipelined kernel gathers and scales each row's
 * right-hand side itself; for every other kernel S P x is gathered into w
 * first. */
template <int B, typename TF, typename TV>
static bsr_status ls_launch(const bsr_trsv_tri *T, int sched, const int *P, const TF *S, TV *w, const TV *x, TV *y,
                            int k, cudaStream_t st)
{
    const TF *val = (const TF *)T->val;
    if (T->n == 0) return BSR_OK;
    const int tail = tail_on(T, sched, k, x, y);
    if ((S || P) && (tail || !pipe_gathers<B>(T, sched, k, x, y, P))) {
        BSR_TRY(bsr_trsv_dev_permscale(T->n, B, k, P, S, T->fprec, x, w,
                                       sizeof(TV) == sizeof(double) ? BSR_DOUBLE : BSR_FLOAT, 0, st));
        x = w;
        S = NULL;
        P = NULL;
    }
    if (sched == TRSV_S_SYNCFREE && (const void *)x == (const void *)y) sched = TRSV_S_FLAGS;
    if (sched == TRSV_S_FLAGS) {
        CU_TRY(cudaMemsetAsync(T->flags, 0, (size_t)T->n * sizeof(int), st));
        CU_TRY(cudaMemsetAsync(T->counter, 0, sizeof(int), st));
        int nb = (T->n + LS_WARPS - 1) / LS_WARPS;
        ls_syncfree_kernel<B, TF, TV><<<nb, LS_WARPS * 32, 0, st>>>(
            T->n, T->upper, T->rows, T->rstart, T->rend, T->colind, val, x, y, k, T->flags,
            T->counter);
        CU_LAUNCHED("ls_syncfree_kernel");
        return BSR_OK;
    }
    int persist, TS, wide, pipe;
    lane_plan<B>(T, sched, k, &persist, &TS, &wide, &pipe);
    const int rows_per_block = LS_WARPS * (32 / TS);
    if (sched == TRSV_S_SYNCFREE) {
        CU_TRY(cudaMemsetAsync(y, 0xff, (size_t)T->n * B * k * sizeof(TV), st)); /* sentinel */
        /* the tail after L's other rows, before U's (none: cut = n for L, 0 for
         * U, R = T); the lane plan stays the whole triangle's, so the other
         * rows sum as without a tail */
        const int nt = tail ? T->tail : 0, cut = T->upper ? nt : T->n - nt;
        const bsr_trsv_tri R = T->upper ? sub_tri(T, cut, T->n) : sub_tri(T, 0, cut);
        bsr_status s = T->upper ? tail_launch<B, TF, TV>(T, 0, cut, x, y, st) : BSR_OK;
        if (!s && R.n > 0) s = sf_rows<B, TF, TV>(&R, persist, TS, wide, pipe, x, y, k, st, S, P);
        if (!s && !T->upper) s = tail_launch<B, TF, TV>(T, cut, T->n, x, y, st);
        return s;
    }
    for (int l = 0; l < T->nlevels; l++) {
        int p0 = T->level_ptr[l], p1 = T->level_ptr[l + 1];
        if (p1 <= p0) continue;
        int nb = (p1 - p0 + rows_per_block - 1) / rows_per_block;
        if (wide)
            team_level_kernel<B, TF, TV, TM_LOOP><<<nb, LS_WARPS * 32, 0, st>>>(
                p0, p1, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS);
        else
            team_level_kernel<B, TF, TV, TM_NARROW><<<nb, LS_WARPS * 32, 0, st>>>(
                p0, p1, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS);
        CU_LAUNCHED("team_level_kernel");
    }
    return BSR_OK;
}

/* The level solve of block size B for the supported precision pairs
 * (instantiated once per B, in kernels/trsv_level_bB.cu, which CMake
 * writes into the build tree from kernels/instance.cu.in). */
template <int B>
static bsr_status ls_solve(const bsr_trsv_tri *T, int sched, const int *P, const void *S, void *w, const void *x,
                           void *y, int k, bsr_precision vprec, cudaStream_t st)
{
    bsr_status s = BSR_OK;
    int ok = trsv_with_types(T->fprec, vprec, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        s = ls_launch<B, TF, TV>(T, sched, P, (const TF *)S, (TV *)w, (const TV *)x, (TV *)y, k, st);
    });
    if (!ok)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_dev_solve: double factors with float vectors not supported");
    return s;
}

#define TRSV_LEVEL_DEFINE(B)                                                                                     \
    bsr_status trsv_level_b##B(const bsr_trsv_tri *T, int sched, const int *P, const void *S, void *w,           \
                               const void *x, void *y, int k, bsr_precision vprec, cudaStream_t st)              \
    {                                                                                                            \
        return ls_solve<B>(T, sched, P, S, w, x, y, k, vprec, st);                                               \
    }

#endif
