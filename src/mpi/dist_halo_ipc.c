/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA IPC halo of ranks on one host: each rank exports the device
 * buffer its send rows are packed into; its receivers open it once, at
 * setup, and copy their ghosts out of it device to device (no host
 * staging).  The order between processes is kept by zero-byte MPI
 * messages (dist_impl.h has the protocol).  The CUDA calls are in
 * kernels/mpi/halo_ipc.cu (without CUDA: unsupported, kernels/entry_points.def).
 *
 * Test hook bsr_dipc_host (dist_impl.h): the same protocol on host vectors,
 * the exported buffers then segments of an MPI shared-memory window of the
 * host's ranks and the copies memcpy, so that a CPU build runs every
 * message of the GPU path (ordering, failures, growth, teardown). */
#include "dist_impl.h"
#include <string.h>

#define IPC_TAG_HANDLE 7311
#define IPC_TAG_DONE 7312
#define IPC_TAG_READY 7313
#define IPC_TAG_CLOSED 7314

int bsr_dipc_host = 0;

struct bsr_dipc {
    bsr_context *ctx;       /* NULL: the host emulation (bsr_dipc_host) */
    MPI_Comm node;          /* host emulation: the ranks of this host, and their window */
    MPI_Win win;
    size_t row_max;         /* bytes of a row the send buffer holds */
    void *dsend;            /* this rank's packed send rows, exported */
    void **peer;            /* [nrecv] the owners' send buffers, opened here */
    int64_t *peer_off;      /* [nrecv] first row of this rank's ghosts in owner q's buffer */
    void *copied;           /* device event after the last copies out of the owners' buffers */
    int copies_pending;     /* the event was recorded and not waited for */
    int64_t round;          /* exchanges since the last quiesce */
    MPI_Request *sdone;     /* [nrecv] "done" sends to the owners */
    MPI_Request *sready;    /* [nsend] "ready" sends to the receivers */
    MPI_Request *rready;    /* [nrecv] "ready" receives from the owners */
    int nsdone, nsready, nrready; /* of those, posted and not completed */
};

/* Handle and offset that an owner sends each receiver at setup. */
typedef struct {
    unsigned char handle[BSR_CUDA_IPC_HANDLE_BYTES];
    int64_t off;
} ipc_msg;

/* Wait for the n requests in req (n reset to 0). */
static bsr_status wait_all(MPI_Request *req, int *n, const char *what)
{
    int e = *n ? MPI_Waitall(*n, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    *n = 0;
    return e == MPI_SUCCESS ? BSR_OK : bsr_mpi_fail(e, what);
}

/* Free what the state holds on this rank: opened buffers closed, own buffer
 * freed (the caller has made sure no receiver still has it open). */
static void release(struct bsr_dipc *P, const bsr_halo *h)
{
    if (!P) return;
    if (P->ctx) {
        for (int q = 0; P->peer && q < h->nrecv; q++)
            if (P->peer[q]) bsr_cuda_ipc_close(P->ctx, P->peer[q]);
        bsr_cuda_ipc_free(P->ctx, P->dsend);
        bsr_cuda_event_free(P->copied);
    } else {   /* collective over the host's ranks, as every release is (setup failure, destroy) */
        if (P->win != MPI_WIN_NULL) MPI_Win_free(&P->win);
        if (P->node != MPI_COMM_NULL) MPI_Comm_free(&P->node);
    }
    free(P->peer); free(P->peer_off);
    free(P->sdone); free(P->sready); free(P->rready);
    free(P);
}

/* Every rank learns the first failing rank's reason (ok = 0: this rank's
 * why); returns 1 when every rank was fine.  Collective. */
static int agree_why(bsr_dmatrix *A, int ok, const char *why, bsr_status *st)
{
    bsr_dist *d = A->d;
    int mine = ok ? d->size : d->rank, first = d->size;
    int e = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, d->comm);
    if (e != MPI_SUCCESS) { *st = bsr_mpi_fail(e, "MPI_Allreduce (IPC halo setup)"); return 0; }
    if (first == d->size) return 1;
    char msg[sizeof A->halo_note] = "";
    if (d->rank == first) snprintf(msg, sizeof msg, "rank %d: %s", first, why);
    e = MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, d->comm);
    if (e != MPI_SUCCESS) { *st = bsr_mpi_fail(e, "MPI_Bcast (IPC halo setup)"); return 0; }
    msg[sizeof msg - 1] = 0;
    snprintf(A->halo_note, sizeof A->halo_note, "IPC not possible, %s", msg);
    return 0;
}

/* Whether every neighbour of this rank shares its host and its GPU can be
 * reached (why says otherwise).  Collective (two gathers over the ranks). */
static int neighbours_reachable(bsr_dmatrix *A, bsr_context *ctx, char *why, size_t wlen, bsr_status *st)
{
    bsr_dist *d = A->d;
    const bsr_halo *h = &A->h;
    int node_id = d->rank, ok = 1;
    MPI_Comm node;
    int e = MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &node);
    if (e == MPI_SUCCESS) {   /* a host's id: its lowest rank */
        e = MPI_Allreduce(&d->rank, &node_id, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
    }
    if (e != MPI_SUCCESS) { *st = bsr_mpi_fail(e, "MPI_Comm_split_type (IPC halo setup)"); return 0; }
    char bus[BSR_CUDA_BUSID_BYTES] = "host";
    if (ctx && bsr_cuda_ipc_busid(ctx, bus, sizeof bus) != BSR_OK) {
        snprintf(why, wlen, "no PCI bus id of its GPU: %s", bsr_last_error());
        ok = 0;
        bus[0] = 0;
    }
    int *nodes = bsr_malloc(sizeof(int) * (size_t)d->size, "IPC setup");
    char *buses = bsr_malloc((size_t)d->size * sizeof bus, "IPC setup");
    int have = nodes && buses, all = 0;
    /* the allocation's verdict first: every rank takes part in the gathers or none does */
    e = MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, d->comm);
    if (e == MPI_SUCCESS && all) e = MPI_Allgather(&node_id, 1, MPI_INT, nodes, 1, MPI_INT, d->comm);
    if (e == MPI_SUCCESS && all) e = MPI_Allgather(bus, (int)sizeof bus, MPI_CHAR, buses, (int)sizeof bus, MPI_CHAR, d->comm);
    if (e != MPI_SUCCESS) *st = bsr_mpi_fail(e, "MPI_Allgather (IPC halo setup)");
    if (e != MPI_SUCCESS || !all) {
        if (ok) snprintf(why, wlen, "out of host memory");
        ok = 0;
    }
    for (int pass = 0; pass < 2 && ok; pass++) {
        int n = pass ? h->nsend : h->nrecv;
        const int *rk = pass ? h->send_rank : h->recv_rank;
        for (int q = 0; q < n && ok; q++) {
            int r = rk[q];
            const char *rb = buses + (size_t)r * sizeof bus;
            if (nodes[r] != node_id) {
                snprintf(why, wlen, "neighbour rank %d is on another host", r);
                ok = 0;
            } else if (!rb[0]) {
                snprintf(why, wlen, "rank %d has no GPU bus id", r);
                ok = 0;
            } else if (ctx && bsr_cuda_ipc_peer_ok(ctx, rb, why, wlen) != BSR_OK) {
                ok = 0;   /* why says which device and what */
            }
        }
    }
    free(nodes);
    free(buses);
    return ok;
}

/* Owners send (handle, offset) to their receivers; receivers open the
 * owners' buffers.  out, in, req: room for nsend, nrecv and both messages.
 * Returns 0 with why on a local failure (the messages are exchanged
 * whatever happens). */
static int exchange_handles(bsr_dmatrix *A, struct bsr_dipc *P, const unsigned char *handle, ipc_msg *out,
                            ipc_msg *in, MPI_Request *req, char *why, size_t wlen, bsr_status *st)
{
    const bsr_halo *h = &A->h;
    int nr = 0, e = MPI_SUCCESS;
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++)
        e = MPI_Irecv(&in[q], (int)sizeof *in, MPI_BYTE, h->recv_rank[q], IPC_TAG_HANDLE, A->d->comm, &req[nr++]);
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++) {
        memcpy(out[q].handle, handle, BSR_CUDA_IPC_HANDLE_BYTES);
        out[q].off = h->send_off[q];
        e = MPI_Isend(&out[q], (int)sizeof *out, MPI_BYTE, h->send_rank[q], IPC_TAG_HANDLE, A->d->comm, &req[nr++]);
    }
    if (e == MPI_SUCCESS) e = MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    if (e != MPI_SUCCESS) {
        *st = bsr_mpi_fail(e, "IPC handle exchange");
        snprintf(why, wlen, "MPI failed");
        return 0;
    }
    for (int q = 0; q < h->nrecv; q++) {
        P->peer_off[q] = in[q].off;
        if (!P->ctx) {   /* host emulation: the handle is the owner's rank on the host */
            int owner;
            MPI_Aint size;
            int disp;
            memcpy(&owner, in[q].handle, sizeof owner);
            if (MPI_Win_shared_query(P->win, owner, &size, &disp, &P->peer[q]) != MPI_SUCCESS) {
                snprintf(why, wlen, "MPI_Win_shared_query failed");
                P->peer[q] = NULL;
                return 0;
            }
            continue;
        }
        if (bsr_cuda_ipc_open(P->ctx, in[q].handle, &P->peer[q]) != BSR_OK) {
            snprintf(why, wlen, "opening rank %d's buffer: %s", h->recv_rank[q], bsr_last_error());
            P->peer[q] = NULL;
            return 0;
        }
    }
    return 1;
}

int bsr_dipc_for(const bsr_dmatrix *A, const bsr_context *ctx)
{
    return A->ipc && A->ipc->ctx == ctx;
}

bsr_status bsr_dipc_setup(bsr_dmatrix *A, bsr_context *ctx, size_t row_max)
{
    const bsr_halo *h = &A->h;
    if (A->ipc && A->ipc->ctx == ctx && A->ipc->row_max >= row_max) return BSR_OK; /* the same on every rank */
    bsr_dipc_destroy(A);
    A->halo_note[0] = 0;
    bsr_status st = BSR_OK;
    char why[sizeof A->halo_note] = "";
    int ok = neighbours_reachable(A, ctx, why, sizeof why, &st);
    if (st) return st;
    struct bsr_dipc *P = bsr_calloc(1, sizeof *P, "IPC halo");
    unsigned char handle[BSR_CUDA_IPC_HANDLE_BYTES];
    memset(handle, 0, sizeof handle);
    if (ok && !P) { snprintf(why, sizeof why, "out of host memory"); ok = 0; }
    if (ok) {
        P->ctx = ctx;
        P->row_max = row_max;
        P->peer = bsr_calloc((size_t)h->nrecv + 1, sizeof *P->peer, "IPC halo");
        P->peer_off = bsr_calloc((size_t)h->nrecv + 1, sizeof *P->peer_off, "IPC halo");
        P->sdone = bsr_malloc(sizeof(MPI_Request) * ((size_t)h->nrecv + 1), "IPC halo");
        P->sready = bsr_malloc(sizeof(MPI_Request) * ((size_t)h->nsend + 1), "IPC halo");
        P->rready = bsr_malloc(sizeof(MPI_Request) * ((size_t)h->nrecv + 1), "IPC halo");
        if (!P->peer || !P->peer_off || !P->sdone || !P->sready || !P->rready) {
            snprintf(why, sizeof why, "out of host memory");
            ok = 0;
        }
    }
    size_t bytes = row_max * (size_t)h->send_off[h->nsend];
    if (P) { P->node = MPI_COMM_NULL; P->win = MPI_WIN_NULL; }
    if (!ctx) {   /* host emulation: one window over the host's ranks, every rank of it taking part */
        MPI_Comm node = MPI_COMM_NULL;
        MPI_Win win = MPI_WIN_NULL;
        void *base = NULL;
        int e = MPI_Comm_split_type(A->d->comm, MPI_COMM_TYPE_SHARED, A->d->rank, MPI_INFO_NULL, &node);
        if (e == MPI_SUCCESS)
            e = MPI_Win_allocate_shared((MPI_Aint)(ok ? bytes : 0), 1, MPI_INFO_NULL, node, &base, &win);
        if (e != MPI_SUCCESS) {
            if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
            free(P);
            return bsr_mpi_fail(e, "MPI_Win_allocate_shared (IPC halo emulation)");
        }
        int me = 0;
        MPI_Comm_rank(node, &me);
        memcpy(handle, &me, sizeof me);
        if (P) { P->node = node; P->win = win; P->dsend = base; }
        else { MPI_Win_free(&win); MPI_Comm_free(&node); }   /* (the others' frees match at agreement) */
    } else if (ok && bsr_cuda_ipc_alloc(ctx, bytes, &P->dsend, handle) != BSR_OK) {
        snprintf(why, sizeof why, "exporting a %zu-byte device buffer: %s", bytes, bsr_last_error());
        ok = 0;
    }
    if (ok && ctx && bsr_cuda_event_new(ctx, &P->copied) != BSR_OK) {
        snprintf(why, sizeof why, "%s", bsr_last_error());
        ok = 0;
    }
    ipc_msg *out = bsr_calloc((size_t)h->nsend + 1, sizeof *out, "IPC setup");
    ipc_msg *in = bsr_calloc((size_t)h->nrecv + 1, sizeof *in, "IPC setup");
    MPI_Request *req = bsr_malloc(sizeof(MPI_Request) * (size_t)(h->nsend + h->nrecv + 1), "IPC setup");
    if (ok && (!out || !in || !req)) { snprintf(why, sizeof why, "out of host memory"); ok = 0; }
    if (!agree_why(A, ok, why, &st)) {
        free(out); free(in); free(req);
        release(P, h);
        return st;
    }
    ok = exchange_handles(A, P, handle, out, in, req, why, sizeof why, &st);
    free(out); free(in); free(req);
    if (!agree_why(A, ok, why, &st)) {
        /* opened buffers closed on every rank before any rank frees its own:
         * the agreement above was the last point all ranks passed, so one more */
        for (int q = 0; q < h->nrecv; q++)
            if (P->peer[q]) { if (ctx) bsr_cuda_ipc_close(ctx, P->peer[q]); P->peer[q] = NULL; }
        MPI_Barrier(A->d->comm);
        release(P, h);
        return st;
    }
    A->ipc = P;
    return BSR_OK;
}

void *bsr_dipc_send_buffer(const bsr_dmatrix *A, size_t row)
{
    return A->ipc && row <= A->ipc->row_max ? A->ipc->dsend : NULL;
}

bsr_status bsr_dipc_begin(bsr_dmatrix *A)
{
    struct bsr_dipc *P = A->ipc;
    const bsr_halo *h = &A->h;
    bsr_status st = BSR_OK;
    if (P->copies_pending) {   /* the previous ghosts are out of the owners' buffers */
        st = bsr_cuda_event_wait(P->copied);
        P->copies_pending = 0;
    }
    if (P->round++ == 0) return st;   /* the first exchange: every buffer is free */
    /* done: tell the owners (whether or not this rank failed), then hear the receivers */
    bsr_status s2 = wait_all(P->sdone, &P->nsdone, "MPI_Waitall (IPC halo done)");
    int e = MPI_SUCCESS;
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++)
        e = MPI_Isend(NULL, 0, MPI_BYTE, h->recv_rank[q], IPC_TAG_DONE, A->d->comm, &P->sdone[P->nsdone++]);
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++)
        e = MPI_Recv(NULL, 0, MPI_BYTE, h->send_rank[q], IPC_TAG_DONE, A->d->comm, MPI_STATUS_IGNORE);
    if (e != MPI_SUCCESS && !s2) s2 = bsr_mpi_fail(e, "IPC halo (done)");
    return st ? st : s2;
}

bsr_status bsr_dipc_post(bsr_dmatrix *A)
{
    struct bsr_dipc *P = A->ipc;
    const bsr_halo *h = &A->h;
    bsr_status st = wait_all(P->sready, &P->nsready, "MPI_Waitall (IPC halo ready)");
    int e = MPI_SUCCESS;
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++)
        e = MPI_Irecv(NULL, 0, MPI_BYTE, h->recv_rank[q], IPC_TAG_READY, A->d->comm, &P->rready[P->nrready++]);
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++)
        e = MPI_Isend(NULL, 0, MPI_BYTE, h->send_rank[q], IPC_TAG_READY, A->d->comm, &P->sready[P->nsready++]);
    if (e != MPI_SUCCESS && !st) st = bsr_mpi_fail(e, "IPC halo (ready)");
    return st;
}

bsr_status bsr_dipc_finish(bsr_dmatrix *A, char *ghosts, size_t row)
{
    struct bsr_dipc *P = A->ipc;
    const bsr_halo *h = &A->h;
    bsr_status st = wait_all(P->rready, &P->nrready, "MPI_Waitall (IPC halo ready)");
    if (st || !ghosts) return st;
    if (row > P->row_max)
        return bsr_error(BSR_ERR_INTERNAL, "IPC halo: rows of %zu bytes, the buffers hold %zu", row, P->row_max);
    for (int q = 0; q < h->nrecv && !st; q++) {
        size_t n = (size_t)(h->recv_off[q + 1] - h->recv_off[q]);
        char *to = ghosts + (size_t)h->recv_off[q] * row;
        const char *from = (const char *)P->peer[q] + (size_t)P->peer_off[q] * row;
        if (P->ctx) st = bsr_cuda_copy_async(P->ctx, to, from, n * row);
        else memcpy(to, from, n * row);
    }
    if (!P->ctx) return st;
    if (!st) st = bsr_cuda_event_record(P->ctx, P->copied);
    if (!st) P->copies_pending = 1;
    return st;
}

bsr_status bsr_dipc_quiesce(bsr_dmatrix *A)
{
    struct bsr_dipc *P = A->ipc;
    if (!P) return BSR_OK;
    bsr_status st = BSR_OK;
    if (P->round > 0) st = bsr_dipc_begin(A);   /* the last exchange's "done" */
    bsr_status s2 = wait_all(P->sdone, &P->nsdone, "MPI_Waitall (IPC halo done)");
    bsr_status s3 = wait_all(P->sready, &P->nsready, "MPI_Waitall (IPC halo ready)");
    bsr_status s4 = wait_all(P->rready, &P->nrready, "MPI_Waitall (IPC halo ready)");
    P->round = 0;
    return st ? st : s2 ? s2 : s3 ? s3 : s4;
}

void bsr_dipc_destroy(bsr_dmatrix *A)
{
    struct bsr_dipc *P = A->ipc;
    if (!P) return;
    const bsr_halo *h = &A->h;
    bsr_dipc_quiesce(A);
    /* close the owners' buffers and say so; free this rank's once its receivers have */
    for (int q = 0; q < h->nrecv; q++)
        if (P->peer[q]) { if (P->ctx) bsr_cuda_ipc_close(P->ctx, P->peer[q]); P->peer[q] = NULL; }
    int n = 0;
    for (int q = 0; q < h->nrecv; q++)
        if (MPI_Isend(NULL, 0, MPI_BYTE, h->recv_rank[q], IPC_TAG_CLOSED, A->d->comm, &P->sdone[n]) == MPI_SUCCESS) n++;
    for (int q = 0; q < h->nsend; q++)
        MPI_Recv(NULL, 0, MPI_BYTE, h->send_rank[q], IPC_TAG_CLOSED, A->d->comm, MPI_STATUS_IGNORE);
    if (n) MPI_Waitall(n, P->sdone, MPI_STATUSES_IGNORE);
    release(P, h);
    A->ipc = NULL;
}
