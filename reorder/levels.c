/* SPDX-License-Identifier: BSD-3-Clause */
/* Level schedules of the block triangles and the level-ordered renumbering. */
#include "reorder_impl.h"
#include <omp.h>
#include <string.h>

/* Level schedule of A's lower (upper = 0) or upper triangle over all rows. */
bsr_status bsr_levels_build(const bsr_matrix *A, int upper, bsr_levels **lvp)
{
    BSR_CHECK_ARG(A && lvp, "bsr_levels_build: NULL argument");
    return bsr_levels_build_range(A, upper, 0, A->nbrows, lvp);
}

/* Chunks of rows for the parallel counting sort: fixed (the result never
 * depends on the threads), and only when their per-level counts stay small
 * next to n. */
#define LV_CHUNKS 64

/* level_of[t] for the rows first..last-1 (t = row - first) and the number of
 * levels: level(i) = 1 + max level of its dependencies, swept in dependency
 * order.  A sequential walk (O(nnz), cheap); rows are sorted, so the lower
 * part of row i is a prefix, the upper a suffix. */
static int level_walk(const bsr_matrix *A, int upper, int first, int last, int *lof)
{
    int nl = 0, n = last - first;
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
    return nl;
}

/* level_ptr, max_width and rows (ascending row order within a level): a
 * stable counting sort of the rows by level, by chunks of rows in parallel
 * when n is large and the levels few (then the first touch of rows is spread
 * over the threads too); one chunk, serial, otherwise. */
static bsr_status level_sort(bsr_levels *lv, int first)
{
    const int n = lv->n, nl = lv->nlevels;
    const int nc = n >= BSR_PAR_ROWS && (int64_t)LV_CHUNKS * (nl + 1) <= n ? LV_CHUNKS : 1;
    const int cs = (n + nc - 1) / nc;
    int *cnt = bsr_calloc((size_t)nc * (nl + 1), sizeof(int), "levels counts");   /* [chunk][level] */
    if (!cnt) return BSR_ERR_NOMEM;
    #pragma omp parallel for schedule(static) num_threads(nc > 1 ? bsr_team(n, BSR_ROW_GRAIN) : 1)
    for (int c = 0; c < nc; c++)
        for (int i = c * cs; i < n && i < (c + 1) * cs; i++) cnt[(size_t)c * (nl + 1) + lv->level_of[i]]++;
    /* level_ptr[l+1] = rows of level l; cnt becomes each chunk's first slot per level */
    lv->max_width = 0;
    for (int l = 0; l < nl; l++) {
        int at = lv->level_ptr[l];
        for (int c = 0; c < nc; c++) {
            int *x = &cnt[(size_t)c * (nl + 1) + l], k = *x;
            *x = at;
            at += k;
        }
        lv->level_ptr[l + 1] = at;
        if (at - lv->level_ptr[l] > lv->max_width) lv->max_width = at - lv->level_ptr[l];
    }
    #pragma omp parallel for schedule(static) num_threads(nc > 1 ? bsr_team(n, BSR_ROW_GRAIN) : 1)
    for (int c = 0; c < nc; c++) {
        int *pos = &cnt[(size_t)c * (nl + 1)];
        for (int i = c * cs; i < n && i < (c + 1) * cs; i++) lv->rows[pos[lv->level_of[i]]++] = first + i;
    }
    free(cnt);
    return BSR_OK;
}

/* A schedule of n rows with rows/level_of allocated (levels not yet known). */
static bsr_status levels_alloc(int n, bsr_levels **lvp)
{
    bsr_levels *lv = bsr_calloc(1, sizeof *lv, "levels");
    if (!lv) return BSR_ERR_NOMEM;
    lv->n = n;
    lv->rows = bsr_malloc(sizeof(int) * ((size_t)n + 1), "levels rows");
    lv->level_of = bsr_malloc(sizeof(int) * ((size_t)n + 1), "levels level_of");
    if (!lv->rows || !lv->level_of) { bsr_levels_free(lv); return BSR_ERR_NOMEM; }
    *lvp = lv;
    return BSR_OK;
}

/* The rest of a schedule once level_of and nlevels are known. */
static bsr_status levels_finish(bsr_levels *lv, int first)
{
    lv->level_ptr = bsr_calloc((size_t)lv->nlevels + 2, sizeof(int), "levels level_ptr");
    if (!lv->level_ptr) return BSR_ERR_NOMEM;
    BSR_TRY(level_sort(lv, first));
    lv->mean_width = lv->nlevels ? (double)lv->n / lv->nlevels : 0.0;
    return BSR_OK;
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
    bsr_levels *lv;
    BSR_TRY(levels_alloc(last - first, &lv));
    lv->nlevels = level_walk(A, upper, first, last, lv->level_of);
    bsr_status s = levels_finish(lv, first);
    if (s) { bsr_levels_free(lv); return s; }
    *lvp = lv;
    return BSR_OK;
}

/* Schedules of count triangles into out[i]: M[i]'s lower part (upper[i] ==
 * 0) or its upper part.  Equal to count bsr_levels_build calls, but the
 * sequential walks run at the same time, one thread each (they dominate once
 * the rest is parallel). */
bsr_status bsr_levels_build_many(int count, const bsr_matrix *const *M, const int *upper, bsr_levels **out)
{
    BSR_CHECK_ARG(count >= 0 && (!count || (M && upper && out)), "bsr_levels_build_many: bad argument");
    bsr_status s = BSR_OK;
    int nmax = 0;
    for (int i = 0; i < count; i++) out[i] = NULL;
    for (int i = 0; i < count && !s; i++) {
        BSR_CHECK_ARG(M[i], "bsr_levels_build_many: matrix %d is NULL", i);
        if (M[i]->nbrows != M[i]->nbcols)
            s = bsr_error(BSR_ERR_SIZE, "bsr_levels_build: matrix is %d x %d block rows, not square",
                          M[i]->nbrows, M[i]->nbcols);
        if (!s) s = levels_alloc(M[i]->nbrows, &out[i]);
        if (M[i]->nbrows > nmax) nmax = M[i]->nbrows;
    }
    if (!s) {
        #pragma omp parallel for schedule(static, 1) num_threads(bsr_team(nmax, BSR_ROW_GRAIN) > 1 ? count : 1)
        for (int i = 0; i < count; i++)
            out[i]->nlevels = level_walk(M[i], upper[i], 0, M[i]->nbrows, out[i]->level_of);
    }
    for (int i = 0; i < count && !s; i++) s = levels_finish(out[i], 0);
    if (s)
        for (int i = 0; i < count; i++) { bsr_levels_free(out[i]); out[i] = NULL; }
    return s;
}

/* Schedules of L's lower and U's upper triangle (the ILU(0) setup), the two
 * walks at the same time. */
bsr_status bsr_levels_build_pair(const bsr_matrix *L, const bsr_matrix *U, bsr_levels **lvL, bsr_levels **lvU)
{
    BSR_CHECK_ARG(L && U && lvL && lvU, "bsr_levels_build_pair: NULL argument");
    *lvL = *lvU = NULL;
    const int n = L->nbrows;
    if (L->nbcols != n || U->nbrows != n || U->nbcols != n)
        return bsr_error(BSR_ERR_SIZE, "bsr_levels_build_pair: L (%d x %d) and U (%d x %d) block rows, not square and equal",
                         L->nbrows, L->nbcols, U->nbrows, U->nbcols);
    const bsr_matrix *M[2] = {L, U};
    const int up[2] = {0, 1};
    bsr_levels *out[2];
    BSR_TRY(bsr_levels_build_many(2, M, up, out));
    *lvL = out[0];
    *lvU = out[1];
    return BSR_OK;
}

/* Free a level schedule. */
void bsr_levels_free(bsr_levels *lv)
{
    if (lv) { free(lv->level_ptr); free(lv->rows); free(lv->level_of); }
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
