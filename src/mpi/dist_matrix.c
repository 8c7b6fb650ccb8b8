/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed matrix: creation (checks agreed across ranks, interior rows
 * first, ghost columns, halo plan), values, accessors. */
#include "dist_impl.h"
#include <string.h>

typedef struct { int64_t key; int q; } keyed;
static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->q > y->q) - (x->q < y->q);
}

/* Position of g in the ascending array v[0..n), or -1. */
static int find64(const int64_t *v, int n, int64_t g)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int m = lo + (hi - lo) / 2;
        if (v[m] < g) lo = m + 1; else hi = m;
    }
    return lo < n && v[lo] == g ? lo : -1;
}

/* The rank owning global row g (rows0 ascending, size+1 entries). */
static int owner(const int64_t *rows0, int size, int64_t g)
{
    int lo = 0, hi = size - 1;
    while (lo < hi) {
        int m = lo + (hi - lo + 1) / 2;
        if (rows0[m] <= g) lo = m; else hi = m - 1;
    }
    return lo;
}

/* The caller's arrays on this rank: sizes, indices in range, values finite. */
static bsr_status check_local(int64_t nglobal, int nrows, int b, const int *rowptr,
                              const int64_t *colind, const void *val, bsr_precision prec, unsigned flags)
{
    const char *fn = "bsr_dmatrix_create";
    if (b < 1 || b > BSR_MAX_BLOCK) return bsr_error(BSR_ERR_ARG, "%s: block size %d outside 1..%d", fn, b, BSR_MAX_BLOCK);
    if (nrows < 0 || nglobal < 0) return bsr_error(BSR_ERR_ARG, "%s: negative size (%d rows of %lld)", fn, nrows, (long long)nglobal);
    if (prec != BSR_DOUBLE && prec != BSR_FLOAT) return bsr_error(BSR_ERR_ARG, "%s: unknown precision %d", fn, (int)prec);
    if (!rowptr) return bsr_error(BSR_ERR_ARG, "%s: rowptr is NULL", fn);
    if (rowptr[0] != 0) return bsr_error(BSR_ERR_STRUCTURE, "%s: rowptr[0] = %d, not 0", fn, rowptr[0]);
    for (int i = 0; i < nrows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return bsr_error(BSR_ERR_STRUCTURE, "%s: rowptr decreases at local row %d", fn, i);
    int64_t nnz = rowptr[nrows];
    if (nnz > 0 && (!colind || !val)) return bsr_error(BSR_ERR_ARG, "%s: colind or val is NULL", fn);
    for (int i = 0; i < nrows; i++)
        for (int q = rowptr[i]; q < rowptr[i + 1]; q++)
            if (colind[q] < 0 || colind[q] >= nglobal)
                return bsr_error(BSR_ERR_STRUCTURE, "%s: local row %d: column index %lld outside 0..%lld",
                                 fn, i, (long long)colind[q], (long long)nglobal - 1);
    size_t bb = (size_t)b * b;
    if (!(flags & BSR_ALLOW_NONFINITE)) {
        int64_t bad = bsr_first_nonfinite(val, prec, nnz * (int64_t)bb);
        if (bad >= 0) return bsr_error(BSR_ERR_VALUE, "%s: non-finite value in block %lld", fn, (long long)(bad / (int64_t)bb));
    }
    return BSR_OK;
}

/* Every rank's sizes agree: the rows add up to nglobal, one b, one precision. */
static bsr_status check_global(bsr_dmatrix *A, int64_t nglobal, int nrows, int b, bsr_precision prec)
{
    bsr_dist *d = A->d;
    int64_t mine[4] = {nrows, b, (int64_t)prec, nglobal};
    int64_t *all = bsr_malloc(sizeof(int64_t) * 4 * (size_t)d->size, "rank sizes");
    if (!all) return BSR_ERR_NOMEM;
    int e = MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, d->comm);
    if (e != MPI_SUCCESS) { free(all); return bsr_mpi_fail(e, "MPI_Allgather (sizes)"); }
    bsr_status st = BSR_OK;
    A->rows0[0] = 0;
    for (int r = 0; r < d->size && !st; r++) {
        const int64_t *x = all + 4 * r;
        if (x[1] != b || x[2] != (int64_t)prec || x[3] != nglobal)
            st = bsr_error(BSR_ERR_SIZE, "bsr_dmatrix_create: rank %d has b = %lld, precision %lld, %lld global rows; "
                           "rank %d b = %d, precision %d, %lld", r, (long long)x[1], (long long)x[2], (long long)x[3],
                           d->rank, b, (int)prec, (long long)nglobal);
        A->rows0[r + 1] = A->rows0[r] + x[0];
    }
    if (!st && A->rows0[d->size] != nglobal)
        st = bsr_error(BSR_ERR_SIZE, "bsr_dmatrix_create: the ranks own %lld block rows together, not %lld",
                       (long long)A->rows0[d->size], (long long)nglobal);
    free(all);
    return st;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Interior rows first, interface rows after, each ascending; the ghost
 * columns sorted and unique. */
static bsr_status split_rows(bsr_dmatrix *A, const int *rowptr, const int64_t *colind)
{
    int n = A->nrows;
    int64_t r0 = A->row0, r1 = A->row0 + n, nnz = rowptr[n];
    A->perm = bsr_malloc(sizeof(int) * (size_t)(n + 1), "row order");
    A->iperm = bsr_malloc(sizeof(int) * (size_t)(n + 1), "row order");
    int64_t *g = bsr_malloc(sizeof(int64_t) * (size_t)(nnz + 1), "ghost columns");
    if (!A->perm || !A->iperm || !g) { free(g); return BSR_ERR_NOMEM; }
    int nifc = 0, ng = 0;
    for (int i = 0; i < n; i++) {
        int ifc = 0;
        for (int q = rowptr[i]; q < rowptr[i + 1]; q++)
            if (colind[q] < r0 || colind[q] >= r1) { ifc = 1; g[ng++] = colind[q]; }
        A->iperm[i] = ifc;
        nifc += ifc;
    }
    A->nint = n - nifc;
    for (int i = 0, a = 0, c = A->nint; i < n; i++) {
        int t = A->iperm[i] ? c++ : a++;
        A->perm[t] = i;
        A->iperm[i] = t;
    }
    qsort(g, (size_t)ng, sizeof(int64_t), cmp64);
    int u = 0;
    for (int i = 0; i < ng; i++)
        if (u == 0 || g[u - 1] != g[i]) g[u++] = g[i];
    A->h.nghost = u;
    A->h.ghost_gid = g;
    return BSR_OK;
}

/* The halo plan: the ghosts' owners (ghosts ascending, so grouped by rank),
 * then every owner learns which of its rows whom to send (one all-to-all of
 * counts, one of global rows). */
static bsr_status plan_halo(bsr_dmatrix *A)
{
    bsr_dist *d = A->d;
    bsr_halo *h = &A->h;
    int p = d->size;
    int *cnt = bsr_calloc((size_t)4 * p + 2, sizeof(int), "halo counts");
    if (!cnt) return BSR_ERR_NOMEM;
    int *rcnt = cnt, *scnt = cnt + p, *rdsp = cnt + 2 * p, *sdsp = cnt + 3 * p;
    for (int i = 0; i < h->nghost; i++) rcnt[owner(A->rows0, p, h->ghost_gid[i])]++;
    int e = MPI_Alltoall(rcnt, 1, MPI_INT, scnt, 1, MPI_INT, d->comm);
    if (e != MPI_SUCCESS) { free(cnt); return bsr_mpi_fail(e, "MPI_Alltoall (halo counts)"); }
    int nr = 0, ns = 0, tot = 0;
    for (int r = 0; r < p; r++) {
        rdsp[r] = r ? rdsp[r - 1] + rcnt[r - 1] : 0;
        sdsp[r] = r ? sdsp[r - 1] + scnt[r - 1] : 0;
        nr += rcnt[r] > 0;
        ns += scnt[r] > 0;
        tot += scnt[r];
    }
    int64_t *want = bsr_malloc(sizeof(int64_t) * (size_t)(tot + 1), "halo rows asked");
    h->send_rank = bsr_malloc(sizeof(int) * (size_t)(ns + 1), "halo plan");
    h->send_off = bsr_malloc(sizeof(int) * (size_t)(ns + 2), "halo plan");
    h->send_idx = bsr_malloc(sizeof(int) * (size_t)(tot + 1), "halo plan");
    h->recv_rank = bsr_malloc(sizeof(int) * (size_t)(nr + 1), "halo plan");
    h->recv_off = bsr_malloc(sizeof(int) * (size_t)(nr + 2), "halo plan");
    if (!want || !h->send_rank || !h->send_off || !h->send_idx || !h->recv_rank || !h->recv_off) {
        free(want); free(cnt);
        return BSR_ERR_NOMEM;
    }
    e = MPI_Alltoallv(h->ghost_gid, rcnt, rdsp, MPI_INT64_T, want, scnt, sdsp, MPI_INT64_T, d->comm);
    if (e != MPI_SUCCESS) { free(want); free(cnt); return bsr_mpi_fail(e, "MPI_Alltoallv (halo rows)"); }
    h->nsend = h->nrecv = 0;
    h->send_off[0] = h->recv_off[0] = 0;
    for (int r = 0; r < p; r++) {
        if (rcnt[r]) {
            h->recv_rank[h->nrecv] = r;
            h->recv_off[h->nrecv + 1] = h->recv_off[h->nrecv] + rcnt[r];
            h->nrecv++;
        }
        if (scnt[r]) {
            h->send_rank[h->nsend] = r;
            h->send_off[h->nsend + 1] = h->send_off[h->nsend] + scnt[r];
            h->nsend++;
        }
    }
    bsr_status st = BSR_OK;
    for (int t = 0; t < tot; t++) {
        int64_t li = want[t] - A->row0;
        if (li < 0 || li >= A->nrows) {  /* cannot happen with consistent owners */
            st = bsr_error(BSR_ERR_INTERNAL, "bsr_dmatrix_create: asked for row %lld, not on this rank", (long long)want[t]);
            break;
        }
        h->send_idx[t] = A->iperm[li];
    }
    free(want);
    free(cnt);
    return st;
}

/* Which stored block and column a caller's block of global column g gets in
 * each of the three local matrices. */
enum { PAT_OO, PAT_INT, PAT_IFC };
typedef struct { int64_t key; int col; } colpos;
static int col_of(const bsr_dmatrix *A, int mode, int64_t g, const int *ownpos, colpos *c)
{
    int own = g >= A->row0 && g < A->row0 + A->nrows;
    int li = own ? A->iperm[g - A->row0] : -1;
    switch (mode) {
    case PAT_OO: if (!own) return 0; c->key = li; c->col = li; return 1;
    case PAT_INT: c->key = g; c->col = li; return 1;
    default:
        c->key = g;
        c->col = own ? ownpos[li] : A->nifc_own + find64(A->h.ghost_gid, A->h.nghost, g);
        return 1;
    }
}

/* One local matrix over internal rows [i0, i1) with nbcols columns: the
 * kept blocks of each row sorted by key (duplicates summed or refused);
 * map[q] = stored block of caller block q (kept ones only). */
static bsr_status build_pattern(bsr_dmatrix *A, const int *rowptr, const int64_t *colind, int mode,
                                int i0, int i1, int nbcols, const int *ownpos, int *map, bsr_matrix **M)
{
    int nr = i1 - i0, maxlen = 0;
    int64_t nnz = 0;
    for (int i = i0; i < i1; i++) {
        int r = A->perm[i], len = rowptr[r + 1] - rowptr[r];
        if (len > maxlen) maxlen = len;
        nnz += len;
    }
    keyed *kq = bsr_malloc(sizeof(keyed) * (size_t)(maxlen + 1), "row sort");
    int *cols = bsr_malloc(sizeof(int) * (size_t)(maxlen + 1), "row sort");
    int *ptr = bsr_malloc(sizeof(int) * (size_t)(nr + 1), "local pattern");
    int *ci = bsr_malloc(sizeof(int) * (size_t)(nnz + 1), "local pattern");
    bsr_status st = BSR_OK;
    if (!kq || !cols || !ptr || !ci) { st = BSR_ERR_NOMEM; goto done; }
    int out = 0;
    ptr[0] = 0;
    for (int i = i0; i < i1 && !st; i++) {
        int r = A->perm[i], m = 0;
        for (int q = rowptr[r]; q < rowptr[r + 1]; q++) {
            colpos c;
            if (!col_of(A, mode, colind[q], ownpos, &c)) continue;
            kq[m].key = c.key;
            kq[m].q = q;
            cols[q - rowptr[r]] = c.col;
            m++;
        }
        qsort(kq, (size_t)m, sizeof(keyed), keyed_cmp);
        for (int t = 0; t < m; t++) {
            if (t > 0 && kq[t].key == kq[t - 1].key) {
                if (!(A->flags & BSR_SUM_DUPLICATES)) {
                    st = bsr_error(BSR_ERR_STRUCTURE, "bsr_dmatrix_create: block row %lld has column %lld twice "
                                   "(BSR_SUM_DUPLICATES sums them)", (long long)(A->row0 + r),
                                   (long long)colind[kq[t].q]);
                    break;
                }
            } else {
                ci[out++] = cols[kq[t].q - rowptr[r]];
            }
            map[kq[t].q] = out - 1;
        }
        ptr[i - i0 + 1] = out;
    }
    if (!st && !(st = bsr_matrix_alloc(M, nr, nbcols, A->b, out, A->prec))) {
        memcpy((*M)->rowptr, ptr, sizeof(int) * (size_t)(nr + 1));
        memcpy((*M)->colind, ci, sizeof(int) * (size_t)out);
    }
done:
    free(kq); free(cols); free(ptr); free(ci);
    return st;
}

/* The three local matrices' patterns and the value maps. */
static bsr_status build_local(bsr_dmatrix *A, const int *rowptr, const int64_t *colind)
{
    int n = A->nrows;
    int64_t nnz = rowptr[n];
    A->nnz_in = nnz;
    A->map_oo = bsr_malloc(sizeof(int) * (size_t)(nnz + 1), "value map");
    A->map_mv = bsr_malloc(sizeof(int) * (size_t)(nnz + 1), "value map");
    int *ownpos = bsr_malloc(sizeof(int) * (size_t)(n + 1), "interface columns");
    A->ifc_own = bsr_malloc(sizeof(int) * (size_t)(n + 1), "interface columns");
    if (!A->map_oo || !A->map_mv || !ownpos || !A->ifc_own) { free(ownpos); return BSR_ERR_NOMEM; }
    for (int64_t q = 0; q < nnz; q++) A->map_oo[q] = -1;
    /* own columns that interface rows read, ascending */
    for (int i = 0; i < n; i++) ownpos[i] = -1;
    for (int i = A->nint; i < n; i++) {
        int r = A->perm[i];
        for (int q = rowptr[r]; q < rowptr[r + 1]; q++) {
            int64_t g = colind[q];
            if (g >= A->row0 && g < A->row0 + n) ownpos[A->iperm[g - A->row0]] = 0;
        }
    }
    A->nifc_own = 0;
    for (int i = 0; i < n; i++)
        if (!ownpos[i]) { ownpos[i] = A->nifc_own; A->ifc_own[A->nifc_own++] = i; }
    bsr_status st = build_pattern(A, rowptr, colind, PAT_OO, 0, n, n, ownpos, A->map_oo, &A->Aoo);
    if (!st) st = build_pattern(A, rowptr, colind, PAT_INT, 0, A->nint, n, ownpos, A->map_mv, &A->Aint);
    if (!st) st = build_pattern(A, rowptr, colind, PAT_IFC, A->nint, n, A->nifc_own + A->h.nghost, ownpos,
                                A->map_mv, &A->Aifc);
    if (!st) /* interface blocks follow the interior ones in map_mv */
        for (int i = A->nint; i < n; i++) {
            int r = A->perm[i];
            for (int q = rowptr[r]; q < rowptr[r + 1]; q++) A->map_mv[q] += A->Aint->nnzb;
        }
    free(ownpos);
    return st;
}

/* Values of the caller's blocks into the three local matrices (duplicates
 * summed; blocks of A's precision, row-major unless BSR_COLMAJOR_BLOCKS). */
static bsr_status load_values(bsr_dmatrix *A, const void *val, unsigned flags)
{
    size_t bb = (size_t)A->b * A->b, es = bsr_precision_size(A->prec);
    if (!(flags & BSR_ALLOW_NONFINITE)) {
        int64_t bad = bsr_first_nonfinite(val, A->prec, A->nnz_in * (int64_t)bb);
        if (bad >= 0) return bsr_error(BSR_ERR_VALUE, "bsr_dmatrix_set_values: non-finite value in block %lld",
                                       (long long)(bad / (int64_t)bb));
    }
    bsr_matrix *M[3] = {A->Aoo, A->Aint, A->Aifc};
    for (int m = 0; m < 3; m++) {
        memset(M[m]->val, 0, (size_t)M[m]->nnzb * bb * es);
        M[m]->dev_stale = 1;
    }
    double tmp[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    int nint = A->Aint->nnzb;
    for (int64_t q = 0; q < A->nnz_in; q++) {
        bsr_block_copy(tmp, A->prec, (const char *)val + (size_t)q * bb * es, A->prec, A->b,
                       (flags & BSR_COLMAJOR_BLOCKS) != 0);
        if (A->map_oo[q] >= 0) bsr_block_add((char *)A->Aoo->val + (size_t)A->map_oo[q] * bb * es, tmp, A->prec, A->b);
        int t = A->map_mv[q];
        bsr_matrix *T = t < nint ? A->Aint : A->Aifc;
        if (t >= nint) t -= nint;
        bsr_block_add((char *)T->val + (size_t)t * bb * es, tmp, A->prec, A->b);
    }
    return BSR_OK;
}

bsr_status bsr_dmatrix_create(bsr_dmatrix **out, bsr_dist *d, int64_t nglobal, int nrows, int b,
                              const int *rowptr, const int64_t *colind, const void *val,
                              bsr_precision prec, unsigned flags)
{
    BSR_CHECK_ARG(out && d, "bsr_dmatrix_create: NULL argument");
    *out = NULL;
    bsr_dmatrix *A = bsr_calloc(1, sizeof *A, "distributed matrix");
    bsr_status st = A ? BSR_OK : BSR_ERR_NOMEM;
    if (A) {
        A->d = d;
        A->nglobal = nglobal;
        A->nrows = nrows;
        A->b = b;
        A->prec = prec;
        A->flags = flags & (BSR_COLMAJOR_BLOCKS | BSR_SUM_DUPLICATES);
        A->rows0 = bsr_malloc(sizeof(int64_t) * ((size_t)d->size + 1), "rank rows");
        if (!A->rows0) st = BSR_ERR_NOMEM;
    }
    if (!st) st = check_local(nglobal, nrows, b, rowptr, colind, val, prec, flags);
    /* every step that can fail on one rank is agreed on before the next collective call */
    if ((st = bsr_dist_agree(d, st))) goto fail;
    if ((st = bsr_dist_agree(d, check_global(A, nglobal, nrows, b, prec)))) goto fail;
    A->row0 = A->rows0[d->rank];
    if ((st = bsr_dist_agree(d, split_rows(A, rowptr, colind)))) goto fail;
    if ((st = bsr_dist_agree(d, plan_halo(A)))) goto fail;
    st = build_local(A, rowptr, colind);
    if (!st) st = load_values(A, val, flags | BSR_ALLOW_NONFINITE); /* checked above */
    if ((st = bsr_dist_agree(d, st))) goto fail;
    *out = A;
    return BSR_OK;
fail:
    bsr_dmatrix_destroy(A);
    return st;
}

void bsr_dmatrix_destroy(bsr_dmatrix *A)
{
    if (!A) return;
    bsr_dipc_destroy(A);   /* before the halo plan it walks */
    bsr_dnccl_destroy(A);
    bsr_dhalo_buf_free(A);
    bsr_dmatrix_perm_free(A);
    bsr_matrix_destroy(A->Aoo);
    bsr_matrix_destroy(A->Aint);
    bsr_matrix_destroy(A->Aifc);
    bsr_halo *h = &A->h;
    free(h->send_rank); free(h->send_off); free(h->send_idx);
    free(h->recv_rank); free(h->recv_off); free(h->ghost_gid);
    free(A->rows0); free(A->perm); free(A->iperm); free(A->ifc_own);
    free(A->map_oo); free(A->map_mv);
    free(A);
}

bsr_status bsr_dmatrix_set_values(bsr_dmatrix *A, const void *val, unsigned flags)
{
    BSR_CHECK_ARG(A, "bsr_dmatrix_set_values: NULL matrix");
    bsr_status st = val || A->nnz_in == 0 ? BSR_OK : bsr_error(BSR_ERR_ARG, "bsr_dmatrix_set_values: NULL values");
    if (!st) st = load_values(A, val, flags);
    st = bsr_dist_agree(A->d, st);
    A->values_bad = st != BSR_OK;   /* the same on every rank */
    return st;
}

bsr_status bsr_dmatrix_check_values(const bsr_dmatrix *A, const char *fn)
{
    if (!A->values_bad) return BSR_OK;
    return bsr_error(BSR_ERR_VALUE, "%s: the last bsr_dmatrix_set_values failed (on some rank): "
                     "give the matrix good values first", fn);
}

int64_t bsr_dmatrix_nglobal(const bsr_dmatrix *A) { return A ? A->nglobal : 0; }
int bsr_dmatrix_nrows(const bsr_dmatrix *A) { return A ? A->nrows : 0; }
int64_t bsr_dmatrix_row0(const bsr_dmatrix *A) { return A ? A->row0 : 0; }
int bsr_dmatrix_block(const bsr_dmatrix *A) { return A ? A->b : 0; }

bsr_status bsr_dmatrix_get_info(const bsr_dmatrix *A, bsr_dmatrix_info *info)
{
    BSR_CHECK_ARG(A && info, "bsr_dmatrix_get_info: NULL argument");
    info->nrows = A->nrows;
    info->interior = A->nint;
    info->interface = A->nrows - A->nint;
    info->ghosts = A->h.nghost;
    info->sent = A->h.send_off[A->h.nsend];
    info->neighbours = A->h.nsend > A->h.nrecv ? A->h.nsend : A->h.nrecv;
    info->nnzb = (int64_t)A->Aint->nnzb + A->Aifc->nnzb;
    return BSR_OK;
}

bsr_status bsr_dmatrix_permute(const bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y, int to)
{
    if (X->n != Y->n || X->k != Y->k || X->prec != Y->prec || X->n != (int64_t)A->nrows * A->b)
        return bsr_error(BSR_ERR_SIZE, "distributed solve: vectors of %lld x %d and %lld x %d for %d block rows",
                         (long long)X->n, X->k, (long long)Y->n, Y->k, A->nrows);
    if (!X->data || !Y->data) return bsr_error(BSR_ERR_ARG, "distributed solve: host vectors expected");
    size_t row = (size_t)A->b * X->k * bsr_precision_size(X->prec);
    for (int i = 0; i < A->nrows; i++) {
        size_t a = (size_t)i * row, c = (size_t)A->perm[i] * row;
        memcpy((char *)Y->data + (to ? a : c), (const char *)X->data + (to ? c : a), row);
    }
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}
