/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the stencil module's CUDA code: error checks,
 * the deterministic max reduction, the point update with the CPU's exact
 * operation order.  C++ (nvcc) only. */
#ifndef BSR_STENCIL_CUDA_H
#define BSR_STENCIL_CUDA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include "cuda_alloc.h"

extern "C" {
#include "stencil_impl.h"
}

/* Record a failed CUDA call as BSR_ERR_CUDA (BSR_ERR_NOMEM for allocations). */
static inline bsr_status stc_cuda_fail(cudaError_t e, const char *call, const char *file, int line)
{
    return bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA, "%s:%d: %s: %s", file, line,
                     call, cudaGetErrorString(e));
}
/* In a function with `bsr_status st` and a `done:` cleanup label. */
#define STC_CU(call)                                                                 \
    do {                                                                             \
        cudaError_t _e = (call);                                                     \
        if (_e != cudaSuccess) { st = stc_cuda_fail(_e, #call, __FILE__, __LINE__); goto done; } \
    } while (0)
#define STC_LAUNCHED(what) STC_CU(cudaGetLastError())

/* The CPU's stc_relax, with every operation rounded separately (no FMA). */
__device__ __forceinline__ double stc_relax_dev(double s, double f, double c, double uc, double omega)
{
    double gs = __ddiv_rn(__dsub_rn(f, s), c);
    return __dadd_rn(uc, __dmul_rn(omega, __dsub_rn(gs, uc)));
}
__device__ __forceinline__ double stc_acc(double s, double a, double v) { return __dadd_rn(s, __dmul_rn(a, v)); }

/* Block-wide max of two nonnegative values, folded into red[0..1] with an
 * integer atomicMax on their bit patterns (exact, order-independent). */
__device__ __forceinline__ void stc_block_max2(double a, double b, unsigned long long *red)
{
    __shared__ double sa[32], sb[32];
    for (int o = 16; o > 0; o >>= 1) {
        a = fmax(a, __shfl_down_sync(0xffffffffu, a, o));
        b = fmax(b, __shfl_down_sync(0xffffffffu, b, o));
    }
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int nw = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    if ((t & 31) == 0) { sa[t >> 5] = a; sb[t >> 5] = b; }
    __syncthreads();
    if (t < 32) {
        a = t < nw ? sa[t] : 0.0;
        b = t < nw ? sb[t] : 0.0;
        for (int o = 16; o > 0; o >>= 1) {
            a = fmax(a, __shfl_down_sync(0xffffffffu, a, o));
            b = fmax(b, __shfl_down_sync(0xffffffffu, b, o));
        }
        if (t == 0) {
            atomicMax(&red[0], (unsigned long long)__double_as_longlong(a));
            atomicMax(&red[1], (unsigned long long)__double_as_longlong(b));
        }
    }
}

/* max |du| / max |u| from the two reduced bit patterns. */
static inline double stc_red_incr(const unsigned long long r[2])
{
    double dm, um;
    memcpy(&dm, &r[0], sizeof dm);
    memcpy(&um, &r[1], sizeof um);
    return dm == 0 ? 0 : um > 0 ? dm / um : INFINITY;
}

#endif
