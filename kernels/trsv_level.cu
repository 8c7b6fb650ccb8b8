/* Level-scheduled block triangular solve on the GPU (issue 6, the production
 * kernel "level-scheduled P24"): a team of TS lanes (TS = 4..32, a power of
 * two chosen from b*k and the mean row length) per block row; the lanes of a
 * team split over (blocks of the row) x (row of the block) x (vector), every
 * row of a level in parallel.  Schedules sharing the row code:
 *  - per level: one launch per level (launched each time, or captured once in
 *    a CUDA graph by the caller);
 *  - sync-free (default): one launch per triangle; CUDA blocks take chunks of
 *    the level order through a ticket counter; the output is first filled with
 *    a sentinel (all bits set, a NaN no arithmetic produces) and a lane waits
 *    until the values of y it reads are no longer the sentinel: the data is
 *    its own completion flag (no fences, no flag round trip);
 *  - sync-free with flags (works in place, x == y): one warp per row, per-row
 *    completion flags published after a fence.
 * Each output is summed in a fixed order, so results are bitwise reproducible. */
#include "trsv_cuda.h"

#define LS_WARPS 8 /* warps per CUDA block */
/* Resident blocks per SM asked of the register allocator: rows in flight are
 * what hides the latency of the dependency chain (6 = 48 warps per SM). */
#define LS_MINBLOCKS(B) ((B) <= 4 ? 6 : 4)

/* Loads of solved values: through L2 only (__ldcg) in the sync-free kernel,
 * where another SM may have written the line after this SM cached it. */
template <bool SF, typename T> __device__ __forceinline__ T ld_y(const T *p)
{
    if (SF) return __ldcg(p);
    return *p;
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
        /* wait until every row this one reads is final */
        for (int q = lane; q < m; q += 32) {
            const volatile int *f = flags + colind[s0 + q];
            while (*f == 0) __nanosleep(32);
        }
        __threadfence();
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
        if (g < G) {
            for (int p = s0 + g; p < s1; p += G) {
                const TF *a = val + (size_t)p * B * B + r * B;
                const TV *yc = y + (size_t)colind[p] * bk + j;
#pragma unroll
                for (int c = 0; c < B; c++) acc += (TV)a[c] * ld_y<SF>(yc + c * k);
            }
        }
        for (int off = G / 2; off >= 1; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off * bk);
        if (lane < bk) {
            const TV s = x[(size_t)i * bk + o] - acc;
            if (upper) sm[o] = s;
            else y[(size_t)i * bk + o] = s;
        }
    } else {
        for (int o = lane; o < bk; o += 32) {
            const int r = o / k, j = o - r * k;
            TV acc = 0;
            for (int p = s0; p < s1; p++) {
                const TF *a = val + (size_t)p * B * B + r * B;
                const TV *yc = y + (size_t)colind[p] * bk + j;
#pragma unroll
                for (int c = 0; c < B; c++) acc += (TV)a[c] * ld_y<SF>(yc + c * k);
            }
            const TV s = x[(size_t)i * bk + o] - acc;
            if (upper) sm[o] = s;
            else y[(size_t)i * bk + o] = s;
        }
    }
    if (upper) {
        __syncwarp();
        for (int o = lane; o < bk; o += 32) {
            const int r = o / k, j = o - r * k;
            TV v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)D[r * B + c] * sm[c * k + j];
            y[(size_t)i * bk + o] = v;
        }
        __syncwarp();
    }
    if (SF) {
        /* publish: values first, then the flag */
        __threadfence();
        __syncwarp();
        if (lane == 0) *(volatile int *)(flags + i) = 1;
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

/* All bits set: a NaN that floating-point arithmetic never returns. */
__device__ __forceinline__ bool is_sentinel(double v) { return __double_as_longlong(v) == -1LL; }
__device__ __forceinline__ bool is_sentinel(float v) { return __float_as_int(v) == -1; }
/* A computed value that happens to be the sentinel (only from a NaN input kept
 * bit for bit) is stored as an ordinary NaN, so no reader can wait forever. */
template <typename TV> __device__ __forceinline__ TV unsentinel(TV v) { return is_sentinel(v) ? (TV)NAN : v; }

/* Load y_c(0..B-1, j) (stride k); WAIT: poll (uncached) until none is the sentinel. */
template <int B, typename TV, bool WAIT>
__device__ __forceinline__ void load_yc(const TV *yc, int k, TV *yv)
{
    if constexpr (!WAIT) {
#pragma unroll
        for (int c = 0; c < B; c++) yv[c] = yc[c * k];
    } else {
        for (;;) {
            bool ok = true;
#pragma unroll
            for (int c = 0; c < B; c++) {
                yv[c] = *(const volatile TV *)(yc + c * k);
                ok &= !is_sentinel(yv[c]);
            }
            if (ok) return;
            __nanosleep(20);
        }
    }
}

/* Row i by a team of TS lanes (lane tl of the team, team mask tmask):
 * y_i = x_i - sum_p A_p y_col(p)  (times the inverted pivot D for upper).
 * Blocks [s0, s1) (pivot first when upper).  sm: B*k values per warp, used
 * only when b*k > TS (then TS == 32). */
template <int B, typename TF, typename TV, bool WAIT, bool WIDE>
__device__ __forceinline__ void team_row(int i, int s0, int s1, int upper, const int *__restrict__ colind,
                                         const TF *__restrict__ val, const TV *x, TV *y, int k, int TS,
                                         int tl, unsigned tmask, TV *sm)
{
    const TF *D = NULL;
    if (upper) { D = val + (size_t)s0 * B * B; s0++; }
    const int bk = B * k;
    if constexpr (!WIDE) { /* b*k <= TS */
        int G = 1;
        while (2 * G * bk <= TS) G *= 2;
        const int g = tl / bk, o = tl - g * bk, r = o / k, j = o - r * k;
        /* everything that does not depend on other rows is loaded first */
        const TV xv = tl < bk ? x[(size_t)i * bk + o] : (TV)0;
        TF dv[B];
        if (upper) {
#pragma unroll
            for (int c = 0; c < B; c++) dv[c] = D[r * B + c];
        }
        TV acc = 0;
        if (g < G) {
            for (int p = s0 + g; p < s1; p += G) {
                TF av[B];
                TV yv[B];
                const TF *a = val + (size_t)p * B * B + r * B;
#pragma unroll
                for (int c = 0; c < B; c++) av[c] = a[c];
                load_yc<B, TV, WAIT>(y + (size_t)colind[p] * bk + j, k, yv);
#pragma unroll
                for (int c = 0; c < B; c++) acc += (TV)av[c] * yv[c];
            }
        }
        for (int off = G / 2; off >= 1; off /= 2) acc += __shfl_down_sync(tmask, acc, off * bk, TS);
        TV s = xv - acc; /* valid in lanes tl < bk */
        if (upper) {
            TV v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)dv[c] * __shfl_sync(tmask, s, c * k + j, TS);
            s = v;
        }
        if (tl < bk) y[(size_t)i * bk + o] = WAIT ? unsentinel(s) : s;
        return;
    } else {
    /* b*k > 32: the whole warp is the team, several outputs per lane */
    for (int o = tl; o < bk; o += 32) {
        const int r = o / k, j = o - r * k;
        TV acc = 0;
        for (int p = s0; p < s1; p++) {
            TF av[B];
            TV yv[B];
            const TF *a = val + (size_t)p * B * B + r * B;
#pragma unroll
            for (int c = 0; c < B; c++) av[c] = a[c];
            load_yc<B, TV, WAIT>(y + (size_t)colind[p] * bk + j, k, yv);
#pragma unroll
            for (int c = 0; c < B; c++) acc += (TV)av[c] * yv[c];
        }
        const TV s = x[(size_t)i * bk + o] - acc;
        if (upper) sm[o] = s;
        else y[(size_t)i * bk + o] = WAIT ? unsentinel(s) : s;
    }
    if (upper) {
        __syncwarp();
        for (int o = tl; o < bk; o += 32) {
            const int r = o / k, j = o - r * k;
            TV v = 0;
#pragma unroll
            for (int c = 0; c < B; c++) v += (TV)D[r * B + c] * sm[c * k + j];
            y[(size_t)i * bk + o] = WAIT ? unsentinel(v) : v;
        }
        __syncwarp();
    }
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
template <int B, typename TF, typename TV, bool WIDE>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_MINBLOCKS(B))
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
    team_row<B, TF, TV, false, WIDE>(rows[p], pbeg[p], pend[p], upper, colind, val, x, y, k, TS, tl, tmask, sm[w]);
}

/* Whole triangle, sync-free on sentinel values (y != x, y pre-filled with the
 * sentinel).  Chunks of the level order go to CUDA blocks by ticket, so any
 * row a team waits for belongs to a running or finished team. */
template <int B, typename TF, typename TV, bool WIDE>
__global__ void __launch_bounds__(LS_WARPS * 32, LS_MINBLOCKS(B))
team_syncfree_kernel(int n, int upper, const int *__restrict__ rows, const int *__restrict__ pbeg,
                     const int *__restrict__ pend, const int *__restrict__ colind, const TF *__restrict__ val,
                     const TV *x, TV *y, int k, int TS, int *counter)
{
    __shared__ TV sm[LS_WARPS][B * TRSV_MAXK];
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1);
    __syncthreads();
    int t, tl;
    unsigned tmask;
    team_of(TS, &t, &tl, &tmask);
    const int w = threadIdx.x >> 5;
    const int p = (ticket * LS_WARPS + w) * (32 / TS) + t;
    if (p >= n) return;
    team_row<B, TF, TV, true, WIDE>(rows[p], pbeg[p], pend[p], upper, colind, val, x, y, k, TS, tl, tmask, sm[w]);
}

/* BSR_TRSV_TEAM=4|8|16|32 in the environment forces the lanes per row (a
 * tuning knob for the benchmark; 0 = the rule below). */
static int team_override(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("BSR_TRSV_TEAM");
        int t = e ? atoi(e) : 0;
        v = (t == 4 || t == 8 || t == 16 || t == 32) ? t : 0;
    }
    return v;
}

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

/* Launch the level kernel over T with the given schedule. */
template <int B, typename TF, typename TV>
static bsr_status ls_launch(const bsr_trsv_tri *T, int sched, const TV *x, TV *y, int k,
                            cudaStream_t st)
{
    const TF *val = (const TF *)T->val;
    if (T->n == 0) return BSR_OK;
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
    const double mean_len = (double)(T->nnzb - (T->upper ? T->n : 0)) / T->n;
    const int TS = team_size(B * k, mean_len, team_override()), rows_per_block = LS_WARPS * (32 / TS);
    if (sched == TRSV_S_SYNCFREE) {
        CU_TRY(cudaMemsetAsync(y, 0xff, (size_t)T->n * B * k * sizeof(TV), st)); /* sentinel */
        CU_TRY(cudaMemsetAsync(T->counter, 0, sizeof(int), st));
        int nb = (T->n + rows_per_block - 1) / rows_per_block;
        if (B * k > TS)
            team_syncfree_kernel<B, TF, TV, true><<<nb, LS_WARPS * 32, 0, st>>>(
                T->n, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS, T->counter);
        else
            team_syncfree_kernel<B, TF, TV, false><<<nb, LS_WARPS * 32, 0, st>>>(
                T->n, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS, T->counter);
        CU_LAUNCHED("team_syncfree_kernel");
        return BSR_OK;
    }
    for (int l = 0; l < T->nlevels; l++) {
        int p0 = T->level_ptr[l], p1 = T->level_ptr[l + 1];
        if (p1 <= p0) continue;
        int nb = (p1 - p0 + rows_per_block - 1) / rows_per_block;
        if (B * k > TS)
            team_level_kernel<B, TF, TV, true><<<nb, LS_WARPS * 32, 0, st>>>(
                p0, p1, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS);
        else
            team_level_kernel<B, TF, TV, false><<<nb, LS_WARPS * 32, 0, st>>>(
                p0, p1, T->upper, T->rows, T->pbeg, T->pend, T->colind, val, x, y, k, TS);
        CU_LAUNCHED("team_level_kernel");
    }
    return BSR_OK;
}

/* Implemented in trsv_tree.cu: P21-P24 over the separator-tree levels. */
bsr_status trsv_tree_solve(const bsr_trsv_tri *T, int kernel, const void *x, void *y, int k,
                           bsr_precision vprec, cudaStream_t st);

extern "C" bsr_status bsr_trsv_dev_solve(const bsr_trsv_tri *T, int kernel, int sched,
                                         const void *x, void *y, int k, bsr_precision vprec,
                                         void *stream)
{
    BSR_CHECK_ARG(T && x && y, "bsr_trsv_dev_solve: NULL argument");
    BSR_CHECK_ARG(k >= 1 && k <= TRSV_MAXK, "bsr_trsv_dev_solve: k = %d outside 1..%d", k,
                  TRSV_MAXK);
    if (T->b < 1 || T->b > TRSV_MAXB)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_dev_solve: block size %d outside 1..%d",
                         T->b, TRSV_MAXB);
    cudaStream_t st = (cudaStream_t)stream;
    if (kernel != TRSV_K_LEVEL) return trsv_tree_solve(T, kernel, x, y, k, vprec, st);
    BSR_CHECK_ARG(sched >= TRSV_S_SYNCFREE && sched <= TRSV_S_FLAGS,
                  "bsr_trsv_dev_solve: unknown schedule %d", sched);
    bsr_status s = BSR_OK;
    int ok = trsv_with_types(T->fprec, vprec, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        trsv_with_b(T->b, [&](auto Bc) {
            s = ls_launch<decltype(Bc)::value, TF, TV>(T, sched, (const TV *)x, (TV *)y, k, st);
        });
    });
    if (!ok)
        return bsr_error(BSR_ERR_UNSUPPORTED,
                         "bsr_trsv_dev_solve: double factors with float vectors not supported");
    return s;
}

/* ---- permutation + block-diagonal scaling ---------------------------------- */

/* gather: out_i = S_i in_{perm[i]};  scatter: out_{perm[i]} = S_i in_i.
 * One thread per output entry (i, r, j). */
template <int B, typename TF, typename TV>
__global__ void permscale_kernel(int n, int k, const int *__restrict__ perm,
                                 const TF *__restrict__ S, const TV *__restrict__ in,
                                 TV *__restrict__ out, int scatter)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int bk = B * k;
    if (e >= (int64_t)n * bk) return;
    const int i = (int)(e / bk), o = (int)(e - (int64_t)i * bk), r = o / k, j = o - r * k;
    const int pi = perm ? perm[i] : i;
    const TV *src = in + (size_t)(scatter ? i : pi) * bk;
    TV v;
    if (S) {
        const TF *s = S + (size_t)i * B * B + r * B;
        v = 0;
#pragma unroll
        for (int c = 0; c < B; c++) v += (TV)s[c] * src[c * k + j];
    } else {
        v = src[o];
    }
    out[(size_t)(scatter ? pi : i) * bk + o] = v;
}

extern "C" bsr_status bsr_trsv_dev_permscale(int n, int b, int k, const int *perm, const void *S,
                                             bsr_precision fprec, const void *in, void *out,
                                             bsr_precision vprec, int scatter, void *stream)
{
    BSR_CHECK_ARG(in && out && in != out, "bsr_trsv_dev_permscale: bad buffers");
    if (n == 0) return BSR_OK;
    cudaStream_t st = (cudaStream_t)stream;
    int64_t tot = (int64_t)n * b * k;
    unsigned nb = (unsigned)((tot + 255) / 256);
    int ok = trsv_with_types(fprec, vprec, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        trsv_with_b(b, [&](auto Bc) {
            permscale_kernel<decltype(Bc)::value, TF, TV><<<nb, 256, 0, st>>>(
                n, k, perm, (const TF *)S, (const TV *)in, (TV *)out, scatter);
        });
    });
    if (!ok) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_dev_permscale: precision pair");
    CU_LAUNCHED("permscale_kernel");
    return BSR_OK;
}
