/* SPDX-License-Identifier: BSD-3-Clause */
/* Partitions of A's block rows among the distributed matrix's ranks: METIS's
 * k-way partition of the block graph into p parts, or equal ranges. */
#include "reorder_impl.h"

void bsr_partition_ranges(int n, int p, int *part)
{
    int q = n / p, rem = n % p, i = 0;
    for (int r = 0; r < p; r++)
        for (int c = 0; c < q + (r < rem); c++) part[i++] = r;
}

bsr_status bsr_partition_kway(const bsr_matrix *A, int p, int *part)
{
    const int n = A->nbrows;
    if (p == 1 || n < p) { bsr_partition_ranges(n, p, part); return BSR_OK; }
    bsr_graph G;
    BSR_TRY(bsr_graph_build(A, &G));
    const int m = G.xadj[n];
    if (m == 0) { bsr_graph_free(&G); bsr_partition_ranges(n, p, part); return BSR_OK; }
    idx_t *xadj = bsr_malloc(sizeof(idx_t) * ((size_t)n + 1), "METIS xadj");
    idx_t *adj = bsr_malloc(sizeof(idx_t) * (size_t)m, "METIS adjncy");
    idx_t *mp = bsr_malloc(sizeof(idx_t) * (size_t)n, "METIS parts");
    bsr_status st = BSR_ERR_NOMEM;
    if (xadj && adj && mp) {
        for (int i = 0; i <= n; i++) xadj[i] = G.xadj[i];
        for (int q = 0; q < m; q++) adj[q] = G.adj[q];
        idx_t options[METIS_NOPTIONS], nv = n, ncon = 1, np = p, cut = 0;
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_NUMBERING] = 0;
        options[METIS_OPTION_SEED] = 0;   /* the same parts every run */
        bsr_metis_lock();
        const int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &np, NULL, NULL, options, &cut, mp);
        bsr_metis_unlock();
        st = bsr_metis_status(rc, "METIS_PartGraphKway", n);
        for (int i = 0; !st && i < n; i++) part[i] = (int)mp[i];
    }
    free(xadj); free(adj); free(mp);
    bsr_graph_free(&G);
    return st;
}
