/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's one allocator (kernels/cuda_alloc.h): cudaMalloc and
 * cudaHostAlloc behind the fault hook's device-allocation events, with the
 * count of live allocations the tests check for leaks. */
#include "cuda_internal.h"

/* cudaMalloc; an armed fault fails as it would (*p NULL, nothing allocated). */
extern "C" cudaError_t bsr_cu_malloc_v(void **p, size_t bytes)
{
    if (bsr_fault_hit(BSR_FAULT_DEV_ALLOC)) { *p = NULL; return cudaErrorMemoryAllocation; }
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) bsr_fault_dev_note(1);
    return e;
}

/* cudaHostAlloc (pinned host memory), counted with the device allocations. */
extern "C" cudaError_t bsr_cu_host_alloc_v(void **p, size_t bytes, unsigned flags)
{
    if (bsr_fault_hit(BSR_FAULT_DEV_ALLOC)) { *p = NULL; return cudaErrorMemoryAllocation; }
    cudaError_t e = cudaHostAlloc(p, bytes, flags);
    if (e == cudaSuccess) bsr_fault_dev_note(1);
    return e;
}

/* cudaFree; a non-NULL p leaves the count whatever CUDA says (the caller drops it). */
extern "C" cudaError_t bsr_cu_free(void *p)
{
    cudaError_t e = cudaFree(p);
    if (p) bsr_fault_dev_note(-1);
    return e;
}

/* cudaFreeHost of bsr_cu_host_alloc's memory. */
extern "C" cudaError_t bsr_cu_free_host(void *p)
{
    cudaError_t e = cudaFreeHost(p);
    if (p) bsr_fault_dev_note(-1);
    return e;
}
