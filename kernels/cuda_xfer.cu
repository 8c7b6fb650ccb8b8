/* SPDX-License-Identifier: BSD-3-Clause */
/* Host <-> device transfers of large arrays.  cudaMemcpy from pageable
 * memory is staged by the driver through one thread's memcpy (~10-20 GB/s);
 * here the matrix and vector transfers go through two pinned buffers of
 * XFER_CHUNK bytes, each filled (or emptied) by up to 8 host threads while the
 * other one crosses the link, so a transfer runs near the PCIe rate.
 * BSR_PAGEABLE=1 in the environment restores plain cudaMemcpy (to measure). */
#include "cuda_internal.h"

#define XFER_CHUNK ((size_t)16 << 20)
#define XFER_MIN ((size_t)4 << 20)   /* smaller: one plain copy costs less */

static int use_staging(size_t bytes)
{
    static int pageable = -1;
    if (pageable < 0) {
        const char *e = getenv("BSR_PAGEABLE");
        pageable = e && e[0] == '1';
    }
    return !pageable && bytes >= XFER_MIN;
}

/* Allocate the two staging buffers on first use. */
static int pin_alloc(bsr_cuda_ctx *c)
{
    if (c->pin[1] && c->pin_ev[1]) return 1;
    for (int i = 0; i < 2; i++)
        if ((!c->pin[i] && bsr_cu_malloc_host(&c->pin[i], XFER_CHUNK) != cudaSuccess) ||
            (!c->pin_ev[i] && cudaEventCreateWithFlags(&c->pin_ev[i], cudaEventDisableTiming) != cudaSuccess)) {
            (void)cudaGetLastError();   /* no pinned memory: plain copies still work */
            bsr_cuda_xfer_free(c);
            return 0;
        }
    return 1;
}

/* At context creation: the staging buffers, and the host threads that fill
 * them started once, so the first upload of a setup pays neither (pinning
 * and thread start are per-process costs, like the library handles). */
void bsr_cuda_xfer_init(bsr_cuda_ctx *c)
{
    if (pin_alloc(c)) bsr_memcpy_par(c->pin[0], c->pin[1], XFER_CHUNK);
}

void bsr_cuda_xfer_free(bsr_cuda_ctx *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->pin[i]) bsr_cu_free_host(c->pin[i]);
        if (c->pin_ev[i]) cudaEventDestroy(c->pin_ev[i]);
        c->pin[i] = NULL;
        c->pin_ev[i] = NULL;
    }
}

/* Nonzero when a copy of bytes goes through the pinned staging buffers
 * (large enough, and the buffers exist or could be made). */
static int staged(bsr_context *ctx, size_t bytes) { return use_staging(bytes) && pin_alloc(ctx->cuda); }

/* One cudaMemcpyAsync of the whole range on st, waited for. */
static bsr_status direct(cudaStream_t st, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (bytes) CU_TRY(cudaMemcpyAsync(dst, src, bytes, kind, st));
    CU_TRY(cudaStreamSynchronize(st));
    return BSR_OK;
}

/* Length of the chunk of a copy of bytes that starts at off. */
static size_t chunk_len(size_t bytes, size_t off) { return bytes - off < XFER_CHUNK ? bytes - off : XFER_CHUNK; }

extern "C" bsr_status bsr_cuda_h2d(bsr_context *ctx, void *dst, const void *src, size_t bytes)
{
    cudaStream_t st = ctx->cuda->stream;
    if (!staged(ctx, bytes)) return direct(st, dst, src, bytes, cudaMemcpyHostToDevice);
    bsr_cuda_ctx *c = ctx->cuda;
    for (size_t off = 0, i = 0; off < bytes; off += XFER_CHUNK, i ^= 1) {
        CU_TRY(cudaEventSynchronize(c->pin_ev[i]));    /* its previous chunk has left */
        bsr_memcpy_par(c->pin[i], (const char *)src + off, chunk_len(bytes, off));
        CU_TRY(cudaMemcpyAsync((char *)dst + off, c->pin[i], chunk_len(bytes, off), cudaMemcpyHostToDevice, st));
        CU_TRY(cudaEventRecord(c->pin_ev[i], st));
    }
    CU_TRY(cudaStreamSynchronize(st));
    return BSR_OK;
}

/* Chunk j of the device range src (bytes long) queued into pin[j & 1], its
 * event recorded after it. */
static bsr_status d2h_queue(bsr_cuda_ctx *c, cudaStream_t st, const void *src, size_t bytes, size_t j)
{
    const size_t off = j * XFER_CHUNK;
    CU_TRY(cudaMemcpyAsync(c->pin[j & 1], (const char *)src + off, chunk_len(bytes, off), cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaEventRecord(c->pin_ev[j & 1], st));
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_d2h(bsr_context *ctx, void *dst, const void *src, size_t bytes)
{
    cudaStream_t st = ctx->cuda->stream;
    if (!staged(ctx, bytes)) return direct(st, dst, src, bytes, cudaMemcpyDeviceToHost);
    bsr_cuda_ctx *c = ctx->cuda;
    const size_t nch = (bytes + XFER_CHUNK - 1) / XFER_CHUNK;
    /* chunk j lands in pin[j & 1]; chunk j+2 is queued once chunk j is copied out */
    for (size_t j = 0; j < nch && j < 2; j++) BSR_TRY(d2h_queue(c, st, src, bytes, j));
    for (size_t j = 0; j < nch; j++) {
        CU_TRY(cudaEventSynchronize(c->pin_ev[j & 1]));
        bsr_memcpy_par((char *)dst + j * XFER_CHUNK, c->pin[j & 1], chunk_len(bytes, j * XFER_CHUNK));
        if (j + 2 < nch) BSR_TRY(d2h_queue(c, st, src, bytes, j + 2));
    }
    CU_TRY(cudaStreamSynchronize(st));
    return BSR_OK;
}
