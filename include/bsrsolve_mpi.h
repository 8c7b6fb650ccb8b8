/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve on MPI: distributed block-CSR matrices and solvers, one MPI
 * process per node or GPU.  Include this header instead of bsrsolve.h in an
 * MPI program; it exists when the library was built with MPI (BSR_HAVE_MPI).
 *
 *   bsr_dist *d;   bsr_dist_create(&d, MPI_COMM_WORLD, ctx);   ctx NULL = CPU
 *   bsr_dmatrix *A;                 each rank its own block rows, global columns
 *   bsr_dmatrix_create(&A, d, nglobal, nrows, b, rowptr, colind, val, BSR_DOUBLE, 0);
 *   bsr_dsolver *s; bsr_dsolver_create(&s, d, &o);
 *   bsr_dsolver_setup(s, A);  bsr_dsolver_solve(s, B, X, &st);   B, X: this rank's rows
 *   ... every time step: bsr_dmatrix_set_values(A, v, 0); bsr_dsolver_refactor(s, A); solve
 *
 * Rank r owns the global block rows [row0, row0 + nrows) with row0 the sum of
 * nrows over lower ranks (renumber a mesh partition that way).  Every call
 * here is collective over the communicator: all ranks make it, in the same
 * order, and all return the same status; an error on one rank is reported on
 * every rank ("rank 2: ..." in bsr_last_error()), never a hang.
 *
 * The preconditioner is block Jacobi over ranks: the local ILU(0)/ILUT/ILU2
 * (or Jacobi) of the rank's diagonal block, on the CPU or on the rank's GPU;
 * options.overlap = 1 makes it restricted additive Schwarz with one layer of
 * overlap.  Reductions sum the ranks' partial values in rank order on every
 * rank, so a solve is deterministic for a fixed number of ranks, and one rank
 * gives the serial solver's result bit for bit. */
#ifndef BSRSOLVE_MPI_H
#define BSRSOLVE_MPI_H

#include <mpi.h>
#include "bsrsolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the distributed context ------------------------------------------------ */
typedef struct bsr_dist bsr_dist;
/* A duplicate of comm and the rank's backend context (borrowed, NULL = CPU;
 * a CUDA context: the rank's GPU, e.g. device = local rank % devices).
 * The ranks of a node share its cores: unless OMP_NUM_THREADS is set, the
 * calling thread's OpenMP thread count (omp_set_num_threads) becomes
 * max(1, CPUs of the node's ranks / ranks of comm on the node), at most the
 * CPUs this process may run on. */
bsr_status bsr_dist_create(bsr_dist **d, MPI_Comm comm, bsr_context *ctx);
void bsr_dist_destroy(bsr_dist *d);
int bsr_dist_rank(const bsr_dist *d);
int bsr_dist_size(const bsr_dist *d);
MPI_Comm bsr_dist_comm(const bsr_dist *d);
/* 1 when halos on the CUDA backend may go to MPI as device pointers: the
 * MPI library says it is CUDA-aware (MPIX_Query_cuda_support) on every
 * rank.  Otherwise (0) they go through pinned host buffers.  The solver
 * option halo= chooses among the paths (CUDA IPC between the GPUs of one
 * host first, by default: bsr_dsolver_profile.halo_path says which ran). */
int bsr_dist_cuda_aware(const bsr_dist *d);
/* Choose (on = 1 only where available, else BSR_ERR_UNSUPPORTED) or turn
 * off the device-pointer path.  Collective in effect: call it alike on all ranks. */
bsr_status bsr_dist_set_cuda_aware(bsr_dist *d, int on);

/* ---- distributed matrices -------------------------------------------------- */
typedef struct bsr_dmatrix bsr_dmatrix;
/* This rank's nrows block rows of an nglobal x nglobal block matrix: rowptr
 * [nrows+1], global block column indices colind[rowptr[nrows]] (0-based, any
 * order within a row), values val as in bsr_matrix_create (flags: its
 * BSR_COLMAJOR_BLOCKS, BSR_SUM_DUPLICATES).  Collective; BSR_ERR_SIZE when the
 * ranks' nrows do not add up to nglobal or b differs between ranks. */
bsr_status bsr_dmatrix_create(bsr_dmatrix **A, bsr_dist *d, int64_t nglobal, int nrows, int b,
                              const int *rowptr, const int64_t *colind, const void *val,
                              bsr_precision prec, unsigned flags);
/* Free A.  After a solve on the CUDA IPC halo path it waits for the ranks
 * that read this rank's send buffer to close it (their own destroy), so all
 * ranks destroy it, as they created it. */
void bsr_dmatrix_destroy(bsr_dmatrix *A);
/* New values in the layout given to create (refactor path).  Collective.
 * When it fails on any rank (a NaN, say), the ranks hold a mix of old and
 * new values: products, setups, refactors and solves with A then refuse
 * (BSR_ERR_VALUE) until a call that succeeds. */
bsr_status bsr_dmatrix_set_values(bsr_dmatrix *A, const void *val, unsigned flags);
int64_t bsr_dmatrix_nglobal(const bsr_dmatrix *A);
int bsr_dmatrix_nrows(const bsr_dmatrix *A);   /* block rows of this rank */
int64_t bsr_dmatrix_row0(const bsr_dmatrix *A); /* its first global block row */
int bsr_dmatrix_block(const bsr_dmatrix *A);
/* Partition figures of this rank: interior rows (no ghost column), interface
 * rows, ghost blocks received and blocks sent per halo exchange, neighbours. */
typedef struct {
    int nrows, interior, interface, ghosts, sent, neighbours;
    int64_t nnzb;
} bsr_dmatrix_info;
bsr_status bsr_dmatrix_get_info(const bsr_dmatrix *A, bsr_dmatrix_info *info);
/* Y = A X for this rank's rows of X and Y (host multivectors of nrows*b rows,
 * k columns, A's precision), each row summed in the order the serial product
 * sums it (so the result is the serial one bit for bit).  Inside a solve the
 * same product runs on the solver's backend, with the halo exchange
 * overlapped with the interior rows' product.  Collective. */
bsr_status bsr_dmatrix_spmm(bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y);

/* ---- distributed solver ------------------------------------------------------ */
typedef struct bsr_dsolver bsr_dsolver;
/* Options as for bsr_solver_create (NULL = defaults).  Collective. */
bsr_status bsr_dsolver_create(bsr_dsolver **s, bsr_dist *d, const bsr_solver_options *o);
/* Local preconditioner of each rank's part of A (A kept by reference). */
bsr_status bsr_dsolver_setup(bsr_dsolver *s, bsr_dmatrix *A);
/* New values of A (bsr_dmatrix_set_values): numeric refactorization only. */
bsr_status bsr_dsolver_refactor(bsr_dsolver *s, bsr_dmatrix *A);
/* Solve A X = B; B and X are this rank's rows (X: initial guess in).  The
 * stats are global (iterations, residuals) and the same on every rank;
 * their setup and solve times are this rank's. */
bsr_status bsr_dsolver_solve(bsr_dsolver *s, const bsr_multivec *B, bsr_multivec *X,
                             bsr_solver_stats *st);
void bsr_dsolver_destroy(bsr_dsolver *s);
/* Seconds this rank spent in halo exchanges and in reductions (waiting
 * included) during the last solve. */
typedef struct { double halo_s, reduce_s; int64_t halo_calls, reduce_calls; } bsr_dsolver_comm;
bsr_status bsr_dsolver_get_comm(const bsr_dsolver *s, bsr_dsolver_comm *c);
/* How the halo of the last solve travelled on this rank (the same on every rank). */
enum {
    BSR_DHALO_CPU = 0,  /* host vectors (the CPU backend) */
    BSR_DHALO_HOST = 1, /* device rows staged through pinned host buffers, MPI between hosts */
    BSR_DHALO_MPI = 2,  /* device pointers to a CUDA-aware MPI */
    BSR_DHALO_IPC = 3,  /* device to device by CUDA IPC (ranks on one host) */
    BSR_DHALO_NCCL = 4  /* device to device by NCCL's sends and receives, queued on the device */
};
/* "cpu", "host", "mpi", "ipc", "nccl" (else "?"). */
const char *bsr_dhalo_path_name(int path);
/* Where this rank's time in the last solve went, in seconds of wall clock.
 * The parts are measured with profile=1 in the options (the device is then
 * synchronized at each part's end, so that the clock sees its work: a
 * profiled solve is slower); without it they are 0 and only the totals of
 * bsr_dsolver_comm and the halo path are filled in.  The product's parts
 * add up to its time; the preconditioner's (with overlap=1) includes its
 * own halo exchange, counted in the halo parts too. */
typedef struct {
    double spmm_interior_s;  /* product: interior rows (no ghost column) */
    double spmm_interface_s; /* product: interface rows, once the ghosts are in */
    double halo_pack_s;      /* rows the neighbours need gathered (device: and copied out or synchronized) */
    double halo_post_s;      /* messages posted (IPC: "ready" sent) */
    double halo_wait_s;      /* waiting for the neighbours' rows (IPC: also for their reads of ours) */
    double halo_unpack_s;    /* ghosts into place (host path: copied in; IPC: copied from the
                                neighbours' GPUs), the interface rows' own columns gathered */
    double precond_s;        /* preconditioner applies */
    double reduce_s;         /* global sums (inner products, norms), waiting included */
    double reduce_idle_s;    /* of reduce_s, waiting for the last rank to arrive (its clock stamp
                                against this rank's; -1 when the ranks do not share a host) */
    int64_t halo_calls, reduce_calls, precond_calls;
    int profiled;            /* the parts were measured (profile=1) */
    int halo_path;           /* BSR_DHALO_* */
    char halo_note[192];     /* why the path is not the one asked for (halo=ipc or auto on the
                                device: which rank could not and why; "" otherwise) */
} bsr_dsolver_profile;
bsr_status bsr_dsolver_get_profile(const bsr_dsolver *s, bsr_dsolver_profile *p);

/* ---- agreement, input read on one rank, generated rows ----------------------- */
/* Every rank learns whether any rank failed: st is this rank's status; the
 * lowest failing rank's status and message become every rank's (the others
 * get "rank R: <message>" in bsr_last_error()).  Collective; returns the
 * agreed status.  For a caller's own steps between the collective calls. */
bsr_status bsr_dist_agree(bsr_dist *d, bsr_status st);

/* How bsr_dmatrix_scatter assigns block rows to ranks. */
typedef enum {
    BSR_PART_METIS = 0,     /* METIS_PartGraphKway on the block graph (seed 0: deterministic) */
    BSR_PART_CONTIGUOUS = 1 /* equal consecutive ranges of rows, in their order */
} bsr_part_method;
/* A matrix held by rank 0 (Aroot, significant there only: square; NULL
 * elsewhere) distributed: rank 0 partitions its block graph (symmetrized
 * pattern without self loops; one rank or a graph without edges: equal
 * consecutive ranges), renumbers the rows so that rank r owns global rows
 * [rows0[r], rows0[r+1]) in the order of their old indices, and sends every
 * rank its rows (columns in the new numbering); then bsr_dmatrix_create.
 * *perm (perm may be NULL): on rank 0 the nglobal old indices in the new
 * order (perm[new] = old; free() it), NULL on the other ranks; it is what
 * bsr_dmatrix_scatter_vec and bsr_dmatrix_gather_vec take.  Collective; a
 * failure on rank 0 (no matrix, a METIS error) is every rank's. */
bsr_status bsr_dmatrix_scatter(bsr_dmatrix **A, bsr_dist *d, const bsr_matrix *Aroot, bsr_part_method method,
                               int64_t **perm);
/* *X = this rank's rows of Xroot (rank 0's: nglobal*b rows in the original
 * order, any k, A's precision or the other; ignored elsewhere) in the
 * numbering of A: row i of rank r is block row perm[rows0[r] + i] of Xroot
 * (perm NULL: the identity, for a matrix not renumbered).  Collective. */
bsr_status bsr_dmatrix_scatter_vec(const bsr_dmatrix *A, const int64_t *perm, const bsr_multivec *Xroot,
                                   bsr_multivec **X);
/* The inverse: every rank's rows of X (nrows*b x k, the same k and
 * precision everywhere) into Xroot on rank 0 (nglobal*b x k, that precision,
 * the original order; ignored elsewhere).  Collective. */
bsr_status bsr_dmatrix_gather_vec(const bsr_dmatrix *A, const int64_t *perm, const bsr_multivec *X,
                                  bsr_multivec *Xroot);

/* Block rows [row0, row0 + nrows) of a generated problem, as a rank passes
 * them to bsr_dmatrix_create. */
typedef struct {
    int64_t nglobal, row0; /* block rows of the whole problem; the first one here */
    int nrows, b;
    bsr_precision prec;
    const int *rowptr;     /* [nrows+1] */
    int64_t *colind;       /* global block columns, ascending within each row */
    const void *val;       /* row-major b x b blocks */
    bsr_multivec *rhs;     /* these rows of the right-hand side(s) */
    bsr_multivec *xexact;  /* these rows of the exact solution; NULL when unknown */
    char name[128];        /* the problem's canonical spec */
    bsr_matrix *local;     /* owns rowptr and val: the rows over the block columns [col0, col0 + its columns) */
    int64_t col0;
} bsr_problem_rows;
/* Global block rows and block size of a generator spec (bsr_generate's). */
bsr_status bsr_generate_dims(const char *spec, int64_t *nglobal, int *b);
/* The rows [row0, row0 + nrows) of bsr_generate(spec)'s problem, bit for bit
 * (rhs and xexact included).  stencil3d and rotconv3d build only these rows
 * (64-bit global indices: grids beyond 2^31 cells); the other generators
 * build their whole problem and keep the rows (fine at their sizes).  Not
 * collective. */
bsr_status bsr_generate_rows(const char *spec, bsr_precision prec, int64_t row0, int nrows, bsr_problem_rows *R);
void bsr_problem_rows_free(bsr_problem_rows *R);
/* A generated problem distributed in place: rank r generates the r-th of
 * equal consecutive ranges of rows (the natural grid order: slabs) into R
 * and creates *A from them.  Collective; R (rhs, xexact, name) stays the
 * caller's, to free with bsr_problem_rows_free (A holds its own copy). */
bsr_status bsr_dmatrix_generate(bsr_dmatrix **A, bsr_dist *d, const char *spec, bsr_precision prec,
                                bsr_problem_rows *R);

#ifdef __cplusplus
}
#endif
#endif
