/* SPDX-License-Identifier: BSD-3-Clause */
/* Partitions of A's block rows: METIS's k-way partition of the block graph
 * into p parts (the distributed matrix's ranks), or into parts of about a
 * given size renumbered so that every part is non-empty (the two-level
 * preconditioner's aggregates). */
#include "reorder_impl.h"

void bsr_partition_ranges(int n, int p, int *part)
{
    int q = n / p, rem = n % p, i = 0;
    for (int r = 0; r < p; r++)
        for (int c = 0; c < q + (r < rem); c++) part[i++] = r;
}

bsr_status bsr_partition_kway(const bsr_matrix *A, int p, const bsr_order_options *o, int *part)
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
        if (o) bsr_metis_options(o, options);
        else {
            METIS_SetDefaultOptions(options);
            options[METIS_OPTION_NUMBERING] = 0;
            options[METIS_OPTION_SEED] = 0;
        }
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

bsr_status bsr_partition(const bsr_matrix *A, int rows, int *part, int *nparts)
{
    const int n = A->nbrows;
    *nparts = 0;
    if (n == 0) return BSR_OK;
    const int want = rows > 0 && n / rows > 1 ? n / rows : 1;
    bsr_order_options oo;   /* the dissection's METIS options (seed 1, ufactor 30) */
    bsr_order_options_default(&oo, BSR_ORDER_ND);
    BSR_TRY(bsr_partition_kway(A, want, &oo, part));
    int *newid = bsr_malloc(sizeof(int) * (size_t)want, "partition ids");
    if (!newid) return BSR_ERR_NOMEM;
    int np = 0;   /* parts in order of their first row, empty ones dropped */
    for (int q = 0; q < want; q++) newid[q] = -1;
    for (int i = 0; i < n; i++) {
        if (newid[part[i]] < 0) newid[part[i]] = np++;
        part[i] = newid[part[i]];
    }
    free(newid);
    *nparts = np;
    return BSR_OK;
}
