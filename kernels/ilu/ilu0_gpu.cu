/* SPDX-License-Identifier: BSD-3-Clause */
/* On-device numeric block ILU: scaling and factorization of the ILU module's
 * ILU(0), or of ILUT/ILU2 into the frozen pattern of their setup
 * (src/ilu/ilu_pattern.c), on the GPU, for CFD codes that refactor every time
 * step.
 *
 * Symbolic work is done once, on the device, from a bsr_ilu after setup (its
 * ordering, map of A onto the permuted rows, the pattern and its lower
 * part's level schedule; the map by the per-row function of
 * src/ilu/ilu0_plan.h, the update lists a warp a row (plan_updates_warp); the
 * host loops there are the reference): for every A block its destination in the
 * factors (-1: outside a frozen pattern), and for every lower block (i,k) the
 * list of updates (upper block (k,j), target (i,j)) for the columns j of row
 * k's upper part in row i's pattern; ILU2's rule is in the lists (a
 * second-order block updates with first-order ones only: R * W is never
 * formed).  Where the lists might take more than a quarter of the device's
 * free memory (8 bytes an update, bounded without lookups by the blocks of
 * the rows each lower block reads; a complete LU's updates grow as n^2 on 3D
 * grids) the plan neither counts nor keeps them: each row looks its targets
 * up in its own pattern as it goes (ilu0_syncfree_fly, ilu0_level_fly in
 * ilu0_gpu.cuh), the same updates in the same order; the rows of a
 * supernode (each row's pattern past its first off-diagonal block that
 * block's row's: plan_nest_kernel) go a panel of lower blocks at a time, a
 * target loaded and stored once for the panel's products.  Numeric phase,
 * all on the device:
 *  1. scale (one thread per permuted row, all rows at once): W = Ds P A P^T
 *     laid out as the pattern (lower blocks, then upper blocks with the
 *     pivot first; a frozen pattern's fill starts at zero), Ds = inverse
 *     diagonal blocks with the CPU's fallback rule, rowref = largest scaled
 *     block norm / sqrt(b);
 *  2. factor row i in IKJ form exactly as ilu_row.c with a fixed pattern
 *     (without lists, a complete LU's dense tail as far as its first column
 *     only, then as one dense matrix: ilu0_tail.cu):
 *     L_ik = W_ik * inv(U_kk) for ascending k, then W_ij -= L_ik U_kj; the
 *     pivot LU-factored with the same regularization rule (|p| < pivot_rel *
 *     rowref_i -> sign(p) * pivot_rel * rowref_i, counted per block) and
 *     inverted in place.  b = 1..5: a warp a row, all rows in one
 *     sync-free launch (ilu0_syncfree_warp), the first non-finite upper
 *     block of each row found after it (ilu0_upper_finite); else one thread
 *     a row, one launch a level.  The operation order per block equals the
 *     CPU's and these files are compiled without FMA contraction
 *     (CMakeLists.txt), as the C code is, so the factors equal the CPU's bit
 *     for bit: an
 *     ill-conditioned matrix then takes the same iterations whichever side
 *     factored it (bcsstk13: 39 against 35 with contraction);
 *  3. L and U (without ILU2's second-order blocks, gathered when there are
 *     some) go into the device preconditioner's level-ordered storage
 *     (bsr_gpu_ilu_set_values_dev), which then applies unchanged.
 * Made for a preconditioner (bsr_gpu_ilu0_create_into, the solver's way),
 * steps 1-2 work in the preconditioner's own arrays where they hold the
 * pattern's blocks one to one in double: the plan's block indices are
 * translated into its storage once (a row's blocks stay contiguous and in
 * order there, so a row's own blocks are found from its first one), and
 * there is no workspace W (a second copy of L and U in double, 3.65 GB at 4M
 * block rows, b = 4), no scaling of D's own and no gather (step 3).  With
 * ILU2's second-order blocks the preconditioner's storage maps are composed
 * with the pattern's (lmap, umap) instead, so that step 3 gathers out of W
 * straight, with no gathered copy in between.  Float factors keep W: the
 * factorization runs in double for the CPU's bits.
 * Errors (non-finite values, zero rows, singular pivots with strict_pivots)
 * are recorded with one 64-bit atomicMin of (row, kind, position): the
 * smallest failing row wins, as on the CPU, and the message names it. */
#include "ilu0_gpu.cuh"
#include <cub/cub.cuh>
#include <time.h>

/* ---- the plan, built on the device ------------------------------------------- */

/* Rows of A that miss the patterns: *bad = the smallest. */
__global__ void plan_map_kernel(int n, int nL, int frozen, const int *__restrict__ ap, const int *__restrict__ ac,
                                const int *__restrict__ Lp, const int *__restrict__ Lc, const int *__restrict__ Up,
                                const int *__restrict__ Uc, int *adst, int *adiag, int *diagw, int *bad)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n && !bsr_ilu0_map_row(k, ap, ac, Lp, Lc, Up, Uc, nL, frozen, adst, adiag, diagw)) atomicMin(bad, k);
}

/* *total += the blocks of the rows the lower blocks read (row k's upper
 * part for each lower block (i, k)): a bound on the plan's updates, each
 * list holding row k's pivot and at most its other upper blocks, found
 * without a lookup (for a complete LU, whose rows' patterns hold every
 * target, the count itself). */
__global__ void plan_bound_kernel(int nL, const int *__restrict__ Lc, const int *__restrict__ Up,
                                  unsigned long long *total)
{
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long v = l < nL ? (unsigned long long)(Up[Lc[l] + 1] - Up[Lc[l]]) : 0;
    for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0 && v) atomicAdd(total, v);
}

/* nest[k] = 1 where row k's upper blocks after its first off-diagonal one,
 * (k, p), are exactly row p's off-diagonal blocks (the rows of a supernode:
 * ilu0_panel), else 0.  A warp a row. */
__global__ void plan_nest_kernel(int n, const int *__restrict__ Up, const int *__restrict__ Uc,
                                 unsigned char *__restrict__ nest)
{
    const int k = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (k >= n) return;   /* the whole warp */
    const int a = Up[k] + 2, len = Up[k + 1] - a;
    int ok = len >= 0;
    if (ok) {
        const int p = Uc[a - 1], b = Up[p] + 1;
        ok = Up[p + 1] - b == len;
        for (int t0 = 0; t0 < len && ok; t0 += 32)   /* the same trips in every lane */
            ok = !__any_sync(0xffffffffu, t0 + lane < len && Uc[a + t0 + lane] != Uc[b + t0 + lane]);
    }
    if (lane == 0) nest[k] = (unsigned char)ok;
}

/* One warp a row i: for each lower block l of the row, its update list
 * (bsr_ilu0_updates_of's, in the same order): the first pair (row k's
 * pivot, k), then the upper blocks (k,j) its class updates with whose
 * column is in row i's pattern, 32 of row k's blocks at a time, compacted in
 * order by a ballot.  Count pass (upd NULL): len[l], and *total (64 bits)
 * their sum; fill pass: the pairs at updp[l].  Uncapped ILU2 patterns have
 * rows of hundreds of blocks and about 10^9 updates at 262k block rows: a
 * thread a row (the serial merge) took 5.9 s there. */
__global__ void plan_updates_warp(int n, int nL, const int *__restrict__ Lp, const int *__restrict__ Lc,
                                  const int *__restrict__ Up, const int *__restrict__ Uc,
                                  const unsigned char *__restrict__ lk, const unsigned char *__restrict__ uk,
                                  long long *len, unsigned long long *total, const long long *__restrict__ updp,
                                  int2 *upd)
{
    const int i = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (i >= n) return;
    const unsigned below = (1u << lane) - 1u;
    unsigned long long sum = 0;
    for (int l = Lp[i]; l < Lp[i + 1]; l++) {
        const int k = Lc[l], second = lk && lk[l] == 1;
        long long at = upd ? updp[l] : 0;
        if (upd && lane == 0) upd[at] = make_int2(nL + Up[k], k);
        long long cnt = 1;
        for (int q0 = Up[k] + 1; q0 < Up[k + 1]; q0 += 32) {
            const int q = q0 + lane;
            int t = -1;
            if (q < Up[k + 1] && !(second && uk[q])) t = ilu0_target(i, l, Uc[q], Lp, Lc, Up, Uc, nL);
            const unsigned m = __ballot_sync(0xffffffffu, t >= 0);
            if (upd && t >= 0) upd[at + cnt + __popc(m & below)] = make_int2(nL + q, t);
            cnt += __popc(m);
        }
        if (!upd && lane == 0) len[l] = cnt;
        sum += (unsigned long long)cnt;
    }
    if (!upd && lane == 0 && sum) atomicAdd(total, sum);
}

/* BSR_ILU0_PLAN_CHECK=1: the device plan must equal the host reference
 * (src/ilu/ilu0_plan.c) array for array (tests set it). */
static bsr_status plan_check(const bsr_gpu_ilu0 *D, int64_t nupd)
{
    static int on = -1;   /* read once: tests set it before the first call */
    if (on < 0) { const char *e = getenv("BSR_ILU0_PLAN_CHECK"); on = e && atoi(e) == 1; }
    const bsr_ilu0_dsym *S = bsr_ilu_dsym(D->F);
    if (!on || (S && !D->F->fz)) return BSR_OK;   /* no host pattern: BSR_ILU0_SYM_CHECK, BSR_ILU_DSYM_CHECK */
    const bsr_ilu *F = D->F;
    const int n = D->n;
    int *adst = (int *)malloc(((size_t)D->nnzA + 1) * sizeof(int)), *adiag = (int *)malloc(((size_t)n + 1) * sizeof(int));
    int *diagw = (int *)malloc(((size_t)n + 1) * sizeof(int)), *upd = NULL;
    int64_t *updp = NULL;
    int64_t hn = 0;
    int *dv = (int *)malloc(((size_t)D->nnzA + 2 * (size_t)(nupd > 0 ? nupd : 0) + 2 * (size_t)D->nL + 2 * (size_t)n + 4) *
                            sizeof(int));
    bsr_status s = adst && adiag && diagw && dv ? BSR_OK : bsr_error(BSR_ERR_NOMEM, "ILU(0) plan check");
    if (s == BSR_OK) s = bsr_ilu0_plan_map(F, adst, adiag, diagw);
    if (s == BSR_OK && nupd >= 0) s = bsr_ilu0_plan_updates(F, &updp, &upd, &hn);
    if (s == BSR_OK && nupd >= 0 && hn != nupd) s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) plan: %lld updates on the device, %lld on the host",
                                                 (long long)nupd, (long long)hn);
    struct { const void *dev, *host; size_t bytes; const char *name; } arr[] = {
        {D->adst, adst, (size_t)D->nnzA * sizeof(int), "adst"}, {D->adiag, adiag, (size_t)n * sizeof(int), "adiag"},
        {D->diagw, diagw, (size_t)n * sizeof(int), "diagw"}, {D->updp, updp, ((size_t)D->nL + 1) * sizeof(int64_t), "updp"},
        {D->upd, upd, 2 * (size_t)nupd * sizeof(int), "upd"}};
    for (int a = 0; a < (nupd >= 0 ? 5 : 3) && s == BSR_OK; a++) {   /* without lists: the map only */
        if (arr[a].bytes == 0) continue;
        if (cudaMemcpy(dv, arr[a].dev, arr[a].bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
            s = bsr_error(BSR_ERR_CUDA, "ILU(0) plan check: %s", cudaGetErrorString(cudaGetLastError()));
        else if (memcmp(dv, arr[a].host, arr[a].bytes))
            s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) plan: the device's %s differs from the host's", arr[a].name);
    }
    free(adst); free(adiag); free(diagw); free(updp); free(upd); free(dv);
    return s;
}

/* Whether a plan of at most nupd updates goes without its lists
 * (ilu0_gpu.cuh, D->fly): where they might take more than a quarter of the
 * device's free memory (8 bytes an update: 128 GB for a complete LU at 64k
 * block rows).
 * BSR_ILU0_FLY=1 / 0 forces it either way (tests compare the two). */
static int without_lists(unsigned long long nupd)
{
    const char *e = getenv("BSR_ILU0_FLY");
    if (e && *e) return atoi(e) == 1;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) { cudaGetLastError(); return 0; }
    return nupd > fr / 4 / sizeof(int2);
}

/* Map of A and update lists on the device from the uploaded patterns:
 * nothing of the plan is built or touched on the host (its arrays, ~20 ints a
 * row, cost host time and fresh pages, then an upload). */
static bsr_status plan_build(bsr_gpu_ilu0 *D, int *ac, int *Lc, int *Uc, unsigned char *lk, unsigned char *uk)
{
    const int n = D->n, nL = D->nL;
    cudaStream_t st = D->stream;
    const unsigned nb = (unsigned)((n + 255) / 256), nw = (unsigned)((n + 7) / 8);   /* a thread / a warp a row */
    long long *len = NULL;
    int *bad = NULL, hbad = n;
    unsigned long long *tot = NULL, htot = 0;
    void *tmp = NULL;
    size_t tb = 0;
    cudaError_t e = bsr_cu_malloc((void **)&D->adst, ((size_t)D->nnzA + 1) * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->adiag, ((size_t)n + 1) * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->diagw, ((size_t)n + 1) * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->updp, ((size_t)nL + 1) * sizeof(long long));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&len, ((size_t)nL + 1) * sizeof(long long));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&bad, sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&tot, sizeof(unsigned long long));
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(NULL, tb, len, D->updp, nL + 1, st);
    if (e == cudaSuccess) e = bsr_cu_malloc(&tmp, tb ? tb : 1);
    if (e == cudaSuccess) e = cudaMemcpyAsync(bad, &hbad, sizeof(int), cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(tot, 0, sizeof(unsigned long long), st);
    if (e == cudaSuccess) e = cudaMemsetAsync(len + nL, 0, sizeof(long long), st);
    if (e == cudaSuccess && n > 0) {
        plan_map_kernel<<<nb, 256, 0, st>>>(n, nL, D->frozen, D->ap, ac, D->Lp, Lc, D->Up, Uc, D->adst, D->adiag,
                                            D->diagw, bad);
        if (nL > 0) plan_bound_kernel<<<(unsigned)((nL + 255) / 256), 256, 0, st>>>(nL, Lc, D->Up, tot);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(&htot, tot, sizeof htot, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    bsr_status s = BSR_OK;
    if (e == cudaSuccess && hbad < n)
        s = bsr_error(BSR_ERR_INTERNAL, "bsr_gpu_ilu0_create: permuted row %d of A does not match the ILU(0) pattern", hbad);
    /* lists that might not fit are not counted (the count looks every
     * update's target up: 0.4 s for a complete LU at 64k block rows) */
    if (s == BSR_OK && e == cudaSuccess) D->fly = without_lists(htot);
    if (s == BSR_OK && e == cudaSuccess && !D->fly && n > 0) {
        e = cudaMemsetAsync(tot, 0, sizeof(unsigned long long), st);
        if (e == cudaSuccess) plan_updates_warp<<<nw, 256, 0, st>>>(n, nL, D->Lp, Lc, D->Up, Uc, lk, uk, len, tot, NULL, NULL);
        if (e == cudaSuccess) e = cudaMemcpyAsync(&htot, tot, sizeof htot, cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    }
    if (s == BSR_OK && e == cudaSuccess && !D->fly) e = cub::DeviceScan::ExclusiveSum(tmp, tb, len, D->updp, nL + 1, st);
    if (s == BSR_OK && e == cudaSuccess && !D->fly) e = bsr_cu_malloc((void **)&D->upd, (size_t)(htot ? htot : 1) * sizeof(int2));
    if (s == BSR_OK && e == cudaSuccess && !D->fly && n > 0) {
        plan_updates_warp<<<nw, 256, 0, st>>>(n, nL, D->Lp, Lc, D->Up, Uc, lk, uk, NULL, NULL, D->updp, D->upd);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    bsr_cu_free(len); bsr_cu_free(bad); bsr_cu_free(tot); bsr_cu_free(tmp);
    if (s == BSR_OK && e != cudaSuccess) {
        cudaGetLastError();
        s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                      "bsr_gpu_ilu0_create: device plan (%d rows, %d + %d factor blocks): %s", n, D->nL, D->nU,
                      cudaGetErrorString(e));
    }
    if (s == BSR_OK) s = plan_check(D, D->fly ? -1 : (int64_t)htot);
    return s;
}

/* ---- in place: the plan's indices in the preconditioner's storage ----------- */

/* inv[map[q]] = base + q for q < nb (map NULL: the identity). */
__global__ void inplace_inv_kernel(int nb, const int *__restrict__ map, int base, int *__restrict__ inv)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < nb) inv[base + (map ? map[q] : q)] = base + q;
}

/* v[e] = inv[v[e]] for e < cnt (negative entries, blocks left out, stay). */
__global__ void inplace_remap_kernel(long long cnt, int *__restrict__ v, const int *__restrict__ inv)
{
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < cnt && v[e] >= 0) v[e] = inv[v[e]];
}

/* The update lists: both blocks of every pair, but for the first pair of a
 * list only its pivot block (its second entry is the row to wait for). */
__global__ void inplace_upd_kernel(int nL, const long long *__restrict__ updp, int2 *__restrict__ upd,
                                   const int *__restrict__ inv)
{
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= nL) return;
    const long long u0 = updp[l], u1 = updp[l + 1];
    if (u0 < u1) upd[u0].x = inv[upd[u0].x];
    for (long long u = u0 + 1; u < u1; u++) upd[u] = make_int2(inv[upd[u].x], inv[upd[u].y]);
}

/* Row i's blocks of one factor out of the storage (row starts st) into the
 * plan's layout (row pointers p), for the download. */
__global__ void inplace_rows_out(int n, int bb, const int *__restrict__ p, const int *__restrict__ st,
                                 const double *__restrict__ src, double *__restrict__ dst)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const size_t len = (size_t)(p[i + 1] - p[i]) * bb;
    const double *a = src + (size_t)st[i] * bb;
    double *o = dst + (size_t)p[i] * bb;
    for (size_t e = 0; e < len; e++) o[e] = a[e];
}

/* Make D factor into G's own arrays (d): the plan's block indices (adst,
 * diagw, the update lists) translated from its layout (the host factors')
 * into G's storage, once.  Only where G stores exactly the pattern's blocks:
 * not with ILU2's second-order blocks (lmap), which G does not store. */
static bsr_status inplace_bind(bsr_gpu_ilu0 *D, const bsr_gpu_ilu_dest *d)
{
    const int nL = D->nL, nU = D->nU, n = D->n;
    cudaStream_t st = D->stream;
    int *inv = NULL;
    cudaError_t e = cudaSuccess;
    if (d->Lmap || d->Umap) {   /* stored in level order: translate (else the layouts agree) */
        e = bsr_cu_malloc((void **)&inv, ((size_t)nL + nU + 1) * sizeof(int));
        if (e == cudaSuccess && nL) inplace_inv_kernel<<<(nL + 255) / 256, 256, 0, st>>>(nL, d->Lmap, 0, inv);
        if (e == cudaSuccess && nU) inplace_inv_kernel<<<(nU + 255) / 256, 256, 0, st>>>(nU, d->Umap, nL, inv);
        if (e == cudaSuccess && D->nnzA)
            inplace_remap_kernel<<<(unsigned)(((long long)D->nnzA + 255) / 256), 256, 0, st>>>(D->nnzA, D->adst, inv);
        if (e == cudaSuccess && n) inplace_remap_kernel<<<(n + 255) / 256, 256, 0, st>>>(n, D->diagw, inv);
        if (e == cudaSuccess && nL && !D->fly) inplace_upd_kernel<<<(nL + 255) / 256, 256, 0, st>>>(nL, D->updp, D->upd, inv);
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
        bsr_cu_free(inv);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                         "bsr_gpu_ilu0_create_into: the plan in the preconditioner's storage (%d + %d blocks): %s",
                         nL, nU, cudaGetErrorString(e));
    }
    D->Lv = d->L; D->Uv = d->U;
    D->Lst = d->Lst; D->Ust = d->Ust;
    D->Lcs = d->Lc; D->Ucs = d->Uc;
    return BSR_OK;
}

/* ---- host side ------------------------------------------------------------- */

/* Threads per CUDA block of the factorization's launches: a level has at most
 * a few thousand rows, one thread each, so small blocks spread a level over
 * more SMs (H100, stencil3d:100:4: 14.8 ms at 32, 15.9 at 64, 18.6 at 128,
 * 25.6 at 256).  BSR_ILU0_T (32..256) overrides, to measure. */
static int level_threads(void)
{
    static int t = -1;   /* read once */
    if (t < 0) {
        const char *e = getenv("BSR_ILU0_T");
        const int v = e ? atoi(e) : 0;
        t = v >= 32 && v <= 256 && v % 32 == 0 ? v : 32;
    }
    return t;
}

/* The sync-free factorization serves block sizes 1..5 (a warp a row). */
static int syncfree_rows(int b) { return b * b <= 32; }

/* A fresh device copy of n host ints / bytes (staged through pinned memory when large). */
static bsr_status up_ints(bsr_context *ctx, int **dev, const int *host, size_t n)
{
    CU_TRY(bsr_cu_malloc((void **)dev, (n ? n : 1) * sizeof(int)));
    return bsr_cuda_h2d(ctx, *dev, host, n * sizeof(int));
}

static bsr_status up_bytes(bsr_context *ctx, unsigned char **dev, const unsigned char *host, size_t n)
{
    CU_TRY(bsr_cu_malloc((void **)dev, n ? n : 1));
    return bsr_cuda_h2d(ctx, *dev, host, n);
}

extern "C" void bsr_gpu_ilu0_destroy(bsr_gpu_ilu0 *D)
{
    if (!D) return;
    if (D->ctx) bsr_cuda_enter(D->ctx);
    if (D->stream) cudaStreamSynchronize(D->stream);
    if (!D->borrowed) { bsr_cu_free(D->ap); bsr_cu_free(D->Lp); bsr_cu_free(D->Up); bsr_cu_free(D->lvrows); }
    bsr_cu_free(D->asrc); bsr_cu_free(D->adst); bsr_cu_free(D->adiag); bsr_cu_free(D->diagw);
    bsr_cu_free(D->perm); bsr_cu_free(D->updp);
    bsr_cu_free(D->upd); bsr_cu_free(D->W); bsr_cu_free(D->rowref);
    if (D->own_cols) {
        bsr_cu_free((void *)D->Lc); bsr_cu_free((void *)D->Uc);
        bsr_cu_free((void *)D->lk); bsr_cu_free((void *)D->uk);
    }
    bsr_cu_free(D->nest);
    if (D->own_dl) bsr_cu_free(D->dl);
    bsr_cu_free(D->cnt); bsr_cu_free(D->err);
    bsr_cu_free(D->lmap); bsr_cu_free(D->umap); bsr_cu_free(D->Lg); bsr_cu_free(D->Ug); bsr_cu_free(D->done);
    ilu0_tail_free(D);
    free(D->level_ptr);
    free(D);
}

/* Without update lists the rows read the pattern's columns and classes as
 * they go: D keeps them, taking the uploaded ones (*Lc .. *uk then NULL)
 * or copying the device symbolic phase's S (released after the first
 * factorization in place, bsr_ilu0_dsym_trim). */
static bsr_status keep_pattern_cols(bsr_gpu_ilu0 *D, const bsr_ilu0_dsym *S, int **Lc, int **Uc, unsigned char **lk,
                                    unsigned char **uk)
{
    D->own_cols = 1;
    if (!S) {
        D->Lc = *Lc; D->Uc = *Uc; D->lk = *lk; D->uk = *uk;
        *Lc = *Uc = NULL;
        *lk = *uk = NULL;
        return BSR_OK;
    }
    int *c = NULL;
    unsigned char *k = NULL;
    BSR_TRY(bsr_cuda_dup_ints(&c, *Lc, (size_t)D->nL, D->stream));
    D->Lc = c;
    BSR_TRY(bsr_cuda_dup_ints(&c, *Uc, (size_t)D->nU, D->stream));
    D->Uc = c;
    for (int u = 0; u < 2; u++) {
        const unsigned char *src = u ? *uk : *lk;
        const size_t len = u ? (size_t)D->nU : (size_t)D->nL;
        if (!src) continue;
        CU_TRY(bsr_cu_malloc((void **)&k, len ? len : 1));
        if (u) D->uk = k; else D->lk = k;
        CU_TRY(cudaMemcpyAsync(k, src, len, cudaMemcpyDeviceToDevice, D->stream));
    }
    return BSR_OK;
}

/* Which rows nest in their first off-diagonal block's row (D->nest), for
 * the factorization without lists: its panels. */
static bsr_status plan_nest(bsr_gpu_ilu0 *D)
{
    CU_TRY(bsr_cu_malloc((void **)&D->nest, (size_t)D->n + 1));
    if (D->n > 0) plan_nest_kernel<<<(unsigned)(((long long)D->n * 32 + 255) / 256), 256, 0, D->stream>>>(D->n, D->Up, D->Uc, D->nest);
    CU_TRY(cudaGetLastError());
    return BSR_OK;
}

/* bsr_gpu_ilu0_create, in place into G's arrays where G allows it (G NULL:
 * a workspace of D's own). */
static bsr_status ilu0_create(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu *G, bsr_gpu_ilu0 **out)
{
    BSR_CHECK_ARG(ctx && F && out, "bsr_gpu_ilu0_create: NULL argument");
    *out = NULL;
    if (bsr_context_backend(ctx) != BSR_BACKEND_CUDA || !ctx->cuda)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_create: the context is not a CUDA context (%s)", bsr_context_describe(ctx));
    const bsr_ilu0_dsym *S = bsr_ilu_dsym(F);   /* ILU(0)'s symbolic phase done on the device */
    bsr_ilu_fpat P;
    if (!S && (!F->ap || bsr_ilu_fpattern(F, &P) != BSR_OK))
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_create: F is neither an ILU(0) factorization with its symbolic "
                         "phase done nor a threshold factorization with its frozen pattern");
    if (F->b < 1 || F->b > BSR_MAX_BLOCK)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu0_create: block size %d outside 1..%d", F->b, BSR_MAX_BLOCK);
    if (S && S->trimmed)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_create: the plan's device patterns were released once its "
                         "factorization was made (set up again)");
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_gpu_ilu0 *D = (bsr_gpu_ilu0 *)bsr_calloc(1, sizeof *D, "bsr_gpu_ilu0");
    if (!D) return BSR_ERR_NOMEM;
    D->ctx = ctx;
    D->stream = bsr_cuda_stream(ctx);
    D->F = F;
    D->n = F->n; D->b = F->b; D->nnzA = F->nnzbA;
    const int sf = S && S->frozen;   /* a threshold pattern made on the device */
    D->nL = sf ? S->nlo : S ? S->nL : P.nL;
    D->nU = sf ? S->nup : S ? S->nU : P.nU;
    D->frozen = sf || (!S && P.frozen);
    D->nLs = sf ? S->nL : S || !P.lmap ? D->nL : F->L->nnzb;
    D->nUs = sf ? S->nU : S || !P.umap ? D->nU : F->U->nnzb;
    const int n = D->n, bb = D->b * D->b;
    const int lvn = S ? n : P.lv->n;
    D->nlevels = sf ? S->fnlev : S ? S->nlev[0] : P.lv->nlevels;
    const int *lp = sf ? S->flevel_ptr : S ? S->level_ptr[0] : P.lv->level_ptr;
    bsr_status s = BSR_OK;
    D->level_ptr = (int *)bsr_malloc(((size_t)D->nlevels + 1) * sizeof(int), "ILU(0) levels");
    if (!D->level_ptr) s = BSR_ERR_NOMEM;
    else memcpy(D->level_ptr, lp, ((size_t)D->nlevels + 1) * sizeof(int));
    if (s == BSR_OK && lvn != n) s = bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu0_create: L's schedule has %d rows, L %d", lvn, n);
    int *ac = NULL, *Lc = NULL, *Uc = NULL; /* the plan's inputs only */
    unsigned char *lk = NULL, *uk = NULL;
    if (sf) {   /* the pattern and the map of A read in place (F, which holds S, outlives D);
                 * the map's sources and the ordering from the host */
        ac = S->ac; Lc = S->Fc; Uc = S->Gc; lk = S->fk; uk = S->gk;
        D->ap = S->ap; D->Lp = S->Fp; D->Up = S->Gp; D->lvrows = S->frows;
        D->borrowed = 1;
        cudaStream_t st = bsr_cuda_stream(ctx);
        if (s == BSR_OK) s = up_ints(ctx, &D->asrc, F->asrc, (size_t)D->nnzA);
        if (s == BSR_OK && F->ord) s = up_ints(ctx, &D->perm, F->ord->perm, (size_t)n);
        if (s == BSR_OK && S->lmap) s = bsr_cuda_dup_ints(&D->lmap, S->lmap, (size_t)D->nLs, st);
        if (s == BSR_OK && S->umap) s = bsr_cuda_dup_ints(&D->umap, S->umap, (size_t)D->nUs, st);
    } else if (S) {   /* natural order: A's own pattern (asrc NULL = identity), no perm;
                * the patterns read in place (F, which holds S, outlives D) */
        ac = S->ac; Lc = S->Lc; Uc = S->Uc;
        D->ap = S->ap; D->Lp = S->Lp; D->Up = S->Up; D->lvrows = S->rows[0];
        D->borrowed = 1;
    } else {
        if (s == BSR_OK) s = up_ints(ctx, &D->ap, F->ap, (size_t)n + 1);
        if (s == BSR_OK) s = up_ints(ctx, &D->asrc, F->asrc, (size_t)D->nnzA);
        if (s == BSR_OK) s = up_ints(ctx, &ac, F->ac, (size_t)D->nnzA);
        if (s == BSR_OK && F->ord) s = up_ints(ctx, &D->perm, F->ord->perm, (size_t)n);
        if (s == BSR_OK) s = up_ints(ctx, &D->Lp, P.Lp, (size_t)n + 1);
        if (s == BSR_OK) s = up_ints(ctx, &Lc, P.Lc, (size_t)D->nL);
        if (s == BSR_OK) s = up_ints(ctx, &D->Up, P.Up, (size_t)n + 1);
        if (s == BSR_OK) s = up_ints(ctx, &Uc, P.Uc, (size_t)D->nU);
        if (s == BSR_OK) s = up_ints(ctx, &D->lvrows, P.lv->rows, (size_t)n);
        if (s == BSR_OK && P.lk) s = up_bytes(ctx, &lk, P.lk, (size_t)D->nL);
        if (s == BSR_OK && P.uk) s = up_bytes(ctx, &uk, P.uk, (size_t)D->nU);
        if (s == BSR_OK && P.lmap) s = up_ints(ctx, &D->lmap, P.lmap, (size_t)D->nLs);
        if (s == BSR_OK && P.umap) s = up_ints(ctx, &D->umap, P.umap, (size_t)D->nUs);
    }
    bsr_prof_mark_dev("ilu0 gpu: pattern uploads");
    if (s == BSR_OK) s = plan_build(D, ac, Lc, Uc, lk, uk);
    if (s == BSR_OK && D->fly) s = keep_pattern_cols(D, S, &Lc, &Uc, &lk, &uk);
    if (s == BSR_OK && D->fly) s = plan_nest(D);
    D->ts = n;
    /* (every block first order: no second-order blocks, whose R x W products the GEMM would form) */
    if (s == BSR_OK && D->fly && syncfree_rows(D->b) && !D->lmap && !D->umap) s = ilu0_tail_plan(D);
    if (!S) { bsr_cu_free(ac); bsr_cu_free(Lc); bsr_cu_free(Uc); bsr_cu_free(lk); bsr_cu_free(uk); }
    bsr_prof_mark_dev("ilu0 gpu: device plan");
    /* in place: G's double factors hold exactly the pattern's blocks (no
     * second-order part to leave out), so the factorization needs no
     * workspace of its own (W, a copy of the factors in double, and the
     * gather into G after each factorization) */
    bsr_gpu_ilu_dest dst;
    const int inplace = s == BSR_OK && G && !D->lmap && !D->umap && bsr_gpu_ilu_dest_get(G, &dst) == BSR_OK &&
                        dst.nL == D->nL && dst.nU == D->nU;
    if (inplace) s = inplace_bind(D, &dst);
    /* not in place because G leaves ILU2's second-order blocks out: G
     * gathers its blocks straight out of W (its maps composed with lmap,
     * umap), with no gathered copy Lg, Ug of the stored factors between */
    const int composed = s == BSR_OK && G && !inplace && (D->lmap || D->umap);
    if (composed) s = bsr_gpu_ilu_compose_maps(G, D->lmap, D->umap, D->nLs, D->nUs);   /* fails: G is the caller's to drop */
    if (composed) D->composed = G;
    if (s == BSR_OK) {
        cudaError_t e = cudaSuccess;
        if (!inplace) e = bsr_cu_malloc((void **)&D->W, ((size_t)D->nL + D->nU + 1) * bb * sizeof(double));
        if (!inplace && e == cudaSuccess) { D->Lv = D->W; D->Uv = D->W + (size_t)D->nL * bb; }
        if (inplace && dst.sl) D->dl = dst.sl;   /* the scaling straight into G's too */
        else if (e == cudaSuccess) { e = bsr_cu_malloc((void **)&D->dl, ((size_t)n + 1) * bb * sizeof(double)); D->own_dl = 1; }
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->rowref, ((size_t)n + 1) * sizeof(double));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->cnt, 2 * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->err, sizeof(unsigned long long));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->done, ((size_t)n + 1) * sizeof(int));
        if (e == cudaSuccess && D->lmap && !composed) e = bsr_cu_malloc((void **)&D->Lg, ((size_t)D->nLs + 1) * bb * sizeof(double));
        if (e == cudaSuccess && D->umap && !composed) e = bsr_cu_malloc((void **)&D->Ug, ((size_t)D->nUs + 1) * bb * sizeof(double));
        if (e != cudaSuccess) {
            cudaGetLastError();
            s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                          "bsr_gpu_ilu0_create: device arrays (%d + %d factor blocks of %d x %d): %s",
                          D->nL, D->nU, D->b, D->b, cudaGetErrorString(e));
        }
    }
    bsr_prof_mark_dev("ilu0 gpu: allocations");
    if (s != BSR_OK) { bsr_gpu_ilu0_destroy(D); return s; }
    if (inplace) {   /* G's maps are no longer needed: its values are written where they are stored */
        D->bound = G;
        bsr_gpu_ilu_bind_values(G);
    }
    *out = D;
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_create(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu0 **out)
{
    return ilu0_create(ctx, F, NULL, out);
}

extern "C" bsr_status bsr_gpu_ilu0_create_into(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu *G, bsr_gpu_ilu0 **out)
{
    BSR_CHECK_ARG(G, "bsr_gpu_ilu0_create_into: G is NULL");
    return ilu0_create(ctx, F, G, out);
}

extern "C" int bsr_gpu_ilu0_in_place(const bsr_gpu_ilu0 *D)
{
    return D && D->bound;
}

typedef void (*ilu0_scale_fn)(const bsr_gpu_ilu0 *, unsigned, int, const void *, bsr_precision, const int *, const int *);
typedef void (*ilu0_level_fn)(const bsr_gpu_ilu0 *, int, int, int, double, int, int);
#define SCALE_FN(B) ilu0_scale_b##B,
#define LEVEL_FN(B) ilu0_level_b##B,
static const ilu0_scale_fn scale_fn[10] = {BSR_FOR_EACH_B(SCALE_FN)};
static const ilu0_level_fn level_fn[10] = {BSR_FOR_EACH_B(LEVEL_FN)};
#undef SCALE_FN
#undef LEVEL_FN

/* Column of block q (of row `row`) of L (upper = 0) or U, for a message:
 * from the host pattern, the device one, or, where that was released
 * (bsr_ilu0_dsym_trim), from the preconditioner's storage D factors into. */
static int factor_col(const bsr_gpu_ilu0 *D, int upper, int row, unsigned q)
{
    const bsr_ilu0_dsym *S = bsr_ilu_dsym(D->F);
    bsr_ilu_fpat P;
    if (!S) return bsr_ilu_fpattern(D->F, &P) == BSR_OK ? (upper ? P.Uc : P.Lc)[q] : -1;
    int c = -1, st = 0, p0 = 0;
    const int *cols = S->frozen ? (upper ? S->Gc : S->Fc) : upper ? S->Uc : S->Lc;
    size_t at = q;
    if (!cols && D->bound) {   /* stored at G's row start plus the offset within the row */
        cols = upper ? D->Ucs : D->Lcs;
        if (cudaMemcpy(&st, (upper ? D->Ust : D->Lst) + row, sizeof st, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(&p0, (upper ? D->Up : D->Lp) + row, sizeof p0, cudaMemcpyDeviceToHost) != cudaSuccess)
            cols = NULL;
        at = (size_t)st + q - (size_t)p0;
    }
    if (cols && cudaMemcpy(&c, cols + at, sizeof c, cudaMemcpyDeviceToHost) != cudaSuccess) c = -1;
    (void)cudaGetLastError();
    return c;
}

/* Message for an error key, in the CPU code's words. */
static bsr_status report(const bsr_gpu_ilu0 *D, unsigned long long key, const bsr_matrix *A)
{
    const bsr_ilu *F = D->F;
    const int row = (int)(key >> 36), kind = (int)((key >> 32) & 15);
    const unsigned aux = (unsigned)(key & 0xffffffffu);
    const int orig = F->ord ? F->ord->perm[row] : row;
    switch (kind) {
    case E_AVAL:
        return bsr_error(BSR_ERR_VALUE, "ILU: A has a non-finite value in block (%d,%d)", row, A->colind[F->asrc ? F->asrc[aux] : aux]);
    case E_ZROW:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: block row %d of A is zero: A is singular", row);
    case E_OVFL:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: scaling block row %d by its inverse diagonal block "
                         "overflows (diagonal block nearly singular)", row);
    case E_LBLK:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block L(%d,%d) in block row %d (row %d of A)",
                         row, factor_col(D, 0, row, aux), row, orig);
    case E_PIV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite pivot block in block row %d (row %d of A)", row, orig);
    case E_STRICT: {
        double rr = 0;
        if (cudaMemcpy(&rr, D->rowref + row, sizeof rr, cudaMemcpyDeviceToHost) != cudaSuccess) cudaGetLastError();
        return bsr_error(BSR_ERR_SINGULAR, "ILU: singular pivot block in block row %d (row %d of A):"
                         " %d pivot(s) below %.3g", row, orig, (int)aux, F->pivot_rel * rr);
    }
    case E_INV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite inverse pivot in block row %d (row %d of A)", row, orig);
    default:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block U(%d,%d) in block row %d (row %d of A)",
                         row, factor_col(D, 1, row, aux), row, orig);
    }
}

extern "C" bsr_status bsr_gpu_ilu0_factor(bsr_gpu_ilu0 *D, const bsr_matrix *A, bsr_gpu_ilu *G)
{
    BSR_CHECK_ARG(D && A, "bsr_gpu_ilu0_factor: NULL argument");
    BSR_CHECK_ARG(!D->bound || !G || G == D->bound, "bsr_gpu_ilu0_factor: D factors in place into another "
                  "preconditioner's arrays than G");
    BSR_CHECK_ARG(!D->composed || !G || G == D->composed, "bsr_gpu_ilu0_factor: D's values go to another "
                  "preconditioner than G (its maps read D's pattern)");
    const bsr_ilu *F = D->F;
    if (A->nbrows != D->n || A->nbcols != D->n || A->b != D->b || A->nnzb != D->nnzA)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu0_factor: A (%d x %d blocks of %d, %d blocks) is not the pattern "
                         "of the setup (%d blocks of %d, %d blocks)", A->nbrows, A->nbcols, A->b, A->nnzb, D->n, D->b, D->nnzA);
    if (!bsr_matrix_on_device(A) || bsr_cuda_dmat(A)->ctx != D->ctx)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_factor: A has no current device mirror in this context (bsr_matrix_upload first)");
    BSR_TRY(bsr_cuda_enter(D->ctx));
    double t0 = bsr_now();
    D->valid = 0;
    cudaStream_t st = D->stream;
    CU_TRY(cudaMemsetAsync(D->cnt, 0, 2 * sizeof(int), st));
    CU_TRY(cudaMemsetAsync(D->err, 0xff, sizeof(unsigned long long), st));
    const int n = D->n, T = level_threads(), bb = D->b * D->b;
    /* a frozen pattern has fill outside A: those blocks start at zero */
    if (D->frozen) {
        CU_TRY(cudaMemsetAsync(D->Lv, 0, (size_t)D->nL * bb * sizeof(double), st));
        CU_TRY(cudaMemsetAsync(D->Uv, 0, (size_t)D->nU * bb * sizeof(double), st));
    }
    /* A's values where they are: BSR, or the sliced copy where that is the
     * only one (read by A's row of each permuted row: perm, no matching) */
    const bsr_dev_matrix *dm = bsr_cuda_dmat(A);
    if (dm->bsr_gone && F->rsrc) BSR_TRY(bsr_cuda_matrix_bsr(D->ctx, A));
    const int sliced = dm->bsr_gone;
    const void *av = sliced ? dm->sval : dm->val;
    if (n > 0) {
        unsigned nb = (unsigned)((n + T - 1) / T);
        scale_fn[D->b - 1](D, nb, T, av, A->prec, dm->rowptr, sliced ? dm->sptr : NULL);
        CU_LAUNCHED("ilu0_scale");
    }
    unsigned long long key = ~0ull;
    CU_TRY(cudaMemcpyAsync(&key, D->err, sizeof key, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    if (key != ~0ull) return report(D, key, A);
    if (syncfree_rows(D->b) && n > 0) {   /* one launch, rows waiting for the rows they read */
        CU_TRY(cudaMemsetAsync(D->done, 0, ((size_t)n + 1) * sizeof(int), st));
        BSR_TRY(ilu0_tail_work(D));
        const int tail = D->ts < n;   /* then the tail's dense LU, and U's check */
        level_fn[D->b - 1](D, T, -1, n, F->pivot_rel, F->opt.strict_pivots, tail);
        CU_LAUNCHED("ilu0_syncfree");
        if (tail) {
            bsr_prof_mark_dev("device ILU: the rows, the dense tail's left of it");
            BSR_TRY(ilu0_tail_factor(D, F->pivot_rel, F->opt.strict_pivots));
            bsr_prof_mark_dev("device ILU: the dense tail's LU");
            level_fn[D->b - 1](D, T, -1, n, F->pivot_rel, F->opt.strict_pivots, 2);
            CU_LAUNCHED("ilu0_upper_finite");
            ilu0_tail_release(D);   /* (cudaFree waits for the kernels that use it) */
        }
    } else {
        for (int v = 0; v < D->nlevels; v++) {
            const int r0 = D->level_ptr[v], nr = D->level_ptr[v + 1] - r0;
            if (nr <= 0) continue;
            level_fn[D->b - 1](D, T, r0, nr, F->pivot_rel, F->opt.strict_pivots, 0);
            CU_LAUNCHED("ilu0_level");
        }
    }
    int cnt[2] = {0, 0};
    CU_TRY(cudaMemcpyAsync(&key, D->err, sizeof key, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(cnt, D->cnt, sizeof cnt, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    D->nreg = cnt[0];
    D->nfb = cnt[1];
    if (key != ~0ull) return report(D, key, A);
    D->factor_s = bsr_now() - t0;
    D->valid = 1;
    if (G && !D->bound) {   /* in place: the values are in G already */
        const double *Lv = D->Lv, *Uv = D->Uv;
        if (D->lmap && !D->composed) {   /* L, U without the second-order blocks: gathered out of the pattern */
            BSR_TRY(bsr_cuda_gather_blocks(D->stream, D->nLs, bb, D->lmap, Lv, D->Lg));
            BSR_TRY(bsr_cuda_gather_blocks(D->stream, D->nUs, bb, D->umap, Uv, D->Ug));
            Lv = D->Lg; Uv = D->Ug;
        }
        BSR_TRY(bsr_gpu_ilu_set_values_dev(G, Lv, Uv, D->dl));
    }
    return BSR_OK;
}

/* bsr_gpu_ilu0_download of a factorization in place: each factor's rows out
 * of the preconditioner's storage into the plan's layout (a temporary). */
static bsr_status download_in_place(const bsr_gpu_ilu0 *D, double *Lval, double *Uval, double *scale)
{
    const int bb = D->b * D->b, n = D->n;
    double *tmp = NULL;
    const size_t most = (size_t)(D->nL > D->nU ? D->nL : D->nU);
    CU_TRY(bsr_cu_malloc((void **)&tmp, (most + 1) * bb * sizeof(double)));
    cudaError_t e = cudaSuccess;
    for (int w = 0; w < 2 && e == cudaSuccess; w++) {
        double *h = w ? Uval : Lval;
        const size_t nb = (size_t)(w ? D->nU : D->nL);
        if (!h || !nb) continue;
        if (n) inplace_rows_out<<<(n + 255) / 256, 256, 0, D->stream>>>(n, bb, w ? D->Up : D->Lp, w ? D->Ust : D->Lst,
                                                                        w ? D->Uv : D->Lv, tmp);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpyAsync(h, tmp, nb * bb * sizeof(double), cudaMemcpyDeviceToHost, D->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(D->stream);
    }
    if (e == cudaSuccess && scale && n) e = cudaMemcpy(scale, D->dl, (size_t)n * bb * sizeof(double), cudaMemcpyDeviceToHost);
    bsr_cu_free(tmp);
    CU_TRY(e);
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_download(const bsr_gpu_ilu0 *D, double *Lval, double *Uval, double *scale)
{
    BSR_CHECK_ARG(D, "bsr_gpu_ilu0_download: NULL argument");
    BSR_CHECK_ARG(D->valid, "bsr_gpu_ilu0_download: the last factorization failed or none was done");
    BSR_TRY(bsr_cuda_enter(D->ctx));
    const size_t bb = (size_t)D->b * D->b;
    if (D->bound) return download_in_place(D, Lval, Uval, scale);
    const double *Lv = D->Lv, *Uv = D->Uv;
    double *g = NULL;   /* the gathered blocks, where D keeps none (composed) */
    if (D->lmap || D->umap) {
        double *Lg = D->Lg, *Ug = D->Ug;
        if (!Lg || !Ug) {
            CU_TRY(bsr_cu_malloc((void **)&g, ((size_t)D->nLs + D->nUs + 1) * bb * sizeof(double)));
            Lg = g; Ug = g + (size_t)D->nLs * bb;
        }
        bsr_status s = bsr_cuda_gather_blocks(D->stream, D->nLs, (int)bb, D->lmap, Lv, Lg);
        if (s == BSR_OK) s = bsr_cuda_gather_blocks(D->stream, D->nUs, (int)bb, D->umap, Uv, Ug);
        if (s == BSR_OK && cudaStreamSynchronize(D->stream) != cudaSuccess)
            s = bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu0_download: %s", cudaGetErrorString(cudaGetLastError()));
        if (s != BSR_OK) { bsr_cu_free(g); return s; }
        Lv = Lg; Uv = Ug;
    }
    cudaError_t e = cudaSuccess;
    if (Lval && D->nLs) e = cudaMemcpy(Lval, Lv, (size_t)D->nLs * bb * sizeof(double), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && Uval && D->nUs) e = cudaMemcpy(Uval, Uv, (size_t)D->nUs * bb * sizeof(double), cudaMemcpyDeviceToHost);
    bsr_cu_free(g);
    CU_TRY(e);
    if (scale && D->n) CU_TRY(cudaMemcpy(scale, D->dl, (size_t)D->n * bb * sizeof(double), cudaMemcpyDeviceToHost));
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_nest_rows(const bsr_gpu_ilu0 *D, int *rows)
{
    BSR_CHECK_ARG(D && rows, "bsr_gpu_ilu0_nest_rows: NULL argument");
    *rows = 0;
    if (!D->nest || !D->n) return BSR_OK;
    unsigned char *h = (unsigned char *)bsr_malloc((size_t)D->n, "nesting rows");
    if (!h) return BSR_ERR_NOMEM;
    bsr_cuda_enter(D->ctx);
    const cudaError_t e = cudaMemcpy(h, D->nest, (size_t)D->n, cudaMemcpyDeviceToHost);
    for (int k = 0; e == cudaSuccess && k < D->n; k++) *rows += h[k];
    free(h);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu0_nest_rows: %s", cudaGetErrorString(e));
    }
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_stats(const bsr_gpu_ilu0 *D, int *pivots_regularized, int *scaling_fallbacks,
                                         double *factor_s)
{
    BSR_CHECK_ARG(D, "bsr_gpu_ilu0_stats: NULL argument");
    if (pivots_regularized) *pivots_regularized = D->nreg;
    if (scaling_fallbacks) *scaling_fallbacks = D->nfb;
    if (factor_s) *factor_s = D->factor_s;
    return BSR_OK;
}
