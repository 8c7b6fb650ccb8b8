/* SPDX-License-Identifier: BSD-3-Clause */
/* Checker of the p-bordered form: tree consistency and no block coupling
 * two subtrees except through an ancestor's separator. */
#include "reorder_impl.h"
#include <string.h>

/* Verify the tree's ranges: root covers [0,n); children partition
 * [first, sep_first) in order; levels and parents agree; fills own[] with the
 * node owning each row and the report's size figures. */
static bsr_status check_tree(const bsr_ordering *ord, int *own, bsr_pbordered_report *r)
{
    int n = ord->n;
    const bsr_tree_node *t = ord->nodes;
    if (ord->nnodes < 1 || !t)
        return bsr_error(BSR_ERR_ARG, "p-bordered check: ordering (%s) has no separator tree",
                         bsr_order_kind_name(ord->kind));
    if (t[0].first != 0 || t[0].last != n || t[0].parent != -1 || t[0].level != 0)
        return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: root covers [%d,%d) at level %d, "
                         "parent %d; expected [0,%d), level 0, parent -1", t[0].first, t[0].last,
                         t[0].level, t[0].parent, n);
    for (int i = 0; i < n; i++) own[i] = -1;
    r->leaf_min = n;
    int64_t leaf_sum = 0;
    for (int k = 0; k < ord->nnodes; k++) {
        const bsr_tree_node *a = &t[k];
        if (a->first < 0 || a->first > a->sep_first || a->sep_first > a->last || a->last > n ||
            a->level < 0 || a->level >= BSR_TREE_MAX_LEVELS)
            return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: node %d has bad range "
                             "[%d,%d,%d) or level %d", k, a->first, a->sep_first, a->last, a->level);
        int c0 = a->child[0], c1 = a->child[1];
        if ((c0 < 0) != (c1 < 0))
            return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: node %d has one child", k);
        if (c0 < 0) {   /* leaf */
            if (a->sep_first != a->first)
                return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: leaf %d has sep_first %d "
                                 "!= first %d", k, a->sep_first, a->first);
            int sz = a->last - a->first;
            r->nleaves++;
            leaf_sum += sz;
            if (sz < r->leaf_min) r->leaf_min = sz;
            if (sz > r->leaf_max) r->leaf_max = sz;
        } else {
            if (c0 >= ord->nnodes || c1 >= ord->nnodes || c0 == k || c1 == k)
                return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: node %d children %d, %d "
                                 "out of range", k, c0, c1);
            const bsr_tree_node *x = &t[c0], *y = &t[c1];
            if (x->parent != k || y->parent != k || x->level != a->level + 1 ||
                y->level != a->level + 1 || x->first != a->first || x->last != y->first ||
                y->last != a->sep_first)
                return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: children %d [%d,%d) and "
                                 "%d [%d,%d) do not split node %d's [%d,%d)", c0, x->first,
                                 x->last, c1, y->first, y->last, k, a->first, a->sep_first);
            int sz = a->last - a->sep_first;
            r->sep_rows[a->level] += sz;
            r->sep_nodes[a->level]++;
            if (sz > r->sep_max[a->level]) r->sep_max[a->level] = sz;
            r->border_rows += sz;
        }
        if (a->level > r->depth) r->depth = a->level;
        for (int i = a->sep_first; i < a->last; i++) {
            if (own[i] >= 0)
                return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: row %d owned by nodes %d "
                                 "and %d", i, own[i], k);
            own[i] = k;
        }
    }
    for (int i = 0; i < n; i++)
        if (own[i] < 0)
            return bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: row %d owned by no node", i);
    if (r->nleaves == 0) r->leaf_min = 0;
    r->leaf_mean = r->nleaves ? (double)leaf_sum / r->nleaves : 0.0;
    r->border_share = n ? (double)r->border_rows / n : 0.0;
    return BSR_OK;
}

/* Verify the p-bordered property of B = P A P^T under ord's tree and fill the report;
 * BSR_ERR_STRUCTURE naming the first violating block. */
bsr_status bsr_pbordered_check(const bsr_matrix *B, const bsr_ordering *ord,
                               bsr_pbordered_report *rep)
{
    BSR_CHECK_ARG(B && ord, "bsr_pbordered_check: NULL argument");
    bsr_pbordered_report r;
    memset(&r, 0, sizeof r);
    if (rep) *rep = r;
    if (B->nbrows != B->nbcols || B->nbrows != ord->n)
        return bsr_error(BSR_ERR_SIZE, "bsr_pbordered_check: matrix %d x %d block rows, "
                         "ordering of %d", B->nbrows, B->nbcols, ord->n);
    int n = ord->n;
    int *own = bsr_malloc(sizeof(int) * ((size_t)n + 1), "p-bordered owners");
    if (!own) return BSR_ERR_NOMEM;
    bsr_status s = check_tree(ord, own, &r);
    /* block (i,j) is legal iff the owner of one row is an ancestor-or-self of
     * the other's owner, i.e. the other row lies in its subtree range */
    const bsr_tree_node *t = ord->nodes;
    int bad_i = -1, bad_j = -1;
    int64_t border = 0;
    for (int i = 0; !s && i < n; i++) {
        const bsr_tree_node *a = &t[own[i]];
        for (int p = B->rowptr[i]; p < B->rowptr[i + 1]; p++) {
            int j = B->colind[p];
            const bsr_tree_node *c = &t[own[j]];
            if (a->child[0] >= 0 || c->child[0] >= 0) border++;
            if ((j >= a->first && j < a->last) || (i >= c->first && i < c->last)) continue;
            if (bad_i < 0) { bad_i = i; bad_j = j; }
        }
    }
    r.border_blocks = border;
    if (!s && bad_i >= 0)
        s = bsr_error(BSR_ERR_STRUCTURE, "p-bordered check: block (%d,%d) (original block (%d,%d)) "
                      "couples node %d [%d,%d) and node %d [%d,%d), neither an ancestor of the other",
                      bad_i, bad_j, ord->perm[bad_i], ord->perm[bad_j], own[bad_i],
                      t[own[bad_i]].first, t[own[bad_i]].last, own[bad_j], t[own[bad_j]].first,
                      t[own[bad_j]].last);
    free(own);
    if (rep) *rep = r;
    return s;
}
