/* SPDX-License-Identifier: BSD-3-Clause */
/* A matrix held by rank 0, distributed: its block graph partitioned (METIS
 * k-way, or equal consecutive ranges), the rows renumbered part by part, and
 * every rank's rows sent with MPI_Scatterv. */
#include "dist_impl.h"
#include <limits.h>
#include <string.h>

/* What rank 0 sends: the rows in the new order (part by part, each part's
 * rows in their old order) with columns renumbered; per rank the rows and
 * blocks it gets and where they start. */
typedef struct {
    int64_t *perm;          /* [n] old row of new row */
    int *rowlen;            /* [n] blocks of new row */
    int64_t *colind;        /* [nnzb] new columns, rows in the new order */
    void *val;              /* [nnzb] blocks, the same order */
    int *cnt;               /* [6p]: rows, blocks, first row, first block of each rank;
                             * then (rows, blocks) of each rank, interleaved */
} root_plan;

static void plan_free(root_plan *P)
{
    free(P->perm); free(P->rowlen); free(P->colind); free(P->val); free(P->cnt);
    memset(P, 0, sizeof *P);
}

/* Rank 0's plan for A over p ranks. */
static bsr_status plan_root(const bsr_matrix *A, int p, bsr_part_method method, root_plan *P)
{
    memset(P, 0, sizeof *P);
    if (!A) return bsr_error(BSR_ERR_ARG, "bsr_dmatrix_scatter: no matrix on rank 0");
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "bsr_dmatrix_scatter: matrix of %d x %d block rows, not square", A->nbrows,
                         A->nbcols);
    if (method != BSR_PART_METIS && method != BSR_PART_CONTIGUOUS)
        return bsr_error(BSR_ERR_ARG, "bsr_dmatrix_scatter: unknown partition method %d", (int)method);
    int n = A->nbrows, nnz = A->nnzb;
    size_t bb = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    int *part = bsr_malloc(sizeof(int) * ((size_t)n + 1), "row parts");
    int *pos = bsr_malloc(sizeof(int) * (size_t)p, "part positions");
    int64_t *iperm = bsr_malloc(sizeof(int64_t) * ((size_t)n + 1), "row numbering");
    P->perm = bsr_malloc(sizeof(int64_t) * ((size_t)n + 1), "row numbering");
    P->rowlen = bsr_malloc(sizeof(int) * ((size_t)n + 1), "row lengths");
    P->colind = bsr_malloc(sizeof(int64_t) * ((size_t)nnz + 1), "renumbered columns");
    P->val = bsr_malloc(bb * ((size_t)nnz + 1), "renumbered values");
    P->cnt = bsr_calloc((size_t)6 * p, sizeof(int), "scatter counts");
    bsr_status st = part && pos && iperm && P->perm && P->rowlen && P->colind && P->val && P->cnt ? BSR_OK : BSR_ERR_NOMEM;
    if (!st) {
        if (method == BSR_PART_CONTIGUOUS) bsr_partition_ranges(n, p, part);
        else st = bsr_partition_kway(A, p, part);
    }
    if (!st) {
        int *rows = P->cnt, *blocks = P->cnt + p, *row0 = P->cnt + 2 * p, *blk0 = P->cnt + 3 * p;
        for (int i = 0; i < n; i++) {
            rows[part[i]]++;
            blocks[part[i]] += A->rowptr[i + 1] - A->rowptr[i];
        }
        for (int r = 0; r < p; r++) {
            if (r > 0) {
                row0[r] = row0[r - 1] + rows[r - 1];
                blk0[r] = blk0[r - 1] + blocks[r - 1];
            }
            P->cnt[4 * p + 2 * r] = rows[r];
            P->cnt[4 * p + 2 * r + 1] = blocks[r];
        }
        /* a stable counting sort by part: a part's rows keep their old order */
        for (int r = 0; r < p; r++) pos[r] = row0[r];
        for (int i = 0; i < n; i++) P->perm[pos[part[i]]++] = i;
        for (int64_t t = 0; t < n; t++) iperm[P->perm[t]] = t;
        int64_t q = 0;
        for (int t = 0; t < n; t++) {
            int i = (int)P->perm[t], a = A->rowptr[i], e = A->rowptr[i + 1];
            P->rowlen[t] = e - a;
            for (int s = a; s < e; s++) P->colind[q + s - a] = iperm[A->colind[s]];
            memcpy((char *)P->val + (size_t)q * bb, (const char *)A->val + (size_t)a * bb, (size_t)(e - a) * bb);
            q += e - a;
        }
    }
    free(part);
    free(pos);
    free(iperm);
    if (st) plan_free(P);
    return st;
}

/* An MPI datatype of one b x b block of precision prec (committed). */
static bsr_status block_type(int b, bsr_precision prec, MPI_Datatype *t)
{
    MPI_TRY(MPI_Type_contiguous(b * b, prec == BSR_FLOAT ? MPI_FLOAT : MPI_DOUBLE, t));
    MPI_TRY(MPI_Type_commit(t));
    return BSR_OK;
}

/* The rows a rank receives: global size, block size, precision, its rows. */
typedef struct {
    int64_t n;
    int b, prec, nrows, nnz;
    int *rowptr;
    int64_t *colind;
    void *val;
} rank_rows;

/* This rank's rows of rank 0's plan: the sizes first (broadcast, then one
 * pair per rank), then row lengths, columns and values, one MPI_Scatterv
 * each. */
static bsr_status receive_rows(bsr_dist *d, const bsr_matrix *Aroot, const root_plan *P, rank_rows *R)
{
    int p = d->size, root = d->rank == 0;
    int64_t hdr[3] = {root ? Aroot->nbrows : 0, root ? Aroot->b : 0, root ? (int64_t)Aroot->prec : 0};
    MPI_TRY(MPI_Bcast(hdr, 3, MPI_INT64_T, 0, d->comm));
    R->n = hdr[0];
    R->b = (int)hdr[1];
    R->prec = (int)hdr[2];
    int mine[2];
    MPI_TRY(MPI_Scatter(root ? P->cnt + 4 * p : NULL, 2, MPI_INT, mine, 2, MPI_INT, 0, d->comm));
    R->nrows = mine[0];
    R->nnz = mine[1];
    size_t bb = (size_t)R->b * R->b * bsr_precision_size((bsr_precision)R->prec);
    R->rowptr = bsr_malloc(sizeof(int) * ((size_t)R->nrows + 1), "received rows");
    R->colind = bsr_malloc(sizeof(int64_t) * ((size_t)R->nnz + 1), "received columns");
    R->val = bsr_malloc(bb * ((size_t)R->nnz + 1), "received values");
    bsr_status st = R->rowptr && R->colind && R->val ? BSR_OK : BSR_ERR_NOMEM;
    if ((st = bsr_dist_agree(d, st))) return st;
    const int *rows = root ? P->cnt : NULL, *blocks = root ? P->cnt + p : NULL;
    const int *row0 = root ? P->cnt + 2 * p : NULL, *blk0 = root ? P->cnt + 3 * p : NULL;
    MPI_Datatype bt;
    BSR_TRY(block_type(R->b, (bsr_precision)R->prec, &bt));
    R->rowptr[0] = 0;
    int e = MPI_Scatterv(root ? P->rowlen : NULL, rows, row0, MPI_INT, R->rowptr + 1, R->nrows, MPI_INT, 0, d->comm);
    if (e == MPI_SUCCESS)
        e = MPI_Scatterv(root ? P->colind : NULL, blocks, blk0, MPI_INT64_T, R->colind, R->nnz, MPI_INT64_T, 0, d->comm);
    if (e == MPI_SUCCESS)
        e = MPI_Scatterv(root ? P->val : NULL, blocks, blk0, bt, R->val, R->nnz, bt, 0, d->comm);
    MPI_Type_free(&bt);
    if (e != MPI_SUCCESS) return bsr_mpi_fail(e, "MPI_Scatterv (rows)");
    for (int i = 0; i < R->nrows; i++) R->rowptr[i + 1] += R->rowptr[i];
    return BSR_OK;
}

bsr_status bsr_dmatrix_scatter(bsr_dmatrix **A, bsr_dist *d, const bsr_matrix *Aroot, bsr_part_method method,
                               int64_t **perm)
{
    BSR_CHECK_ARG(A && d, "bsr_dmatrix_scatter: NULL argument");
    *A = NULL;
    if (perm) *perm = NULL;
    root_plan P;
    memset(&P, 0, sizeof P);
    rank_rows R;
    memset(&R, 0, sizeof R);
    /* rank 0's failure (no matrix, METIS) reaches every rank before any of
     * them waits in a scatter */
    bsr_status st = d->rank == 0 ? plan_root(Aroot, d->size, method, &P) : BSR_OK;
    if (!(st = bsr_dist_agree(d, st))) st = receive_rows(d, Aroot, &P, &R);
    if (!(st = bsr_dist_agree(d, st)))
        st = bsr_dmatrix_create(A, d, R.n, R.nrows, R.b, R.rowptr, R.colind, R.val, (bsr_precision)R.prec, 0);
    free(R.rowptr); free(R.colind); free(R.val);
    if (!st && perm) { *perm = P.perm; P.perm = NULL; }
    plan_free(&P);
    return st;
}
