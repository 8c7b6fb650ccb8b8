/* SPDX-License-Identifier: BSD-3-Clause */
/* The dense tail of a sync-free factorization without update lists: the
 * last S rows (ts = n - S) whose pattern from column ts on is complete, as
 * a complete LU's top separator is in nested-dissection order.  In the one
 * sync-free launch every such row applies, one warp a row, the updates of
 * the K columns of its L left of ts to its S targets right of ts: on
 * coupled3d at 64k block rows (b = 5) a third of all the block products,
 * each loading and storing its target, while the tail's rows are the last
 * ones left on the GPU.  Here those updates are one dense product on the
 * tensor cores instead, T -= L_SK U_KS (cuBLAS DGEMM, K in chunks), between
 * two launches of the rows (ilu0_syncfree_fly's parts): part 1 factors the
 * rows left of ts and takes the tail's rows as far as column ts (their
 * multipliers left of ts, their targets left of ts only), part 2 the tail's
 * rows from column ts on, pivots included.  The tail's products from the K
 * columns are summed in GEMM's order, not one after another: the factors
 * then differ from the host's in the last bits (the tests compare within
 * 1e-12); the rest is as before.  Where the tail is small (S < 512 rows,
 * BSR_ILU0_TAIL overrides, to test) or its workspace does not fit in a
 * quarter of the free memory, there is none (ts = n). */
#include "ilu0_gpu.cuh"
#include <cublas_v2.h>
#include <cub/cub.cuh>
#include <stdlib.h>

/* Least rows of a tail worth its GEMM, and the most it takes. */
#define TAIL_MIN 512
#define TAIL_MAX 4096
/* Bytes of each chunk of L_SK and U_KS (the GEMM's K in chunks of their width). */
#define TAIL_CHUNK ((size_t)1 << 30)

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

/* kcols[pos[j]] = j for the marked columns j < ts; rows[r] = ts + r. */
__global__ void tail_cols_kernel(int ts, int S, const int *__restrict__ mark, const int *__restrict__ pos, int *kcols,
                                 int *rows)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ts && mark[j]) kcols[pos[j]] = j;
    if (j < S) rows[j] = ts + j;
}

/* Block (row i, plan index x) where the factorization keeps it (fblk_row). */
__device__ __forceinline__ double *tail_blk(const bsr_gpu_ilu0 &D, int i, long long x, int bb)
{
    if (x < D.nL) return D.Lv + (size_t)(x + (D.Lst ? (long long)D.Lst[i] - D.Lp[i] : 0)) * bb;
    return D.Uv + (size_t)(x - D.nL + (D.Ust ? (long long)D.Ust[i] - D.Up[i] : 0)) * bb;
}

/* T (column-major, ld = S b) <-> the tail's blocks right of ts: block
 * (ts + r, ts + c) is L's (the row's last r - c lower blocks) for c < r,
 * else U's (pivot first).  out 0: into T, 1: back. */
__global__ void tail_T_kernel(bsr_gpu_ilu0 D, double *T, int out)
{
    const int b = D.b, bb = b * b, S = D.tS, ld = S * b;
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long long)ld * ld) return;
    const int row = (int)(e % ld), col = (int)(e / ld), r = row / b, c = col / b, i = D.ts + r;
    const long long x = c < r ? (long long)D.Lp[i + 1] - (r - c) : (long long)D.nL + D.Up[i] + (c - r);
    double *blk = tail_blk(D, i, x, bb) + (row % b) * b + col % b;
    if (out) *blk = T[e];
    else T[e] = *blk;
}

/* The chunk q0 .. q0+w of the K columns: L_SK's (S b x w b, ld S b; a warp
 * a tail row, its multipliers left of ts) and U_KS's (w b x S b, ld w b; a
 * warp a K column's row, its blocks from ts on) into zeroed arrays. */
__global__ void tail_chunk_kernel(bsr_gpu_ilu0 D, int q0, int w, double *Lch, double *Uch)
{
    const int b = D.b, bb = b * b, S = D.tS, ts = D.ts, ldl = S * b, ldu = w * b;
    const int t = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (t < S) {
        const int i = ts + t, lend = first_at_least(D.Lc, D.Lp[i], D.Lp[i + 1], ts);
        const int lbeg = first_at_least(D.Lc, D.Lp[i], lend, D.kcols[q0]);
        for (int l = lbeg + lane; l < lend; l += 32) {
            const int q = D.kpos[D.Lc[l]] - q0;
            if (q >= w) break;
            const double *blk = tail_blk(D, i, l, bb);
            for (int a = 0; a < b; a++)
                for (int c = 0; c < b; c++) Lch[(size_t)(t * b + a) + (size_t)(q * b + c) * ldl] = blk[a * b + c];
        }
    } else if (t < S + w) {
        const int q = t - S, j = D.kcols[q0 + q];
        for (int p = first_at_least(D.Uc, D.Up[j], D.Up[j + 1], ts) + lane; p < D.Up[j + 1]; p += 32) {
            const int c0 = D.Uc[p] - ts;
            const double *blk = tail_blk(D, j, (long long)D.nL + p, bb);
            for (int a = 0; a < b; a++)
                for (int c = 0; c < b; c++) Uch[(size_t)(q * b + a) + (size_t)(c0 * b + c) * ldu] = blk[a * b + c];
        }
    }
}

void ilu0_tail_free(bsr_gpu_ilu0 *D)
{
    bsr_cu_free(D->tail_rows); bsr_cu_free(D->kpos); bsr_cu_free(D->kcols);
    bsr_cu_free(D->tT); bsr_cu_free(D->tL); bsr_cu_free(D->tU);
    D->tail_rows = D->kpos = D->kcols = NULL;
    D->tT = D->tL = D->tU = NULL;
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

bsr_status ilu0_tail_plan(bsr_gpu_ilu0 *D)
{
    const char *env = getenv("BSR_ILU0_TAIL");
    const int least = env && *env ? atoi(env) : TAIL_MIN;
    D->ts = D->n;
    int S = 0;
    BSR_TRY(tail_size(D, &S));
    if (least <= 0 || S < least) return BSR_OK;
    const int n = D->n, ts = n - S, b = D->b;
    /* the workspace: T, and chunks of L_SK and U_KS (TAIL_CHUNK bytes each
     * at most), within a quarter of the free memory */
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) { cudaGetLastError(); return BSR_OK; }
    const size_t sb = (size_t)S * b, tbytes = sb * sb * sizeof(double), room = fr / 4;
    if (tbytes >= room) return BSR_OK;
    size_t w = (room - tbytes) / (2 * sb * b * sizeof(double));
    if (w > TAIL_CHUNK / (sb * b * sizeof(double))) w = TAIL_CHUNK / (sb * b * sizeof(double));
    if (w < 64) return BSR_OK;
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
    if (w > (size_t)K) w = (size_t)K;
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->kcols, ((size_t)K + 1) * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->tail_rows, (size_t)S * sizeof(int));
    if (e == cudaSuccess) {
        const int m = ts > S ? ts : S;
        tail_cols_kernel<<<(m + 255) / 256, 256, 0, D->stream>>>(ts, S, mark, pos, D->kcols, D->tail_rows);
        e = cudaGetLastError();
    }
    bsr_cu_free(mark);
    D->kpos = pos;
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&D->tT, tbytes);
    if (e == cudaSuccess && w) e = bsr_cu_malloc((void **)&D->tL, sb * w * b * sizeof(double));
    if (e == cudaSuccess && w) e = bsr_cu_malloc((void **)&D->tU, sb * w * b * sizeof(double));
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
    D->tS = S;
    D->tK = K;
    D->tw = (int)w;
    return BSR_OK;
}

bsr_status ilu0_tail_schur(const bsr_gpu_ilu0 *D)
{
    const int b = D->b, S = D->tS, ld = S * b;
    const long long nT = (long long)ld * ld;
    cudaStream_t st = D->stream;
    tail_T_kernel<<<(unsigned)((nT + 255) / 256), 256, 0, st>>>(*D, D->tT, 0);
    CU_LAUNCHED("tail_T_kernel (gather)");
    const double minus = -1.0, one = 1.0;
    for (int q0 = 0; q0 < D->tK; q0 += D->tw) {
        const int w = D->tK - q0 < D->tw ? D->tK - q0 : D->tw;
        CU_TRY(cudaMemsetAsync(D->tL, 0, (size_t)ld * w * b * sizeof(double), st));
        CU_TRY(cudaMemsetAsync(D->tU, 0, (size_t)ld * w * b * sizeof(double), st));
        tail_chunk_kernel<<<(unsigned)(((long long)(S + w) * 32 + 255) / 256), 256, 0, st>>>(*D, q0, w, D->tL, D->tU);
        CU_LAUNCHED("tail_chunk_kernel");
        const cublasStatus_t cs = cublasDgemm((cublasHandle_t)D->blas, CUBLAS_OP_N, CUBLAS_OP_N, ld, ld, w * b, &minus,
                                              D->tL, ld, D->tU, w * b, &one, D->tT, ld);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return bsr_error(BSR_ERR_CUDA, "ILU: the dense tail's GEMM (cublasDgemm, %d x %d x %d) failed: status %d", ld,
                             ld, w * b, (int)cs);
    }
    tail_T_kernel<<<(unsigned)((nT + 255) / 256), 256, 0, st>>>(*D, D->tT, 1);
    CU_LAUNCHED("tail_T_kernel (scatter)");
    return BSR_OK;
}

extern "C" int bsr_gpu_ilu0_tail_rows(const bsr_gpu_ilu0 *D) { return D && D->ts < D->n ? D->tS : 0; }
