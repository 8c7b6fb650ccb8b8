/* SPDX-License-Identifier: BSD-3-Clause */
/* Host side of the GPU triangular-solve analysis: check a level
 * schedule against its triangle, lay the triangle out for the device (rows in
 * level order, optionally renumbered), and the separator-tree levels of the
 * P21-P24 kernels.  OpenMP-parallel: this is the "analysis" the benchmark
 * compares with cuSPARSE's. */
#include "internal.h"
#include "../../kernels/trsv/trsv.h"
#include <string.h>

void bsr_trsv_plan_free(bsr_trsv_plan *pl)
{
    if (!pl) return;
    free(pl->rows); free(pl->rstart); free(pl->rend); free(pl->pbeg); free(pl->pend);
    free(pl->colind); free(pl->map);
    memset(pl, 0, sizeof *pl);
}

/* Nonzero when row i of M breaks the schedule (level_of) or the triangle's
 * shape (U: pivot first; off-diagonal blocks on the right side). */
static int row_bad(const bsr_matrix *M, int upper, const int *level_of, int i)
{
    int s0 = M->rowptr[i], s1 = M->rowptr[i + 1];
    if (upper) {
        if (s0 == s1 || M->colind[s0] != i) return 1;
        s0++;
    }
    for (int p = s0; p < s1; p++) {
        int c = M->colind[p];
        if (upper ? c <= i : c >= i) return 1;
        if (level_of[c] >= level_of[i]) return 1;
    }
    return 0;
}

/* The message for a row found bad by row_bad. */
static bsr_status row_error(const bsr_matrix *M, int upper, const int *level_of, int i)
{
    const char *nm = upper ? "U" : "L";
    int s0 = M->rowptr[i], s1 = M->rowptr[i + 1];
    if (upper) {
        if (s0 == s1 || M->colind[s0] != i)
            return bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: U row %d does not start with its pivot block", i);
        s0++;
    }
    for (int p = s0; p < s1; p++) {
        int c = M->colind[p];
        if (upper ? c <= i : c >= i)
            return bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: %s row %d has a block in column %d on the wrong side", nm, i, c);
        if (level_of[c] >= level_of[i])
            return bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: level schedule of %s: row %d (level %d) needs row %d (level %d)",
                             nm, i, level_of[i], c, level_of[c]);
    }
    return bsr_error(BSR_ERR_INTERNAL, "bsr_gpu_ilu: row %d", i);
}

/* Check lv against triangle M (see trsv.h): every row listed once, each
 * block off the diagonal on the right side and reading an earlier level;
 * the smallest offending entry or row is named. */
static bsr_status check_schedule(const bsr_matrix *M, const bsr_levels *lv, int upper)
{
    const int n = M->nbrows;
    const char *nm = upper ? "U" : "L";
    int *level_of = bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "level_of");
    if (!level_of) return BSR_ERR_NOMEM;
    /* level of each row; the schedule must list every row once (a row listed
     * twice leaves another unlisted, or disagrees with its recorded level) */
    bsr_status s = BSR_OK;
    int badp = n;
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) level_of[i] = -1;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : badp) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int l = 0; l < lv->nlevels; l++)
        for (int p = lv->level_ptr[l]; p < lv->level_ptr[l + 1]; p++) {
            int i = lv->rows[p];
            if (i < 0 || i >= n) { if (p < badp) badp = p; }
            else level_of[i] = l;
        }
    if (badp == n) {
#pragma omp parallel for schedule(dynamic, 1) reduction(min : badp) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int l = 0; l < lv->nlevels; l++)
            for (int p = lv->level_ptr[l]; p < lv->level_ptr[l + 1]; p++)
                if (level_of[lv->rows[p]] != l && p < badp) badp = p;
    }
    if (badp == n) {
        int missing = n;
#pragma omp parallel for schedule(static) reduction(min : missing) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int i = 0; i < n; i++)
            if (level_of[i] < 0 && i < missing) missing = i;
        if (missing < n)
            s = bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: level schedule of %s: row %d missing (another repeated)", nm, missing);
    } else {
        s = bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: level schedule of %s: entry %d (row %d) invalid or repeated", nm, badp,
                      lv->rows[badp]);
    }
    if (s == BSR_OK) {
        int bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int i = 0; i < n; i++)
            if (i < bad && row_bad(M, upper, level_of, i)) bad = i;
        if (bad < n) s = row_error(M, upper, level_of, bad);
    }
    free(level_of);
    return s;
}

int bsr_trsv_tail(const bsr_matrix *M, const bsr_levels *lv, int upper)
{
    int64_t rows = 0, blocks = 0;
    for (int t = 0; t < lv->nlevels; t++) {
        const int l = upper ? t : lv->nlevels - 1 - t;
        const int p0 = lv->level_ptr[l], p1 = lv->level_ptr[l + 1];
        if (p1 - p0 > TRSV_TAIL_WIDTH) break;
        for (int p = p0; p < p1; p++) {
            const int i = lv->rows[p];
            blocks += M->rowptr[i + 1] - M->rowptr[i] - upper;
        }
        rows += p1 - p0;
    }
    return rows >= TRSV_TAIL_MIN && blocks >= (int64_t)TRSV_TAIL_LEN * rows ? (int)rows : 0;
}

bsr_status bsr_trsv_plan_check(const bsr_matrix *M, const bsr_levels *lv, int upper, int full, int *width)
{
    BSR_CHECK_ARG(M && lv && width, "bsr_trsv_plan_check: NULL argument");
    const int n = M->nbrows;
    if (lv->n != n || lv->nlevels < 0 || lv->level_ptr[0] != 0 || lv->level_ptr[lv->nlevels] != n)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu: level schedule of %s does not cover its %d rows", upper ? "U" : "L", n);
    if (full) BSR_TRY(check_schedule(M, lv, upper));
    int w = 0;
#pragma omp parallel for schedule(static) reduction(max : w) num_threads(bsr_team(lv->nlevels, BSR_ROW_GRAIN))
    for (int l = 0; l < lv->nlevels; l++) {
        int d = lv->level_ptr[l + 1] - lv->level_ptr[l];
        if (d > w) w = d;
    }
    *width = w;
    return BSR_OK;
}

bsr_status bsr_trsv_plan_build(const bsr_matrix *M, const bsr_levels *lv, int upper, int renumber,
                               const int *qpos, int check, bsr_trsv_plan *pl)
{
    BSR_CHECK_ARG(M && lv && pl, "bsr_trsv_plan_build: NULL argument");
    BSR_CHECK_ARG(!qpos || renumber, "bsr_trsv_plan_build: renumbered unknowns need level-ordered storage");
    memset(pl, 0, sizeof *pl);
    const int n = M->nbrows, nnzb = M->nnzb;
    int width = 0;
    BSR_TRY(bsr_trsv_plan_check(M, lv, upper, check, &width));
    size_t n1 = (size_t)(n ? n : 1), z1 = (size_t)(nnzb ? nnzb : 1);
    pl->rows = bsr_malloc(n1 * sizeof(int), "schedule");
    pl->rstart = bsr_malloc(n1 * sizeof(int), "row starts");
    pl->rend = bsr_malloc(n1 * sizeof(int), "row ends");
    pl->pbeg = bsr_malloc(n1 * sizeof(int), "position starts");
    pl->pend = bsr_malloc(n1 * sizeof(int), "position ends");
    pl->colind = bsr_malloc(z1 * sizeof(int), "stored colind");
    pl->map = renumber ? bsr_malloc(z1 * sizeof(int), "block map") : NULL;
    if (!pl->rows || !pl->rstart || !pl->rend || !pl->pbeg || !pl->pend || !pl->colind || (renumber && !pl->map)) {
        bsr_trsv_plan_free(pl);
        return BSR_ERR_NOMEM;
    }
    pl->n = n;
    pl->nnzb = nnzb;
    pl->max_width = width;
    /* stored layout: block rows in schedule order (renumber) or as they are */
    if (renumber) {
        /* pend = inclusive prefix sum of the row lengths in schedule order,
         * pbeg the exclusive one */
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int p = 0; p < n; p++) {
            int i = lv->rows[p];
            pl->pend[p] = M->rowptr[i + 1] - M->rowptr[i];
        }
        bsr_scan_par(pl->pend, n);   /* the total is nnzb */
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int p = 0; p < n; p++) pl->pbeg[p] = p ? pl->pend[p - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int p = 0; p < n; p++) {
            int i = lv->rows[p], q = pl->pbeg[p];
            for (int a = M->rowptr[i]; a < M->rowptr[i + 1]; a++, q++) {
                pl->map[q] = a;
                pl->colind[q] = qpos ? qpos[M->colind[a]] : M->colind[a];
            }
        }
    } else {
        bsr_memcpy_par(pl->colind, M->colind, (size_t)nnzb * sizeof(int));
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int p = 0; p < n; p++) {
            int i = lv->rows[p];
            pl->pbeg[p] = M->rowptr[i];
            pl->pend[p] = M->rowptr[i + 1];
        }
    }
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int p = 0; p < n; p++) {
        int i = qpos ? qpos[lv->rows[p]] : lv->rows[p];
        pl->rows[p] = i;
        pl->rstart[i] = pl->pbeg[p];
        pl->rend[i] = pl->pend[p];
    }
    return BSR_OK;
}

bsr_status bsr_trsv_tree_plan(const bsr_matrix *M, int upper, const bsr_ordering *ord, int *ntl,
                              int **tl_ptr, int **ranges, int *nranges, int *tree_ok)
{
    const int n = M->nbrows;
    const bsr_tree_node *nodes = (ord && ord->nnodes > 0) ? ord->nodes : NULL;
    const int nn = nodes ? ord->nnodes : 1;
    int maxl = 0;
    for (int v = 0; nodes && v < nn; v++) maxl = nodes[v].level > maxl ? nodes[v].level : maxl;
    *ntl = maxl + 1;
    *nranges = nn;
    *tl_ptr = bsr_calloc((size_t)*ntl + 1, sizeof(int), "tree level pointers");
    *ranges = bsr_malloc(2 * (size_t)nn * sizeof(int), "tree node ranges");
    int *owner = nodes ? bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "row owners") : NULL;
    int *fill = bsr_calloc((size_t)*ntl, sizeof(int), "tree fill");
    if (!*tl_ptr || !*ranges || !fill || (nodes && !owner)) {
        free(owner); free(fill); free(*tl_ptr); free(*ranges);
        *tl_ptr = *ranges = NULL;
        return BSR_ERR_NOMEM;
    }
    bsr_status s = BSR_OK;
    *tree_ok = 1;
    if (!nodes) {
        (*ranges)[0] = 0;
        (*ranges)[1] = n;
        (*tl_ptr)[1] = 1;
    } else {
        int *tp = *tl_ptr, *rg = *ranges;
        for (int v = 0; v < nn; v++) tp[nodes[v].level + 1]++;
        for (int l = 0; l < *ntl; l++) tp[l + 1] += tp[l];
#pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int i = 0; i < n; i++) owner[i] = -1;
        for (int v = 0; v < nn && s == BSR_OK; v++) {
            const bsr_tree_node *d = &nodes[v];
            if (d->first < 0 || d->sep_first < d->first || d->last < d->sep_first || d->last > n) {
                s = bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: tree node %d has a bad range [%d,%d,%d)", v, d->first,
                              d->sep_first, d->last);
                break;
            }
            int q = tp[d->level] + fill[d->level]++;
            rg[2 * q] = d->sep_first;
            rg[2 * q + 1] = d->last;
            for (int i = d->sep_first; i < d->last; i++) owner[i] = v;
        }
        int orphan = n;
#pragma omp parallel for schedule(static) reduction(min : orphan) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int i = 0; i < n; i++)
            if (owner[i] < 0 && i < orphan) orphan = i;
        if (s == BSR_OK && orphan < n) s = bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: row %d belongs to no tree node", orphan);
        if (s == BSR_OK) {
            /* L: a row reads only rows of its node's subtree; U: only rows of
             * its node or of its ancestors */
            int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok) num_threads(bsr_team(n, BSR_ROW_GRAIN))
            for (int i = 0; i < n; i++) {
                int v = owner[i];
                for (int p = M->rowptr[i]; ok && p < M->rowptr[i + 1]; p++) {
                    int c = M->colind[p];
                    if (c == i) continue;
                    if (!upper) {
                        if (c < nodes[v].first) ok = 0;
                    } else {
                        int u = v;
                        while (u >= 0 && c >= nodes[u].last) u = nodes[u].parent;
                        if (u < 0 || c < nodes[u].sep_first) ok = 0;
                    }
                }
            }
            *tree_ok = ok;
        }
    }
    free(owner);
    free(fill);
    if (s != BSR_OK) {
        free(*tl_ptr); free(*ranges);
        *tl_ptr = *ranges = NULL;
    }
    return s;
}
