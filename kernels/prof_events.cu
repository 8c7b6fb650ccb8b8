/* SPDX-License-Identifier: BSD-3-Clause */
/* Event timing of the Krylov operations for profile=1.  Timing
 * each operation by synchronizing the device before and after it (the CPU
 * way) stalls the stream between operations and adds a host round trip to
 * each: on the device that was several percent of the iteration being
 * measured.  Here each operation is bracketed by two CUDA events on the
 * context's stream and nothing waits until the end (or until the event pool
 * is full, between operations). */
#include "cuda_internal.h"

#define EV_CAP 2048 /* events in the pool (two an operation) */

struct bsr_cuda_evlog {
    bsr_context *ctx;
    cudaEvent_t ev[EV_CAP];
    int nev;            /* events recorded since the last flush */
    int depth;          /* operations begun and not ended (a nested copy) */
    int pb[EV_CAP / 2], pe[EV_CAP / 2], pc[EV_CAP / 2]; /* pairs: begin, end, class */
    int np;
    double s[4];        /* sums so far (seconds) */
};

extern "C" bsr_status bsr_cuda_evlog_create(bsr_context *ctx, bsr_cuda_evlog **out)
{
    *out = NULL;
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_cuda_evlog *L = (bsr_cuda_evlog *)bsr_calloc(1, sizeof *L, "profile events");
    if (!L) return BSR_ERR_NOMEM;
    L->ctx = ctx;
    for (int i = 0; i < EV_CAP; i++) {
        cudaError_t e = cudaEventCreate(&L->ev[i]);
        if (e != cudaSuccess) {
            for (int j = 0; j < i; j++) cudaEventDestroy(L->ev[j]);
            free(L);
            return bsr_cuda_fail(e, "cudaEventCreate", __FILE__, __LINE__);
        }
    }
    *out = L;
    return BSR_OK;
}

/* Wait for the recorded events and add each pair's elapsed time to its class. */
static bsr_status flush(bsr_cuda_evlog *L)
{
    if (L->nev == 0) return BSR_OK;
    CU_TRY(cudaEventSynchronize(L->ev[L->nev - 1]));
    for (int p = 0; p < L->np; p++) {
        float ms = 0;
        if (L->pe[p] < 0) continue;
        CU_TRY(cudaEventElapsedTime(&ms, L->ev[L->pb[p]], L->ev[L->pe[p]]));
        L->s[L->pc[p]] += ms * 1e-3;
    }
    L->nev = L->np = 0;
    return BSR_OK;
}

extern "C" int bsr_cuda_evlog_begin(bsr_cuda_evlog *L)
{
    /* a full pool is emptied between operations only (pairs never span a flush) */
    if (L->depth == 0 && L->nev + 8 > EV_CAP && flush(L) != BSR_OK) return -1;
    if (L->nev + 2 > EV_CAP || L->np >= EV_CAP / 2) return -1;
    if (cudaEventRecord(L->ev[L->nev], bsr_cuda_stream(L->ctx)) != cudaSuccess) { cudaGetLastError(); return -1; }
    L->pb[L->np] = L->nev++;
    L->pe[L->np] = -1;
    L->depth++;
    return L->np++;
}

extern "C" void bsr_cuda_evlog_end(bsr_cuda_evlog *L, int pair, int cls)
{
    if (pair < 0) return;
    L->depth--;
    L->pc[pair] = cls & 3;
    if (L->nev >= EV_CAP || cudaEventRecord(L->ev[L->nev], bsr_cuda_stream(L->ctx)) != cudaSuccess) {
        cudaGetLastError();
        return; /* unpaired: not counted */
    }
    L->pe[pair] = L->nev++;
}

extern "C" bsr_status bsr_cuda_evlog_finish(bsr_cuda_evlog *L, double *s)
{
    bsr_status st = flush(L);
    for (int c = 0; c < 4; c++) s[c] += L->s[c];
    for (int i = 0; i < EV_CAP; i++) cudaEventDestroy(L->ev[i]);
    free(L);
    return st;
}
