/* SPDX-License-Identifier: BSD-3-Clause */
/* l2hop: the latency floor of a sync-free dependency chain on the GPU (issue 6
 * diagnostic, bench/RESULTS.md): H dependent hops between CUDA blocks through
 * global memory, each a warp that polls (relaxed device-scope loads,
 * kernels/sync_mm.cuh) until the previous
 * hop's value is no longer the sentinel (all bits set) and then stores its
 * own, as the triangular solves' rows do; optional poll sleep and extra
 * polling warps as background load.  Prints microseconds per hop.
 * Built with the CUDA backend: ./l2hop */
#include <cstdio>
#include <cstdint>
#include "../kernels/sync_mm.cuh"
__device__ __forceinline__ bool sent(double v) { return __double_as_longlong(v) == -1LL; }
/* CTA b takes hops h = b, b + nb, ...: waits for y[h-1], stores y[h] = y[h-1] + 1.
 * Warps beyond the first poll unrelated sentinels until the chain ends (bgpoll). */
__global__ void chain(int H, double *y, double *junk, int nap, int bgpoll)
{
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (w > 0) { /* background pollers */
        if (!bgpoll) return;
        const double *p = junk + ((blockIdx.x * 64 + w) * 32 + lane) * 4;
        while (sent(ld_relaxed(p))) {
            if (nap) __nanosleep(nap);
            if (ld_relaxed(y + H - 1) == (double)(H - 1)) break;
        }
        return;
    }
    for (int h = blockIdx.x; h < H; h += gridDim.x) {
        double v = 0;
        if (h > 0) {
            for (;;) { v = ld_relaxed(y + h - 1); if (!sent(v)) break; if (nap) __nanosleep(nap); }
        }
        if (lane == 0) st_relaxed(y + h, h == 0 ? 0.0 : v + 1);
    }
}
#define CK(call)                                                                       \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "l2hop: %s: %s\n", #call, cudaGetErrorString(e_));          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main()
{
    const int H = 20000;
    double *y, *junk;
    const size_t nj = (size_t)132 * 64 * 32 * 4 * 2;
    CK(cudaMalloc(&y, H * sizeof(double)));
    CK(cudaMalloc(&junk, nj * sizeof(double)));
    CK(cudaMemset(junk, 0xff, nj * sizeof(double)));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    int nbs[] = {2, 132}; int naps[] = {0, 20, 100}; int bgs[] = {1, 8, 32};
    for (int nb : nbs) for (int nap : naps) for (int bg : bgs) {
        float best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            CK(cudaMemset(y, 0xff, H * sizeof(double)));
            CK(cudaEventRecord(a));
            chain<<<nb, 32 * bg>>>(H, y, junk, nap, bg > 1);
            CK(cudaGetLastError());
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (ms < best) best = ms;
        }
        double last;
        CK(cudaMemcpy(&last, y + H - 1, sizeof last, cudaMemcpyDeviceToHost));
        printf("ctas %3d nap %3d warps/cta %2d: %.3f us per hop (check %g)\n", nb, nap, bg, best * 1000.0 / H, last);
    }
    return 0;
}
