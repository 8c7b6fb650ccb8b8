/* SPDX-License-Identifier: BSD-3-Clause */
/* The dense tail of a sync-free factorization without update lists: the
 * last S rows (ts = n - S) whose pattern from column ts on is complete, as
 * a complete LU's top separator is in nested-dissection order.  Row by row
 * in the sync-free launch, each such row would apply, one warp a row, the
 * updates of the K columns of its L left of ts to its S targets right of
 * ts (on coupled3d at 64k block rows, b = 5, a third of all the block
 * products), then the tail's own LU, a chain of S rows each waiting for
 * the one before, while they are the last rows left on the GPU.  Here the
 * launch takes the tail's rows only as far as column ts (their multipliers
 * left of ts, their targets left of ts), and the rest is dense work on the
 * tensor cores: T -= L_SK U_KS (cuBLAS DGEMM, K in chunks of 256
 * columns; L_SK is sparse, 13% at 64k block rows, and a chunk of the
 * columns, a subtree of the dissection, touches a part of the tail: where
 * less than half of T, the chunk's rows and columns only, its product then
 * subtracted at their places), then T's LU, recursive on its block
 * columns (a half, then the other half's rows of its pivots by DTRSM and
 * its rows below by DGEMM, then the other half; 8 block columns or fewer
 * one launch each, with the host's pivot rule).  The tail's sums are in
 * the dense order, not one after another: the factors then differ from the
 * host's in the last bits (the tests compare within 1e-12); the rest is as
 * before.  Where the ordering lifted the top of the elimination tree to
 * the end (bsr_order_options.lift: the top separator and the chains of
 * rows under it, the longest chains of the launch otherwise) and the
 * pattern is a complete factor's, the tail is those rows: its pattern has
 * zeros then (the second level's separators do not reach each other),
 * which T holds and its LU leaves zero.  Where the tail is small (S < 512
 * rows, BSR_ILU0_TAIL overrides, to test) or its workspace does not fit in
 * a quarter of the free memory, there is none (ts = n).  The workspace
 * (T, a chunk's products) is held during a factorization only; a later
 * factorization that finds no room for it goes without the tail, as do
 * those after it (the same factors up to the order of the tail's sums).
 * b <= 5 (the sync-free rows' sizes). */
#include "ilu0_gpu.cuh"
#include "blocklu.h"
#include <cublas_v2.h>
#include <cub/cub.cuh>
#include <stdlib.h>

/* Least rows of a tail worth its GEMM, the most of a complete one, and
 * the most scalar rows of a lifted one (T 4.8 GB, its LU 1e13 flops). */
#define TAIL_MIN 512
#define TAIL_MAX 4096
#define TAIL_SCALARS 24576
/* K columns a chunk of the GEMM's (fewer where K is small: at most a quarter of K). */
#define TAIL_CHUNK 256
/* Block columns a leaf of the tail's recursive LU (a launch each), and
 * the largest b. */
#define TAIL_LEAF 8
#define TAIL_B 5

/* cst[r] for row i = n0 + r: the first column c of a complete run c .. n-1
 * in row i's pattern (its L holds c .. i-1, its U i .. n-1), n when U is
 * not complete. */
__global__ void tail_start_kernel(int n, int n0, const int *__restrict__ Lp, const int *__restrict__ Lc,
                                  const int *__restrict__ Up, int *cst)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x, i = n0 + r;
    if (i >= n) return;
    if (Up[i + 1] - Up[i] != n - i) { cst[r] = n; return; }
    /* Lc ascending, distinct, below i: Lc[le-1-t] == i-1-t holds for t below
     * the run's length and for none after */
    const int le = Lp[i + 1], nl = le - Lp[i];
    int lo = 0, hi = nl;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (Lc[le - 1 - mid] == i - 1 - mid) lo = mid + 1; else hi = mid;
    }
    cst[r] = i - lo;
}

/* mark[j] = 1 for the columns j < ts of the tail's L (a warp a tail row). */
__global__ void tail_mark_kernel(int S, int ts, const int *__restrict__ Lp, const int *__restrict__ Lc, int *mark)
{
    const int r = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (r >= S) return;
    const int i = ts + r;
    for (int l = Lp[i] + lane; l < Lp[i + 1]; l += 32) {
        const int j = Lc[l];
        if (j < ts) mark[j] = 1;
    }
}

/* kcols[pos[j]] = j for the marked columns j < ts. */
__global__ void tail_cols_kernel(int ts, const int *__restrict__ mark, const int *__restrict__ pos, int *kcols)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ts && mark[j]) kcols[pos[j]] = j;
}

/* Block (row i, plan index x) where the factorization keeps it. */
__device__ __forceinline__ double *tail_blk(const bsr_gpu_ilu0 &D, int i, int x, int bb)
{
    return fblk_row(D.Lv, D.Uv, D.nL, x, D.Lst ? (long long)D.Lst[i] - D.Lp[i] : 0,
                    D.Ust ? (long long)D.Ust[i] - D.Up[i] : 0, bb);
}

/* Plan index of the tail's block (ts + r, ts + c) (ilu0_target over row
 * ts + r's whole pattern); -1 where the pattern has none (a lifted tail's
 * zeros: bsr_order_options.lift). */
__device__ __forceinline__ int tail_x(const bsr_gpu_ilu0 &D, int r, int c)
{
    const int i = D.ts + r;
    return ilu0_target(i, D.Lp[i] - 1, D.ts + c, D.Lp, D.Lc, D.Up, D.Uc, D.nL);
}

/* T (column-major, ld = S b) <-> the tail's blocks right of ts, a thread
 * a block (r, c).  out 0: into T (zero where the pattern has no block);
 * 1: back, the pivots from tD (inverted). */
__global__ void tail_T_kernel(bsr_gpu_ilu0 D, double *T, int out)
{
    const int b = D.b, bb = b * b, S = D.tS, ld = S * b;
    const int r = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (r >= S) return;
    const int x = tail_x(D, r, c);
    double *t = T + (size_t)r * b + (size_t)c * b * ld;
    if (x < 0) {
        if (!out)
            for (int a = 0; a < b; a++)
                for (int q = 0; q < b; q++) t[a + (size_t)q * ld] = 0.0;
        return;
    }
    double *blk = tail_blk(D, D.ts + r, x, bb);
    if (out) {
        const double *src = r == c ? D.tD + (size_t)r * bb : NULL;
        for (int a = 0; a < b; a++)
            for (int q = 0; q < b; q++) blk[a * b + q] = src ? src[a * b + q] : t[a + (size_t)q * ld];
    } else {
        for (int a = 0; a < b; a++)
            for (int q = 0; q < b; q++) t[a + (size_t)q * ld] = blk[a * b + q];
    }
}

/* For the chunks of w of the K columns: rm[q S + r] = 1 where tail row r's
 * L holds a column of chunk q (a warp a tail row), cm[q S + c] = 1 where
 * the U of one of chunk q's columns holds tail column c (a warp a K column). */
__global__ void tail_touch_kernel(bsr_gpu_ilu0 D, int S, int ts, int K, int w, unsigned char *rm, unsigned char *cm)
{
    const int t = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (t < S) {
        const int i = ts + t, lend = first_at_least(D.Lc, D.Lp[i], D.Lp[i + 1], ts);
        for (int l = D.Lp[i] + lane; l < lend; l += 32) rm[(size_t)(D.kpos[D.Lc[l]] / w) * S + t] = 1;
    } else if (t < S + K) {
        const int q = t - S, j = D.kcols[q];
        for (int p = first_at_least(D.Uc, D.Up[j], D.Up[j + 1], ts) + lane; p < D.Up[j + 1]; p += 32)
            cm[(size_t)(q / w) * S + D.Uc[p] - ts] = 1;
    }
}

/* The chunk of the K columns q0 .. q0+w into zeroed arrays: its L (nr b x w b,
 * ld nr b; a warp a row of the chunk's, its multipliers in the chunk's
 * columns) and its U (w b x nc b, ld w b; a warp a K column's row, its
 * blocks from ts on at their place among the chunk's columns).  A full
 * chunk's rows and columns are all the tail's (rl, cl NULL). */
__global__ void tail_chunk_kernel(bsr_gpu_ilu0 D, int q0, int w, const int *__restrict__ rl, int nr,
                                  const int *__restrict__ cl, int nc, double *Lch, double *Uch)
{
    const int b = D.b, bb = b * b, ts = D.ts, ldl = nr * b, ldu = w * b;
    const int t = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (t < nr) {
        const int i = ts + (rl ? rl[t] : t), lend = first_at_least(D.Lc, D.Lp[i], D.Lp[i + 1], ts);
        const int lbeg = first_at_least(D.Lc, D.Lp[i], lend, D.kcols[q0]);
        for (int l = lbeg + lane; l < lend; l += 32) {
            const int q = D.kpos[D.Lc[l]] - q0;
            if (q >= w) break;
            const double *blk = tail_blk(D, i, l, bb);
            for (int a = 0; a < b; a++)
                for (int c = 0; c < b; c++) Lch[(size_t)(t * b + a) + (size_t)(q * b + c) * ldl] = blk[a * b + c];
        }
    } else if (t < nr + w) {
        const int q = t - nr, j = D.kcols[q0 + q];
        for (int p = first_at_least(D.Uc, D.Up[j], D.Up[j + 1], ts) + lane; p < D.Up[j + 1]; p += 32) {
            const int c0 = cl ? first_at_least(cl, 0, nc, D.Uc[p] - ts) : D.Uc[p] - ts;   /* (it is there) */
            const double *blk = tail_blk(D, j, D.nL + p, bb);
            for (int a = 0; a < b; a++)
                for (int c = 0; c < b; c++) Uch[(size_t)(q * b + a) + (size_t)(c0 * b + c) * ldu] = blk[a * b + c];
        }
    }
}

/* T's blocks (rl[t], cl[u]) -= C's (t, u) (C: nr b x nc b, column-major),
 * a thread a scalar row of C and a block column. */
__global__ void tail_scatter_kernel(int S, int b, const int *__restrict__ rl, int nr, const int *__restrict__ cl,
                                    const double *__restrict__ C, double *T)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x, u = blockIdx.y;
    if (row >= nr * b) return;
    const size_t ld = (size_t)S * b, ldc = (size_t)nr * b;
    double *t = T + (size_t)rl[row / b] * b + row % b + (size_t)cl[u] * b * ld;
    const double *c = C + row + (size_t)u * b * ldc;
    for (int q = 0; q < b; q++) t[q * ld] -= c[q * ldc];
}

/* T and a chunk's L, U and compact product (sizes from the plan: tS,
 * tLn, tUn, tCn), where not allocated already.  Only a factorization uses
 * them: ilu0_tail_release gives them back after it, as they are much of
 * the device memory of a complete factor (10.7 GB held after the setup at
 * 64k block rows, b = 5, with them; 5.9 GB without). */
static cudaError_t tail_work_alloc(bsr_gpu_ilu0 *D)
{
    const size_t sb = (size_t)D->tS * D->b;
    cudaError_t e = D->tT ? cudaSuccess : bsr_cu_malloc((void **)&D->tT, sb * sb * sizeof(double));
    if (e == cudaSuccess && D->tLn && !D->tL) e = bsr_cu_malloc((void **)&D->tL, D->tLn * sizeof(double));
    if (e == cudaSuccess && D->tUn && !D->tU) e = bsr_cu_malloc((void **)&D->tU, D->tUn * sizeof(double));
    if (e == cudaSuccess && D->tCn && !D->tC) e = bsr_cu_malloc((void **)&D->tC, D->tCn * sizeof(double));
    return e;
}

void ilu0_tail_release(bsr_gpu_ilu0 *D)
{
    bsr_cu_free(D->tT); bsr_cu_free(D->tL); bsr_cu_free(D->tU); bsr_cu_free(D->tC);
    D->tT = D->tL = D->tU = D->tC = NULL;
}

bsr_status ilu0_tail_work(bsr_gpu_ilu0 *D)
{
    if (D->ts >= D->n || tail_work_alloc(D) == cudaSuccess) return BSR_OK;
    cudaGetLastError();   /* no room now: the rows the tail had go to the launch */
    ilu0_tail_free(D);
    return BSR_OK;
}

void ilu0_tail_free(bsr_gpu_ilu0 *D)
{
    bsr_cu_free(D->kpos); bsr_cu_free(D->kcols); bsr_cu_free(D->tRl); bsr_cu_free(D->tCl);
    ilu0_tail_release(D);
    bsr_cu_free(D->tD);
    free(D->tch);
    D->kpos = D->kcols = D->tRl = D->tCl = NULL;
    D->tch = NULL;
    D->tq = 0;
    D->tD = NULL;
    D->tLn = D->tUn = D->tCn = 0;
    if (D->blas) cublasDestroy((cublasHandle_t)D->blas);
    D->blas = NULL;
    D->ts = D->n;
    D->tS = D->tK = 0;
}

/* The tail's size S from the rows' complete runs (the most rows, up to
 * TAIL_MAX, all of whose runs start at or left of n - S). */
static bsr_status tail_size(const bsr_gpu_ilu0 *D, int *S)
{
    const int n = D->n, m = n < TAIL_MAX ? n : TAIL_MAX, n0 = n - m;
    *S = 0;
    if (m <= 0) return BSR_OK;
    int *dc = NULL, *hc = (int *)bsr_malloc((size_t)m * sizeof(int), "dense tail");
    if (!hc) return BSR_ERR_NOMEM;
    cudaError_t e = bsr_cu_malloc((void **)&dc, (size_t)m * sizeof(int));
    if (e == cudaSuccess) {
        tail_start_kernel<<<(m + 255) / 256, 256, 0, D->stream>>>(n, n0, D->Lp, D->Lc, D->Up, dc);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(hc, dc, (size_t)m * sizeof(int), cudaMemcpyDeviceToHost, D->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(D->stream);
    bsr_cu_free(dc);
    if (e == cudaSuccess) {
        int most = 0;   /* the largest run start of the rows n - s .. n - 1 */
        for (int s = 1; s <= m; s++) {
            const int c = hc[m - s];
            if (c > most) most = c;
            if (most > n - s) break;
            *S = s;
        }
    }
    free(hc);
    CU_TRY(e);
    return BSR_OK;
}

/* The chunks of w of the K columns, each with the tail's rows and columns
 * it touches (tail_touch_kernel), their lists on the device; a chunk whose
 * product would cover more than half of T is full.  *lm, *um, *cm: the
 * largest chunk's L, U and compact product, in doubles. */
static cudaError_t tail_chunks(bsr_gpu_ilu0 *D, int S, int ts, int K, int w, size_t *lm, size_t *um, size_t *cm)
{
    const int nq = (K + w - 1) / w, b = D->b;
    const size_t m = (size_t)nq * S;
    *lm = *um = *cm = 0;
    if (!nq) return cudaSuccess;
    unsigned char *dm = NULL, *hm = (unsigned char *)malloc(2 * m);
    D->tch = (struct ilu0_tail_chunk *)calloc((size_t)nq, sizeof *D->tch);
    int *hl = (int *)malloc(2 * m * sizeof(int));
    cudaError_t e = hm && hl && D->tch ? bsr_cu_malloc((void **)&dm, 2 * m) : cudaErrorMemoryAllocation;
    if (e == cudaSuccess) e = cudaMemsetAsync(dm, 0, 2 * m, D->stream);
    if (e == cudaSuccess) {
        tail_touch_kernel<<<(unsigned)(((long long)(S + K) * 32 + 255) / 256), 256, 0, D->stream>>>(*D, S, ts, K, w, dm,
                                                                                                     dm + m);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(hm, dm, 2 * m, cudaMemcpyDeviceToHost, D->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(D->stream);
    bsr_cu_free(dm);
    size_t nl[2] = {0, 0};   /* the rows' list in hl[0 ..], the columns' in hl[m ..] */
    for (int q = 0; q < nq && e == cudaSuccess; q++) {
        struct ilu0_tail_chunk *c = &D->tch[q];
        const unsigned char *r = hm + (size_t)q * S, *u = hm + m + (size_t)q * S;
        c->r0 = (int)nl[0];
        c->c0 = (int)nl[1];
        for (int x = 0; x < S; x++) {
            if (r[x]) hl[nl[0]++] = x;
            if (u[x]) hl[m + nl[1]++] = x;
        }
        c->nr = (int)nl[0] - c->r0;
        c->nc = (int)nl[1] - c->c0;
        c->full = (double)c->nr * c->nc > 0.5 * S * S;
        if (c->full) { nl[0] = (size_t)c->r0; nl[1] = (size_t)c->c0; c->nr = c->nc = S; }
        const size_t bw = (size_t)w * b;
        if ((size_t)c->nr * b * bw > *lm) *lm = (size_t)c->nr * b * bw;
        if ((size_t)c->nc * b * bw > *um) *um = (size_t)c->nc * b * bw;
        if (!c->full && (size_t)c->nr * c->nc * b * b > *cm) *cm = (size_t)c->nr * c->nc * b * b;
    }
    for (int k = 0; k < 2 && e == cudaSuccess; k++) {
        int **dl = k ? &D->tCl : &D->tRl;
        e = bsr_cu_malloc((void **)dl, (nl[k] + 1) * sizeof(int));
        if (e == cudaSuccess && nl[k])
            e = cudaMemcpyAsync(*dl, hl + k * m, nl[k] * sizeof(int), cudaMemcpyHostToDevice, D->stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(D->stream);
    D->tq = nq;
    free(hm);
    free(hl);
    return e;
}

/* The rows an ordering lifted to the end (bsr_order_options.lift) where
 * F's pattern is closed under fill (a complete factor: nothing dropped, no
 * cap; a block it has not is zero in the LU), so that T's dense LU leaves
 * those blocks zero; else 0. */
static int tail_lifted(const bsr_ilu *F)
{
    const int closed = F->mode == 1 && F->t1 == 0 && F->t2 == 0 && F->opt.cap == BSR_ILU_CAP_NONE && !(F->opt.fill > 0);
    return closed && F->ord ? F->ord->dense_rows : 0;
}

bsr_status ilu0_tail_plan(bsr_gpu_ilu0 *D)
{
    const char *env = getenv("BSR_ILU0_TAIL");
    const int least = env && *env ? atoi(env) : TAIL_MIN;
    D->ts = D->n;
    int S = 0;
    BSR_TRY(tail_size(D, &S));
    /* a lifted tail: longer, its pattern not complete (zeros in T) */
    const int lifted = tail_lifted(D->F);
    if (lifted > S && lifted <= D->n && (long long)lifted * D->b <= TAIL_SCALARS) S = lifted;
    if (least <= 0 || S < least) return BSR_OK;
    const int n = D->n, ts = n - S, b = D->b;
    /* the workspace: T, a chunk's L, U and product, within a quarter of the free memory */
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) { cudaGetLastError(); return BSR_OK; }
    const size_t sb = (size_t)S * b, tbytes = sb * sb * sizeof(double), room = fr / 4;
    if (tbytes >= room) return BSR_OK;
    int *mark = NULL, *pos = NULL;
    void *tmp = NULL;
    size_t tb = 0;
    cudaError_t e = bsr_cu_malloc((void **)&mark, ((size_t)ts + 1) * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&pos, ((size_t)ts + 1) * sizeof(int));
    if (e == cudaSuccess) e = cudaMemsetAsync(mark, 0, ((size_t)ts + 1) * sizeof(int), D->stream);
    if (e == cudaSuccess) {
        tail_mark_kernel<<<(unsigned)(((long long)S * 32 + 255) / 256), 256, 0, D->stream>>>(S, ts, D->Lp, D->Lc, mark);
        e = cudaGetLastError();
    }
    /* pos = exclusive sum of mark over ts + 1 entries: pos[ts] = K */
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(NULL, tb, mark, pos, ts + 1, D->stream);
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&tmp, tb ? tb : 1);
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, tb, mark, pos, ts + 1, D->stream);
    int K = 0;
    if (e == cudaSuccess) e = cudaMemcpyAsync(&K, pos + ts, sizeof(int), cudaMemcpyDeviceToHost, D->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(D->stream);
    bsr_cu_free(tmp);
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->kcols, ((size_t)K + 1) * sizeof(int));
    if (e == cudaSuccess && ts > 0) {
        tail_cols_kernel<<<(ts + 255) / 256, 256, 0, D->stream>>>(ts, mark, pos, D->kcols);
        e = cudaGetLastError();
    }
    bsr_cu_free(mark);
    D->kpos = pos;
    /* the chunks: TAIL_CHUNK columns, fewer where K is small (several chunks, as tested) */
    int w = K / 4 < TAIL_CHUNK ? K / 4 : TAIL_CHUNK;
    if (w < 1) w = 1;
    size_t lm = 0, um = 0, cm = 0;
    if (e == cudaSuccess) e = tail_chunks(D, S, ts, K, w, &lm, &um, &cm);
    if (e == cudaSuccess && tbytes + (lm + um + cm) * sizeof(double) >= room) e = cudaErrorMemoryAllocation;
    D->tLn = lm;
    D->tUn = um;
    D->tCn = cm;
    D->tS = S;
    if (e == cudaSuccess) e = tail_work_alloc(D);
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->tD, sb * b * sizeof(double));
    cublasHandle_t h = NULL;
    if (e == cudaSuccess && cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        D->blas = h;
        if (cublasSetStream(h, D->stream) != CUBLAS_STATUS_SUCCESS) e = cudaErrorUnknown;
    } else if (e == cudaSuccess) {
        e = cudaErrorUnknown;
    }
    if (e != cudaSuccess) {   /* no tail: the one launch as before */
        cudaGetLastError();
        ilu0_tail_free(D);
        return BSR_OK;
    }
    D->ts = ts;
    D->tK = K;
    D->tw = w;
    return BSR_OK;
}

/* Step r of the tail's LU, inside the leaf whose block columns end at
 * pe: row ts + r's pivot block checked, factored and inverted with the
 * host's rule (warp_row_end's; every CUDA block alike, the first one keeps
 * it in tD and keys the row's failures), then a thread a scalar row of the
 * tail's rows below r: its row of the multiplier T_tr inv(U_rr), and its
 * rows of the leaf's blocks right of r updated by it.  Row r's blocks are
 * final: this step writes only rows below it. */
__global__ void tail_step_kernel(bsr_gpu_ilu0 D, int r, int pe, double pivot_rel, int strict)
{
    __shared__ double inv[TAIL_B * TAIL_B];
    const int b = D.b, bb = b * b, S = D.tS, ld = S * b;
    double *T = D.tT;
    const double *d = T + (size_t)r * b + (size_t)r * b * ld;
    if (threadIdx.x == 0) {
        const int i = D.ts + r, first = blockIdx.x == 0;
        double lu[TAIL_B * TAIL_B], v[TAIL_B * TAIL_B];
        int piv[TAIL_B], fin = 1;
        for (int a = 0; a < b; a++)
            for (int q = 0; q < b; q++) { lu[a * b + q] = v[a * b + q] = d[a + (size_t)q * ld]; fin &= isfinite(v[a * b + q]) != 0; }
        if (!fin) {
            if (first) fail(D.err, i, E_PIV, 0);
        } else {
            const int nreg = bsr_blklu_factor(b, lu, piv, pivot_rel * D.rowref[i], 0);
            if (nreg && strict) {
                if (first) fail(D.err, i, E_STRICT, (unsigned)nreg);
            } else {
                if (nreg && first) atomicAdd(&D.cnt[0], 1);
                bsr_blklu_inverse(b, lu, piv, v);
                for (int q = 0; q < bb; q++)
                    if (!isfinite(v[q])) { if (first) fail(D.err, i, E_INV, 0); break; }
            }
        }
        for (int q = 0; q < bb; q++) inv[q] = v[q];   /* a failed pivot stays as it was, as in the rows */
        if (first) for (int q = 0; q < bb; q++) D.tD[(size_t)r * bb + q] = v[q];
    }
    __syncthreads();
    const long long row = (long long)(r + 1) * b + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= (long long)S * b) return;
    const int t = (int)(row / b);
    double m[TAIL_B], *x = T + row + (size_t)r * b * ld;
    int fin = 1;
    for (int q = 0; q < b; q++) {
        double acc = 0.0;
        for (int k = 0; k < b; k++) acc += x[(size_t)k * ld] * inv[k * b + q];
        m[q] = acc;
        fin &= isfinite(acc) != 0;
    }
    if (!fin) {   /* (a block the pattern has not is zero, as its factors are) */
        const int x = tail_x(D, t, r);
        if (x >= 0) fail(D.err, D.ts + t, E_LBLK, (unsigned)x);
    }
    for (int q = 0; q < b; q++) x[(size_t)q * ld] = m[q];
    for (int c = r + 1; c < pe; c++) {
        double *y = T + row + (size_t)c * b * ld;
        const double *u = T + (size_t)r * b + (size_t)c * b * ld;
        for (int q = 0; q < b; q++) {
            double acc = y[(size_t)q * ld];
            for (int k = 0; k < b; k++) acc -= m[k] * u[k + (size_t)q * ld];
            y[(size_t)q * ld] = acc;
        }
    }
}

/* The strictly lower parts of T's diagonal blocks p0 .. p0+np zeroed, once
 * their pivots are inverted in tD: T's lower triangle there is then the
 * block unit lower L that DTRSM reads (unit diagonal implied). */
__global__ void tail_unit_diag_kernel(bsr_gpu_ilu0 D, int p0, int np)
{
    const int b = D.b, ld = D.tS * b, e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= np * b * b) return;
    const int r = p0 + e / (b * b), a = e / b % b, q = e % b;
    if (a > q) D.tT[(size_t)r * b + a + ((size_t)r * b + q) * ld] = 0.0;
}

/* T's block columns p0 .. p0+np factored (their rows from p0 on, the
 * matrix right of them untouched): recursively, the left half, then the
 * right half's rows of the left half's pivots by DTRSM, its rows below by
 * DGEMM, then the right half; TAIL_LEAF block columns or fewer by one
 * launch a block column. */
static bsr_status tail_lu(const bsr_gpu_ilu0 *D, int p0, int np, double pivot_rel, int strict)
{
    const int b = D->b, S = D->tS, ld = S * b;
    cudaStream_t st = D->stream;
    if (np <= TAIL_LEAF) {
        for (int r = p0; r < p0 + np; r++) {
            const long long rows = (long long)(S - r - 1) * b;
            tail_step_kernel<<<(unsigned)(rows > 0 ? (rows + 127) / 128 : 1), 128, 0, st>>>(*D, r, p0 + np, pivot_rel,
                                                                                           strict);
            CU_LAUNCHED("tail_step_kernel");
        }
        tail_unit_diag_kernel<<<(unsigned)((np * b * b + 127) / 128), 128, 0, st>>>(*D, p0, np);
        CU_LAUNCHED("tail_unit_diag_kernel");
        return BSR_OK;
    }
    const int h = np / 2, m = (S - p0 - h) * b;
    BSR_TRY(tail_lu(D, p0, h, pivot_rel, strict));
    double *T = D->tT, *U12 = T + (size_t)p0 * b + (size_t)(p0 + h) * b * ld;
    const double minus = -1.0, one = 1.0;
    cublasHandle_t hb = (cublasHandle_t)D->blas;
    cublasStatus_t cs = cublasDtrsm(hb, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, h * b,
                                    (np - h) * b, &one, T + (size_t)p0 * b + (size_t)p0 * b * ld, ld, U12, ld);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, m, (np - h) * b, h * b, &minus,
                         T + (size_t)(p0 + h) * b + (size_t)p0 * b * ld, ld, U12, ld, &one,
                         T + (size_t)(p0 + h) * b + (size_t)(p0 + h) * b * ld, ld);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return bsr_error(BSR_ERR_CUDA, "ILU: the dense tail's LU (block columns %d .. %d of %d, cublasDtrsm / "
                         "cublasDgemm) failed: status %d", p0, p0 + np, S, (int)cs);
    return tail_lu(D, p0 + h, np - h, pivot_rel, strict);
}

/* The dense tail after the sync-free launch: T gathered, the updates from
 * the K columns left of it by GEMM, T's recursive LU, T scattered back
 * with its inverted pivots.  Failures are keyed as the rows key them. */
bsr_status ilu0_tail_factor(const bsr_gpu_ilu0 *D, double pivot_rel, int strict)
{
    const int b = D->b, S = D->tS, ld = S * b;
    cudaStream_t st = D->stream;
    cublasHandle_t h = (cublasHandle_t)D->blas;
    const dim3 grid((unsigned)((S + 127) / 128), (unsigned)S);
    tail_T_kernel<<<grid, 128, 0, st>>>(*D, D->tT, 0);
    CU_LAUNCHED("tail_T_kernel (gather)");
    const double minus = -1.0, one = 1.0, zero = 0.0;
    for (int q = 0; q < D->tq; q++) {   /* T -= L_SK U_KS, a chunk of the K columns at a time */
        const struct ilu0_tail_chunk *c = &D->tch[q];
        const int q0 = q * D->tw, w = D->tK - q0 < D->tw ? D->tK - q0 : D->tw, nr = c->nr, nc = c->nc;
        if (!nr || !nc) continue;
        const int *rl = c->full ? NULL : D->tRl + c->r0, *cl = c->full ? NULL : D->tCl + c->c0;
        CU_TRY(cudaMemsetAsync(D->tL, 0, (size_t)nr * b * w * b * sizeof(double), st));
        CU_TRY(cudaMemsetAsync(D->tU, 0, (size_t)nc * b * w * b * sizeof(double), st));
        tail_chunk_kernel<<<(unsigned)(((long long)(nr + w) * 32 + 255) / 256), 256, 0, st>>>(*D, q0, w, rl, nr, cl, nc,
                                                                                              D->tL, D->tU);
        CU_LAUNCHED("tail_chunk_kernel");
        cublasStatus_t cs;
        if (c->full) {
            cs = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ld, ld, w * b, &minus, D->tL, ld, D->tU, w * b, &one, D->tT, ld);
        } else {
            cs = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, nr * b, nc * b, w * b, &one, D->tL, nr * b, D->tU, w * b, &zero,
                             D->tC, nr * b);
            if (cs == CUBLAS_STATUS_SUCCESS) {
                tail_scatter_kernel<<<dim3((unsigned)((nr * b + 127) / 128), (unsigned)nc), 128, 0, st>>>(S, b, rl, nr, cl,
                                                                                                         D->tC, D->tT);
                CU_LAUNCHED("tail_scatter_kernel");
            }
        }
        if (cs != CUBLAS_STATUS_SUCCESS)
            return bsr_error(BSR_ERR_CUDA, "ILU: the dense tail's GEMM (cublasDgemm, chunk %d of %d: %d x %d x %d) failed: "
                             "status %d", q, D->tq, nr * b, nc * b, w * b, (int)cs);
    }
    bsr_prof_mark_dev("device ILU: the dense tail's updates from the columns left of it");
    BSR_TRY(tail_lu(D, 0, S, pivot_rel, strict));
    tail_T_kernel<<<grid, 128, 0, st>>>(*D, D->tT, 1);
    CU_LAUNCHED("tail_T_kernel (scatter)");
    return BSR_OK;
}

extern "C" int bsr_gpu_ilu0_tail_rows(const bsr_gpu_ilu0 *D) { return D && D->ts < D->n ? D->tS : 0; }
