/* SPDX-License-Identifier: BSD-3-Clause */
/* Block graph of a BSR matrix: symmetrized pattern, self loops dropped. */
#include "reorder_impl.h"
#include <string.h>

/* G = A's pattern minus the diagonal, for a symmetric pattern: rows counted,
 * summed and copied in parallel. */
static bsr_status graph_of_symmetric(const bsr_matrix *A, bsr_graph *G)
{
    int n = A->nbrows;
    int *xadj = bsr_malloc(sizeof(int) * ((size_t)n + 1), "graph degrees");
    if (!xadj) return BSR_ERR_NOMEM;
    xadj[0] = 0;
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        int d = A->rowptr[i + 1] - A->rowptr[i];
        if (bsr_matrix_find(A, i, i) >= 0) d--;
        xadj[i + 1] = d;
    }
    bsr_scan_par(xadj + 1, n);
    int *adj = bsr_malloc(sizeof(int) * ((size_t)xadj[n] + 1), "graph adjacency");
    if (!adj) { free(xadj); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        int *r = adj + xadj[i];
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] != i) *r++ = A->colind[p];
    }
    G->n = n;
    G->xadj = xadj;
    G->adj = adj;
    return BSR_OK;
}

/* G = pattern(A + A^T) minus the diagonal: A's own rows when its pattern is
 * symmetric; otherwise counts both directions of every
 * off-diagonal block, then removes duplicates row by row (linear in nnzb
 * apart from the per-row sorts; the rows in parallel).  The result does not
 * depend on the number of threads. */
bsr_status bsr_graph_build(const bsr_matrix *A, bsr_graph *G)
{
    int n = A->nbrows;
    memset(G, 0, sizeof *G);
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "block graph: matrix is %d x %d block rows, not square",
                         A->nbrows, A->nbcols);
    if (bsr_pattern_symmetric(A->nbrows, A->rowptr, A->colind)) return graph_of_symmetric(A, G);
    int *cnt = bsr_calloc((size_t)n + 1, sizeof(int), "graph degrees");
    if (!cnt) return BSR_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j != i) { cnt[i + 1]++; cnt[j + 1]++; }
        }
    for (int i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    int *adj = bsr_malloc(sizeof(int) * ((size_t)cnt[n] + 1), "graph adjacency");
    int *pos = bsr_malloc(sizeof(int) * ((size_t)n + 1), "graph positions");
    if (!adj || !pos) { free(cnt); free(adj); free(pos); return BSR_ERR_NOMEM; }
    memcpy(pos, cnt, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j != i) { adj[pos[i]++] = j; adj[pos[j]++] = i; }
        }
    /* sort and deduplicate each row in place (rows in parallel: short rows
     * by insertion, the rare long ones by qsort), then compact into a new
     * array by the rows' unique counts; cnt becomes the new xadj */
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        int *r = adj + cnt[i], m = cnt[i + 1] - cnt[i], u = 0;
        if (m > 32) qsort(r, (size_t)m, sizeof(int), bsr_cmp_int);
        else
            for (int p = 1; p < m; p++) {
                int v = r[p], q = p;
                while (q > 0 && r[q - 1] > v) { r[q] = r[q - 1]; q--; }
                r[q] = v;
            }
        for (int p = 0; p < m; p++)
            if (p == 0 || r[p] != r[p - 1]) r[u++] = r[p];
        pos[i] = u;
    }
    int *old = bsr_malloc(sizeof(int) * ((size_t)n + 1), "graph positions");
    if (!old) { free(cnt); free(adj); free(pos); return BSR_ERR_NOMEM; }
    memcpy(old, cnt, sizeof(int) * ((size_t)n + 1));
    cnt[0] = 0;
    for (int i = 0; i < n; i++) cnt[i + 1] = cnt[i] + pos[i];
    int *adj2 = bsr_malloc(sizeof(int) * ((size_t)cnt[n] + 1), "graph adjacency");
    if (!adj2) { free(cnt); free(adj); free(pos); free(old); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) memcpy(adj2 + cnt[i], adj + old[i], sizeof(int) * (size_t)pos[i]);
    free(adj);
    free(old);
    adj = adj2;
    free(pos);
    G->n = n;
    G->xadj = cnt;
    G->adj = adj;
    return BSR_OK;
}

/* Free a block graph's arrays. */
void bsr_graph_free(bsr_graph *G)
{
    if (!G) return;
    free(G->xadj);
    free(G->adj);
    G->xadj = G->adj = NULL;
}
