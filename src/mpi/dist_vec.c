/* SPDX-License-Identifier: BSD-3-Clause */
/* Vectors between rank 0 and the ranks of a distributed matrix: a global
 * multivector on rank 0 (original row order) scattered into the ranks' rows
 * (the matrix's numbering), and gathered back. */
#include "dist_impl.h"
#include <limits.h>
#include <string.h>

/* Shape of rank 0's global multivector, broadcast: k, precision. */
typedef struct { int k, prec; } vec_shape;

/* Rank 0: Xroot fits A (nglobal*b host rows); every rank: its shape. */
static bsr_status root_shape(const bsr_dmatrix *A, const bsr_multivec *Xroot, const char *fn, vec_shape *v)
{
    bsr_dist *d = A->d;
    bsr_status st = BSR_OK;
    v->k = v->prec = 0;
    if (d->rank == 0) {
        if (!Xroot) st = bsr_error(BSR_ERR_ARG, "%s: no vector on rank 0", fn);
        else if (Xroot->n != A->nglobal * A->b)
            st = bsr_error(BSR_ERR_SIZE, "%s: rank 0's vector has %lld rows, the matrix %lld", fn, (long long)Xroot->n,
                           (long long)(A->nglobal * A->b));
        else if (!Xroot->data || !(Xroot->where & BSR_ON_HOST))
            st = bsr_error(BSR_ERR_ARG, "%s: rank 0's vector must be current on the host", fn);
        else if (A->nglobal > INT_MAX)
            st = bsr_error(BSR_ERR_UNSUPPORTED, "%s: %lld block rows, more than one MPI call counts", fn,
                           (long long)A->nglobal);
        if (!st) { v->k = Xroot->k; v->prec = (int)Xroot->prec; }
    }
    BSR_TRY(bsr_dist_agree(d, st));
    MPI_TRY(MPI_Bcast(v, 2, MPI_INT, 0, d->comm));
    return BSR_OK;
}

/* Per rank its block rows and where they start (rank 0 only: the counts of MPI_Scatterv / MPI_Gatherv). */
static bsr_status rank_counts(const bsr_dmatrix *A, int **cnt)
{
    int p = A->d->size;
    *cnt = NULL;
    if (A->d->rank != 0) return BSR_OK;
    *cnt = bsr_malloc(sizeof(int) * 2 * (size_t)p, "vector counts");
    if (!*cnt) return BSR_ERR_NOMEM;
    for (int r = 0; r < p; r++) {
        (*cnt)[r] = (int)(A->rows0[r + 1] - A->rows0[r]);
        (*cnt)[p + r] = (int)A->rows0[r];
    }
    return BSR_OK;
}

/* An MPI datatype of one block row of a multivector (b * k values, committed). */
static bsr_status row_type(int b, const vec_shape *v, MPI_Datatype *t)
{
    MPI_TRY(MPI_Type_contiguous(b * v->k, v->prec == BSR_FLOAT ? MPI_FLOAT : MPI_DOUBLE, t));
    MPI_TRY(MPI_Type_commit(t));
    return BSR_OK;
}

/* dst row t = src row perm[t] (to_new), or dst row perm[t] = src row t; n rows of row bytes each. */
static void permute_rows(const int64_t *perm, int64_t n, size_t row, const void *src, void *dst, int to_new)
{
    for (int64_t t = 0; t < n; t++) {
        size_t a = (size_t)t * row, o = (size_t)perm[t] * row;
        memcpy((char *)dst + (to_new ? a : o), (const char *)src + (to_new ? o : a), row);
    }
}

bsr_status bsr_dmatrix_scatter_vec(const bsr_dmatrix *A, const int64_t *perm, const bsr_multivec *Xroot,
                                   bsr_multivec **X)
{
    BSR_CHECK_ARG(A && X, "bsr_dmatrix_scatter_vec: NULL argument");
    *X = NULL;
    bsr_dist *d = A->d;
    vec_shape v;
    BSR_TRY(root_shape(A, Xroot, "bsr_dmatrix_scatter_vec", &v));
    size_t row = (size_t)A->b * v.k * bsr_precision_size((bsr_precision)v.prec);
    int *cnt = NULL;
    void *buf = NULL;   /* rank 0: the rows in the new order (Xroot itself without perm) */
    bsr_status st = bsr_multivec_create(X, (int64_t)A->nrows * A->b, v.k, (bsr_precision)v.prec);
    if (!st) st = rank_counts(A, &cnt);
    if (!st && d->rank == 0) {
        buf = perm ? bsr_malloc(row * (size_t)A->nglobal, "vector in the new order") : Xroot->data;
        if (!buf) st = BSR_ERR_NOMEM;
        else if (perm) permute_rows(perm, A->nglobal, row, Xroot->data, buf, 1);
    }
    MPI_Datatype rt;
    if (!(st = bsr_dist_agree(d, st)) && !(st = row_type(A->b, &v, &rt))) {
        int e = MPI_Scatterv(buf, cnt, cnt ? cnt + d->size : NULL, rt, (*X)->data, A->nrows, rt, 0, d->comm);
        MPI_Type_free(&rt);
        if (e != MPI_SUCCESS) st = bsr_mpi_fail(e, "MPI_Scatterv (vector)");
    }
    if (perm && d->rank == 0) free(buf);
    free(cnt);
    if (st) { bsr_multivec_destroy(*X); *X = NULL; }
    return st;
}

bsr_status bsr_dmatrix_gather_vec(const bsr_dmatrix *A, const int64_t *perm, const bsr_multivec *X,
                                  bsr_multivec *Xroot)
{
    BSR_CHECK_ARG(A, "bsr_dmatrix_gather_vec: NULL matrix");
    bsr_dist *d = A->d;
    vec_shape v;
    BSR_TRY(root_shape(A, Xroot, "bsr_dmatrix_gather_vec", &v));
    bsr_status st = BSR_OK;
    if (!X || X->n != (int64_t)A->nrows * A->b || X->k != v.k || (int)X->prec != v.prec)
        st = bsr_error(BSR_ERR_SIZE, "bsr_dmatrix_gather_vec: rank %d's vector is not %lld x %d of rank 0's "
                       "precision", d->rank, (long long)A->nrows * A->b, v.k);
    else if (!X->data || !(X->where & BSR_ON_HOST))
        st = bsr_error(BSR_ERR_ARG, "bsr_dmatrix_gather_vec: rank %d's vector must be current on the host", d->rank);
    size_t row = (size_t)A->b * v.k * bsr_precision_size((bsr_precision)v.prec);
    int *cnt = NULL;
    void *buf = NULL;
    if (!st) st = rank_counts(A, &cnt);
    if (!st && d->rank == 0) {
        buf = perm ? bsr_malloc(row * (size_t)A->nglobal, "vector in the new order") : Xroot->data;
        if (!buf) st = BSR_ERR_NOMEM;
    }
    MPI_Datatype rt;
    if (!(st = bsr_dist_agree(d, st)) && !(st = row_type(A->b, &v, &rt))) {
        int e = MPI_Gatherv(X->data, A->nrows, rt, buf, cnt, cnt ? cnt + d->size : NULL, rt, 0, d->comm);
        MPI_Type_free(&rt);
        if (e != MPI_SUCCESS) st = bsr_mpi_fail(e, "MPI_Gatherv (vector)");
    }
    if (!st && d->rank == 0) {
        if (perm) permute_rows(perm, A->nglobal, row, buf, Xroot->data, 0);
        Xroot->where = BSR_ON_HOST;
    }
    if (perm && d->rank == 0) free(buf);
    free(cnt);
    return st;
}
