/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA IPC for the distributed halo of ranks on one host: an exported
 * device buffer (its own cudaMalloc through the backend's allocator: IPC
 * handles name whole allocations),
 * another process's buffer opened here, the peer check, and host-waitable
 * events.  The exchange protocol is in src/mpi/dist_halo_ipc.c. */
#include "cuda_internal.h"

static_assert(sizeof(cudaIpcMemHandle_t) == BSR_CUDA_IPC_HANDLE_BYTES, "IPC handle size");

/* buf = the PCI bus id of ctx's GPU ("0000:1b:00.0"). */
extern "C" bsr_status bsr_cuda_ipc_busid(bsr_context *ctx, char *buf, int len)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(cudaDeviceGetPCIBusId(buf, len, ctx->device));
    return BSR_OK;
}

/* BSR_OK when the GPU of bus id busid is visible to this process and ctx's
 * GPU can access its memory (the same GPU can); else why says what fails. */
extern "C" bsr_status bsr_cuda_ipc_peer_ok(bsr_context *ctx, const char *busid, char *why, size_t wlen)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    int dev = -1, can = 0;
    cudaError_t e = cudaDeviceGetByPCIBusId(&dev, busid);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, wlen, "the GPU %s of a neighbour is not visible to this rank (CUDA_VISIBLE_DEVICES?): %s",
                 busid, cudaGetErrorString(e));
        return BSR_ERR_UNSUPPORTED;
    }
    if (dev == ctx->device) return BSR_OK;
    e = cudaDeviceCanAccessPeer(&can, ctx->device, dev);
    if (e != cudaSuccess || !can) {
        (void)cudaGetLastError();
        snprintf(why, wlen, "GPU %d cannot access GPU %d (%s) as a peer%s%s", ctx->device, dev, busid,
                 e != cudaSuccess ? ": " : "", e != cudaSuccess ? cudaGetErrorString(e) : "");
        return BSR_ERR_UNSUPPORTED;
    }
    return BSR_OK;
}

/* *p = a device buffer of bytes (at least 8) of its own allocation, and its IPC handle. */
extern "C" bsr_status bsr_cuda_ipc_alloc(bsr_context *ctx, size_t bytes, void **p, unsigned char *handle)
{
    *p = NULL;
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(bsr_cu_malloc(p, bytes ? bytes : 8));
    cudaIpcMemHandle_t h;
    cudaError_t e = cudaIpcGetMemHandle(&h, *p);
    if (e != cudaSuccess) {
        bsr_cu_free(*p);
        *p = NULL;
        return bsr_cuda_fail(e, "cudaIpcGetMemHandle", __FILE__, __LINE__);
    }
    memcpy(handle, &h, sizeof h);
    return BSR_OK;
}

/* Free a buffer of bsr_cuda_ipc_alloc (NULL: nothing). */
extern "C" void bsr_cuda_ipc_free(bsr_context *ctx, void *p)
{
    if (!p) return;
    if (bsr_cuda_enter(ctx) == BSR_OK) bsr_cu_free(p);
    (void)cudaGetLastError();
}

/* *p = another process's buffer, by its handle, mapped into this one (peer access enabled as needed). */
extern "C" bsr_status bsr_cuda_ipc_open(bsr_context *ctx, const unsigned char *handle, void **p)
{
    *p = NULL;
    BSR_TRY(bsr_cuda_enter(ctx));
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    CU_TRY(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess));
    return BSR_OK;
}

/* Unmap a buffer of bsr_cuda_ipc_open. */
extern "C" void bsr_cuda_ipc_close(bsr_context *ctx, void *p)
{
    if (!p) return;
    if (bsr_cuda_enter(ctx) == BSR_OK) cudaIpcCloseMemHandle(p);
    (void)cudaGetLastError();
}

/* *ev = an event without timing (cheap to record and wait for). */
extern "C" bsr_status bsr_cuda_event_new(bsr_context *ctx, void **ev)
{
    *ev = NULL;
    BSR_TRY(bsr_cuda_enter(ctx));
    cudaEvent_t e;
    CU_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *ev = (void *)e;
    return BSR_OK;
}

/* Record ev after the work queued so far on ctx's stream. */
extern "C" bsr_status bsr_cuda_event_record(bsr_context *ctx, void *ev)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(cudaEventRecord((cudaEvent_t)ev, bsr_cuda_stream(ctx)));
    return BSR_OK;
}

/* Wait on the host until the work before ev's last record is done. */
extern "C" bsr_status bsr_cuda_event_wait(void *ev)
{
    CU_TRY(cudaEventSynchronize((cudaEvent_t)ev));
    return BSR_OK;
}

/* Destroy an event of bsr_cuda_event_new (NULL: nothing). */
extern "C" void bsr_cuda_event_free(void *ev)
{
    if (ev) cudaEventDestroy((cudaEvent_t)ev);
    (void)cudaGetLastError();
}
