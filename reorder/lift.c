/* SPDX-License-Identifier: BSD-3-Clause */
/* The top of the elimination tree lifted to the end of an ordering: a
 * complete factor's last rows made one dense block.  In a nested
 * dissection the top separator's rows are the elimination tree's root
 * chain, and the second level's separators are chains whose parents are
 * in it; in METIS's order the left half's separator is eliminated before
 * the right half's rows, which do not reach it.  Moved after every other
 * row (each chain's rows, and the rest, kept in their order) they end the
 * ordering with the root chain.  Every row still comes after its children
 * in the tree, so the fill (of A + A^T) is the same, while a complete
 * factor's rows on the chains of those separators, the longest chains of
 * rows waiting on rows, become rows of one dense block (kernels/ilu/
 * ilu0_tail.cu). */
#include "reorder_impl.h"

/* parent[k] of the elimination tree of G in the order perm (iperm its
 * inverse), -1 for a root: Liu's algorithm with path compression (anc). */
static void etree(const bsr_graph *G, const int *perm, const int *iperm, int *parent, int *anc)
{
    for (int k = 0; k < G->n; k++) {
        parent[k] = anc[k] = -1;
        const int v = perm[k];
        for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
            int i = iperm[G->adj[p]];
            while (i != -1 && i < k) {
                const int next = anc[i];
                anc[i] = k;
                if (next == -1) parent[i] = k;
                i = next;
            }
        }
    }
}

/* perm (perm[new] = old, a permutation of G's n rows) with the root chain
 * of its elimination tree's last root and the chains under it moved to the
 * end; *dense: the rows of both. */
bsr_status bsr_order_lift(const bsr_graph *G, int *perm, int *dense)
{
    const int n = G->n;
    *dense = 0;
    if (n == 0) return BSR_OK;
    int *iperm = bsr_malloc(sizeof(int) * (size_t)n, "lift"), *parent = bsr_malloc(sizeof(int) * (size_t)n, "lift");
    int *anc = bsr_malloc(sizeof(int) * (size_t)n, "lift");
    unsigned char *up = bsr_calloc((size_t)n, 1, "lift");
    bsr_status s = iperm && parent && anc && up ? BSR_OK : BSR_ERR_NOMEM;
    if (!s) {
        for (int k = 0; k < n; k++) iperm[perm[k]] = k;
        etree(G, perm, iperm, parent, anc);
        int *kids = iperm;   /* iperm is done with: the rows' children */
        for (int k = 0; k < n; k++) kids[k] = 0;
        for (int k = 0; k < n; k++) if (parent[k] >= 0) kids[parent[k]]++;
        /* the root chain r0 .. n-1: down from the last row while a row's only
         * child is the row before it (the top separator, to where its
         * subtrees branch off) */
        int r0 = n - 1;
        while (r0 > 0 && parent[r0 - 1] == r0 && kids[r0] == 1) r0--;
        int moved = 0;
        for (int c = r0 - 1; c >= 0; c--) {
            if (up[c] || parent[c] < r0) continue;
            /* the chain down from c while each row is the child of the next
             * (a second-level separator, and on along the path below it:
             * by the host count the longest chains of rows left of the root
             * chain) */
            for (int i = c;; i--) {
                up[i] = 1;
                moved++;
                if (i == 0 || parent[i - 1] != i) break;
            }
        }
        /* anc becomes the new order: the rows left, the lifted chains, the root chain */
        int at = 0;
        for (int k = 0; k < r0; k++) if (!up[k]) anc[at++] = perm[k];
        for (int k = 0; k < r0; k++) if (up[k]) anc[at++] = perm[k];
        for (int k = r0; k < n; k++) anc[at++] = perm[k];
        for (int k = 0; k < n; k++) perm[k] = anc[k];
        *dense = moved + n - r0;
    }
    free(iperm); free(parent); free(anc); free(up);
    return s;
}
