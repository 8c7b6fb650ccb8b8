/* SPDX-License-Identifier: BSD-3-Clause */
/* Restricted additive Schwarz with one layer of overlap: each rank's
 * preconditioner is built on its rows and its ghost rows (the neighbours'
 * rows its own rows read, fetched once at setup, their values again at each
 * refactor), restricted to the columns of those rows; applied, it takes the
 * residual on own and ghost rows (one halo exchange) and keeps the result
 * on its own rows only.  The local preconditioner is the table's object of
 * (kind, backend) on that matrix (precond_table.c), as a solver's is. */
#include "dist_impl.h"
#include "solver_impl.h"
#include <string.h>

#define RAS_TAG_COUNT 7302
#define RAS_TAG_COLS 7303
#define RAS_TAG_VALS 7304

struct bsr_dras {
    bsr_solver_options opt; /* the preconditioner's options, resolved for Aext */
    bsr_matrix *Aext;       /* own rows, then ghost rows, over own + ghost columns */
    bsr_matrix *Awork;      /* Aext in the working precision (NULL: Aext is it) */
    bsr_pc *pc;             /* the preconditioner of Aext on the solve's backend */
    bsr_context *ctx;       /* NULL: host */
    bsr_context *dev;       /* ctx when the solve runs on its device, else NULL */
    int n, nghost, b;
    int *gcnt;              /* [nghost] blocks of each fetched ghost row */
    int64_t ngblk;          /* their total */
    int64_t *gcol;          /* [ngblk] their global columns */
    void *gval;             /* [ngblk] their values, refreshed at refactor */
    bsr_multivec *R, *Z;    /* ext-sized work vectors of the apply */
};

/* The ext index of global column g: own rows first, then the ghosts; -1
 * outside both (a column of a ghost row beyond the overlap). */
static int ext_col(const bsr_dmatrix *A, int64_t g)
{
    if (g >= A->row0 && g < A->row0 + A->nrows) return A->iperm[g - A->row0];
    int lo = 0, hi = A->h.nghost;
    while (lo < hi) {
        int m = lo + (hi - lo) / 2;
        if (A->h.ghost_gid[m] < g) lo = m + 1; else hi = m;
    }
    return lo < A->h.nghost && A->h.ghost_gid[lo] == g ? A->nrows + lo : -1;
}

/* Blocks of internal row i in global column order: their global columns
 * (gc, may be NULL) and values (v, may be NULL); returns their number. */
static int row_blocks(const bsr_dmatrix *A, int i, int64_t *gc, void *v)
{
    const bsr_matrix *M = i < A->nint ? A->Aint : A->Aifc;
    int r = i < A->nint ? i : i - A->nint, n = M->rowptr[r + 1] - M->rowptr[r];
    size_t bsz = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    for (int t = 0; t < n; t++) {
        int p = M->rowptr[r] + t, c = M->colind[p];
        if (gc) {
            if (i < A->nint) gc[t] = A->row0 + A->perm[c];
            else gc[t] = c < A->nifc_own ? A->row0 + A->perm[A->ifc_own[c]] : A->h.ghost_gid[c - A->nifc_own];
        }
        if (v) memcpy((char *)v + (size_t)t * bsz, (const char *)M->val + (size_t)p * bsz, bsz);
    }
    return n;
}

/* Exchange along the halo plan: send[q] (scount[q] items of type) to each
 * send rank, recv[q] (rcount[q]) from each receive rank. */
static bsr_status exchange(bsr_dmatrix *A, MPI_Datatype type, int tag, char **send, const int *scount,
                           char **recv, const int *rcount)
{
    const bsr_halo *h = &A->h;
    MPI_Request *req = bsr_malloc(sizeof(MPI_Request) * (size_t)(h->nsend + h->nrecv + 1), "overlap requests");
    bsr_status st = bsr_dist_agree(A->d, req ? BSR_OK : BSR_ERR_NOMEM);
    if (st) { free(req); return st; }
    int nr = 0, e = MPI_SUCCESS;
    for (int q = 0; q < h->nrecv && e == MPI_SUCCESS; q++)
        e = MPI_Irecv(recv[q], rcount[q], type, h->recv_rank[q], tag, A->d->comm, &req[nr++]);
    for (int q = 0; q < h->nsend && e == MPI_SUCCESS; q++)
        e = MPI_Isend(send[q], scount[q], type, h->send_rank[q], tag, A->d->comm, &req[nr++]);
    if (e == MPI_SUCCESS) e = MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    free(req);
    return bsr_dist_agree(A->d, e == MPI_SUCCESS ? BSR_OK : bsr_mpi_fail(e, "overlap exchange"));
}

/* Fetch the ghost rows' values (with their pattern when with_pattern). */
static bsr_status fetch_rows(struct bsr_dras *R, bsr_dmatrix *A, int with_pattern)
{
    const bsr_halo *h = &A->h;
    size_t bsz = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    int ns = h->send_off[h->nsend], bvals = A->b * A->b;
    MPI_Datatype vt = A->prec == BSR_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
    /* what goes out: each send rank's rows, their counts, columns, values */
    int64_t nsb = 0;
    for (int t = 0; t < ns; t++) nsb += row_blocks(A, h->send_idx[t], NULL, NULL);
    int *scnt = bsr_malloc(sizeof(int) * (size_t)(ns + 1), "overlap counts");
    int64_t *scol = bsr_malloc(sizeof(int64_t) * (size_t)(nsb + 1), "overlap columns");
    char *sval = bsr_malloc(bsz * (size_t)(nsb + 1), "overlap values");
    int nq = (h->nsend > h->nrecv ? h->nsend : h->nrecv) + 1;
    char **sp = bsr_malloc(sizeof(char *) * 2 * (size_t)nq, "overlap pointers"), **rp = sp ? sp + nq : NULL;
    int *c = bsr_malloc(sizeof(int) * 2 * (size_t)nq, "overlap pointers"), *rc = c ? c + nq : NULL;
    bsr_status st = scnt && scol && sval && sp && c ? BSR_OK : BSR_ERR_NOMEM;
    if (with_pattern && !st) {
        R->gcnt = bsr_malloc(sizeof(int) * (size_t)(R->nghost + 1), "overlap counts");
        if (!R->gcnt) st = BSR_ERR_NOMEM;
    }
    if ((st = bsr_dist_agree(A->d, st))) goto done;
    int64_t off = 0;
    for (int t = 0; t < ns; t++) {
        scnt[t] = row_blocks(A, h->send_idx[t], scol + off, sval + (size_t)off * bsz);
        off += scnt[t];
    }
    if (with_pattern) {
        for (int q = 0; q < h->nsend; q++) { sp[q] = (char *)(scnt + h->send_off[q]); c[q] = h->send_off[q + 1] - h->send_off[q]; }
        for (int q = 0; q < h->nrecv; q++) { rp[q] = (char *)(R->gcnt + h->recv_off[q]); rc[q] = h->recv_off[q + 1] - h->recv_off[q]; }
        if ((st = exchange(A, MPI_INT, RAS_TAG_COUNT, sp, c, rp, rc))) goto done;
        R->ngblk = 0;
        for (int g = 0; g < R->nghost; g++) R->ngblk += R->gcnt[g];
        R->gcol = bsr_malloc(sizeof(int64_t) * (size_t)(R->ngblk + 1), "overlap columns");
        R->gval = bsr_malloc(bsz * (size_t)(R->ngblk + 1), "overlap values");
        if ((st = bsr_dist_agree(A->d, R->gcol && R->gval ? BSR_OK : BSR_ERR_NOMEM))) goto done;
    }
    /* per-rank slices of the block lists: by rows, summed counts */
    int64_t so = 0, ro = 0;
    for (int q = 0, t = 0; q < h->nsend; q++) {
        int64_t nb = 0;
        for (; t < h->send_off[q + 1]; t++) nb += scnt[t];
        sp[q] = (char *)(scol + so); c[q] = (int)nb; so += nb;
    }
    for (int q = 0, g = 0; q < h->nrecv; q++) {
        int64_t nb = 0;
        for (; g < h->recv_off[q + 1]; g++) nb += R->gcnt[g];
        rp[q] = (char *)(R->gcol + ro); rc[q] = (int)nb; ro += nb;
    }
    if (with_pattern && (st = exchange(A, MPI_INT64_T, RAS_TAG_COLS, sp, c, rp, rc))) goto done;
    for (int q = 0; q < h->nsend; q++) { sp[q] = sval + (size_t)((int64_t *)sp[q] - scol) * bsz; c[q] *= bvals; }
    for (int q = 0; q < h->nrecv; q++) { rp[q] = (char *)R->gval + (size_t)((int64_t *)rp[q] - R->gcol) * bsz; rc[q] *= bvals; }
    st = exchange(A, vt, RAS_TAG_VALS, sp, c, rp, rc);
done:
    free(scnt); free(scol); free(sval); free(sp); free(c);
    return st;
}

/* Aext's arrays in creation order: own rows (all their blocks), then the
 * ghost rows' blocks inside own + ghost columns.  cols NULL: values only. */
static int64_t ext_arrays(const struct bsr_dras *R, const bsr_dmatrix *A, int *rowptr, int *cols, void *vals)
{
    size_t bsz = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    int64_t out = 0, maxlen = 0;
    for (int i = 0; i < A->nrows; i++) {
        int len = row_blocks(A, i, NULL, NULL);
        if (len > maxlen) maxlen = len;
    }
    int64_t *gc = malloc(sizeof(int64_t) * (size_t)(maxlen + 1));
    if (!gc) return -1;
    if (rowptr) rowptr[0] = 0;
    for (int i = 0; i < A->nrows; i++) {
        int len = row_blocks(A, i, gc, vals ? (char *)vals + (size_t)out * bsz : NULL);
        if (cols) for (int t = 0; t < len; t++) cols[out + t] = ext_col(A, gc[t]);
        out += len;
        if (rowptr) rowptr[i + 1] = (int)out;
    }
    free(gc);
    int64_t q = 0;
    for (int g = 0; g < R->nghost; g++) {
        for (int t = 0; t < R->gcnt[g]; t++, q++) {
            int cx = ext_col(A, R->gcol[q]);
            if (cx < 0) continue;
            if (cols) cols[out] = cx;
            if (vals) memcpy((char *)vals + (size_t)out * bsz, (const char *)R->gval + (size_t)q * bsz, bsz);
            out++;
        }
        if (rowptr) rowptr[A->nrows + g + 1] = (int)out;
    }
    return out;
}

void bsr_dras_destroy(struct bsr_dras *R)
{
    if (!R) return;
    bsr_pc_destroy(R->pc);
    bsr_matrix_destroy(R->Awork);
    bsr_matrix_destroy(R->Aext);
    bsr_multivec_destroy(R->R);
    bsr_multivec_destroy(R->Z);
    free(R->gcnt); free(R->gcol); free(R->gval);
    free(R);
}

/* Aext's current values in the working precision (Awork made anew when the
 * precisions differ), checked as a solver checks its operator. */
static bsr_status ras_work(struct bsr_dras *R)
{
    bsr_matrix_destroy(R->Awork);
    R->Awork = NULL;
    if (R->Aext->prec != R->opt.precision) BSR_TRY(bsr_matrix_copy(R->Aext, R->opt.precision, &R->Awork));
    return bsr_check_subnormal_rows(&R->opt, R->Aext);
}

/* setup or refactor of the preconditioner on the working matrix; the device
 * mirror a device row made of it is released after (the solve's products
 * run on the rank's own matrices). */
static bsr_status ras_pc(struct bsr_dras *R, int setup)
{
    bsr_matrix *W = R->Awork ? R->Awork : R->Aext;
    bsr_status st = setup ? bsr_pc_create(W, &R->opt, R->dev, NULL, NULL, &R->pc)
                          : R->pc->refactor ? R->pc->refactor(R->pc, W) : BSR_OK;
    bsr_cuda_matrix_release(W);
    return st;
}

/* One apply with one column on ones, on the device: the module loads, the
 * kernel choice and the apply's first work vectors are paid at setup, not in
 * the first Krylov iteration (as bsr_solver_device_warm does for a solver).
 * The vectors are those a one-column apply then uses. */
static bsr_status ras_warm(struct bsr_dras *R)
{
    if (!R->dev || !R->pc->apply) return BSR_OK;
    const int64_t ne = (int64_t)(R->n + R->nghost) * R->b;
    BSR_TRY(bsr_multivec_create_device(R->dev, &R->R, ne, 1, R->opt.precision));
    BSR_TRY(bsr_multivec_create_device(R->dev, &R->Z, ne, 1, R->opt.precision));
    BSR_TRY(bsr_ctx_fill(R->dev, R->R, 1.0));
    BSR_TRY(R->pc->apply(R->pc, R->R, R->Z));
    return bsr_context_sync(R->dev);
}

/* A new preconditioner on Aext (setup, or a refactor that chooses a new
 * pattern): the working matrix, the options resolved for it, the table's
 * object, the warm apply. */
static bsr_status ras_build(struct bsr_dras *R)
{
    bsr_pc_destroy(R->pc);
    R->pc = NULL;
    bsr_multivec_destroy(R->R); bsr_multivec_destroy(R->Z);
    R->R = R->Z = NULL;
    BSR_TRY(ras_work(R));
    BSR_TRY(bsr_pc_options_resolve(&R->opt, R->dev != NULL, R->Awork ? R->Awork : R->Aext));
    BSR_TRY(ras_pc(R, 1));
    return ras_warm(R);
}

struct bsr_pc *bsr_dras_pc(const struct bsr_dras *R)
{
    return R ? R->pc : NULL;
}

bsr_status bsr_dras_reorder(struct bsr_dras *R, const char *reorder)
{
    snprintf(R->opt.reorder, sizeof R->opt.reorder, "%s", reorder);
    return ras_build(R);
}

bsr_status bsr_dras_setup(struct bsr_dras **out, bsr_dmatrix *A, bsr_context *ctx, const bsr_solver_options *o)
{
    *out = NULL;
    struct bsr_dras *R = bsr_calloc(1, sizeof *R, "overlap preconditioner");
    bsr_status st = bsr_dist_agree(A->d, R ? BSR_OK : BSR_ERR_NOMEM);
    if (st) return st;
    R->opt = *o;
    R->opt.overlap = 0;
    R->ctx = ctx;
    R->dev = bsr_solver_ctx_is_device(ctx) ? ctx : NULL;
    R->n = A->nrows;
    R->nghost = A->h.nghost;
    R->b = A->b;
    if ((st = fetch_rows(R, A, 1))) goto fail;
    int ne = R->n + R->nghost;
    int64_t nnz = ext_arrays(R, A, NULL, NULL, NULL);
    int *rowptr = bsr_malloc(sizeof(int) * (size_t)(ne + 1), "overlap matrix");
    int *cols = bsr_malloc(sizeof(int) * (size_t)(nnz + 1), "overlap matrix");
    void *vals = bsr_malloc((size_t)A->b * A->b * bsr_precision_size(A->prec) * (size_t)(nnz + 1), "overlap matrix");
    st = rowptr && cols && vals && nnz >= 0 ? BSR_OK : BSR_ERR_NOMEM;
    if (!st) {
        ext_arrays(R, A, rowptr, cols, vals);
        st = bsr_matrix_create(&R->Aext, ne, ne, A->b, rowptr, cols, vals, A->prec, BSR_ALLOW_NONFINITE);
    }
    free(rowptr); free(cols); free(vals);
    if (!st) st = ras_build(R);
    if ((st = bsr_dist_agree(A->d, st))) goto fail;
    *out = R;
    return BSR_OK;
fail:
    bsr_dras_destroy(R);
    return st;
}

bsr_status bsr_dras_refactor(struct bsr_dras *R, bsr_dmatrix *A)
{
    BSR_TRY(fetch_rows(R, A, 0));
    size_t bytes = (size_t)R->Aext->b * R->Aext->b * bsr_precision_size(A->prec) * ((size_t)R->Aext->ngiven + R->Aext->nnzb + 1);
    void *vals = bsr_malloc(bytes, "overlap values");
    bsr_status st = vals ? BSR_OK : BSR_ERR_NOMEM;
    if (!st) {
        ext_arrays(R, A, NULL, NULL, vals);
        st = bsr_matrix_set_values(R->Aext, vals, BSR_ALLOW_NONFINITE);
    }
    free(vals);
    /* ILUT/ILU2 with pattern=refresh: a new pattern is a new setup (this
     * preconditioner never solves, so auto keeps the pattern) */
    if (!st && bsr_pc_pattern_refresh(&R->opt, 0, 0)) st = ras_build(R);
    else if (!st && !(st = ras_work(R))) st = ras_pc(R, 0);
    return bsr_dist_agree(A->d, st);
}

bsr_status bsr_dras_apply(struct bsr_dras *R, bsr_dmatrix *A, const bsr_multivec *X, bsr_multivec *Y,
                          bsr_dtimes *tm)
{
    if (!X) return bsr_dmatrix_ghosts(A, R->ctx, NULL, NULL, tm);  /* keep step after a failure */
    bsr_context *dev = R->dev;
    int64_t ne = (int64_t)(R->n + R->nghost) * R->b, no = (int64_t)R->n * R->b;
    if (!R->R || R->R->k != X->k || R->R->prec != X->prec) {
        bsr_multivec_destroy(R->R); bsr_multivec_destroy(R->Z);
        R->R = R->Z = NULL;
        bsr_status st = dev ? bsr_multivec_create_device(dev, &R->R, ne, X->k, X->prec)
                            : bsr_multivec_create(&R->R, ne, X->k, X->prec);
        if (!st) st = dev ? bsr_multivec_create_device(dev, &R->Z, ne, X->k, X->prec)
                          : bsr_multivec_create(&R->Z, ne, X->k, X->prec);
        if (st) {   /* the exchange still runs, so that no neighbour waits for it */
            bsr_multivec_destroy(R->R); bsr_multivec_destroy(R->Z);
            R->R = R->Z = NULL;
            bsr_dmatrix_ghosts(A, R->ctx, NULL, NULL, tm);
            return st;
        }
    }
    bsr_mv_view vo, vg, vz;
    BSR_TRY(bsr_dmatrix_ghosts(A, dev, X, bsr_multivec_view(R->R, no, ne - no, &vg), tm));
    bsr_multivec *Ro = bsr_multivec_view(R->R, 0, no, &vo);
    BSR_TRY(dev ? bsr_ctx_copy(dev, Ro, X) : bsr_multivec_copy(Ro, X));
    bsr_pc *pc = R->pc;
    if (pc->apply) BSR_TRY(pc->apply(pc, R->R, R->Z));
    else BSR_TRY(dev ? bsr_ctx_copy(dev, R->Z, R->R) : bsr_multivec_copy(R->Z, R->R));
    const bsr_multivec *Zo = bsr_multivec_view(R->Z, 0, no, &vz);
    return dev ? bsr_ctx_copy(dev, Y, Zo) : bsr_multivec_copy(Y, Zo);
}

void bsr_dras_stats(const struct bsr_dras *R, bsr_solver_stats *st)
{
    const bsr_pc *pc = R->pc;
    st->pc_nnzb = pc->nnzb;
    st->fill = R->Aext->nnzb ? (double)pc->nnzb / R->Aext->nnzb : 0;
    st->pivots_regularized = pc->pivots_regularized;
    snprintf(st->precond_info, sizeof st->precond_info, "ras(overlap 1, %d ghost rows) %.16s%s%.440s", R->nghost,
             pc->name, pc->info[0] ? ": " : "", pc->info);
}
