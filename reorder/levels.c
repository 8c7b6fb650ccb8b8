/* Level schedules of the block triangles and the level-ordered renumbering. */
#include "reorder_impl.h"
#include <string.h>

/* Level schedule of A's lower (upper = 0) or upper triangle over all rows. */
bsr_status bsr_levels_build(const bsr_matrix *A, int upper, bsr_levels **lvp)
{
    BSR_CHECK_ARG(A && lvp, "bsr_levels_build: NULL argument");
    return bsr_levels_build_range(A, upper, 0, A->nbrows, lvp);
}

/* Level schedule of rows first..last-1 of A's lower or upper triangle (dependencies outside
 * the range ignored). */
bsr_status bsr_levels_build_range(const bsr_matrix *A, int upper, int first, int last,
                                  bsr_levels **lvp)
{
    BSR_CHECK_ARG(A && lvp, "bsr_levels_build_range: NULL argument");
    *lvp = NULL;
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "bsr_levels_build: matrix is %d x %d block rows, not square",
                         A->nbrows, A->nbcols);
    BSR_CHECK_ARG(first >= 0 && first <= last && last <= A->nbrows,
                  "bsr_levels_build_range: rows [%d,%d) not within 0..%d", first, last, A->nbrows);
    int n = last - first;
    bsr_levels *lv = bsr_calloc(1, sizeof *lv, "levels");
    if (!lv) return BSR_ERR_NOMEM;
    lv->n = n;
    lv->rows = bsr_malloc(sizeof(int) * ((size_t)n + 1), "levels rows");
    lv->level_of = bsr_malloc(sizeof(int) * ((size_t)n + 1), "levels level_of");
    if (!lv->rows || !lv->level_of) { bsr_levels_free(lv); return BSR_ERR_NOMEM; }
    /* level(i) = 1 + max level of its dependencies; sweep in dependency order.
     * Rows are sorted, so the lower part of row i is a prefix, the upper a suffix. */
    int nl = 0;
    int *lof = lv->level_of;   /* lof[row - first] */
    for (int t = 0; t < n; t++) {
        int i = upper ? last - 1 - t : first + t, l = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j < first || j >= last) continue;   /* outside the range: already solved */
            if ((upper ? j > i : j < i) && lof[j - first] + 1 > l) l = lof[j - first] + 1;
        }
        lof[i - first] = l;
        if (l + 1 > nl) nl = l + 1;
    }
    lv->nlevels = nl;
    lv->level_ptr = bsr_calloc((size_t)nl + 2, sizeof(int), "levels level_ptr");
    if (!lv->level_ptr) { bsr_levels_free(lv); return BSR_ERR_NOMEM; }
    /* counting sort of the rows by level, ascending row order within a level */
    for (int i = 0; i < n; i++) lv->level_ptr[lv->level_of[i] + 1]++;
    lv->max_width = 0;
    for (int l = 0; l < nl; l++) {
        if (lv->level_ptr[l + 1] > lv->max_width) lv->max_width = lv->level_ptr[l + 1];
        lv->level_ptr[l + 1] += lv->level_ptr[l];
    }
    int *pos = bsr_malloc(sizeof(int) * ((size_t)nl + 1), "levels positions");
    if (!pos) { bsr_levels_free(lv); return BSR_ERR_NOMEM; }
    memcpy(pos, lv->level_ptr, sizeof(int) * (size_t)nl);
    for (int i = 0; i < n; i++) lv->rows[pos[lv->level_of[i]]++] = first + i;
    free(pos);
    lv->mean_width = nl ? (double)n / nl : 0.0;
    *lvp = lv;
    return BSR_OK;
}

/* Free a level schedule. */
void bsr_levels_free(bsr_levels *lv)
{
    if (!lv) return;
    free(lv->level_ptr);
    free(lv->rows);
    free(lv->level_of);
    free(lv);
}

/* Ordering that stores the rows of each level contiguously (the diagonal transformation), and
 * its schedule. */
bsr_status bsr_order_levels(const bsr_matrix *A, int upper, bsr_ordering **ord, bsr_levels **lvp)
{
    BSR_CHECK_ARG(A && ord, "bsr_order_levels: NULL argument");
    *ord = NULL;
    if (lvp) *lvp = NULL;
    bsr_levels *lv;
    BSR_TRY(bsr_levels_build(A, upper, &lv));
    bsr_ordering *o;
    bsr_status s = bsr_ordering_alloc(lv->n, BSR_ORDER_LEVELS, &o);
    if (s) { bsr_levels_free(lv); return s; }
    memcpy(o->perm, lv->rows, sizeof(int) * (size_t)lv->n);
    if ((s = bsr_ordering_finish(o, "bsr_order_levels"))) {
        bsr_ordering_free(o);
        bsr_levels_free(lv);
        return s;
    }
    *ord = o;
    if (lvp) *lvp = lv;
    else bsr_levels_free(lv);
    return BSR_OK;
}
