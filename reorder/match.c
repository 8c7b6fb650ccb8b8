/* SPDX-License-Identifier: BSD-3-Clause */
/* Maximum-product transversal and its scaling (MC64 job 5, Olschowka and
 * Neumaier; Duff and Koster 2001) on A's block graph.
 *
 * Weights: w_ij = ||A_ij||_F (a block norm; |a_ij| for b = 1); blocks whose
 * norm is 0 (explicit zeros) are not edges.  Costs c_ij = log(rmax_i) -
 * log(w_ij) >= 0 with rmax_i the largest weight of row i: a perfect matching
 * of least total cost is one of largest product of weights.  It is found by
 * shortest augmenting paths, one from every row left unmatched by a cheap
 * greedy start, each a Dijkstra search on the reduced costs c_ij - u_i - v_j
 * >= 0 with dual variables u (rows) and v (columns) kept feasible.  (MC64
 * searches from columns over the CSC form; A is CSR, so the roles of rows and
 * columns are swapped, which changes nothing in the result's properties.)
 * At the end u_i + v_j <= c_ij with equality on the matching, so
 *     dr_i = exp(u_i) / rmax_i,   dc_j = exp(v_j)
 * scale every block to dr_i w_ij dc_j = exp(u_i + v_j - c_ij) <= 1 and the
 * matched ones to 1.  Ties are broken by the smaller index: deterministic. */
#include "reorder_impl.h"
#include "blockops.h"
#include <math.h>
#include <string.h>

/* Weight of block p of A: Frobenius norm of the block (either precision). */
static double block_weight(const bsr_matrix *A, int64_t p)
{
    const int bb = A->b * A->b;
    double s = 0.0;
    for (int e = 0; e < bb; e++) {
        double v = A->prec == BSR_DOUBLE ? ((const double *)A->val)[p * bb + e]
                                         : (double)((const float *)A->val)[p * bb + e];
        s += v * v;
    }
    return sqrt(s);
}

/* Indexed binary min-heap of columns keyed by d[] (ties: smaller column). */
typedef struct {
    int *h, *pos, n;    /* h[0..n): columns; pos[j]: index in h or -1 */
    const double *d;
} mheap;

static int heap_less(const mheap *H, int a, int b)
{
    return H->d[a] < H->d[b] || (H->d[a] == H->d[b] && a < b);
}

static void heap_up(mheap *H, int i)
{
    int j = H->h[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!heap_less(H, j, H->h[p])) break;
        H->h[i] = H->h[p]; H->pos[H->h[i]] = i; i = p;
    }
    H->h[i] = j; H->pos[j] = i;
}

static void heap_down(mheap *H, int i)
{
    int j = H->h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= H->n) break;
        if (c + 1 < H->n && heap_less(H, H->h[c + 1], H->h[c])) c++;
        if (!heap_less(H, H->h[c], j)) break;
        H->h[i] = H->h[c]; H->pos[H->h[i]] = i; i = c;
    }
    H->h[i] = j; H->pos[j] = i;
}

/* Insert column j or move it up after its key decreased. */
static void heap_push(mheap *H, int j)
{
    if (H->pos[j] < 0) { H->h[H->n] = j; H->pos[j] = H->n++; }
    heap_up(H, H->pos[j]);
}

static int heap_pop(mheap *H)
{
    int j = H->h[0];
    H->pos[j] = -1;
    if (--H->n > 0) { H->h[0] = H->h[H->n]; H->pos[H->h[0]] = 0; heap_down(H, 0); }
    return j;
}

/* Workspace of the augmenting searches. */
typedef struct {
    const bsr_matrix *A;
    const double *cost;     /* [nnzb] c_ij, INFINITY for non-edges */
    double *u, *v;          /* duals */
    int *rm, *cm;           /* rm[i]: column of row i, cm[j]: row of column j (-1: none) */
    double *d;              /* [n] tentative distance of a column */
    int *pred;              /* [n] row from which a column was reached */
    int *done;              /* [n] column finalized in the current search (stamp) */
    int *reach;             /* [n] column reached in the current search (stamp) */
    int *touched, nt;       /* columns whose d was set (to reset) */
    int *rows, nr;          /* rows scanned in the current search */
    double *drow;           /* [n] distance of a scanned row */
    mheap H;
} msearch;

/* Reduced cost of edge p of row i (clamped at 0 against rounding). */
static double reduced(const msearch *S, int i, int p)
{
    double r = S->cost[p] - S->u[i] - S->v[S->A->colind[p]];
    return r > 0 ? r : 0.0;
}

/* Scan row i reached at distance di: relax its columns. */
static void scan_row(msearch *S, int i, double di, int stamp)
{
    const bsr_matrix *A = S->A;
    S->rows[S->nr++] = i;
    S->drow[i] = di;
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        int j = A->colind[p];
        if (!isfinite(S->cost[p]) || S->done[j] == stamp) continue;
        double nd = di + reduced(S, i, p);
        if (S->reach[j] != stamp) {   /* first reached in this search */
            S->reach[j] = stamp;
            S->touched[S->nt++] = j;
        } else if (nd >= S->d[j]) continue;
        S->d[j] = nd;
        S->pred[j] = i;
        heap_push(&S->H, j);
    }
}

/* Shortest augmenting path from unmatched row i0 (Dijkstra); on success the
 * matching grows by one and the duals stay feasible.  Returns 0 when no
 * unmatched column is reachable (i0 stays unmatched). */
static int augment(msearch *S, int i0, int stamp)
{
    S->nt = S->nr = 0;
    S->H.n = 0;
    scan_row(S, i0, 0.0, stamp);
    int jend = -1;
    double D = 0.0;
    int *fin = S->touched;   /* finalized columns are a subset of the touched ones */
    while (S->H.n > 0) {
        int j = heap_pop(&S->H);
        S->done[j] = stamp;
        if (S->cm[j] < 0) { jend = j; D = S->d[j]; break; }
        scan_row(S, S->cm[j], S->d[j], stamp);
    }
    /* empty the heap (its positions back to -1) for the next search */
    for (int t = 0; t < S->H.n; t++) S->H.pos[S->H.h[t]] = -1;
    S->H.n = 0;
    if (jend >= 0) {
        /* duals: finalized columns v_j += d_j - D, scanned rows u_i += D - d_i */
        for (int t = 0; t < S->nt; t++) {
            int j = fin[t];
            if (S->done[j] == stamp && S->d[j] < D) S->v[j] += S->d[j] - D;
        }
        for (int t = 0; t < S->nr; t++) S->u[S->rows[t]] += D - S->drow[S->rows[t]];
        for (int j = jend;;) {   /* flip the path */
            int i = S->pred[j], jp = S->rm[i];
            S->rm[i] = j;
            S->cm[j] = i;
            if (i == i0) break;
            j = jp;
        }
    }
    return jend >= 0;
}

/* Costs, row maxima, and the greedy start: v_j = min_i c_ij, u_i = min_j
 * (c_ij - v_j), then each row takes its first free column of zero reduced
 * cost (most rows of a matrix with a strong diagonal are matched here). */
static void greedy_start(msearch *S, double *cost, double *rmax)
{
    const bsr_matrix *A = S->A;
    const int n = A->nbrows;
    for (int i = 0; i < n; i++) {
        rmax[i] = 0.0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            cost[p] = block_weight(A, p);
            if (cost[p] > rmax[i]) rmax[i] = cost[p];
        }
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            cost[p] = cost[p] > 0 ? log(rmax[i]) - log(cost[p]) : INFINITY;
    }
    for (int j = 0; j < n; j++) S->v[j] = INFINITY;
    for (int p = 0; p < A->nnzb; p++)
        if (cost[p] < S->v[A->colind[p]]) S->v[A->colind[p]] = cost[p];
    for (int j = 0; j < n; j++)
        if (!isfinite(S->v[j])) S->v[j] = 0.0;   /* an empty column: unmatchable anyway */
    for (int i = 0; i < n; i++) {
        double m = INFINITY;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (isfinite(cost[p]) && cost[p] - S->v[A->colind[p]] < m) m = cost[p] - S->v[A->colind[p]];
        S->u[i] = isfinite(m) ? m : 0.0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1] && S->rm[i] < 0; p++) {
            int j = A->colind[p];
            if (isfinite(cost[p]) && S->cm[j] < 0 && cost[p] - S->u[i] - S->v[j] <= 0.0) {
                S->rm[i] = j;
                S->cm[j] = i;
            }
        }
    }
}

void bsr_matching_free(bsr_matching *M)
{
    if (!M) return;
    free(M->match); free(M->dr); free(M->dc);
    free(M);
}

/* Maximum-product transversal of A's block graph with its scaling (see the
 * top of this file); BSR_ERR_SINGULAR naming the unmatched rows when A is
 * structurally singular. */
bsr_status bsr_match_mpt(const bsr_matrix *A, bsr_matching **Mout)
{
    BSR_CHECK_ARG(A && Mout, "bsr_match_mpt: NULL argument");
    *Mout = NULL;
    BSR_CHECK_ARG(A->nbrows == A->nbcols, "bsr_match_mpt: A is %d x %d blocks, not square", A->nbrows, A->nbcols);
    const int n = A->nbrows;
    const size_t n1 = (size_t)n + 1;
    bsr_matching *M = bsr_calloc(1, sizeof *M, "matching");
    msearch S = {0};
    double *cost = bsr_malloc(sizeof(double) * ((size_t)A->nnzb + 1), "matching costs");
    double *rmax = bsr_malloc(sizeof(double) * n1, "matching");
    int *iw = bsr_malloc(sizeof(int) * n1 * 9, "matching");
    double *dw = bsr_malloc(sizeof(double) * n1 * 4, "matching");
    bsr_status s = BSR_OK;
    if (M) {
        M->n = n;
        M->match = bsr_malloc(sizeof(int) * n1, "matching");
        M->dr = bsr_malloc(sizeof(double) * n1, "matching");
        M->dc = bsr_malloc(sizeof(double) * n1, "matching");
    }
    if (!M || !M->match || !M->dr || !M->dc || !cost || !rmax || !iw || !dw) { s = BSR_ERR_NOMEM; goto done; }
    S.A = A;
    S.cost = cost;
    S.rm = iw; S.cm = iw + n1; S.pred = iw + 2 * n1; S.done = iw + 3 * n1;
    S.touched = iw + 4 * n1; S.rows = iw + 5 * n1; S.H.h = iw + 6 * n1; S.H.pos = iw + 7 * n1;
    S.reach = iw + 8 * n1;
    S.u = dw; S.v = dw + n1; S.d = dw + 2 * n1; S.drow = dw + 3 * n1;
    S.H.d = S.d;
    for (int i = 0; i < n; i++) {
        S.rm[i] = S.cm[i] = S.H.pos[i] = -1;
        S.done[i] = S.reach[i] = -1;
    }
    greedy_start(&S, cost, rmax);
    int unmatched = 0, stamp = 0;
    for (int i = 0; i < n; i++) {
        if (S.rm[i] >= 0) continue;
        if (!augment(&S, i, stamp)) unmatched++;
        stamp++;
    }
    if (unmatched) {
        s = bsr_error(BSR_ERR_SINGULAR, "bsr_match_mpt: A is structurally singular: %d of %d block rows "
                      "cannot be matched to a column", unmatched, n);
        goto done;
    }
    M->nperm = 0;
    for (int j = 0; j < n; j++) {
        M->match[j] = S.cm[j];
        if (S.cm[j] != j) M->nperm++;
        M->dc[j] = exp(S.v[j]);
        M->dr[j] = exp(S.u[j]) / rmax[j];
    }
done:
    free(cost); free(rmax); free(iw); free(dw);
    if (s) { bsr_matching_free(M); return s; }
    *Mout = M;
    return BSR_OK;
}
