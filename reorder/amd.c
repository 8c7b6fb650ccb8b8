/* SPDX-License-Identifier: BSD-3-Clause */
/* SuiteSparse AMD on the symmetrized block graph. */
#include "reorder_impl.h"
#include <amd.h>

/* perm = SuiteSparse AMD ordering of the block graph G. */
bsr_status bsr_order_amd(const bsr_graph *G, int *perm)
{
    double control[AMD_CONTROL], info[AMD_INFO];
    amd_defaults(control);
    /* the graph is symmetric with sorted, unique columns: valid AMD input */
    int rc = amd_order(G->n, G->xadj, G->adj, perm, control, info);
    if (rc == AMD_OK || rc == AMD_OK_BUT_JUMBLED) return BSR_OK;
    return bsr_error(rc == AMD_OUT_OF_MEMORY ? BSR_ERR_NOMEM : BSR_ERR_INTERNAL,
                     "amd_order on a graph of %d vertices returned %d", G->n, rc);
}
