/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed product Y = A X: the halo exchange (nonblocking, through
 * pinned host buffers on the CUDA backend) overlapped with the interior
 * rows' product; the interface rows once the ghosts are in. */
#include "dist_impl.h"
#include <string.h>

#define HALO_TAG 7301

/* Exchange buffers for one (backend, k, precision). */
struct bsr_dhalo_buf {
    bsr_context *ctx;       /* NULL: host vectors */
    int k;
    bsr_precision prec;
    bsr_multivec *xref;     /* the columns interface rows read: own rows ifc_own, then ghosts */
    void *sbuf, *rbuf;      /* host send rows; received ghosts (device path only: pinned) */
    void *dsend;            /* device: packed send rows */
    int *dsend_idx, *difc_own; /* device copies of the index lists */
    MPI_Request *req;       /* nrecv + nsend */
};

void bsr_dhalo_buf_free(bsr_dmatrix *A)
{
    struct bsr_dhalo_buf *B = A->buf;
    if (!B) return;
    bsr_multivec_destroy(B->xref);
    if (B->ctx) {
        bsr_cuda_pinned_free(B->sbuf);
        bsr_cuda_pinned_free(B->rbuf);
        bsr_cuda_buffer_free(B->dsend);
        bsr_cuda_buffer_free(B->dsend_idx);
        bsr_cuda_buffer_free(B->difc_own);
    } else {
        free(B->sbuf);
    }
    free(B->req);
    free(B);
    A->buf = NULL;
}

/* Buffers for (ctx, k, prec), kept between products. */
static bsr_status get_buf(bsr_dmatrix *A, bsr_context *ctx, int k, bsr_precision prec,
                          struct bsr_dhalo_buf **out)
{
    struct bsr_dhalo_buf *B = A->buf;
    if (B && B->ctx == ctx && B->k == k && B->prec == prec) { *out = B; return BSR_OK; }
    bsr_dhalo_buf_free(A);
    B = bsr_calloc(1, sizeof *B, "halo buffers");
    if (!B) return BSR_ERR_NOMEM;
    A->buf = B;
    B->ctx = ctx; B->k = k; B->prec = prec;
    const bsr_halo *h = &A->h;
    size_t row = (size_t)A->b * k * bsr_precision_size(prec);
    int nsend = h->send_off[h->nsend];
    int64_t nx = (int64_t)(A->nifc_own + h->nghost) * A->b;
    bsr_status st = BSR_OK;
    B->req = bsr_malloc(sizeof(MPI_Request) * (size_t)(h->nsend + h->nrecv + 1), "halo requests");
    if (!B->req) st = BSR_ERR_NOMEM;
    else if (!ctx) {
        st = bsr_multivec_create(&B->xref, nx, k, prec);
        if (!st && !(B->sbuf = bsr_malloc(row * (size_t)nsend + 1, "halo send buffer"))) st = BSR_ERR_NOMEM;
    } else {
        st = bsr_multivec_create_device(ctx, &B->xref, nx, k, prec);
        if (!st) st = bsr_cuda_pinned(row * (size_t)nsend, &B->sbuf);
        if (!st) st = bsr_cuda_pinned(row * (size_t)h->nghost, &B->rbuf);
        if (!st) st = bsr_cuda_buffer(ctx, row * (size_t)nsend, &B->dsend);
        if (!st) st = bsr_cuda_buffer(ctx, sizeof(int) * (size_t)nsend, (void **)&B->dsend_idx);
        if (!st) st = bsr_cuda_buffer(ctx, sizeof(int) * (size_t)A->nifc_own, (void **)&B->difc_own);
        if (!st) st = bsr_cuda_copy_async(ctx, B->dsend_idx, h->send_idx, sizeof(int) * (size_t)nsend);
        if (!st) st = bsr_cuda_copy_async(ctx, B->difc_own, A->ifc_own, sizeof(int) * (size_t)A->nifc_own);
        if (!st) st = bsr_context_sync(ctx);
    }
    if (st) {   /* nothing half-built stays behind for the next call to find */
        bsr_dhalo_buf_free(A);
        return st;
    }
    *out = B;
    return BSR_OK;
}

/* Device data of X (NULL without a device copy). */
static void *dev_data(const bsr_multivec *X)
{
    return X->dev ? ((bsr_dev_multivec *)X->dev)->data : NULL;
}

/* Host rows idx[0..n) of X packed into dst. */
static void pack_host(const bsr_multivec *X, const int *idx, int n, size_t row, char *dst)
{
    const char *x = X->data;
    for (int t = 0; t < n; t++) memcpy(dst + (size_t)t * row, x + (size_t)idx[t] * row, row);
}

/* Y_rows = M X on the backend of ctx (NULL: host). */
static bsr_status local_spmm(bsr_context *ctx, bsr_matrix *M, const bsr_multivec *X, bsr_multivec *Y)
{
    if (!ctx) return bsr_spmm(1.0, M, X, 0.0, Y);
    BSR_TRY(bsr_matrix_upload(ctx, M));
    bsr_cuda_matrix_one_layout(M, 1);   /* the rank's rows once on the device: the layout the products read */
    return bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 1.0, M, X, 0.0, Y);
}

/* Profiling: wait for ctx's queued work, so that the host clock sees it. */
static void settle(bsr_context *ctx, const bsr_dtimes *tm)
{
    if (ctx && tm && tm->on) (void)bsr_context_sync(ctx); /* a failure shows at the next call */
}

/* Profiling: tm->t[part] += the seconds since *t0, and *t0 = now. */
static void lap(bsr_dtimes *tm, int part, double *t0)
{
    if (!tm || !tm->on) return;
    double t = MPI_Wtime();
    tm->t[part] += t - *t0;
    *t0 = t;
}

/* The path of a product on ctx (NULL: host vectors, the IPC protocol only
 * in the host emulation of the tests). */
static int path_of(const bsr_dmatrix *A, const bsr_context *ctx)
{
    if (!ctx) return A->halo_path == BSR_DHALO_IPC && bsr_dipc_for(A, NULL) ? BSR_DHALO_IPC : BSR_DHALO_CPU;
    if (A->halo_path == BSR_DHALO_NCCL && !bsr_dnccl_for(A, ctx))   /* another GPU's communicator */
        return A->d->cuda_aware ? BSR_DHALO_MPI : BSR_DHALO_HOST;
    return bsr_dhalo_device_path(A);
}

int bsr_dhalo_device_path(const bsr_dmatrix *A)
{
    if (A->halo_path == BSR_DHALO_NCCL && A->nccl) return BSR_DHALO_NCCL;
    if (A->halo_path == BSR_DHALO_IPC && A->ipc && !bsr_dipc_for(A, NULL)) return BSR_DHALO_IPC;
    if (A->halo_path == BSR_DHALO_HOST || A->halo_path == BSR_DHALO_MPI) return A->halo_path;
    return A->d->cuda_aware ? BSR_DHALO_MPI : BSR_DHALO_HOST;
}

/* The IPC exchange of a rank that skips its work: the "done" and "ready"
 * messages as in a real exchange, nothing copied. */
static bsr_status ipc_skip(bsr_dmatrix *A)
{
    bsr_status st = bsr_dipc_begin(A), s2 = bsr_dipc_post(A), s3 = bsr_dipc_finish(A, NULL, 0);
    return st ? st : s2 ? s2 : s3;
}

/* The halo exchange of a rank that skips its local work after a failure:
 * whatever its send buffer holds (nothing without one) goes out, and what
 * comes in is received and dropped, so that no neighbour waits forever. */
static bsr_status halo_skip(bsr_dmatrix *A)
{
    if (A->halo_path == BSR_DHALO_IPC && A->ipc) return ipc_skip(A);
    if (A->halo_path == BSR_DHALO_NCCL && A->nccl) return bsr_dnccl_skip(A);
    const bsr_halo *h = &A->h;
    struct bsr_dhalo_buf *B = A->buf;
    MPI_Datatype type = B && B->prec == BSR_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
    int vals = B ? A->b * B->k : 0, e = MPI_SUCCESS;
    size_t row = B ? (size_t)vals * bsr_precision_size(B->prec) : 0;
    MPI_Request *req = bsr_malloc(sizeof(MPI_Request) * (size_t)(h->nsend + 1), "halo requests");
    if (!req) return BSR_ERR_NOMEM;
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++)
        e = MPI_Isend(B ? (char *)B->sbuf + (size_t)h->send_off[q] * row : NULL,
                      (h->send_off[q + 1] - h->send_off[q]) * vals, type, h->send_rank[q], HALO_TAG,
                      A->d->comm, &req[q]);
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++) {
        MPI_Status ms;
        int cnt = 0;
        e = MPI_Probe(h->recv_rank[q], HALO_TAG, A->d->comm, &ms);
        if (e == MPI_SUCCESS) e = MPI_Get_count(&ms, MPI_BYTE, &cnt);
        char *tmp = e == MPI_SUCCESS ? malloc((size_t)cnt + 1) : NULL;
        if (e == MPI_SUCCESS)
            e = MPI_Recv(tmp, cnt, MPI_BYTE, h->recv_rank[q], HALO_TAG, A->d->comm, MPI_STATUS_IGNORE);
        free(tmp);
    }
    if (e == MPI_SUCCESS) e = MPI_Waitall(h->nsend, req, MPI_STATUSES_IGNORE);
    free(req);
    return e == MPI_SUCCESS ? BSR_OK : bsr_mpi_fail(e, "halo exchange after a local failure");
}

/* The IPC start: wait until the receivers have copied the previous rows
 * out, pack the rows into the exported buffer, tell the receivers.  A
 * failure still completes the exchange's messages (no neighbour waits). */
static bsr_status ipc_start(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X, struct bsr_dhalo_buf *B,
                            bsr_dtimes *tm)
{
    const bsr_halo *h = &A->h;
    double t0 = MPI_Wtime();
    bsr_status st = bsr_dipc_begin(A);
    lap(tm, DT_WAIT, &t0);
    int nsend = h->send_off[h->nsend];
    size_t row = (size_t)A->b * X->k * bsr_precision_size(X->prec);
    void *sbuf = bsr_dipc_send_buffer(A, row);
    if (!st && !sbuf)
        st = bsr_error(BSR_ERR_INTERNAL, "IPC halo: rows of %zu bytes do not fit the buffers set up", row);
    if (!ctx && !st)   /* the host emulation */
        pack_host(X, h->send_idx, nsend, row, sbuf);
    else if (!st) st = bsr_cuda_gather_rows(ctx, X, B->dsend_idx, nsend, (size_t)A->b * X->k, sbuf);
    if (ctx && !st) st = bsr_context_sync(ctx);   /* packed before the receivers read */
    lap(tm, DT_PACK, &t0);
    bsr_status s2 = bsr_dipc_post(A);
    lap(tm, DT_POST, &t0);
    if (st || s2) {
        bsr_dipc_finish(A, NULL, 0);
        return st ? st : s2;
    }
    return BSR_OK;
}

/* The NCCL start: the rows packed on the device, the exchange queued after
 * them (posted even when packing failed: its neighbours wait for it). */
static bsr_status nccl_start(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X, struct bsr_dhalo_buf *B,
                             bsr_dtimes *tm)
{
    double t0 = MPI_Wtime();
    const size_t vals = (size_t)A->b * X->k, row = vals * bsr_precision_size(X->prec);
    bsr_status st = bsr_cuda_gather_rows(ctx, X, B->dsend_idx, A->h.send_off[A->h.nsend], vals, B->dsend);
    settle(ctx, tm);
    lap(tm, DT_PACK, &t0);
    bsr_status s2 = bsr_dnccl_post(A, B->dsend, (char *)dev_data(B->xref) + (size_t)A->nifc_own * row, row);
    lap(tm, DT_POST, &t0);
    return st ? st : s2;
}

/* Pack the rows the neighbours need and post the exchange (*nreq requests
 * in B->req).  If packing fails the exchange is still completed (halo_skip),
 * so that no neighbour waits, and the failure is returned. */
static bsr_status halo_start(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X,
                             struct bsr_dhalo_buf **Bout, int *nreq, bsr_dtimes *tm)
{
    const bsr_halo *h = &A->h;
    struct bsr_dhalo_buf *B;
    *nreq = 0;
    bsr_status st = get_buf(A, ctx, X->k, X->prec, &B);
    if (st) { halo_skip(A); return st; }
    *Bout = B;
    const int path = path_of(A, ctx);
    settle(ctx, tm);   /* the work queued before is not the halo's */
    if (path == BSR_DHALO_IPC) return ipc_start(A, ctx, X, B, tm);
    if (path == BSR_DHALO_NCCL) return nccl_start(A, ctx, X, B, tm);
    double t0 = MPI_Wtime();
    MPI_Datatype type = X->prec == BSR_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
    size_t row = (size_t)A->b * X->k * bsr_precision_size(X->prec);
    int vals = A->b * X->k, nsend = h->send_off[h->nsend];
    const int aware = path == BSR_DHALO_MPI;
    if (ctx) {  /* gathered on the device, copied out to pinned memory unless MPI reads device memory */
        st = bsr_cuda_gather_rows(ctx, X, B->dsend_idx, nsend, (size_t)vals, B->dsend);
        if (!st && !aware) st = bsr_cuda_copy_async(ctx, B->sbuf, B->dsend, row * (size_t)nsend);
        if (!st) st = bsr_context_sync(ctx);
        if (st) { halo_skip(A); return st; }
    } else {
        pack_host(X, h->send_idx, nsend, row, B->sbuf);
    }
    lap(tm, DT_PACK, &t0);
    char *ghosts = aware ? (char *)dev_data(B->xref) + (size_t)A->nifc_own * row
                 : ctx ? B->rbuf : (char *)B->xref->data + (size_t)A->nifc_own * row;
    char *sbuf = aware ? B->dsend : B->sbuf;
    int e = MPI_SUCCESS;
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++)
        e = MPI_Irecv(ghosts + (size_t)h->recv_off[q] * row, (h->recv_off[q + 1] - h->recv_off[q]) * vals,
                      type, h->recv_rank[q], HALO_TAG, A->d->comm, &B->req[(*nreq)++]);
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++)
        e = MPI_Isend(sbuf + (size_t)h->send_off[q] * row, (h->send_off[q + 1] - h->send_off[q]) * vals,
                      type, h->send_rank[q], HALO_TAG, A->d->comm, &B->req[(*nreq)++]);
    lap(tm, DT_POST, &t0);
    return e == MPI_SUCCESS ? BSR_OK : bsr_mpi_fail(e, "MPI_Isend/MPI_Irecv (halo)");
}

/* Wait for the exchange; the ghosts then sit in B->xref's rows after the
 * own ones (copied there from pinned memory, or from the owners' device
 * buffers by IPC, on the device).  st: a failure since the start, returned
 * after the wait. */
static bsr_status halo_finish(bsr_dmatrix *A, bsr_context *ctx, struct bsr_dhalo_buf *B, int nreq,
                              bsr_status st, bsr_dtimes *tm)
{
    const int path = path_of(A, ctx);
    size_t row = (size_t)A->b * B->k * bsr_precision_size(B->prec);
    char *dghosts = (char *)(ctx ? dev_data(B->xref) : B->xref->data) + (size_t)A->nifc_own * row;
    double t0 = MPI_Wtime();
    if (path == BSR_DHALO_NCCL) {   /* the device waits, not the host */
        bsr_status s2 = bsr_dnccl_wait(A);
        if (!st) st = s2;
        settle(ctx, tm);
        lap(tm, DT_WAIT, &t0);
        return st;
    }
    if (path == BSR_DHALO_IPC) {
        bsr_status s2 = bsr_dipc_finish(A, st ? NULL : dghosts, row);  /* waits, then copies */
        if (!st) st = s2;
        lap(tm, DT_WAIT, &t0);  /* the copies are queued: their time is the unpack's (profiling) */
        settle(ctx, tm);
        lap(tm, DT_UNPACK, &t0);
        return st;
    }
    int e = MPI_Waitall(nreq, B->req, MPI_STATUSES_IGNORE);  /* even after a local failure: no hang */
    if (e != MPI_SUCCESS && !st) st = bsr_mpi_fail(e, "MPI_Waitall (halo)");
    lap(tm, DT_WAIT, &t0);
    if (!st && path == BSR_DHALO_HOST)
        st = bsr_cuda_copy_async(ctx, dghosts, B->rbuf, row * (size_t)A->h.nghost);
    settle(ctx, tm);
    lap(tm, DT_UNPACK, &t0);
    return st;
}

/* One product of M with k zero columns on ctx's device: its kernel choice
 * (the AUTO kernel's timed trial, the sliced copy) made outside a solve. */
static bsr_status warm_one(bsr_context *ctx, bsr_matrix *M, int k)
{
    bsr_multivec *X = NULL, *Y = NULL;
    bsr_status st = bsr_matrix_upload(ctx, M);
    if (!st) bsr_cuda_matrix_one_layout(M, 1);   /* as local_spmm */
    if (!st) st = bsr_multivec_create_device(ctx, &X, (int64_t)M->nbcols * M->b, k, M->prec);
    if (!st) st = bsr_multivec_create_device(ctx, &Y, (int64_t)M->nbrows * M->b, k, M->prec);
    if (!st) st = bsr_ctx_fill(ctx, X, 0.0);
    if (!st) st = bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 1.0, M, X, 0.0, Y);
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y);
    return st;
}

bsr_status bsr_dmatrix_warm(bsr_dmatrix *A, bsr_context *ctx, int k)
{
    if (!ctx || bsr_context_backend(ctx) != BSR_BACKEND_CUDA) return BSR_OK;
    if (A->nint > 0) BSR_TRY(warm_one(ctx, A->Aint, k));
    if (A->nrows > A->nint) BSR_TRY(warm_one(ctx, A->Aifc, k));
    return BSR_OK;
}

/* The start of the halo's users: *ctx NULL unless a CUDA context, the
 * exchange of X's ghosts begun (halo_start) at *t0 (MPI_Wtime). */
static bsr_status halo_begin(bsr_dmatrix *A, bsr_context **ctx, const bsr_multivec *X,
                             struct bsr_dhalo_buf **B, int *nreq, bsr_dtimes *tm, double *t0)
{
    if (*ctx && bsr_context_backend(*ctx) != BSR_BACKEND_CUDA) *ctx = NULL;
    *B = NULL;
    *nreq = 0;
    *t0 = MPI_Wtime();
    return halo_start(A, *ctx, X, B, nreq, tm);
}

bsr_status bsr_dmatrix_spmm_internal(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X,
                                     bsr_multivec *Y, bsr_dtimes *tm)
{
    if (!X) return halo_skip(A);
    struct bsr_dhalo_buf *B;
    int nreq;
    double t0;
    BSR_TRY(halo_begin(A, &ctx, X, &B, &nreq, tm, &t0));
    double t1 = MPI_Wtime(), tc = t1 - t0;
    size_t row = (size_t)A->b * X->k * bsr_precision_size(X->prec);
    /* interior rows while the halo is in flight */
    bsr_mv_view vi, vf;
    bsr_status st = BSR_OK;
    if (A->nint > 0) st = local_spmm(ctx, A->Aint, X, bsr_multivec_view(Y, 0, (int64_t)A->nint * A->b, &vi));
    settle(ctx, tm);
    lap(tm, DT_INT, &t1);
    /* own columns of the interface rows, next to the ghosts */
    if (!st) {
        if (ctx) st = bsr_cuda_gather_rows(ctx, X, B->difc_own, A->nifc_own, (size_t)A->b * X->k, dev_data(B->xref));
        else pack_host(X, A->ifc_own, A->nifc_own, row, B->xref->data);
    }
    settle(ctx, tm);
    lap(tm, DT_UNPACK, &t1);
    t1 = MPI_Wtime();
    st = halo_finish(A, ctx, B, nreq, st, tm);
    double t2 = MPI_Wtime();
    tc += t2 - t1;
    if (!st && A->nrows > A->nint)
        st = local_spmm(ctx, A->Aifc, B->xref,
                        bsr_multivec_view(Y, (int64_t)A->nint * A->b, (int64_t)(A->nrows - A->nint) * A->b, &vf));
    settle(ctx, tm);
    lap(tm, DT_IFC, &t2);
    if (tm) tm->halo_s += tc;
    return st;
}

bsr_status bsr_dmatrix_ghosts(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X, bsr_multivec *G,
                              bsr_dtimes *tm)
{
    if (!X) return halo_skip(A);
    struct bsr_dhalo_buf *B;
    int nreq;
    double t0;
    BSR_TRY(halo_begin(A, &ctx, X, &B, &nreq, tm, &t0));
    bsr_status st = halo_finish(A, ctx, B, nreq, BSR_OK, tm);
    if (tm) tm->halo_s += MPI_Wtime() - t0;
    bsr_mv_view vg;
    const bsr_multivec *from = bsr_multivec_view(B->xref, (int64_t)A->nifc_own * A->b, (int64_t)A->h.nghost * A->b, &vg);
    if (!st) st = ctx ? bsr_ctx_copy(ctx, G, from) : bsr_multivec_copy(G, from);
    return st;
}

void bsr_dmatrix_perm_free(bsr_dmatrix *A)
{
    bsr_multivec_destroy(A->px);
    bsr_multivec_destroy(A->py);
    A->px = A->py = NULL;
}

/* A->px, A->py for k columns of precision prec: the last product's when
 * they fit, else new (a product in a loop allocates nothing). */
static bsr_status perm_buffers(bsr_dmatrix *A, int k, bsr_precision prec)
{
    if (A->px && A->px->k == k && A->px->prec == prec) return BSR_OK;
    bsr_dmatrix_perm_free(A);
    const int64_t n = (int64_t)A->nrows * A->b;
    bsr_status st = bsr_multivec_create(&A->px, n, k, prec);
    if (!st) st = bsr_multivec_create(&A->py, n, k, prec);
    if (st) bsr_dmatrix_perm_free(A);
    return st;
}

bsr_status bsr_dmatrix_spmm(bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y)
{
    BSR_CHECK_ARG(A && X && Y, "bsr_dmatrix_spmm: NULL argument");
    BSR_TRY(bsr_dmatrix_check_values(A, "bsr_dmatrix_spmm"));
    bsr_status st = BSR_OK;
    int64_t n = (int64_t)A->nrows * A->b;
    if (X->n != n || Y->n != n || X->k != Y->k)
        st = bsr_error(BSR_ERR_SIZE, "bsr_dmatrix_spmm: %lld local rows; X is %lld x %d, Y %lld x %d",
                       (long long)n, (long long)X->n, X->k, (long long)Y->n, Y->k);
    else if (X->prec != A->prec || Y->prec != A->prec)
        st = bsr_error(BSR_ERR_ARG, "bsr_dmatrix_spmm: A, X and Y must have the same precision");
    else if (!X->data || !Y->data)
        st = bsr_error(BSR_ERR_ARG, "bsr_dmatrix_spmm: host multivectors expected");
    if (!st) st = perm_buffers(A, X->k, X->prec);
    if (!st) st = bsr_dmatrix_permute(A, X, A->px, 1);
    if ((st = bsr_dist_agree(A->d, st))) return st;
    st = bsr_dmatrix_spmm_internal(A, NULL, A->px, A->py, NULL);
    if (!st) st = bsr_dmatrix_permute(A, A->py, Y, 0);
    return bsr_dist_agree(A->d, st);
}
