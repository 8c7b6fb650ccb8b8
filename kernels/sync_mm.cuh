/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory-model-correct accesses of the sync-free kernels.
 *
 * A sync-free kernel hands values from one thread to another inside one
 * launch: a reader polls a word until the writer has stored it.  `volatile`
 * gave the right instructions by accident but is no synchronization in the
 * CUDA memory model (a plain store against a volatile load is a data race),
 * so every such word is accessed here through the PTX memory model's strong
 * operations, at the narrowest scope that holds writer and reader:
 *
 *  - the word is the payload itself (a solved value of y with the sentinel as
 *    "not yet", a row's level): relaxed loads and stores at device scope.
 *    Each value read is the one its writer stored (strong accesses of one
 *    size are single-copy atomic) and nothing else is read on its strength,
 *    so acquire/release would order nothing more; it would cost an L1
 *    invalidation per poll (ld.acquire.gpu is LD.STRONG.GPU + CCTL.IVALL on
 *    sm_90) and a MEMBAR.GPU per store;
 *  - the word guards other data (a per-row completion flag): a release store
 *    after the data; the reader polls with acquire loads (the device ILU's
 *    rows of up to 32 lower blocks, ILU(0)'s: their polls mostly find the
 *    flag set), or with relaxed loads and then one acquire fence: the device
 *    ILU's longer rows for up to 32 rows' flags at once (a complete LU's
 *    rows read thousands, and every invalidation empties the L1 of all the
 *    warps of a multiprocessor), the triangular solves' flag path once a row
 *    (it sleeps between polls).
 *
 * Shared-memory polls inside a CUDA block are atomic read-modify-writes
 * (ATOMS): a relaxed or acquire load of shared memory compiles to a plain LDS,
 * which compute-sanitizer's racecheck cannot tell from a racy read. */
#ifndef BSR_SYNC_MM_CUH
#define BSR_SYNC_MM_CUH

/* Relaxed device-scope load of a global word written by another thread of
 * the launch (LDG.STRONG.GPU: through L2, never a stale L1 line).  No
 * compiler memory barrier: the word is the payload, ordered with nothing
 * else (the flag path adds fence_acquire_gpu). */
#define SYNC_LD_RELAXED(T, PTX, C)                                                                   \
    __device__ __forceinline__ T ld_relaxed(const T *p)                                          \
    {                                                                                            \
        T v;                                                                                     \
        asm volatile("ld.relaxed.gpu.global." PTX " %0, [%1];" : "=" C(v) : "l"(p));             \
        return v;                                                                                \
    }
SYNC_LD_RELAXED(int, "b32", "r")
SYNC_LD_RELAXED(float, "f32", "f")
SYNC_LD_RELAXED(double, "f64", "d")
#undef SYNC_LD_RELAXED

/* Acquire device-scope load of a completion flag: the data it guards is read
 * after it (LDG.STRONG.GPU + CCTL.IVALL: no stale L1 line survives). */
__device__ __forceinline__ int ld_acquire(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Relaxed device-scope store of a global word that other threads of the
 * launch poll (its value is what they wait for). */
__device__ __forceinline__ void st_relaxed(int *p, int v)
{
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v));
}
__device__ __forceinline__ void st_relaxed(float *p, float v)
{
    asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" ::"l"(p), "f"(v));
}
__device__ __forceinline__ void st_relaxed(double *p, double v)
{
    asm volatile("st.relaxed.gpu.global.f64 [%0], %1;" ::"l"(p), "d"(v));
}

/* Release store of a completion flag: every write of this thread, and every
 * write ordered before it by a barrier (__syncwarp: the other lanes' values of
 * the row), is visible at device scope to a thread that acquires the flag.
 * One fence (MEMBAR.GPU) before the store: a fence in every lane before the
 * barrier as well would only lengthen the dependency chain. */
__device__ __forceinline__ void st_release(int *p, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Acquire fence after relaxed polls saw every flag set: the data the flags
 * guard is read after it (and not from a stale L1 line).  It is a MEMBAR
 * too: it waits for this thread's stores in flight. */
__device__ __forceinline__ void fence_acquire_gpu(void)
{
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/* Shared-memory poll and publish between threads of one CUDA block: atomic
 * read-modify-writes (relaxed; the word is the payload). */
__device__ __forceinline__ int sh_poll(int *p)
{
    return atomicOr(p, 0);
}
__device__ __forceinline__ void sh_publish(int *p, int v)
{
    atomicExch(p, v);
}

#endif
