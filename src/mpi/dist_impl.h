/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the MPI layer (src/mpi/): the distributed context, the
 * distributed matrix with its halo plan, collective error agreement. */
#ifndef BSR_DIST_IMPL_H
#define BSR_DIST_IMPL_H

#include "bsrsolve_mpi.h"
#include "internal.h"

struct bsr_dist {
    MPI_Comm comm;
    int rank, size;
    bsr_context *ctx;   /* the rank's backend (NULL: CPU) */
    int device;         /* ctx is a CUDA context */
    int cuda_aware;     /* halos go to MPI as device pointers (else through pinned host buffers) */
    int local_ranks;    /* ranks of comm on this rank's node */
};

/* Every rank learns whether any rank failed: st is this rank's status; the
 * lowest failing rank's status and message become every rank's (the others
 * get "rank R: <message>").  Returns the agreed status. */
bsr_status bsr_dist_agree(bsr_dist *d, bsr_status st);
/* out[j] = sum over ranks of part[j] (j < n; out may be part), added in
 * rank order on every rank (deterministic, the same bits everywhere); and
 * *flags = the sum of the ranks' flag values (failures travel with the
 * values, in the same call).  Needs no memory of its own: it cannot fail on
 * one rank alone. */
bsr_status bsr_dist_sum(bsr_dist *d, const double *part, double *out, int n, double flag, double *flags);
/* bsr_dist_sum that also measures this rank's idle time in it: *late (NULL:
 * not measured) = the latest rank's arrival minus this rank's, by a clock
 * stamp gathered with the values (>= 0), or -1 when the ranks do not share
 * a host (their clocks are not comparable).  The sums are bsr_dist_sum's bits. */
bsr_status bsr_dist_sum_late(bsr_dist *d, const double *part, double *out, int n, double flag, double *flags,
                             double *late);
/* MPI error -> BSR_ERR_INTERNAL naming the call (MPI's own text appended). */
bsr_status bsr_mpi_fail(int err, const char *call);
#define MPI_TRY(call)                                                 \
    do {                                                              \
        int _e = (call);                                              \
        if (_e != MPI_SUCCESS) return bsr_mpi_fail(_e, #call);        \
    } while (0)

/* Halo plan: which of this rank's rows go to which rank, and where the
 * ghost rows arrive: ghosts sorted by global row, so grouped by owner rank. */
typedef struct {
    int nsend;          /* ranks this one sends to */
    int *send_rank;     /* [nsend] */
    int *send_off;      /* [nsend+1] into send_idx */
    int *send_idx;      /* internal rows to send */
    int nrecv;          /* ranks this one receives from */
    int *recv_rank;     /* [nrecv] */
    int *recv_off;      /* [nrecv+1]: ghosts of recv_rank[q] are [recv_off[q], recv_off[q+1]) */
    int nghost;
    int64_t *ghost_gid; /* [nghost] global block row of each ghost, ascending */
} bsr_halo;

/* Seconds of the parts of distributed products on one rank.  on: measure
 * them (profile=1), synchronizing the device at each part's end so that
 * the host clock sees its work; halo_s is measured always (pack, post,
 * wait, unpack together, without synchronizing). */
enum { DT_INT, DT_IFC, DT_PACK, DT_POST, DT_WAIT, DT_UNPACK, DT_N };
typedef struct {
    double t[DT_N];
    double halo_s;
    int on;
} bsr_dtimes;

/* CUDA IPC halo state (dist_halo_ipc.c). */
struct bsr_dipc;

/* The distributed matrix.  Local rows are kept in an internal order:
 * interior rows (no ghost column) first, interface rows last; perm[i] is the
 * caller's local row of internal row i.  Aoo (sorted, nrows x nrows) is the
 * rank's diagonal block for the preconditioner.  The product uses Aint
 * (interior rows, owned columns) and Aifc (interface rows over the columns
 * xref: own rows `ifc_own` then the ghosts), both with each row's blocks in
 * global column order, so that every row sums as the serial product does. */
struct bsr_dmatrix {
    bsr_dist *d;
    int64_t nglobal, row0;
    int64_t *rows0;     /* [size+1] first global row of each rank */
    int nrows, b, nint; /* nint: interior rows */
    bsr_precision prec;
    int *perm;          /* [nrows] caller's row of internal row i */
    int *iperm;         /* [nrows] internal row of caller's row */
    bsr_matrix *Aoo, *Aint, *Aifc;
    int nifc_own;       /* own rows read by interface rows */
    int *ifc_own;       /* [nifc_own] their internal indices */
    bsr_halo h;
    /* values: block q of the caller's arrays goes to Aoo block map_oo[q]
     * (-1: ghost column) and to Aint/Aifc block map_mv[q] (>= nnzb(Aint): Aifc) */
    int64_t nnz_in;
    int *map_oo, *map_mv;
    unsigned flags;     /* creation flags (block layout) */
    int values_bad;     /* the last set_values failed on some rank: the ranks hold a mix of old
                         * and new values, refused by products and solvers until a good one */
    struct bsr_dhalo_buf *buf; /* exchange buffers, by k and backend (dist_spmm.c) */
    bsr_multivec *px, *py;     /* bsr_dmatrix_spmm's X and Y in the internal row order, kept
                                * between products of one k and precision */
    int halo_path;             /* BSR_DHALO_* of device products (set by the solve; 0: not chosen,
                                * the device-pointer path where MPI is CUDA-aware, else host) */
    char halo_note[192];       /* why the path differs from the one asked ("" when it does not) */
    struct bsr_dipc *ipc;      /* CUDA IPC buffers (NULL: none set up) */
    struct bsr_dnccl *nccl;    /* the NCCL communicator (NULL: none set up) */
};

/* The CUDA IPC halo (dist_halo_ipc.c): each rank's packed send rows live in
 * a device buffer that its receivers have opened; a receiver copies its
 * ghosts straight from the owner's buffer, device to device.  Ordering is
 * by zero-byte MPI messages: "ready" (owner to receiver, the rows are
 * packed) and "done" (receiver to owner, the previous rows were copied out,
 * the buffer may be packed again; sent at the start of the next exchange).
 *
 * setup: collective; tries to open every neighbour's buffer for rows of up
 * to row_max bytes (ranks on one host, peer access, every CUDA call
 * succeeding on every rank); A->ipc stays NULL and A->halo_note says why
 * when not possible anywhere.  Fails only on an MPI error.
 * begin: wait for the previous copies, send "done", wait for the
 * receivers' "done" (the send buffer is free); then the caller packs.
 * post: send "ready" to the receivers, post the receives of the owners'.
 * finish: wait for "ready" and, when copy (ghosts, row bytes), copy each
 * owner's rows into ghosts (device, in ghost order) on ctx's stream.
 * quiesce: end of a solve: the last "done" messages exchanged, no message
 * left in flight.  destroy: buffers closed and freed, waiting for the
 * receivers to close this rank's buffer first (point to point). */
bsr_status bsr_dipc_setup(bsr_dmatrix *A, bsr_context *ctx, size_t row_max);
/* Nonzero when A's IPC buffers were set up for products on ctx (NULL: the
 * host emulation): a product elsewhere (host vectors after a device solve)
 * must not pack into them. */
int bsr_dipc_for(const bsr_dmatrix *A, const bsr_context *ctx);
/* Test hook: when set (on every rank), CPU solves with halo=ipc or auto run
 * the IPC protocol on host vectors through an MPI shared-memory window
 * (setup with ctx NULL), so that a build without GPUs tests its messages. */
extern int bsr_dipc_host;
bsr_status bsr_dipc_begin(bsr_dmatrix *A);
bsr_status bsr_dipc_post(bsr_dmatrix *A);
bsr_status bsr_dipc_finish(bsr_dmatrix *A, char *ghosts, size_t row);
/* The exported send buffer for rows of row bytes (NULL when they do not fit). */
void *bsr_dipc_send_buffer(const bsr_dmatrix *A, size_t row);
bsr_status bsr_dipc_quiesce(bsr_dmatrix *A);
void bsr_dipc_destroy(bsr_dmatrix *A);

/* The NCCL halo (dist_halo_nccl.c; option halo=nccl): the ranks' ghosts
 * device to device by NCCL's sends and receives, queued on the device.
 * setup: collective; a communicator on ctx where every rank finds NCCL and
 * makes its part, and device scratch for rows of row bytes (a skip's); else
 * A->nccl stays NULL and A->halo_note says why.  Fails only on an MPI
 * error.  for: the communicator is on ctx.  post: this rank's packed rows
 * (sbuf, device, in send order) out and the ghosts (device, in ghost order)
 * in, after the work queued on the communicator's context; wait: that
 * context's stream waits for them.  skip: a rank that skips its work posts
 * its part from its scratch and waits (no neighbour waits forever).
 * destroy: the communicator and the scratch gone. */
bsr_status bsr_dnccl_setup(bsr_dmatrix *A, bsr_context *ctx, size_t row);
int bsr_dnccl_for(const bsr_dmatrix *A, const bsr_context *ctx);
bsr_status bsr_dnccl_post(bsr_dmatrix *A, const void *sbuf, void *ghosts, size_t row);
bsr_status bsr_dnccl_wait(bsr_dmatrix *A);
bsr_status bsr_dnccl_skip(bsr_dmatrix *A);
void bsr_dnccl_destroy(bsr_dmatrix *A);
/* The device path of a product on ctx: IPC when set up, else as A->halo_path. */
int bsr_dhalo_device_path(const bsr_dmatrix *A);

/* BSR_ERR_VALUE naming fn when A's last set_values failed (the same on
 * every rank, so callers may return it without agreeing). */
bsr_status bsr_dmatrix_check_values(const bsr_dmatrix *A, const char *fn);

/* Y = A X with X, Y in the internal row order (dist_spmm.c); ctx: the
 * backend of X and Y (NULL: host).  tm (may be NULL): the parts' seconds
 * added (bsr_dtimes).  X NULL: exchange only, for a
 * rank that skips its local work after a failure (dist_solver.c). */
/* The device product's kernel choices for k columns made now (a product of
 * Aint and Aifc each with zero vectors), so that a solve's first product
 * does not time the candidates inside the Krylov loop; no-op on the host. */
bsr_status bsr_dmatrix_warm(bsr_dmatrix *A, bsr_context *ctx, int k);
bsr_status bsr_dmatrix_spmm_internal(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X,
                                     bsr_multivec *Y, bsr_dtimes *tm);
/* G = the ghost rows of X (nghost*b rows, X's k and precision, on ctx's
 * backend), received from their owners; X NULL: exchange only, as above. */
bsr_status bsr_dmatrix_ghosts(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X, bsr_multivec *G,
                              bsr_dtimes *tm);
/* Y(internal row i) = X(caller's row perm[i]) (to = 1), or back (to = 0);
 * host multivectors of the same shape. */
bsr_status bsr_dmatrix_permute(const bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y, int to);
void bsr_dhalo_buf_free(bsr_dmatrix *A);
/* Free A->px, A->py (bsr_dmatrix_spmm's buffers). */
void bsr_dmatrix_perm_free(bsr_dmatrix *A);

/* Test hook: when set to n > 0, the n-th local operation of a distributed
 * solve on this rank fails (BSR_ERR_INTERNAL, "injected"); 0: off. */
extern int bsr_dist_fail_at;

/* Restricted additive Schwarz, overlap 1 (dist_ras.c): set up on A's own
 * and ghost rows with the options o (their precond), on ctx's backend;
 * refactor with A's new values; apply Y = M^{-1} X on own rows (X NULL:
 * only the exchange, for a rank skipping its work after a failure); stats:
 * the preconditioner figures of a solve.  Collective. */
struct bsr_dras;
bsr_status bsr_dras_setup(struct bsr_dras **R, bsr_dmatrix *A, bsr_context *ctx, const bsr_solver_options *o);
bsr_status bsr_dras_refactor(struct bsr_dras *R, bsr_dmatrix *A);
/* The Schwarz preconditioner (NULL: none yet). */
struct bsr_pc *bsr_dras_pc(const struct bsr_dras *R);
/* The Schwarz preconditioner set up again on R's matrix in the ordering
 * reorder (a bsr_order_parse string, kept for R's later setups). */
bsr_status bsr_dras_reorder(struct bsr_dras *R, const char *reorder);
bsr_status bsr_dras_apply(struct bsr_dras *R, bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y,
                          bsr_dtimes *tm);
void bsr_dras_stats(const struct bsr_dras *R, bsr_solver_stats *st);
void bsr_dras_destroy(struct bsr_dras *R);

#endif
