/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's one allocator (kernels/cuda_alloc.h): cudaMalloc and
 * cudaHostAlloc behind the fault hook's device-allocation events, with the
 * count of live allocations the tests check for leaks, and the device bytes
 * the library holds (the solver's memory report). */
#include "cuda_internal.h"
#include <mutex>
#include <unordered_map>

/* The library's device bytes, per device: live now and the most live since
 * the last reset (bsr_cuda_mem_bytes).  Each allocation's size and device
 * are kept by its pointer, for the free. */
#define MEM_DEVICES 64
namespace {
struct mem_tally {
    std::mutex mu;
    std::unordered_map<void *, std::pair<size_t, int>> size;
    size_t live[MEM_DEVICES], peak[MEM_DEVICES];
};
mem_tally &tally()
{
    static mem_tally *t = new mem_tally();   /* never destroyed: frees may run at exit */
    return *t;
}
}

static void mem_note(void *p, size_t bytes)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MEM_DEVICES) dev = 0;
    mem_tally &t = tally();
    std::lock_guard<std::mutex> g(t.mu);
    t.size[p] = std::make_pair(bytes, dev);
    t.live[dev] += bytes;
    if (t.live[dev] > t.peak[dev]) t.peak[dev] = t.live[dev];
}

static void mem_drop(void *p)
{
    mem_tally &t = tally();
    std::lock_guard<std::mutex> g(t.mu);
    auto it = t.size.find(p);
    if (it == t.size.end()) return;
    t.live[it->second.second] -= it->second.first;
    t.size.erase(it);
}

extern "C" void bsr_cu_mem_bytes(int device, size_t *live, size_t *peak, int reset_peak)
{
    mem_tally &t = tally();
    std::lock_guard<std::mutex> g(t.mu);
    const int d = device >= 0 && device < MEM_DEVICES ? device : 0;
    if (live) *live = t.live[d];
    if (peak) *peak = t.peak[d];
    if (reset_peak) t.peak[d] = t.live[d];
}

/* cudaMalloc; an armed fault fails as it would (*p NULL, nothing allocated). */
extern "C" cudaError_t bsr_cu_malloc_v(void **p, size_t bytes)
{
    if (bsr_fault_hit(BSR_FAULT_DEV_ALLOC)) { *p = NULL; return cudaErrorMemoryAllocation; }
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) { bsr_fault_dev_note(1); mem_note(*p, bytes); }
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
    if (p) { bsr_fault_dev_note(-1); mem_drop(p); }
    return e;
}

/* cudaFreeHost of bsr_cu_host_alloc's memory. */
extern "C" cudaError_t bsr_cu_free_host(void *p)
{
    cudaError_t e = cudaFreeHost(p);
    if (p) bsr_fault_dev_note(-1);
    return e;
}
