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
};

/* BSR_ERR_VALUE naming fn when A's last set_values failed (the same on
 * every rank, so callers may return it without agreeing). */
bsr_status bsr_dmatrix_check_values(const bsr_dmatrix *A, const char *fn);

/* Y = A X with X, Y in the internal row order (dist_spmm.c); ctx: the
 * backend of X and Y (NULL: host).  comm_s (may be NULL) += seconds spent
 * packing, waiting for and unpacking the halo.  X NULL: exchange only, for a
 * rank that skips its local work after a failure (dist_solver.c). */
bsr_status bsr_dmatrix_spmm_internal(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X,
                                     bsr_multivec *Y, double *comm_s);
/* G = the ghost rows of X (nghost*b rows, X's k and precision, on ctx's
 * backend), received from their owners; X NULL: exchange only, as above. */
bsr_status bsr_dmatrix_ghosts(bsr_dmatrix *A, bsr_context *ctx, const bsr_multivec *X, bsr_multivec *G,
                              double *comm_s);
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
bsr_status bsr_dras_apply(struct bsr_dras *R, bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y,
                          double *comm_s);
void bsr_dras_stats(const struct bsr_dras *R, bsr_solver_stats *st);
void bsr_dras_destroy(struct bsr_dras *R);

#endif
