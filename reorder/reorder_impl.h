/* SPDX-License-Identifier: BSD-3-Clause */
/* Private helpers of the reordering module (reorder/). */
#ifndef BSR_REORDER_IMPL_H
#define BSR_REORDER_IMPL_H

#include "internal.h"
#include <metis.h>
#include <stdatomic.h>

/* Undirected graph in CSR form: neighbours of v are adj[xadj[v] .. xadj[v+1]). */
typedef struct {
    int n;
    int *xadj;  /* [n+1] */
    int *adj;   /* [xadj[n]] sorted, no self loops, symmetric */
} bsr_graph;

/* G = block graph of A: pattern of A + A^T without the diagonal (graph.c). */
bsr_status bsr_graph_build(const bsr_matrix *A, bsr_graph *G);
void bsr_graph_free(bsr_graph *G);

/* The ordering under opt of the block graph G; stop (may be NULL): once it
 * is set, a dissection gives up (an error status) before its next METIS
 * call, so that a thread ordering ahead can be called off (order.c). */
bsr_status bsr_order_graph(const bsr_graph *G, const bsr_order_options *opt, const atomic_int *stop,
                           bsr_ordering **ord);
/* A copy of ord with its tree; NULL where out of memory (order.c). */
bsr_ordering *bsr_ordering_copy(const bsr_ordering *ord);
/* Nonzero when a and b ask for the same ordering (order.c). */
int bsr_order_options_same(const bsr_order_options *a, const bsr_order_options *b);

/* New ordering with perm/iperm allocated (uninitialised), no tree (order.c). */
bsr_status bsr_ordering_alloc(int n, bsr_order_kind kind, bsr_ordering **ord);
/* iperm from perm; BSR_ERR_INTERNAL if perm is not a bijection (order.c). */
bsr_status bsr_ordering_finish(bsr_ordering *ord, const char *who);

/* The orderings (one file each); perm[new] = old is filled. */
bsr_status bsr_order_rcm(const bsr_graph *G, int variant, int *perm);         /* rcm.c */
bsr_status bsr_order_metis_nd(const bsr_graph *G, const bsr_order_options *o,
                              int *perm);                                     /* metis_nd.c */
bsr_status bsr_order_amd(const bsr_graph *G, int *perm);                      /* amd.c */
/* perm with the top of its elimination tree moved to the end (lift.c):
 * *dense its last rows, the root chain and the chains under it. */
bsr_status bsr_order_lift(const bsr_graph *G, int *perm, int *dense);
bsr_status bsr_order_center(const bsr_graph *G, int *perm);                   /* center.c */
/* Distances from r over the vertices of r's component (within r's part,
 * label[v] == label[r], where label is given) into d (-1: not reached; only
 * those entries are set); q receives them level by level (within a level in
 * no fixed order when threads share it).  Returns their count, *ecc the
 * largest distance and *far the vertex at that distance of smallest degree,
 * then smallest index (bfs.c). */
int bsr_bfs_dist(const bsr_graph *G, const int *label, int r, int *d, int *q, int *ecc, int *far);
/* bsr_sep_products on G (sep_estimate.c). */
bsr_status bsr_graph_sep_products(const bsr_graph *G, double limit, double *products, int *sep);
bsr_status bsr_order_nd(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop,
                        bsr_ordering *ord);                                   /* nd.c */
/* Every METIS call is made between these (metis_nd.c): one at a time in
 * the process, so that its random numbers are each call's own. */
void bsr_metis_lock(void);
void bsr_metis_unlock(void);
/* Fill METIS options from o (metis_nd.c). */
void bsr_metis_options(const bsr_order_options *o, idx_t *options);
/* Status for a METIS return code rc of function fn (metis_nd.c). */
bsr_status bsr_metis_status(int rc, const char *fn, int nvtxs);

#endif
