/* SPDX-License-Identifier: BSD-3-Clause */
/* Every device and pinned host allocation of the CUDA backend goes through
 * these (kernels/cuda_alloc.cu), with the signatures of the CUDA calls they
 * replace: each allocation is a device-allocation event of the fault hook
 * (src/internal.h), failing as cudaErrorMemoryAllocation when armed, and the
 * live allocations are counted (bsr_fault_dev_live), so that the tests reach
 * the out-of-memory paths and see leaks.  C++ (nvcc) only. */
#ifndef BSR_CUDA_ALLOC_H
#define BSR_CUDA_ALLOC_H

#include <cuda_runtime.h>

extern "C" {
cudaError_t bsr_cu_malloc_v(void **p, size_t bytes);
cudaError_t bsr_cu_host_alloc_v(void **p, size_t bytes, unsigned flags);
cudaError_t bsr_cu_free(void *p);
cudaError_t bsr_cu_free_host(void *p);
/* Device bytes the library holds on `device` through bsr_cu_malloc (*live),
 * and the most it held since the last reset (*peak); reset_peak: the peak
 * starts again from the bytes live now.  Process-wide per device. */
void bsr_cu_mem_bytes(int device, size_t *live, size_t *peak, int reset_peak);
}
/* cudaMalloc, cudaMallocHost, cudaHostAlloc for any pointer type. */
template <class T> static inline cudaError_t bsr_cu_malloc(T **p, size_t bytes)
{
    return bsr_cu_malloc_v((void **)p, bytes);
}
template <class T> static inline cudaError_t bsr_cu_malloc_host(T **p, size_t bytes)
{
    return bsr_cu_host_alloc_v((void **)p, bytes, cudaHostAllocDefault);
}
template <class T> static inline cudaError_t bsr_cu_host_alloc(T **p, size_t bytes, unsigned flags)
{
    return bsr_cu_host_alloc_v((void **)p, bytes, flags);
}

#endif
