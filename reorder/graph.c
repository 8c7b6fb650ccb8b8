/* SPDX-License-Identifier: BSD-3-Clause */
/* Block graph of a BSR matrix: symmetrized pattern, self loops dropped. */
#include "reorder_impl.h"
#include <string.h>

/* G = pattern(A + A^T) minus the diagonal.  Counts both directions of every
 * off-diagonal block, then removes duplicates row by row (linear in nnzb
 * apart from the per-row sorts). */
bsr_status bsr_graph_build(const bsr_matrix *A, bsr_graph *G)
{
    int n = A->nbrows;
    memset(G, 0, sizeof *G);
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "block graph: matrix is %d x %d block rows, not square",
                         A->nbrows, A->nbcols);
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
    /* sort and compact each row in place; cnt becomes the new xadj */
    int w = 0;
    for (int i = 0; i < n; i++) {
        int b = cnt[i], e = cnt[i + 1];
        qsort(adj + b, (size_t)(e - b), sizeof(int), bsr_cmp_int);
        cnt[i] = w;
        for (int p = b; p < e; p++)
            if (p == b || adj[p] != adj[p - 1]) adj[w++] = adj[p];
    }
    cnt[n] = w;
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
