/* SPDX-License-Identifier: BSD-3-Clause */
/* The block IC2 factorization (precond_ic2.c says what it computes).
 *
 * The setup factors row by row by the thresholds, finding the rows that
 * update row i through linked columns (Jones and Plassmann), and records
 * for each row the updates it took, in their order, and a level schedule
 * of those dependencies.  A refactor replays the records into the frozen
 * pattern: the rows of a level are independent, so they run on the
 * library's team, and every row's operations come in the setup's order
 * (the same bits on any number of threads, and the setup's bits for the
 * setup's values). */
#include "ic2_impl.h"
#include "blockops.h"
#include "ilu_impl.h"   /* ilu_cap_select: the cap's rule, shared with ILU */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define IC2_SHIFT0 1e-3
#define IC2_SHIFTS 5       /* the last shift tried: 1e-3 * 4^4 = 0.256 */
#define CLS_A 2            /* while classifying: a block of B kept by keep_pattern (first order) */
#define IC2_LEVEL_GRAIN 64 /* rows of a level worth a second thread */

/* What a row kernel reports (no bsr_error inside a team: its message is
 * thread-local); the caller names the row. */
enum { ROW_OK = 0, ROW_PIVOT, ROW_NONFINITE_PIVOT, ROW_NONFINITE, ROW_NOMEM };

/* c -= a m and c = a m, with b = 1 inline (the pressure systems). */
static inline void mulsub(int b, double *c, const double *a, const double *m)
{
    if (b == 1) c[0] -= a[0] * m[0];
    else bsr_blk_mulsub(b, c, a, m);
}

/* dst = src for one b x b block (b = 1 without a call). */
static inline void blk_copy(int b, double *dst, const double *src)
{
    if (b == 1) dst[0] = src[0];
    else memcpy(dst, src, sizeof(double) * b * b);
}

/* The array PTR (an lvalue) resized to cap elements of size bytes, kept
 * when it fails; the enclosing function returns 0 then. */
#define GROW(ptr, size)                                    \
    do {                                                   \
        void *q_ = realloc((ptr), (size) * (size_t)cap);   \
        if (!q_) return 0;                                 \
        (ptr) = q_;                                        \
    } while (0)

/* Room for ns slots in w; 0 when memory runs out. */
static int ws_reserve(ic2_ws *w, int b, int ns)
{
    if (ns <= w->scap) return 1;
    int cap = w->scap ? w->scap : 64;
    while (cap < ns) cap *= 2;
    const size_t bb = (size_t)b * b;
    GROW(w->scol, sizeof(int));
    GROW(w->sidx, sizeof(int));
    GROW(w->scls, 1);
    GROW(w->sval, sizeof(double) * bb);
    GROW(w->skey, sizeof(double));
    GROW(w->ckey, sizeof(double));
    GROW(w->ccol, sizeof(int));
    GROW(w->ckeep, 1);
    GROW(w->stmp, sizeof(int64_t));
    w->scap = cap;
    return 1;
}

/* Slot of column j in w's row (a new zero block when absent and create);
 * -1 when absent and not create, -2 when memory runs out. */
static inline int ws_slot(ic2_ws *w, int b, int j, int create)
{
    if (w->pos[j] >= 0) return w->pos[j];
    if (!create) return -1;
    if (!ws_reserve(w, b, w->ns + 1)) return -2;
    const int s = w->ns++;
    w->pos[j] = s;
    w->scol[s] = j;
    w->scls[s] = 0;
    if (b == 1) w->sval[s] = 0;
    else memset(w->sval + (size_t)s * b * b, 0, sizeof(double) * b * b);
    return s;
}

/* Forget w's row (pos[] back to -1). */
static void ws_clear(ic2_ws *w)
{
    for (int s = 0; s < w->ns; s++) w->pos[w->scol[s]] = -1;
    w->ns = 0;
}

static void ws_free(ic2_ws *w)
{
    free(w->pos); free(w->scol); free(w->sidx); free(w->scls); free(w->sval);
    free(w->skey); free(w->ckey); free(w->ccol); free(w->ckeep); free(w->stmp);
    memset(w, 0, sizeof *w);
}

/* Order of two int64 values (qsort). */
static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return (a > c) - (a < c);
}

/* Sort the first m slot indices of w->sidx by their columns (through packed
 * (column, slot) keys; columns are distinct). */
static void sort_slots(ic2_ws *w, int m)
{
    for (int t = 0; t < m; t++) w->stmp[t] = (int64_t)w->scol[w->sidx[t]] << 32 | (uint32_t)w->sidx[t];
    qsort(w->stmp, (size_t)m, sizeof *w->stmp, cmp_i64);
    for (int t = 0; t < m; t++) w->sidx[t] = (int)(uint32_t)w->stmp[t];
}

/* The cap on a row's fill: of the m kept slots (sidx; class in scls: CLS_A
 * for B's own blocks, 0 first order, 1 second order), at most p first-order
 * blocks outside B (the largest keys, ties to the smaller column: ILU's
 * rule, ilu_cap_select), the rest second order if above tau2; then at most
 * p second-order blocks, the rest dropped.  Returns the slots kept (sidx
 * compacted). */
static int cap_row(const ic2 *S, ic2_ws *w, int m, int p)
{
    for (int cls = 0; cls <= 1; cls++) {
        int nc = 0;
        for (int t = 0; t < m; t++)
            if (w->scls[w->sidx[t]] == cls) {
                w->ckey[nc] = w->skey[w->sidx[t]];
                w->ccol[nc++] = w->scol[w->sidx[t]];
            }
        if (nc <= p) continue;
        ilu_cap_select(nc, w->ckey, w->ccol, p, w->ckeep);
        int c = 0, kept = 0;
        for (int t = 0; t < m; t++) {
            const int s = w->sidx[t];
            if (w->scls[s] == cls && !w->ckeep[c++]) {
                if (cls == 0 && w->skey[s] >= S->t2) w->scls[s] = 1;   /* first order past the cap: second */
                else continue;                                        /* second order past the cap: dropped */
            }
            w->sidx[kept++] = s;
        }
        m = kept;
    }
    return m;
}

/* Key of block w_ij given D_i^{-1}: ||s_j (D_i^{-1} w_ij)^T / s_i||_F. */
static double block_key(int b, const double *dinv, const double *w, const double *si, const double *sj)
{
    if (b == 1) return fabs(sj[0] * dinv[0] * w[0] / si[0]);
    double m[BSR_MAX_BLOCK * BSR_MAX_BLOCK], s2 = 0;
    bsr_blk_mul(b, m, dinv, w);
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) {
            double v = sj[c] * m[r * b + c] / si[r];
            s2 += v * v;
        }
    return sqrt(s2);
}

/* Row i of B + alpha diag(B) in w, updated by the nlink rows lk[] through
 * their blocks lq[] (in column i), its pivot D_i, D_i^{-1} set.  Threshold
 * pass (frozen 0): every block the updates create gets a slot, and on
 * return w->sidx[0..*m) holds the kept slots, sorted, classes in w->scls.
 * Frozen: only the pattern's slots, whose values are written back to uv.
 * *bad_col: the column of a non-finite block. */
static int ic2_row(ic2 *S, ic2_ws *w, const bsr_matrix *B, int i, double alpha, int frozen, const int *lq,
                   const int *lk, int nlink, int *m, int *bad_col)
{
    const int b = S->b, bb = b * b;
    double l[BSR_MAX_BLOCK * BSR_MAX_BLOCK], cT[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    w->ns = 0;
    if (ws_slot(w, b, i, 1) < 0) return ROW_NOMEM;
    if (frozen)
        for (int q = S->up[i]; q < S->up[i + 1]; q++)
            if (ws_slot(w, b, S->uc[q], 1) < 0) goto nomem;
    for (int p = B->rowptr[i]; p < B->rowptr[i + 1]; p++) {
        const int j = B->colind[p];
        if (j < i) continue;
        const int s = ws_slot(w, b, j, !frozen);
        if (s == -2) goto nomem;
        if (s < 0) continue;
        double *v = w->sval + (size_t)s * bb;
        if (B->prec == BSR_DOUBLE) blk_copy(b, v, (const double *)B->val + (size_t)p * bb);
        else
            for (int e = 0; e < bb; e++) v[e] = bsr_val_get(B->val, B->prec, (size_t)p * bb + e);
        if (j == i)
            for (int r = 0; r < b; r++) v[r * b + r] += alpha * fabs(v[r * b + r]);
        w->scls[s] = 1;   /* in B */
    }
    const int *pos = w->pos;
    for (int t = 0; t < nlink; t++) {
        const int p = lq[t], k = lk[t], second = S->uk[p];
        const double *c = S->uv + (size_t)p * bb, *dk = S->Dinv + (size_t)k * bb;
        if (b == 1) l[0] = c[0] * dk[0];   /* l_ik = c_ki^T D_k^{-1} */
        else {
            for (int r = 0; r < b; r++)
                for (int q = 0; q < b; q++) cT[r * b + q] = c[q * b + r];
            bsr_blk_mul(b, l, cT, dk);
        }
        if (!second) mulsub(b, w->sval + (size_t)pos[i] * bb, l, c);
        for (int q = p + 1; q < S->up[k + 1]; q++) {
            if (second && S->uk[q]) continue;   /* second order times second order: never formed */
            int s = pos[S->uc[q]];
            if (s < 0 && !frozen) {
                s = ws_slot(w, b, S->uc[q], 1);
                if (s == -2) goto nomem;
                pos = w->pos;
            }
            if (s >= 0) mulsub(b, w->sval + (size_t)s * bb, l, S->uv + (size_t)q * bb);
        }
    }
    double *d = S->D + (size_t)i * bb, *dinv = S->Dinv + (size_t)i * bb;
    blk_copy(b, d, w->sval + (size_t)pos[i] * bb);
    if (!bsr_blk_finite(b, d)) { ws_clear(w); return ROW_NONFINITE_PIVOT; }
    if (bsr_pc_pivot_sym(b, d, dinv)) { ws_clear(w); return ROW_PIVOT; }
    if (frozen) {
        for (int q = S->up[i]; q < S->up[i + 1]; q++) {
            const double *v = w->sval + (size_t)pos[S->uc[q]] * bb;
            if (!bsr_blk_finite(b, v)) { *bad_col = S->uc[q]; ws_clear(w); return ROW_NONFINITE; }
            blk_copy(b, S->uv + (size_t)q * bb, v);
        }
        ws_clear(w);
        return ROW_OK;
    }
    int kept = 0;
    for (int s = 0; s < w->ns; s++) {
        const int j = w->scol[s];
        const double *v = w->sval + (size_t)s * bb;
        if (j == i) continue;
        if (!bsr_blk_finite(b, v)) { *bad_col = j; ws_clear(w); return ROW_NONFINITE; }
        const double key = block_key(b, dinv, v, S->sc + (size_t)i * b, S->sc + (size_t)j * b);
        const int cls = (w->scls[s] && S->keep) ? CLS_A : key >= S->t1 ? 0 : key >= S->t2 ? 1 : -1;
        if (cls < 0) continue;
        w->skey[s] = key;
        w->sidx[kept++] = s;
        w->scls[s] = (unsigned char)cls;
    }
    if (S->cap != BSR_ILU_CAP_NONE) kept = cap_row(S, w, kept, S->cap > 0 ? S->cap : B->rowptr[i + 1] - B->rowptr[i]);
    for (int t = 0; t < kept; t++)   /* B's own blocks: first order */
        if (w->scls[w->sidx[t]] == CLS_A) w->scls[w->sidx[t]] = 0;
    sort_slots(w, kept);
    *m = kept;
    return ROW_OK;
nomem:
    ws_clear(w);
    return ROW_NOMEM;
}

/* The status of a failed row (rc), named. */
static bsr_status row_error(const ic2 *S, int rc, int i, int col)
{
    const int src = S->ord ? S->ord->perm[i] : i;
    if (rc == ROW_NOMEM)
        return bsr_error(BSR_ERR_NOMEM, "precond=ic2: out of memory factoring block row %d (row %d of A)", i, src);
    if (rc == ROW_NONFINITE_PIVOT)
        return bsr_error(BSR_ERR_VALUE, "precond=ic2: non-finite pivot block in block row %d (row %d of A)", i, src);
    if (rc == ROW_NONFINITE)
        return bsr_error(BSR_ERR_VALUE, "precond=ic2: non-finite block (%d,%d) in block row %d (row %d of A)", i, col,
                         i, src);
    return BSR_ERR_SINGULAR;   /* ROW_PIVOT: the caller shifts, or names the row */
}

/* Room for m more blocks in the pattern and the update records; 0 when
 * memory runs out. */
static int pattern_reserve(ic2 *S, int64_t used, int m)
{
    if (used + m <= S->room) return 1;
    int64_t cap = S->room ? S->room : 1024;
    while (cap < used + m) cap *= 2;
    if (cap > INT_MAX) return 0;
    const size_t bb = (size_t)S->b * S->b;
    /* a row's updates (lq, lk) come from blocks already stored: at most used */
    GROW(S->uc, sizeof(int));
    GROW(S->uk, 1);
    GROW(S->uv, sizeof(double) * bb);
    GROW(S->lq, sizeof(int));
    GROW(S->lk, sizeof(int));
    S->room = cap;
    return 1;
}

/* The threshold pass (serial): rows by the thresholds into a new pattern,
 * recording each row's updates. */
static bsr_status threshold_pass(ic2 *S, const bsr_matrix *B, double alpha, int *bad_row)
{
    const int n = S->n, b = S->b, bb = b * b;
    ic2_ws *w = &S->ws[0];
    int64_t used = 0, nl = 0;
    S->n1 = S->n2 = 0;
    S->up[0] = S->lp[0] = 0;
    for (int j = 0; j < n; j++) S->head[j] = -1;
    for (int i = 0; i < n; i++) {
        const int64_t l0 = nl;
        for (int k = S->head[i], nk; k >= 0; k = nk) {   /* the rows with a block in column i */
            nk = S->next[k];
            const int p = S->first[k];
            S->lq[nl] = p;
            S->lk[nl++] = k;
            if (p + 1 < S->up[k + 1]) {   /* row k's next block links it into that column */
                const int j = S->uc[p + 1];
                S->first[k] = p + 1;
                S->next[k] = S->head[j];
                S->head[j] = k;
            }
        }
        S->lp[i + 1] = (int)nl;
        int m = 0, col = -1;
        const int rc = ic2_row(S, w, B, i, alpha, 0, S->lq + l0, S->lk + l0, (int)(nl - l0), &m, &col);
        if (rc) {
            *bad_row = i;
            return row_error(S, rc, i, col);
        }
        if (!pattern_reserve(S, used, m)) {
            ws_clear(w);
            return row_error(S, ROW_NOMEM, i, -1);
        }
        for (int t = 0; t < m; t++) {
            const int s = w->sidx[t];
            S->uc[used] = w->scol[s];
            S->uk[used] = w->scls[s];
            memcpy(S->uv + (size_t)used * bb, w->sval + (size_t)s * bb, sizeof(double) * bb);
            if (w->scls[s]) S->n2++; else S->n1++;
            used++;
        }
        S->up[i + 1] = (int)used;
        ws_clear(w);
        if (m) {   /* row i joins the column of its first block */
            const int j = S->uc[S->up[i]];
            S->first[i] = S->up[i];
            S->next[i] = S->head[j];
            S->head[j] = i;
        }
    }
    return BSR_OK;
}

/* The refactor's schedule: the levels of the update records read as a
 * lower triangle (row i's entries the rows lk[lp[i]..] it reads). */
static bsr_status build_schedule(ic2 *S)
{
    bsr_matrix view = {0};
    view.nbrows = view.nbcols = S->n;
    view.b = S->b;
    view.nnzb = S->lp[S->n];
    view.prec = BSR_DOUBLE;
    view.rowptr = S->lp;
    view.colind = S->lk;
    bsr_levels_free(S->sched);
    S->sched = NULL;
    return bsr_levels_build(&view, 0, &S->sched);
}

/* The frozen pass: the recorded updates into the pattern, a level at a time,
 * the rows of a level on the team.  A failing row stops the pass after its
 * level; the one reported is the smallest failing row of that level. */
static bsr_status frozen_pass(ic2 *S, const bsr_matrix *B, double alpha, int *bad_row)
{
    int bad = INT_MAX, brc = 0, bcol = -1;
    const bsr_levels *lv = S->sched;
    int team = bsr_team(S->n, IC2_LEVEL_GRAIN);
    if (team > S->nws) team = S->nws;
#pragma omp parallel num_threads(team)
    {
#ifdef _OPENMP
        ic2_ws *w = &S->ws[omp_get_thread_num()];
#else
        ic2_ws *w = &S->ws[0];
#endif
        for (int l = 0; l < lv->nlevels; l++) {
            const int r0 = lv->level_ptr[l], r1 = lv->level_ptr[l + 1];
#pragma omp for schedule(dynamic, 16)
            for (int r = r0; r < r1; r++) {
                const int i = lv->rows[r];
                int m = 0, col = -1;
                const int rc = ic2_row(S, w, B, i, alpha, 1, S->lq + S->lp[i], S->lk + S->lp[i], S->lp[i + 1] - S->lp[i],
                                       &m, &col);
                if (rc) {
#pragma omp critical(bsr_ic2_bad)
                    if (i < bad) { bad = i; brc = rc; bcol = col; }
                }
            }   /* the barrier: the level is done, bad is seen by every thread */
            if (bad != INT_MAX) break;
        }
    }
    if (bad == INT_MAX) return BSR_OK;
    *bad_row = bad;
    return row_error(S, brc, bad, bcol);
}

/* The stored factors from the pattern's first-order blocks: U's row i =
 * D_i^{-1}, then u_ij; L_ji = (D_i^{-1} u_ij)^T.  Their patterns and the map
 * lpos are made the first time (the pattern does not change afterwards). */
static bsr_status store(ic2 *S)
{
    const int n = S->n, b = S->b, bb = b * b;
    if (!S->t.L) {
        BSR_TRY(bsr_matrix_alloc(&S->t.L, n, n, b, (int)S->n1, S->t.prec));
        BSR_TRY(bsr_matrix_alloc(&S->t.U, n, n, b, (int)S->n1 + n, S->t.prec));
        S->lpos = bsr_malloc(sizeof(int) * (size_t)(S->up[n] ? S->up[n] : 1), "IC2 factor map");
        if (!S->lpos) return BSR_ERR_NOMEM;
        int *Lp = S->t.L->rowptr, *Up = S->t.U->rowptr, *fill = S->first;
        memset(Lp, 0, sizeof(int) * (size_t)(n + 1));
        for (int q = 0; q < S->up[n]; q++)
            if (!S->uk[q]) Lp[S->uc[q] + 1]++;
        for (int i = 0; i < n; i++) Lp[i + 1] += Lp[i];
        memcpy(fill, Lp, sizeof(int) * (size_t)n);
        Up[0] = 0;
        for (int i = 0; i < n; i++) {
            int u = Up[i];
            S->t.U->colind[u++] = i;
            for (int q = S->up[i]; q < S->up[i + 1]; q++) {
                S->lpos[q] = -1;
                if (S->uk[q]) continue;
                S->t.U->colind[u++] = S->uc[q];
                S->lpos[q] = fill[S->uc[q]]++;
                S->t.L->colind[S->lpos[q]] = i;
            }
            Up[i + 1] = u;
        }
    }
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        const double *dinv = S->Dinv + (size_t)i * bb;
        size_t u = (size_t)S->t.U->rowptr[i] * bb;
        for (int e = 0; e < bb; e++) bsr_val_set(S->t.U->val, S->t.prec, u + e, dinv[e]);
        u += bb;
        for (int q = S->up[i]; q < S->up[i + 1]; q++) {
            if (S->uk[q]) continue;
            const double *v = S->uv + (size_t)q * bb;
            double m[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
            for (int e = 0; e < bb; e++) bsr_val_set(S->t.U->val, S->t.prec, u + e, v[e]);
            u += bb;
            bsr_blk_mul(b, m, dinv, v);
            const size_t p = (size_t)S->lpos[q] * bb;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) bsr_val_set(S->t.L->val, S->t.prec, p + r * b + c, m[c * b + r]);
        }
    }
    return BSR_OK;
}

/* Workspaces for the team (the first: the setup's), each with pos[] = -1. */
static bsr_status get_workspaces(ic2 *S)
{
    const int nt = bsr_team_size() > 0 ? bsr_team_size() : 1;
    if (S->nws >= nt) return BSR_OK;
    ic2_ws *ws = realloc(S->ws, sizeof *ws * (size_t)nt);
    if (!ws) return bsr_error(BSR_ERR_NOMEM, "precond=ic2: out of memory for %d workspaces", nt);
    S->ws = ws;
    for (int t = S->nws; t < nt; t++) {
        memset(&ws[t], 0, sizeof ws[t]);
        ws[t].pos = bsr_malloc(sizeof(int) * (size_t)(S->n ? S->n : 1), "IC2 workspace");
        if (!ws[t].pos) return BSR_ERR_NOMEM;
        for (int j = 0; j < S->n; j++) ws[t].pos[j] = -1;
        S->nws = t + 1;
    }
    return BSR_OK;
}

/* A in the factor's numbering (B = P A P^T; A itself when natural, *own NULL). */
static bsr_status permuted(const ic2 *S, const bsr_matrix *A, const bsr_matrix **B, bsr_matrix **own)
{
    *own = NULL;
    *B = A;
    if (!S->ord) return BSR_OK;
    BSR_TRY(bsr_permute(A, S->ord, own));
    *B = *own;
    return BSR_OK;
}

/* The Jacobi scaling of the thresholds, s = |diag B|^{-1/2}, checking that
 * every diagonal entry is positive. */
static bsr_status scaling(ic2 *S, const bsr_matrix *B)
{
    const int b = S->b;
    for (int i = 0; i < S->n; i++) {
        const int p = bsr_matrix_find(B, i, i);
        for (int r = 0; r < b; r++) {
            const double d = p < 0 ? 0 : bsr_val_get(B->val, B->prec, (size_t)p * b * b + r * b + r);
            if (!(d > 0))
                return bsr_error(BSR_ERR_SINGULAR, "precond=ic2: diagonal entry %d of block row %d (row %d of A) is %g, "
                                 "not positive (A is not SPD)", r, i, S->ord ? S->ord->perm[i] : i, d);
            S->sc[(size_t)i * b + r] = 1 / sqrt(d);
        }
    }
    return BSR_OK;
}

bsr_status ic2_numeric(ic2 *S, const bsr_matrix *A, int frozen)
{
    S->valid = 0;
    const int n = S->n;
    const size_t nn = (size_t)(n ? n : 1), bb = (size_t)S->b * S->b;
    if (!S->up) {
        S->up = bsr_malloc(sizeof(int) * (nn + 1), "IC2 pattern");
        S->lp = bsr_malloc(sizeof(int) * (nn + 1), "IC2 pattern");
        S->D = bsr_malloc(sizeof(double) * nn * bb, "IC2 pivots");
        S->Dinv = bsr_malloc(sizeof(double) * nn * bb, "IC2 pivots");
        S->sc = bsr_malloc(sizeof(double) * nn * S->b, "IC2 scaling");
        S->head = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
        S->next = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
        S->first = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
        if (!S->up || !S->lp || !S->D || !S->Dinv || !S->sc || !S->head || !S->next || !S->first) return BSR_ERR_NOMEM;
    }
    BSR_TRY(get_workspaces(S));
    const bsr_matrix *B;
    bsr_matrix *own;
    BSR_TRY(permuted(S, A, &B, &own));
    bsr_status s = scaling(S, B);
    double alpha = 0;
    int bad = -1;
    for (int t = 0; !s && t <= IC2_SHIFTS; t++) {   /* the shift rule: 0, then 1e-3 * 4^t */
        s = frozen ? frozen_pass(S, B, alpha, &bad) : threshold_pass(S, B, alpha, &bad);
        if (s != BSR_ERR_SINGULAR) break;
        if (t == IC2_SHIFTS)
            s = bsr_error(BSR_ERR_SINGULAR, "precond=ic2: the pivot block of block row %d (row %d of A) is not positive "
                          "definite even with the diagonal shifted by %g of itself (A is not SPD: use an ILU with "
                          "bicgstab/gmres)", bad, S->ord ? S->ord->perm[bad] : bad, alpha);
        else s = BSR_OK;
        alpha = t == 0 ? IC2_SHIFT0 : alpha * 4;
    }
    if (!s) S->alpha = alpha;   /* the loop left alpha at the shift that worked */
    if (!s && !frozen) s = build_schedule(S);
    if (!s) s = store(S);
    bsr_matrix_destroy(own);
    if (!s) S->valid = 1;
    return s;
}

void ic2_free_factor(ic2 *S)
{
    free(S->up); free(S->uc); free(S->uk); free(S->uv);
    free(S->lp); free(S->lq); free(S->lk); free(S->lpos);
    bsr_levels_free(S->sched);
    free(S->D); free(S->Dinv); free(S->sc);
    free(S->head); free(S->next); free(S->first);
    for (int t = 0; t < S->nws; t++) ws_free(&S->ws[t]);
    free(S->ws);
}
