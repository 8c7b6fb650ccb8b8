/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL for the distributed halo (option halo=nccl): the library loaded at
 * run time (libnccl.so.2, or the file BSR_NCCL_LIBRARY names), never linked,
 * so that neither a build nor its users need NCCL; a communicator over the
 * ranks; each exchange's sends and receives one NCCL group on a stream of
 * the communicator's own, after the packed rows (an event on the context's
 * stream) and before the products that read the ghosts (the context's
 * stream waits on an event of the group), so that the interior product runs
 * while the ghosts travel.  Only point-to-point calls: no collective, no
 * NVLink multicast.  The host side is src/mpi/dist_halo_nccl.c. */
#include "cuda_internal.h"
#include <dlfcn.h>
#include <pthread.h>

namespace {

/* The parts of NCCL's C interface used here, declared as its nccl.h
 * declares them (NCCL 2.x: ncclResult_t and ncclDataType_t are int-sized
 * enums, ncclSuccess = 0, ncclChar = 0, ncclUniqueId 128 bytes). */
typedef int nccl_result;
struct nccl_id { char internal[BSR_CUDA_NCCL_ID_BYTES]; };
typedef struct nccl_comm_s *nccl_comm;
enum { NCCL_CHAR = 0, NCCL_IN_PROGRESS = 7 };

struct nccl_api {
    nccl_result (*get_id)(nccl_id *);
    nccl_result (*init_rank)(nccl_comm *, int, nccl_id, int);
    nccl_result (*destroy)(nccl_comm);
    nccl_result (*abort)(nccl_comm);
    nccl_result (*group_start)(void);
    nccl_result (*group_end)(void);
    nccl_result (*send)(const void *, size_t, int, int, nccl_comm, cudaStream_t);
    nccl_result (*recv)(void *, size_t, int, int, nccl_comm, cudaStream_t);
    const char *(*error_string)(nccl_result);
    nccl_result (*async_error)(nccl_comm, nccl_result *);
};

nccl_api api;
int api_ok;                 /* the library and every symbol found */
char api_why[256];          /* else why not */
pthread_once_t api_once = PTHREAD_ONCE_INIT;

/* One symbol of lib into *fn; 0 (and api_why) when missing. */
template <typename F>
int sym(void *lib, const char *name, F *fn)
{
    *fn = (F)dlsym(lib, name);
    if (!*fn) snprintf(api_why, sizeof api_why, "NCCL's %s is missing from the library found", name);
    return *fn != NULL;
}

void load_api(void)
{
    const char *path = getenv("BSR_NCCL_LIBRARY");
    if (!path || !*path) path = "libnccl.so.2";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(api_why, sizeof api_why, "NCCL not found (%s)", e ? e : path);
        return;
    }
    api_ok = sym(lib, "ncclGetUniqueId", &api.get_id) && sym(lib, "ncclCommInitRank", &api.init_rank) &&
             sym(lib, "ncclCommDestroy", &api.destroy) && sym(lib, "ncclCommAbort", &api.abort) &&
             sym(lib, "ncclGroupStart", &api.group_start) && sym(lib, "ncclGroupEnd", &api.group_end) &&
             sym(lib, "ncclSend", &api.send) && sym(lib, "ncclRecv", &api.recv) &&
             sym(lib, "ncclGetErrorString", &api.error_string) &&
             sym(lib, "ncclCommGetAsyncError", &api.async_error);
    if (!api_ok) dlclose(lib);   /* else kept open for the process */
}

/* NCCL's failure r of call -> BSR_ERR_CUDA naming both. */
bsr_status nccl_fail(nccl_result r, const char *call)
{
    return bsr_error(BSR_ERR_CUDA, "NCCL: %s failed: %s", call, api.error_string ? api.error_string(r) : "?");
}
#define NCCL_TRY(call)                                              \
    do {                                                            \
        nccl_result r_ = (call);                                    \
        if (r_ != 0) return nccl_fail(r_, #call);                   \
    } while (0)

/* A communicator with its stream and the two events that order it. */
struct nccl_halo {
    nccl_comm comm;
    cudaStream_t side;
    cudaEvent_t packed;     /* on the context's stream: the rows to send are packed */
    cudaEvent_t arrived;    /* on side: the group's sends and receives are done */
};

}   // namespace

extern "C" bsr_status bsr_cuda_nccl_load(char *why, size_t wlen)
{
    pthread_once(&api_once, load_api);
    if (api_ok) return BSR_OK;
    snprintf(why, wlen, "%s", api_why);
    return bsr_error(BSR_ERR_UNSUPPORTED, "%s", api_why);   /* the halo note's words, as why's */
}

extern "C" bsr_status bsr_cuda_nccl_id(unsigned char *id)
{
    char why[256];
    BSR_TRY(bsr_cuda_nccl_load(why, sizeof why));
    nccl_id u;
    NCCL_TRY(api.get_id(&u));
    memcpy(id, &u, sizeof u);
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_nccl_new(bsr_context *ctx, void **h)
{
    *h = NULL;
    char why[256];
    BSR_TRY(bsr_cuda_nccl_load(why, sizeof why));
    BSR_TRY(bsr_cuda_enter(ctx));
    nccl_halo *H = (nccl_halo *)bsr_calloc(1, sizeof *H, "NCCL halo");
    if (!H) return BSR_ERR_NOMEM;
    cudaError_t e = cudaStreamCreateWithFlags(&H->side, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&H->packed, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&H->arrived, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        bsr_cuda_nccl_free(ctx, H);
        return bsr_cuda_fail(e, "NCCL halo stream and events", __FILE__, __LINE__);
    }
    *h = H;
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_nccl_init(bsr_context *ctx, void *h, const unsigned char *id, int nranks, int rank)
{
    nccl_halo *H = (nccl_halo *)h;
    BSR_TRY(bsr_cuda_enter(ctx));
    nccl_id u;
    memcpy(&u, id, sizeof u);
    nccl_result r = api.init_rank(&H->comm, nranks, u, rank);
    if (r != 0) {
        H->comm = NULL;
        return nccl_fail(r, "ncclCommInitRank");
    }
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_nccl_post(bsr_context *ctx, void *h, int nsend, const int *send_rank,
                                         const int *send_off, const void *sbuf, int nrecv, const int *recv_rank,
                                         const int *recv_off, void *rbuf, size_t row)
{
    nccl_halo *H = (nccl_halo *)h;
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(cudaEventRecord(H->packed, bsr_cuda_stream(ctx)));
    CU_TRY(cudaStreamWaitEvent(H->side, H->packed, 0));
    NCCL_TRY(api.group_start());
    nccl_result r = 0;
    for (int q = 0; q < nrecv && !r; q++)
        r = api.recv((char *)rbuf + (size_t)recv_off[q] * row, (size_t)(recv_off[q + 1] - recv_off[q]) * row,
                     NCCL_CHAR, recv_rank[q], H->comm, H->side);
    for (int q = 0; q < nsend && !r; q++)
        r = api.send((const char *)sbuf + (size_t)send_off[q] * row, (size_t)(send_off[q + 1] - send_off[q]) * row,
                     NCCL_CHAR, send_rank[q], H->comm, H->side);
    nccl_result r2 = api.group_end();   /* always closed, even after a failed call */
    if (r) return nccl_fail(r, "ncclSend/ncclRecv");
    if (r2) return nccl_fail(r2, "ncclGroupEnd");
    CU_TRY(cudaEventRecord(H->arrived, H->side));
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_nccl_wait(bsr_context *ctx, void *h)
{
    nccl_halo *H = (nccl_halo *)h;
    BSR_TRY(bsr_cuda_enter(ctx));
    nccl_result a = 0;
    NCCL_TRY(api.async_error(H->comm, &a));
    if (a != 0 && a != NCCL_IN_PROGRESS) return nccl_fail(a, "the halo's sends and receives");
    CU_TRY(cudaStreamWaitEvent(bsr_cuda_stream(ctx), H->arrived, 0));
    return BSR_OK;
}

extern "C" void bsr_cuda_nccl_free(bsr_context *ctx, void *h)
{
    nccl_halo *H = (nccl_halo *)h;
    if (!H) return;
    if (bsr_cuda_enter(ctx) != BSR_OK) bsr_clear_error();
    if (H->side) cudaStreamSynchronize(H->side);
    if (H->comm) {
        nccl_result a = 0;
        /* a communicator with a failure pending cannot be destroyed in order: aborted */
        if (api.async_error(H->comm, &a) != 0 || (a != 0 && a != NCCL_IN_PROGRESS)) api.abort(H->comm);
        else api.destroy(H->comm);
    }
    if (H->packed) cudaEventDestroy(H->packed);
    if (H->arrived) cudaEventDestroy(H->arrived);
    if (H->side) cudaStreamDestroy(H->side);
    (void)cudaGetLastError();
    free(H);
}
