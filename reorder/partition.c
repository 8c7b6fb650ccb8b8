/* SPDX-License-Identifier: BSD-3-Clause */
/* Aggregates of A's block rows: METIS's k-way partition of the block graph
 * into parts of about a given size (compact, connected where the graph is),
 * renumbered so that every part is non-empty. */
#include "reorder_impl.h"

bsr_status bsr_partition(const bsr_matrix *A, int rows, int *part, int *nparts)
{
    const int n = A->nbrows;
    *nparts = 0;
    if (n == 0) return BSR_OK;
    idx_t want = rows > 0 ? n / rows : 1;
    if (want <= 1) {
        for (int i = 0; i < n; i++) part[i] = 0;
        *nparts = 1;
        return BSR_OK;
    }
    bsr_graph G;
    BSR_TRY(bsr_graph_build(A, &G));
    bsr_status s = BSR_OK;
    const int m = G.xadj[n];
    idx_t *xadj = bsr_malloc(sizeof(idx_t) * ((size_t)n + 1), "partition xadj");
    idx_t *adj = bsr_malloc(sizeof(idx_t) * (size_t)(m ? m : 1), "partition adjncy");
    idx_t *mp = bsr_malloc(sizeof(idx_t) * (size_t)n, "partition parts");
    int *newid = bsr_malloc(sizeof(int) * (size_t)want, "partition ids");
    if (!xadj || !adj || !mp || !newid) s = BSR_ERR_NOMEM;
    if (!s && m == 0) {   /* no edges: METIS refuses; consecutive rows instead */
        for (int i = 0; i < n; i++) mp[i] = (idx_t)((int64_t)i * want / n);
    } else if (!s) {
        for (int i = 0; i <= n; i++) xadj[i] = G.xadj[i];
        for (int p = 0; p < m; p++) adj[p] = G.adj[p];
        idx_t options[METIS_NOPTIONS], nv = n, ncon = 1, cut = 0;
        bsr_order_options oo;
        bsr_order_options_default(&oo, BSR_ORDER_ND);
        bsr_metis_options(&oo, options);
        bsr_metis_lock();
        const int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &want, NULL, NULL, options,
                                           &cut, mp);
        bsr_metis_unlock();
        s = bsr_metis_status(rc, "METIS_PartGraphKway", n);
    }
    if (!s) {   /* parts in order of their first row, empty ones dropped */
        int np = 0;
        for (idx_t q = 0; q < want; q++) newid[q] = -1;
        for (int i = 0; i < n; i++) {
            if (newid[mp[i]] < 0) newid[mp[i]] = np++;
            part[i] = newid[mp[i]];
        }
        *nparts = np;
    }
    free(xadj); free(adj); free(mp); free(newid);
    bsr_graph_free(&G);
    return s;
}
