/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the device halo staging (kernels/halo.cu) reports
 * BSR_ERR_NODEVICE; distributed products then run on the host. */
#include "internal.h"

static bsr_status nodev(const char *fn)
{
    return bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn);
}

bsr_status bsr_cuda_pinned(size_t bytes, void **p) { (void)bytes; *p = NULL; return nodev("bsr_cuda_pinned"); }
void bsr_cuda_pinned_free(void *p) { (void)p; }
bsr_status bsr_cuda_buffer(bsr_context *ctx, size_t bytes, void **p)
{
    (void)ctx; (void)bytes; *p = NULL;
    return nodev("bsr_cuda_buffer");
}
void bsr_cuda_buffer_free(void *p) { (void)p; }
bsr_status bsr_cuda_gather_rows(bsr_context *ctx, const bsr_multivec *X, const int *idx, int n,
                                size_t rowlen, void *dst)
{
    (void)ctx; (void)X; (void)idx; (void)n; (void)rowlen; (void)dst;
    return nodev("bsr_cuda_gather_rows");
}
bsr_status bsr_cuda_copy_async(bsr_context *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx; (void)dst; (void)src; (void)bytes;
    return nodev("bsr_cuda_copy_async");
}

/* CUDA IPC (kernels/halo_ipc.cu): unsupported without CUDA; the distributed
 * halo then takes the host path. */
static bsr_status noipc(const char *fn)
{
    return bsr_error(BSR_ERR_UNSUPPORTED, "%s: bsrsolve was built without CUDA (no IPC halo)", fn);
}
bsr_status bsr_cuda_ipc_busid(bsr_context *ctx, char *buf, int len)
{
    (void)ctx;
    if (len > 0) buf[0] = 0;
    return noipc("bsr_cuda_ipc_busid");
}
bsr_status bsr_cuda_ipc_peer_ok(bsr_context *ctx, const char *busid, char *why, size_t wlen)
{
    (void)ctx; (void)busid;
    snprintf(why, wlen, "built without CUDA");
    return noipc("bsr_cuda_ipc_peer_ok");
}
bsr_status bsr_cuda_ipc_alloc(bsr_context *ctx, size_t bytes, void **p, unsigned char *handle)
{
    (void)ctx; (void)bytes; (void)handle;
    *p = NULL;
    return noipc("bsr_cuda_ipc_alloc");
}
void bsr_cuda_ipc_free(bsr_context *ctx, void *p) { (void)ctx; (void)p; }
bsr_status bsr_cuda_ipc_open(bsr_context *ctx, const unsigned char *handle, void **p)
{
    (void)ctx; (void)handle;
    *p = NULL;
    return noipc("bsr_cuda_ipc_open");
}
void bsr_cuda_ipc_close(bsr_context *ctx, void *p) { (void)ctx; (void)p; }
bsr_status bsr_cuda_event_new(bsr_context *ctx, void **ev)
{
    (void)ctx;
    *ev = NULL;
    return noipc("bsr_cuda_event_new");
}
bsr_status bsr_cuda_event_record(bsr_context *ctx, void *ev) { (void)ctx; (void)ev; return noipc("bsr_cuda_event_record"); }
bsr_status bsr_cuda_event_wait(void *ev) { (void)ev; return noipc("bsr_cuda_event_wait"); }
void bsr_cuda_event_free(void *ev) { (void)ev; }
