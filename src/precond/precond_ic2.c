/* SPDX-License-Identifier: BSD-3-Clause */
/* Block incomplete Cholesky with ILU2's two thresholds (precond=ic2): the
 * symmetric form of ILU2, for symmetric positive definite A under CG.
 *
 * B = P A P^T (the ordering of reorder=, default RCM) is factored row by row
 * (up-looking; the rows holding a block in column i are found through
 * linked columns, as in Jones and Plassmann's ICF) into M = U^T D^{-1} U,
 * U's row i being the pivot D_i and the blocks u_ij, j > i; in L D L^T form
 * L_ji = (D_i^{-1} u_ij)^T.  Row i starts from B's upper row i and takes the
 * update of every earlier row k holding a block c_ki, with l_ik = c_ki^T D_k^{-1}:
 *   c_ki first order (kept in U):   w_ij -= l_ik c_kj for every block of row k with j >= i;
 *   c_ki second order (W, used for updates only): w_ij -= l_ik u_kj over row k's
 *     first-order blocks with j > i (a second-order block times a second-order
 *     block is never formed, ILU2's rule).
 * D_i = w_ii, symmetrized and checked positive definite; each w_ij, j > i,
 * is classified on its multiplier in the Jacobi-scaled matrix
 * (s = |diag B|^{-1/2}), key = ||s_j (D_i^{-1} w_ij)^T / s_i||_F:
 *   key >= tau1 sqrt(b), or (i,j) a block of B (keep_pattern): first order;
 *   key >= tau2 sqrt(b): second order; else dropped.
 * (k,i) and its transpose are one decision, so M is symmetric by
 * construction.  A pivot that is not positive definite restarts the
 * factorization of B + alpha diag(B) (Manteuffel's shift), alpha = 1e-3
 * multiplied by 4 up to 5 times (0.256); the shift is reported.  Refactor factors
 * new values into the setup's pattern and classes (nothing created, nothing
 * dropped), with the same shift rule.  Serial: the same bits on any number
 * of threads.  Applying M^{-1} is one level-scheduled lower and one upper
 * solve on the stored L and U = D L^T, between the ordering's permutations. */
#include "precond_impl.h"
#include "blockops.h"
#include "ilu_impl.h"   /* ilu_cap_select: the cap's rule, shared with ILU */
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#define IC2_SHIFT0 1e-3
#define IC2_SHIFTS 5     /* the last shift tried: 0.256 */
#define CLS_A 2     /* while classifying: a block of B kept by keep_pattern (first order) */

typedef struct {
    bsr_pc_tri t;           /* the stored L and U = D L^T (first-order blocks), precision t.prec */
    bsr_ordering *ord;      /* NULL: natural */
    bsr_multivec *px, *py;  /* the apply's permuted vectors, kept while k and precision stay */
    int n, b, keep, valid;  /* valid: the last factorization succeeded */
    double t1, t2, alpha;   /* thresholds (times sqrt(b)); the last factorization's shift */
    /* the pattern: row i's blocks j > i at up[i]..up[i+1]-1, columns ascending, class uk
     * (0 first order, 1 second order), values uv (double) */
    int *up, *uc;
    unsigned char *uk;
    double *uv;
    int64_t room;           /* room in uc, uk, uv (blocks) */
    int64_t n1, n2;         /* first- and second-order blocks */
    double *D, *Dinv, *sc;  /* [n*b*b] pivots and their inverses, [n*b] the Jacobi scaling */
    /* row workspace: pos[j] = slot of column j or -1; slots scol, sval, in B (sina) */
    int *pos, *scol, *sidx, ns, scap;
    unsigned char *sina;
    double *sval, *skey;    /* the slots' blocks and ranking keys */
    double *ckey;           /* the cap's candidates: keys, columns, choice */
    int *ccol;
    unsigned char *ckeep;
    int64_t *stmp;          /* the sort's keys */
    int cap;                /* fill blocks a row keeps in U and W each: BSR_ILU_CAP_NONE, 0 auto (B's row), P */
    int *head, *next, *first;   /* linked columns: rows whose next block is in column j */
} ic2;

/* Room for ns slots in the row workspace; 0 when memory runs out. */
static int slots_reserve(ic2 *S, int ns)
{
    if (ns <= S->scap) return 1;
    int cap = S->scap ? S->scap : 64;
    while (cap < ns) cap *= 2;
    const size_t bb = (size_t)S->b * S->b;
    int *c = realloc(S->scol, sizeof(int) * cap);
    if (c) S->scol = c;
    int *x = realloc(S->sidx, sizeof(int) * cap);
    if (x) S->sidx = x;
    unsigned char *a = realloc(S->sina, (size_t)cap);
    if (a) S->sina = a;
    double *v = realloc(S->sval, sizeof(double) * bb * cap);
    if (v) S->sval = v;
    double *k = realloc(S->skey, sizeof(double) * cap);
    if (k) S->skey = k;
    double *ck = realloc(S->ckey, sizeof(double) * cap);
    if (ck) S->ckey = ck;
    int *cc = realloc(S->ccol, sizeof(int) * cap);
    if (cc) S->ccol = cc;
    unsigned char *ce = realloc(S->ckeep, (size_t)cap);
    if (ce) S->ckeep = ce;
    int64_t *st = realloc(S->stmp, sizeof(int64_t) * cap);
    if (st) S->stmp = st;
    if (!c || !x || !a || !v || !k || !ck || !cc || !ce || !st) return 0;
    S->scap = cap;
    return 1;
}

/* Slot of column j in the row (a new zero block when absent and create);
 * -1 when absent and not create, -2 when memory runs out. */
static int slot(ic2 *S, int j, int create)
{
    if (S->pos[j] >= 0) return S->pos[j];
    if (!create) return -1;
    if (!slots_reserve(S, S->ns + 1)) return -2;
    const int s = S->ns++;
    S->pos[j] = s;
    S->scol[s] = j;
    S->sina[s] = 0;
    memset(S->sval + (size_t)s * S->b * S->b, 0, sizeof(double) * S->b * S->b);
    return s;
}

/* Order of two int64 values (qsort). */
static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return (a > c) - (a < c);
}

/* Sort the first m slot indices of idx by their columns col[] (through
 * packed (column, slot) keys; columns are distinct). */
static void sort_slots(const int *col, int *idx, int64_t *tmp, int m)
{
    for (int t = 0; t < m; t++) tmp[t] = (int64_t)col[idx[t]] << 32 | (uint32_t)idx[t];
    qsort(tmp, (size_t)m, sizeof *tmp, cmp_i64);
    for (int t = 0; t < m; t++) idx[t] = (int)(uint32_t)tmp[t];
}

/* The cap on a row's fill: of the m kept slots (sidx; class in sina: CLS_A
 * for B's own blocks, 0 first order, 1 second order), at most p first-order
 * blocks outside B (the largest keys, ties to the smaller column, ILU's
 * rule ilu_cap_select), the rest second order; then at most p second-order
 * blocks, the rest dropped.  Returns the slots kept (sidx compacted). */
static int cap_row(ic2 *S, int m, int p)
{
    for (int cls = 0; cls <= 1; cls++) {
        int nc = 0;
        for (int t = 0; t < m; t++)
            if (S->sina[S->sidx[t]] == cls) {
                S->ckey[nc] = S->skey[S->sidx[t]];
                S->ccol[nc++] = S->scol[S->sidx[t]];
            }
        if (nc <= p) continue;
        ilu_cap_select(nc, S->ckey, S->ccol, p, S->ckeep);
        int c = 0, kept = 0;
        for (int t = 0; t < m; t++) {
            const int s = S->sidx[t];
            if (S->sina[s] == cls && !S->ckeep[c++]) {
                if (cls == 0 && S->skey[s] >= S->t2) S->sina[s] = 1;   /* first order past the cap: second */
                else continue;                                        /* second order past the cap: dropped */
            }
            S->sidx[kept++] = s;
        }
        m = kept;
    }
    return m;
}

/* Key of block w_ij given D_i^{-1}: ||s_j (D_i^{-1} w_ij)^T / s_i||_F. */
static double block_key(int b, const double *dinv, const double *w, const double *si, const double *sj)
{
    double m[BSR_MAX_BLOCK * BSR_MAX_BLOCK], s2 = 0;
    bsr_blk_mul(b, m, dinv, w);
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) {
            double v = sj[c] * m[r * b + c] / si[r];
            s2 += v * v;
        }
    return sqrt(s2);
}

/* One factorization of B + alpha diag(B): by the thresholds into a new
 * pattern, or (frozen) into the existing one.  BSR_ERR_SINGULAR with
 * *bad_row set when a pivot is not positive definite (no message: the
 * caller shifts and tries again), BSR_ERR_VALUE naming a non-finite block,
 * BSR_ERR_NOMEM. */
static bsr_status ic2_rows(ic2 *S, const bsr_matrix *B, double alpha, int frozen, int *bad_row)
{
    const int n = S->n, b = S->b, bb = b * b;
    int64_t used = 0;
    for (int j = 0; j < n; j++) S->head[j] = -1;
    if (!frozen) { S->n1 = S->n2 = 0; S->up[0] = 0; }
    double l[BSR_MAX_BLOCK * BSR_MAX_BLOCK], cT[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    for (int i = 0; i < n; i++) {
        S->ns = 0;
        /* the row's slots: the frozen pattern (pivot first), or B's upper row */
        if (slot(S, i, 1) < 0) goto nomem;
        if (frozen)
            for (int64_t q = S->up[i]; q < S->up[i + 1]; q++)
                if (slot(S, S->uc[q], 1) < 0) goto nomem;
        for (int p = B->rowptr[i]; p < B->rowptr[i + 1]; p++) {
            const int j = B->colind[p];
            if (j < i) continue;
            const int s = slot(S, j, !frozen);
            if (s == -2) goto nomem;
            if (s < 0) continue;
            double *w = S->sval + (size_t)s * bb;
            for (int e = 0; e < bb; e++) w[e] = bsr_val_get(B->val, B->prec, (size_t)p * bb + e);
            if (j == i)
                for (int r = 0; r < b; r++) w[r * b + r] += alpha * fabs(w[r * b + r]);
            S->sina[s] = 1;
        }
        /* updates by the earlier rows holding a block in column i */
        for (int k = S->head[i], nk; k >= 0; k = nk) {
            nk = S->next[k];
            const int p = S->first[k];
            const int second = S->uk[p];
            const double *c = S->uv + (size_t)p * bb, *dk = S->Dinv + (size_t)k * bb;
            for (int r = 0; r < b; r++)
                for (int q = 0; q < b; q++) cT[r * b + q] = c[q * b + r];
            bsr_blk_mul(b, l, cT, dk);                     /* l_ik = c_ki^T D_k^{-1} */
            if (!second) bsr_blk_mulsub(b, S->sval + (size_t)S->pos[i] * bb, l, c);
            for (int q = p + 1; q < S->up[k + 1]; q++) {
                if (second && S->uk[q]) continue;
                const int s = slot(S, S->uc[q], !frozen);
                if (s == -2) goto nomem;
                if (s >= 0) bsr_blk_mulsub(b, S->sval + (size_t)s * bb, l, S->uv + (size_t)q * bb);
            }
            /* row k's next block links it into that block's column */
            if (p + 1 < S->up[k + 1]) {
                const int j = S->uc[p + 1];
                S->first[k] = p + 1;
                S->next[k] = S->head[j];
                S->head[j] = k;
            }
        }
        /* the pivot */
        double *d = S->D + (size_t)i * bb, *dinv = S->Dinv + (size_t)i * bb;
        memcpy(d, S->sval + (size_t)S->pos[i] * bb, sizeof(double) * bb);
        if (!bsr_blk_finite(b, d))
            return bsr_error(BSR_ERR_VALUE, "precond=ic2: non-finite pivot block in block row %d (row %d of A)", i,
                             S->ord ? S->ord->perm[i] : i);
        if (bsr_pc_pivot_sym(b, d, dinv)) {
            for (int s = 0; s < S->ns; s++) S->pos[S->scol[s]] = -1;
            *bad_row = i;
            return BSR_ERR_SINGULAR;
        }
        /* the blocks right of the pivot: classified, or written back into the frozen pattern */
        int m = 0, nrowB = B->rowptr[i + 1] - B->rowptr[i];
        for (int s = 0; s < S->ns; s++) {
            const int j = S->scol[s];
            const double *w = S->sval + (size_t)s * bb;
            if (j == i) continue;
            if (!bsr_blk_finite(b, w))
                return bsr_error(BSR_ERR_VALUE, "precond=ic2: non-finite block (%d,%d) in block row %d (row %d of A)",
                                 i, j, i, S->ord ? S->ord->perm[i] : i);
            if (frozen) continue;
            double key = block_key(b, dinv, w, S->sc + (size_t)i * b, S->sc + (size_t)j * b);
            int cls = (S->sina[s] && S->keep) ? CLS_A : key >= S->t1 ? 0 : key >= S->t2 ? 1 : -1;
            if (cls < 0) continue;
            S->skey[s] = key;
            S->sidx[m++] = s;
            S->sina[s] = (unsigned char)cls;   /* from here: the class */
        }
        if (!frozen && S->cap != BSR_ILU_CAP_NONE) m = cap_row(S, m, S->cap > 0 ? S->cap : nrowB);
        for (int t = 0; t < m; t++)   /* B's own blocks: first order */
            if (S->sina[S->sidx[t]] == CLS_A) S->sina[S->sidx[t]] = 0;
        if (frozen) {
            for (int64_t q = S->up[i]; q < S->up[i + 1]; q++)
                memcpy(S->uv + (size_t)q * bb, S->sval + (size_t)S->pos[S->uc[q]] * bb, sizeof(double) * bb);
        } else {
            sort_slots(S->scol, S->sidx, S->stmp, m);
            if (used + m > S->room) {
                int64_t cap = S->room ? S->room : 1024;
                while (cap < used + m) cap *= 2;
                int *uc = realloc(S->uc, sizeof(int) * (size_t)cap);
                if (uc) S->uc = uc;
                unsigned char *uk = realloc(S->uk, (size_t)cap);
                if (uk) S->uk = uk;
                double *uv = realloc(S->uv, sizeof(double) * bb * (size_t)cap);
                if (uv) S->uv = uv;
                if (!uc || !uk || !uv) goto nomem;
                S->room = cap;
            }
            for (int t = 0; t < m; t++) {
                const int s = S->sidx[t];
                S->uc[used] = S->scol[s];
                S->uk[used] = S->sina[s];
                memcpy(S->uv + (size_t)used * bb, S->sval + (size_t)s * bb, sizeof(double) * bb);
                if (S->sina[s]) S->n2++; else S->n1++;
                used++;
            }
            if (used > INT_MAX) goto nomem;
            S->up[i + 1] = (int)used;
        }
        for (int s = 0; s < S->ns; s++) S->pos[S->scol[s]] = -1;
        /* row i joins the column of its first block */
        if (S->up[i] < S->up[i + 1]) {
            const int j = S->uc[S->up[i]];
            S->first[i] = S->up[i];
            S->next[i] = S->head[j];
            S->head[j] = i;
        }
    }
    return BSR_OK;
nomem:
    for (int s = 0; s < S->ns; s++) S->pos[S->scol[s]] = -1;
    return bsr_error(BSR_ERR_NOMEM, "precond=ic2: out of memory factoring %d block rows of b = %d", n, b);
}

/* The factorization with the shift rule: alpha = 0, then IC2_SHIFT0 times
 * 4^t while a pivot is not positive definite.  BSR_ERR_SINGULAR naming the
 * row when every shift fails. */
static bsr_status ic2_factor(ic2 *S, const bsr_matrix *B, int frozen)
{
    double alpha = 0;
    int bad = -1;
    for (int t = 0; t <= IC2_SHIFTS; t++) {
        bsr_status s = ic2_rows(S, B, alpha, frozen, &bad);
        if (s != BSR_ERR_SINGULAR) {
            S->alpha = alpha;
            return s;
        }
        alpha = t == 0 ? IC2_SHIFT0 : alpha * 4;
    }
    return bsr_error(BSR_ERR_SINGULAR, "precond=ic2: the pivot block of block row %d (row %d of A) is not positive "
                     "definite even with the diagonal shifted by %g of itself (A is not SPD: use an ILU with "
                     "bicgstab/gmres)", bad, S->ord ? S->ord->perm[bad] : bad, alpha / 4);
}

/* The stored factors from the pattern's first-order blocks: U's row i =
 * D_i^{-1}, then u_ij; L_ji = (D_i^{-1} u_ij)^T.  Allocated the first time
 * (the pattern does not change afterwards), values rewritten later. */
static bsr_status ic2_store(ic2 *S)
{
    const int n = S->n, b = S->b, bb = b * b;
    if (!S->t.L) {
        BSR_TRY(bsr_matrix_alloc(&S->t.L, n, n, b, (int)S->n1, S->t.prec));
        BSR_TRY(bsr_matrix_alloc(&S->t.U, n, n, b, (int)S->n1 + n, S->t.prec));
        int *Lp = S->t.L->rowptr, *Up = S->t.U->rowptr;
        memset(Lp, 0, sizeof(int) * (size_t)(n + 1));
        for (int64_t q = 0; q < S->up[n]; q++)
            if (!S->uk[q]) Lp[S->uc[q] + 1]++;
        for (int i = 0; i < n; i++) Lp[i + 1] += Lp[i];
        Up[0] = 0;
        for (int i = 0; i < n; i++) {
            int u = Up[i];
            S->t.U->colind[u++] = i;
            for (int q = S->up[i]; q < S->up[i + 1]; q++)
                if (!S->uk[q]) S->t.U->colind[u++] = S->uc[q];
            Up[i + 1] = u;
        }
    }
    int *fill = S->first;   /* free after the factorization: L's next entry of each row */
    memcpy(fill, S->t.L->rowptr, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        const double *dinv = S->Dinv + (size_t)i * bb;
        size_t u = (size_t)S->t.U->rowptr[i] * bb;
        for (int e = 0; e < bb; e++) bsr_val_set(S->t.U->val, S->t.prec, u + e, dinv[e]);
        u += bb;
        for (int q = S->up[i]; q < S->up[i + 1]; q++) {
            if (S->uk[q]) continue;
            const double *w = S->uv + (size_t)q * bb;
            double m[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
            for (int e = 0; e < bb; e++) bsr_val_set(S->t.U->val, S->t.prec, u + e, w[e]);
            u += bb;
            bsr_blk_mul(b, m, dinv, w);
            const int j = S->uc[q], p = fill[j]++;
            S->t.L->colind[p] = i;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) bsr_val_set(S->t.L->val, S->t.prec, (size_t)p * bb + r * b + c, m[c * b + r]);
        }
    }
    return BSR_OK;
}

/* A in the factor's numbering (B = P A P^T; A itself when natural, *own 0). */
static bsr_status ic2_permuted(const ic2 *S, const bsr_matrix *A, const bsr_matrix **B, bsr_matrix **own)
{
    *own = NULL;
    *B = A;
    if (!S->ord) return BSR_OK;
    BSR_TRY(bsr_permute(A, S->ord, own));
    *B = *own;
    return BSR_OK;
}

/* Factor A's values: by the thresholds (setup) or into the frozen pattern;
 * then the stored factors.  On failure the factors are marked invalid. */
static bsr_status ic2_numeric(ic2 *S, const bsr_matrix *A, int frozen)
{
    S->valid = 0;
    const bsr_matrix *B;
    bsr_matrix *own;
    BSR_TRY(ic2_permuted(S, A, &B, &own));
    const int n = S->n, b = S->b;
    bsr_status s = BSR_OK;
    for (int i = 0; i < n && !s; i++) {   /* the Jacobi scaling of the thresholds */
        const int p = bsr_matrix_find(B, i, i);
        for (int r = 0; r < b && !s; r++) {
            double d = p < 0 ? 0 : bsr_val_get(B->val, B->prec, (size_t)p * b * b + r * b + r);
            if (!(d > 0))
                s = bsr_error(BSR_ERR_SINGULAR, "precond=ic2: diagonal entry %d of block row %d (row %d of A) is %g, "
                              "not positive (A is not SPD)", r, i, S->ord ? S->ord->perm[i] : i, d);
            else S->sc[(size_t)i * b + r] = 1 / sqrt(d);
        }
    }
    if (!s) s = ic2_factor(S, B, frozen);
    if (!s) s = ic2_store(S);
    bsr_matrix_destroy(own);
    if (!s) S->valid = 1;
    return s;
}

/* Y = M^{-1} X: the ordering's permutation, the two triangular solves, back. */
static bsr_status ic2_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ic2 *S = pc->data;
    if (!S->valid)
        return bsr_error(BSR_ERR_ARG, "precond=ic2: the last factorization failed; refactor (or set up) again before solving");
    if (!S->ord) return bsr_pc_tri_apply(&S->t, X, Y);
    const int k = bsr_multivec_cols(X);
    const bsr_precision p = bsr_multivec_precision(X);
    if (!S->px || bsr_multivec_cols(S->px) != k || bsr_multivec_precision(S->px) != p) {
        bsr_multivec_destroy(S->px);
        bsr_multivec_destroy(S->py);
        S->px = S->py = NULL;
        BSR_TRY(bsr_multivec_create(&S->px, bsr_multivec_rows(X), k, p));
        BSR_TRY(bsr_multivec_create(&S->py, bsr_multivec_rows(X), k, p));
    }
    BSR_TRY(bsr_permute_vec(S->ord, S->b, X, S->px));
    BSR_TRY(bsr_pc_tri_apply(&S->t, S->px, S->py));
    return bsr_permute_vec_inv(S->ord, S->b, S->py, Y);
}

/* New values of A on the pattern of setup: factored into the setup's
 * pattern and classes. */
static bsr_status ic2_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ic2 *S = pc->data;
    S->valid = 0;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic2"));
    return ic2_numeric(S, A, 1);
}

static void ic2_destroy(bsr_pc *pc)
{
    ic2 *S = pc->data;
    if (!S) return;
    bsr_pc_tri_free(&S->t);
    bsr_ordering_free(S->ord);
    bsr_multivec_destroy(S->px);
    bsr_multivec_destroy(S->py);
    free(S->up); free(S->uc); free(S->uk); free(S->uv);
    free(S->D); free(S->Dinv); free(S->sc);
    free(S->pos); free(S->scol); free(S->sidx); free(S->sina); free(S->sval);
    free(S->skey); free(S->ckey); free(S->ccol); free(S->ckeep); free(S->stmp);
    free(S->head); free(S->next); free(S->first);
    free(S);
}

void bsr_pc_ic2_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U, const int **perm)
{
    const int mine = pc && pc->apply == ic2_apply;
    const ic2 *S = mine ? pc->data : NULL;
    *L = S ? S->t.L : NULL;
    *U = S ? S->t.U : NULL;
    *perm = S && S->ord ? S->ord->perm : NULL;
}

/* Setup: the symmetry check, the ordering (reorder=, default RCM), the
 * factorization by the thresholds (stored in o->precond_precision) and the
 * triangular solves' level schedules. */
static bsr_status ic2_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic2"));
    ic2 *S = bsr_calloc(1, sizeof *S, "IC2 preconditioner");
    if (!S) return BSR_ERR_NOMEM;
    pc->data = S;
    const int n = A->nbrows, b = A->b;
    S->n = n;
    S->b = b;
    S->t.prec = o->precond_precision;
    S->keep = bsr_keep_pattern(o);
    S->cap = o->cap == BSR_CAP_DEFAULT ? 0 : o->cap;   /* bounded work unless asked otherwise */
    S->t1 = o->tau1 * sqrt((double)b);
    S->t2 = bsr_ilu_tau2(BSR_ILU2, o->tau1, o->tau2) * sqrt((double)b);
    bsr_order_options oo;
    bsr_order_options_default(&oo, BSR_ORDER_RCM);
    if (o->reorder[0]) BSR_TRY(bsr_order_parse(o->reorder, &oo));
    if (oo.kind != BSR_ORDER_NATURAL) BSR_TRY(bsr_order(A, &oo, &S->ord));
    const size_t nn = (size_t)(n ? n : 1), bb = (size_t)b * b;
    S->up = bsr_malloc(sizeof(int) * (nn + 1), "IC2 pattern");
    S->D = bsr_malloc(sizeof(double) * nn * bb, "IC2 pivots");
    S->Dinv = bsr_malloc(sizeof(double) * nn * bb, "IC2 pivots");
    S->sc = bsr_malloc(sizeof(double) * nn * b, "IC2 scaling");
    S->pos = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
    S->head = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
    S->next = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
    S->first = bsr_malloc(sizeof(int) * nn, "IC2 workspace");
    if (!S->up || !S->D || !S->Dinv || !S->sc || !S->pos || !S->head || !S->next || !S->first) return BSR_ERR_NOMEM;
    for (int j = 0; j < n; j++) S->pos[j] = -1;
    BSR_TRY(ic2_numeric(S, A, 0));
    BSR_TRY(bsr_levels_build_pair(S->t.L, S->t.U, &S->t.lvL, &S->t.lvU));
    pc->nnzb = (int64_t)S->t.L->nnzb + S->t.U->nnzb;
    char capname[16];
    if (S->cap > 0) snprintf(capname, sizeof capname, "%d", S->cap);
    else snprintf(capname, sizeof capname, "%s", S->cap == 0 ? "auto" : "none");
    const double fill = A->nnzb ? (double)(2 * S->n1 + n) / A->nnzb : 0;
    snprintf(pc->info, sizeof pc->info,
             "block IC2 (tau1=%g,tau2=%g,cap=%s), M = L D L^T, order %s, fill %.2f (second-order blocks %lld), "
             "shift %g, levels L %d U %d", o->tau1, bsr_ilu_tau2(BSR_ILU2, o->tau1, o->tau2),
             capname, S->ord ? bsr_order_kind_name(S->ord->kind) : "natural", fill, (long long)S->n2, S->alpha,
             S->t.lvL->nlevels, S->t.lvU->nlevels);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_ic2_cpu_ops = {ic2_setup, ic2_refactor, ic2_apply, ic2_destroy};
