/* Numeric block ILU(0) / ILUT(tau) / ILU2(tau1,tau2) factorization.
 *
 * Row (IKJ) form of the Crout recurrences of the design note: row k of the
 * scaled, permuted A is loaded into a sparse accumulator; its lower columns i
 * are eliminated in ascending order (a min-heap, since fill creates new ones):
 * the block x_ki becomes the multiplier x_ki d_i^{-1}, is classified as L
 * (first order), R (second order) or dropped, and then updates the row by
 *     L: x -= l_ki (u_i + w_i)        R: x -= r_ki u_i   (never r_ki w_i),
 * exactly the sums of the note's steps 1-2 (the same products, the same
 * order of accumulation for every target block: ascending i).  The pivot d_k
 * is the accumulated diagonal block; the upper blocks z_kj are classified on
 * ||d_k^{-1} z_kj||_F and kept as U (the stored U diagonal is d_k^{-1}) or W.
 * R blocks of row k are needed only while row k is eliminated, so only W
 * outlives its row; both are freed at the end.
 * ILU(0): the same loop with the pattern fixed to A's (+ diagonal) and no
 * dropping; ILUT(tau): tau2 = tau1 (no second-order class).
 *
 * Parallelism: with a nested-dissection ordering (p-bordered form, checked in
 * setup) a row reaches only rows of its own tree node's subtree, so the
 * subtrees are factored as OpenMP tasks, each node's separator rows after
 * both children.  Every row is computed by the same code from the same
 * finished rows, hence serial and parallel factors are identical bit for bit. */
#include "ilu_impl.h"
#include "blockops.h"
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

bsr_status ilu_work_init(ilu_work *w, int n, int b)
{
    memset(w, 0, sizeof *w);
    int bb = b * b;
    w->cap = 64;
    w->pos = bsr_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1), "ILU workspace");
    w->scol = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->heap = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->lsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->usel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->wsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->sval = bsr_malloc(sizeof(double) * (size_t)w->cap * bb, "ILU workspace");
    w->tmp = bsr_malloc(sizeof(double) * 3 * bb, "ILU workspace");
    if (!w->pos || !w->scol || !w->heap || !w->lsel || !w->usel || !w->wsel || !w->sval || !w->tmp) {
        ilu_work_free(w);
        return BSR_ERR_NOMEM;
    }
    w->lblk = w->tmp + bb;
    for (int i = 0; i < n; i++) w->pos[i] = -1;
    return BSR_OK;
}

void ilu_work_free(ilu_work *w)
{
    free(w->pos); free(w->scol); free(w->heap); free(w->lsel); free(w->usel); free(w->wsel);
    free(w->sval); free(w->tmp);
    memset(w, 0, sizeof *w);
}

/* Double the slot capacity (all per-slot arrays together). */
static int work_grow(ilu_work *w, int b)
{
    int cap = 2 * w->cap;
    int *a[5] = {w->scol, w->heap, w->lsel, w->usel, w->wsel};
    for (int t = 0; t < 5; t++) {
        int *p = realloc(a[t], sizeof(int) * cap);
        if (!p) return 0;
        a[t] = p;
        /* store back at once so that a later failure leaks nothing */
        if (t == 0) w->scol = p; else if (t == 1) w->heap = p; else if (t == 2) w->lsel = p;
        else if (t == 3) w->usel = p; else w->wsel = p;
    }
    double *v = realloc(w->sval, sizeof(double) * (size_t)cap * b * b);
    if (!v) return 0;
    w->sval = v;
    w->cap = cap;
    return 1;
}

int ilu_slot(ilu_work *w, int b, int j, int create, int *nomem)
{
    int s = w->pos[j];
    if (s >= 0 || !create) return s;
    if (w->ns == w->cap && !work_grow(w, b)) { *nomem = 1; return -1; }
    s = w->ns++;
    w->pos[j] = s;
    w->scol[s] = j;
    memset(w->sval + (size_t)s * b * b, 0, sizeof(double) * b * b);
    return s;
}

void ilu_work_clear(ilu_work *w)
{
    for (int s = 0; s < w->ns; s++) w->pos[w->scol[s]] = -1;
    w->ns = 0;
    w->nh = 0;
}

/* Min-heap of column indices. */
static void heap_push(int *h, int *nh, int v)
{
    int i = (*nh)++;
    while (i > 0 && h[(i - 1) / 2] > v) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = v;
}

static int heap_pop(int *h, int *nh)
{
    int top = h[0], v = h[--(*nh)], i = 0, n = *nh;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (n > 0) h[i] = v;
    return top;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Original block row of permuted row k (for messages). */
static int orig_row(const bsr_ilu *F, int k) { return F->ord ? F->ord->perm[k] : k; }

/* Add column j's update  x_j -= m * v  (creating the slot unless the
 * pattern is fixed). */
static int row_update(ilu_work *w, int b, int k, int j, const double *m, const double *v,
                      int create)
{
    int nomem = 0, had = w->pos[j] >= 0;
    int s = ilu_slot(w, b, j, create, &nomem);
    if (nomem) return 0;
    if (s < 0) return 1;
    if (!had && j < k) heap_push(w->heap, &w->nh, j);
    bsr_blk_mulsub(b, w->sval + (size_t)s * b * b, m, v);
    return 1;
}

/* Factor row k into F->rows[k] (see the file comment). */
static bsr_status ilu_row(bsr_ilu *F, ilu_work *w, int k)
{
    const int b = F->b, bb = b * b, fixed = F->mode == 0;
    int nomem = 0, nl = 0, nu = 0, nw = 0, nr = 0;
    w->ns = 0; w->nh = 0;
    for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
        int j = F->ac[p], s = ilu_slot(w, b, j, 1, &nomem);
        if (nomem) goto oom;
        memcpy(w->sval + (size_t)s * bb, F->aval + (size_t)p * bb, sizeof(double) * bb);
        if (j < k) heap_push(w->heap, &w->nh, j);
    }
    if (ilu_slot(w, b, k, 1, &nomem) < 0) goto oom;   /* the diagonal is always there */

    while (w->nh > 0) {
        int i = heap_pop(w->heap, &w->nh);
        const ilu_row_t *ri = &F->rows[i];
        const int *uc = ri->col + ri->nl;
        const double *uv = ri->val + (size_t)ri->nl * bb;
        double *x = w->sval + (size_t)w->pos[i] * bb;
        bsr_blk_mul(b, w->lblk, x, uv);                 /* l_ki = x_ki d_i^{-1} */
        memcpy(x, w->lblk, sizeof(double) * bb);
        double nrm = bsr_blk_fnorm(b, w->lblk);
        if (!isfinite(nrm)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block L(%d,%d) in block row %d "
                     "(row %d of A)", k, i, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        int first = fixed || nrm >= F->t1;
        if (!first && nrm < F->t2) { w->dropped++; continue; }
        if (first) w->lsel[nl++] = i; else nr++;
        for (int q = 1; q < ri->nu; q++)
            if (!row_update(w, b, k, uc[q], w->lblk, uv + (size_t)q * bb, !fixed)) goto oom;
        if (first)   /* R * W products are never formed */
            for (int q = 0; q < ri->nw; q++)
                if (!row_update(w, b, k, uc[ri->nu + q], w->lblk,
                                uv + (size_t)(ri->nu + q) * bb, !fixed)) goto oom;
    }

    /* pivot: d_k regularized by the stated rule, then inverted */
    double *lu = w->tmp, *dinv = w->lblk;
    double *d = w->sval + (size_t)w->pos[k] * bb;
    int ipiv[BSR_MAX_BLOCK];
    if (!bsr_blk_finite(b, d)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite pivot block in block row %d (row %d of A)",
                 k, orig_row(F, k));
        return BSR_ERR_SINGULAR;
    }
    double tiny = F->pivot_rel * F->rowref[k];
    memcpy(lu, d, sizeof(double) * bb);
    int nreg = bsr_blk_lu(b, lu, ipiv, tiny);
    if (nreg) {
        if (F->opt.strict_pivots) {
            snprintf(w->msg, sizeof w->msg, "ILU: singular pivot block in block row %d (row %d of A):"
                     " %d pivot(s) below %.3g", k, orig_row(F, k), nreg, tiny);
            return BSR_ERR_SINGULAR;
        }
        w->nreg++;
    }
    bsr_blk_lu_inv(b, lu, ipiv, dinv);
    if (!bsr_blk_finite(b, dinv)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite inverse pivot in block row %d (row %d of A)",
                 k, orig_row(F, k));
        return BSR_ERR_SINGULAR;
    }
    /* the pivot the factors really hold (the regularized one) */
    if (nreg) bsr_blk_inv(b, dinv, F->piv + (size_t)k * bb, 0.0);
    else memcpy(F->piv + (size_t)k * bb, d, sizeof(double) * bb);

    /* upper part: classify on the normalized block d_k^{-1} z_kj */
    for (int s = 0; s < w->ns; s++) {
        int j = w->scol[s];
        if (j <= k) continue;
        const double *z = w->sval + (size_t)s * bb;
        double nrm;
        if (fixed) nrm = bsr_blk_finite(b, z) ? 1.0 : NAN;
        else { bsr_blk_mul(b, lu, dinv, z); nrm = bsr_blk_fnorm(b, lu); }
        if (!isfinite(nrm)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block U(%d,%d) in block row %d "
                     "(row %d of A)", k, j, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        if (fixed || nrm >= F->t1) w->usel[nu++] = j;
        else if (nrm >= F->t2) w->wsel[nw++] = j;
        else w->dropped++;
    }
    qsort(w->usel, nu, sizeof(int), cmp_int);
    qsort(w->wsel, nw, sizeof(int), cmp_int);

    /* store: L (ascending), U (diagonal = d_k^{-1} first), W */
    ilu_row_t *rk = &F->rows[k];
    free(rk->col); free(rk->val);
    int tot = nl + 1 + nu + nw;
    rk->col = malloc(sizeof(int) * tot);
    rk->val = malloc(sizeof(double) * (size_t)tot * bb);
    if (!rk->col || !rk->val) { free(rk->col); free(rk->val); rk->col = NULL; rk->val = NULL; goto oom; }
    rk->nl = nl; rk->nu = nu + 1; rk->nw = nw;
    int e = 0;
    for (int t = 0; t < nl; t++, e++) {
        rk->col[e] = w->lsel[t];
        memcpy(rk->val + (size_t)e * bb, w->sval + (size_t)w->pos[w->lsel[t]] * bb, sizeof(double) * bb);
    }
    rk->col[e] = k;
    memcpy(rk->val + (size_t)e * bb, dinv, sizeof(double) * bb);
    e++;
    for (int t = 0; t < nu; t++, e++) {
        rk->col[e] = w->usel[t];
        memcpy(rk->val + (size_t)e * bb, w->sval + (size_t)w->pos[w->usel[t]] * bb, sizeof(double) * bb);
    }
    for (int t = 0; t < nw; t++, e++) {
        rk->col[e] = w->wsel[t];
        memcpy(rk->val + (size_t)e * bb, w->sval + (size_t)w->pos[w->wsel[t]] * bb, sizeof(double) * bb);
    }
    w->sec_used += nr + nw;
    w->wkept += nw;
    if (nr > w->rmax) w->rmax = nr;
    ilu_work_clear(w);
    return BSR_OK;
oom:
    snprintf(w->msg, sizeof w->msg, "ILU: out of memory in block row %d", k);
    ilu_work_clear(w);
    return BSR_ERR_NOMEM;
}

/* Shared state of one factorization run. */
typedef struct {
    bsr_ilu *F;
    ilu_work *work;     /* one per thread */
    int err_row;        /* smallest failing row (INT_MAX: none) */
    bsr_status err;
    char msg[256];
} run_t;

/* Record a failure of row k; the smallest row wins, which is the row the
 * serial factorization stops at (see the file comment). */
static void run_fail(run_t *R, int k, bsr_status s, const char *msg)
{
    #pragma omp critical(bsr_ilu_err)
    if (k < R->err_row) {
        R->err_row = k;
        R->err = s;
        snprintf(R->msg, sizeof R->msg, "%s", msg);
    }
}

/* Factor rows [r0, r1) in order on this thread; 0 when one failed. */
static int run_rows(run_t *R, int r0, int r1)
{
    ilu_work *w = &R->work[omp_get_thread_num()];
    for (int k = r0; k < r1; k++) {
        bsr_status s = ilu_row(R->F, w, k);
        if (s) { run_fail(R, k, s, w->msg); return 0; }
    }
    return 1;
}

/* Factor the subtree of node t: children as tasks, then t's separator.
 * A separator is skipped when a row below it failed (it would read them). */
static int run_node(run_t *R, int t)
{
    const bsr_tree_node *nd = &R->F->ord->nodes[t];
    int ok0 = 1, ok1 = 1;
    if (nd->child[0] >= 0 || nd->child[1] >= 0) {
        if (nd->child[0] >= 0) {
            #pragma omp task shared(ok0) firstprivate(t)
            ok0 = run_node(R, R->F->ord->nodes[t].child[0]);
        }
        if (nd->child[1] >= 0) {
            #pragma omp task shared(ok1) firstprivate(t)
            ok1 = run_node(R, R->F->ord->nodes[t].child[1]);
        }
        #pragma omp taskwait
    }
    if (!ok0 || !ok1) return 0;
    return run_rows(R, nd->sep_first, nd->last);
}

void ilu_rows_free(bsr_ilu *F)
{
    if (!F->rows) return;
    for (int k = 0; k < F->n; k++) { free(F->rows[k].col); free(F->rows[k].val); }
    free(F->rows);
    F->rows = NULL;
}

/* Copy the double block src into the factors' storage (precision p). */
static void put_block(void *dst, bsr_precision p, size_t at, const double *src, int bb)
{
    if (p == BSR_DOUBLE) memcpy((double *)dst + at * bb, src, sizeof(double) * bb);
    else for (int i = 0; i < bb; i++) ((float *)dst)[at * bb + i] = (float)src[i];
}

/* Nonzero when M's pattern equals the rows' L (upper = 0) or U part. */
static int same_pattern(const bsr_matrix *M, const bsr_ilu *F, int upper)
{
    int p = 0;
    for (int k = 0; k < F->n; k++) {
        const ilu_row_t *r = &F->rows[k];
        int n0 = upper ? r->nl : 0, cnt = upper ? r->nu : r->nl;
        if (M->rowptr[k] != p || M->rowptr[k + 1] - p != cnt) return 0;
        for (int q = 0; q < cnt; q++) if (M->colind[p + q] != r->col[n0 + q]) return 0;
        p += cnt;
    }
    return 1;
}

/* Build L and U (BSR, factors' precision) from the rows; reuse the arrays and
 * level schedules when the pattern did not change (ILU(0) refactor always). */
static bsr_status assemble(bsr_ilu *F)
{
    const int n = F->n, bb = F->b * F->b;
    for (int upper = 0; upper < 2; upper++) {
        bsr_matrix **M = upper ? &F->U : &F->L;
        bsr_levels **lv = upper ? &F->lvU : &F->lvL;
        if (!*M || !same_pattern(*M, F, upper)) {
            bsr_matrix_destroy(*M); *M = NULL;
            if (*lv) bsr_levels_free(*lv);
            *lv = NULL;
            int64_t nz = 0;
            for (int k = 0; k < n; k++) nz += upper ? F->rows[k].nu : F->rows[k].nl;
            if (nz > INT_MAX) return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: factor has %lld blocks (> INT_MAX)", (long long)nz);
            BSR_TRY(bsr_matrix_alloc(M, n, n, F->b, (int)nz, F->prec));
            int p = 0;
            (*M)->rowptr[0] = 0;
            for (int k = 0; k < n; k++) {
                const ilu_row_t *r = &F->rows[k];
                int n0 = upper ? r->nl : 0, cnt = upper ? r->nu : r->nl;
                memcpy((*M)->colind + p, r->col + n0, sizeof(int) * cnt);
                p += cnt;
                (*M)->rowptr[k + 1] = p;
            }
        }
        bsr_matrix *A = *M;
        #pragma omp parallel for schedule(static)
        for (int k = 0; k < n; k++) {
            const ilu_row_t *r = &F->rows[k];
            int n0 = upper ? r->nl : 0, cnt = upper ? r->nu : r->nl;
            for (int q = 0; q < cnt; q++)
                put_block(A->val, F->prec, (size_t)A->rowptr[k] + q, r->val + (size_t)(n0 + q) * bb, bb);
        }
        A->dev_stale = 1;
        if (!*lv) BSR_TRY(bsr_levels_build(A, upper, lv));
    }
    return BSR_OK;
}

bsr_status ilu_factor(bsr_ilu *F)
{
    int tree = F->opt.parallel && F->tree_ok;
    int nt = tree ? omp_get_max_threads() : 1;
    run_t R = {F, NULL, INT_MAX, BSR_OK, ""};
    R.work = bsr_calloc((size_t)nt, sizeof(ilu_work), "ILU workspaces");
    if (!R.work) return BSR_ERR_NOMEM;
    bsr_status s = BSR_OK;
    for (int t = 0; t < nt && !s; t++) s = ilu_work_init(&R.work[t], F->n, F->b);
    if (!s && !F->rows) {
        F->rows = bsr_calloc((size_t)(F->n > 0 ? F->n : 1), sizeof(ilu_row_t), "ILU rows");
        if (!F->rows) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        if (tree) {
            #pragma omp parallel num_threads(nt)
            #pragma omp single
            run_node(&R, 0);
        } else {
            run_rows(&R, 0, F->n);
        }
        if (R.err_row != INT_MAX) s = bsr_error(R.err, "%s", R.msg);
    }
    int64_t dropped = 0, sec = 0, wk = 0;
    int rmax = 0, nreg = 0;
    for (int t = 0; t < nt; t++) {
        dropped += R.work[t].dropped; sec += R.work[t].sec_used; wk += R.work[t].wkept;
        nreg += R.work[t].nreg;
        if (R.work[t].rmax > rmax) rmax = R.work[t].rmax;
        ilu_work_free(&R.work[t]);
    }
    free(R.work);
    F->st.dropped = dropped;
    F->st.second_order_total = sec;
    F->st.second_order_peak = wk + rmax;
    F->st.pivots_regularized = nreg;
    F->st.tree_parallel = tree;
    if (!s) s = assemble(F);
    ilu_rows_free(F);
    return s;
}
