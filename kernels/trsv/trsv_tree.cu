/* SPDX-License-Identifier: BSD-3-Clause */
/* Block triangular solves over the nested-dissection tree (the study
 * kernels P21-P24): the nodes of one tree level are independent, one CUDA
 * block per node, the node's own rows solved one after another (lower: leaves
 * first and rows ascending; upper: root first and rows descending).
 *  P21: one thread does everything;  P22: b threads, one per row of the block;
 *  P23: 32 threads, one per block of the row (looping);  P24: P22 x P23.
 * Partial sums are combined in a fixed order: deterministic. */
#include "trsv_cuda.h"
#include "trsv_row.cuh"

#define P23_THREADS 32

/* y_i = D sm (upper) by the threads of the block; sm holds x_i - sum. */
template <int B, typename TF, typename TV>
__device__ __forceinline__ void apply_pivot(const TF *D, const TV *sm, TV *yi, int k, int t, int nt)
{
    for (int o = t; o < B * k; o += nt) {
        const int r = o / k, j = o - r * k;
        TV v = 0;
#pragma unroll
        for (int c = 0; c < B; c++) v += (TV)D[r * B + c] * sm[c * k + j];
        yi[o] = v;
    }
}

/* Row i of the node, q-th in solve order. */
__device__ __forceinline__ int node_row(int a, int e, int q, int upper)
{
    return upper ? e - 1 - q : a + q;
}

/* The rows of this CUDA block's node. */
__device__ __forceinline__ int node_rows(const int *ranges) { return ranges[2 * blockIdx.x + 1] - ranges[2 * blockIdx.x]; }

/* Row *i, q-th of this CUDA block's node in solve order: its blocks [*s0, *s1)
 * and its inverted pivot (upper; row_range). */
template <int B, typename TF>
__device__ __forceinline__ const TF *node_step(const int *ranges, int upper, const int *rstart, const int *rend,
                                               const TF *val, int q, int *i, int *s0, int *s1)
{
    *i = node_row(ranges[2 * blockIdx.x], ranges[2 * blockIdx.x + 1], q, upper);
    return row_range<B, TF>(*i, upper, rstart, rend, val, s0, s1);
}

/* The arguments of every tree kernel: the nodes' row ranges, the direction,
 * the factor's rows (rstart/rend into colind/val), x, y and k columns. */
#define TREE_ARGS                                                                                  \
    const int *__restrict__ ranges, int upper, const int *__restrict__ rstart, const int *__restrict__ rend, \
        const int *__restrict__ colind, const TF *__restrict__ val, const TV *x, TV *y, int k

template <int B, typename TF, typename TV>
__global__ void p21_kernel(TREE_ARGS)
{
    __shared__ TV sm[B * TRSV_MAXK];
    const int bk = B * k;
    for (int q = 0, i, s0, s1; q < node_rows(ranges); q++) {
        const TF *D = node_step<B, TF>(ranges, upper, rstart, rend, val, q, &i, &s0, &s1);
        for (int o = 0; o < bk; o++) {
            const int r = o / k, j = o - r * k;
            row_put(upper, i, o, bk, x, row_dot<B, false>(val, colind, y, s0, s1, 1, r, j, k), sm, y);
        }
        if (upper) apply_pivot<B, TF, TV>(D, sm, y + (size_t)i * bk, k, 0, 1);
    }
}

template <int B, typename TF, typename TV>
__global__ void p22_kernel(TREE_ARGS)
{
    __shared__ TV sm[B * TRSV_MAXK];
    const int bk = B * k;
    const int r = threadIdx.x; /* blockDim.x == B */
    for (int q = 0, i, s0, s1; q < node_rows(ranges); q++) {
        const TF *D = node_step<B, TF>(ranges, upper, rstart, rend, val, q, &i, &s0, &s1);
        for (int j = 0; j < k; j++) {
            row_put(upper, i, r * k + j, bk, x, row_dot<B, false>(val, colind, y, s0, s1, 1, r, j, k), sm, y);
        }
        __syncthreads();
        if (upper) {
            apply_pivot<B, TF, TV>(D, sm, y + (size_t)i * bk, k, r, B);
            __syncthreads();
        }
    }
}

/* Shared tail of P23/P24: s = x_i - sum_u part[u][o] in order u = 0..nu-1, then
 * y_i = s (lower) or D s (upper).  part is laid out [nu][bk]. */
template <int B, typename TF, typename TV>
__device__ __forceinline__ void reduce_store(const TV *part, int nu, TV *sm, const TF *D, int upper,
                                             const TV *xi, TV *yi, int k)
{
    const int bk = B * k, t = threadIdx.x, nt = blockDim.x;
    for (int o = t; o < bk; o += nt) {
        TV acc = 0;
        for (int u = 0; u < nu; u++) acc += part[u * bk + o];
        const TV s = xi[o] - acc;
        if (upper) sm[o] = s;
        else yi[o] = s;
    }
    __syncthreads();
    if (upper) {
        apply_pivot<B, TF, TV>(D, sm, yi, k, t, nt);
        __syncthreads();
    }
}

/* Dynamic shared memory: P23_THREADS*bk partials + bk for the pivot step. */
template <int B, typename TF, typename TV>
__global__ void p23_kernel(TREE_ARGS)
{
    extern __shared__ unsigned char smraw[];
    TV *part = (TV *)smraw;
    const int bk = B * k, t = threadIdx.x;
    TV *sm = part + P23_THREADS * bk;
    for (int q = 0, i, s0, s1; q < node_rows(ranges); q++) {
        const TF *D = node_step<B, TF>(ranges, upper, rstart, rend, val, q, &i, &s0, &s1);
        TV *mine = part + t * bk;
        for (int o = 0; o < bk; o++) mine[o] = 0;
        for (int p = s0 + t; p < s1; p += P23_THREADS) {
            const TF *ap = val + (size_t)p * B * B;
            const TV *yc = y + (size_t)colind[p] * bk;
            for (int o = 0; o < bk; o++) {
                const int r = o / k, j = o - r * k;
                TV acc = 0;
#pragma unroll
                for (int c = 0; c < B; c++) acc += (TV)ap[r * B + c] * yc[c * k + j];
                mine[o] += acc;
            }
        }
        __syncthreads();
        reduce_store<B, TF, TV>(part, P23_THREADS, sm, D, upper, x + (size_t)i * bk,
                                y + (size_t)i * bk, k);
    }
}

/* blockDim = P*B threads: thread (ps, r) takes row r of blocks ps, ps+P, ...
 * Dynamic shared memory: P*B*k partials (laid out [ps][r][j] = [ps][bk]) + bk. */
template <int B, typename TF, typename TV>
__global__ void p24_kernel(TREE_ARGS)
{
    extern __shared__ unsigned char smraw[];
    TV *part = (TV *)smraw;
    const int P = blockDim.x / B, bk = B * k, t = threadIdx.x, ps = t / B, r = t - ps * B;
    TV *sm = part + P * bk;
    for (int q = 0, i, s0, s1; q < node_rows(ranges); q++) {
        const TF *D = node_step<B, TF>(ranges, upper, rstart, rend, val, q, &i, &s0, &s1);
        TV *mine = part + ps * bk + r * k;
        for (int j = 0; j < k; j++) mine[j] = 0;
        for (int p = s0 + ps; p < s1; p += P) {
            const TF *ap = val + (size_t)p * B * B + r * B;
            const TV *yc = y + (size_t)colind[p] * bk;
            for (int j = 0; j < k; j++) {
                TV acc = 0;
#pragma unroll
                for (int c = 0; c < B; c++) acc += (TV)ap[c] * yc[c * k + j];
                mine[j] += acc;
            }
        }
        __syncthreads();
        reduce_store<B, TF, TV>(part, P, sm, D, upper, x + (size_t)i * bk, y + (size_t)i * bk, k);
    }
}

/* Launch kernel `kernel` for every tree level in solve order. */
template <int B, typename TF, typename TV>
static bsr_status tree_launch(const bsr_trsv_tri *T, int kernel, const TV *x, TV *y, int k,
                              cudaStream_t st)
{
    const TF *val = (const TF *)T->val;
    const int bk = B * k;
    int nt = 1;
    size_t shm = 0;
    if (kernel == TRSV_K_P22) nt = B;
    if (kernel == TRSV_K_P23) { nt = P23_THREADS; shm = (size_t)(P23_THREADS + 1) * bk * sizeof(TV); }
    if (kernel == TRSV_K_P24) {
        int P = 32 / B > 1 ? 32 / B : 1;
        nt = P * B;
        shm = (size_t)(P + 1) * bk * sizeof(TV);
    }
    for (int s = 0; s < T->ntl; s++) {
        const int l = T->upper ? s : T->ntl - 1 - s; /* lower: leaves first */
        const int nn = T->tl_ptr[l + 1] - T->tl_ptr[l];
        if (nn == 0) continue;
        const int *rg = T->node_range + 2 * T->tl_ptr[l];
        switch (kernel) {
        case TRSV_K_P21:
            p21_kernel<B, TF, TV><<<nn, 1, 0, st>>>(rg, T->upper, T->rstart, T->rend, T->colind, val, x, y, k);
            break;
        case TRSV_K_P22:
            p22_kernel<B, TF, TV><<<nn, nt, 0, st>>>(rg, T->upper, T->rstart, T->rend, T->colind, val, x, y, k);
            break;
        case TRSV_K_P23:
            p23_kernel<B, TF, TV><<<nn, nt, shm, st>>>(rg, T->upper, T->rstart, T->rend, T->colind, val, x, y, k);
            break;
        default:
            p24_kernel<B, TF, TV><<<nn, nt, shm, st>>>(rg, T->upper, T->rstart, T->rend, T->colind, val, x, y, k);
            break;
        }
        CU_LAUNCHED("tree kernel");
    }
    return BSR_OK;
}

bsr_status trsv_tree_solve(const bsr_trsv_tri *T, int kernel, const void *x, void *y, int k,
                           bsr_precision vprec, cudaStream_t st)
{
    if (kernel < TRSV_K_P21 || kernel > TRSV_K_P24)
        return bsr_error(BSR_ERR_ARG, "bsr_trsv_dev_solve: unknown kernel %d", kernel);
    if (!T->tree_ok)
        return bsr_error(BSR_ERR_UNSUPPORTED,
                         "P2%d: the %s factor couples rows of independent separator-tree nodes "
                         "(tree levels cannot run in parallel)",
                         kernel, T->upper ? "upper" : "lower");
    bsr_status s = BSR_OK;
    int ok = trsv_with_types(T->fprec, vprec, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        bsr_with_b(T->b, [&](auto Bc) {
            s = tree_launch<decltype(Bc)::value, TF, TV>(T, kernel, (const TV *)x, (TV *)y, k, st);
        });
    });
    if (!ok)
        return bsr_error(BSR_ERR_UNSUPPORTED,
                         "bsr_trsv_dev_solve: double factors with float vectors not supported");
    return s;
}
