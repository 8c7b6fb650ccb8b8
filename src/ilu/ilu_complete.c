/* SPDX-License-Identifier: BSD-3-Clause */
/* The pattern of a threshold factorization that keeps every block, found
 * symbolically.  ILUT/ILU2 with tau1 = 0 and no cap keep every block their
 * rows form (a block is first-order when its norm is >= 0), so the pattern
 * they choose is the complete LU's fill of P A P^T: the rows' merges find it
 * in O(work) (the block products themselves), the elimination tree in
 * O(|L|).  For a structurally symmetric P A P^T, row i of L is the union of
 * the tree paths from A's lower columns of row i up to i (Liu's row
 * subtree) and U = L^T, the same pattern the rows would choose; the values
 * are then factored into it as into any frozen pattern (host: ilu_factor's
 * frozen rows; device: kernels/ilu/ilu0_gpu.cu).  A pattern that is not
 * symmetric is left to the rows. */
#include "ilu_impl.h"
#include "order_ahead.h"
#include <limits.h>
#include <omp.h>
#include <string.h>

/* Tests only: the rows choose the pattern even where it is complete. */
static int complete_off;
void bsr_ilu_test_complete_off(int off) { complete_off = off; }

int bsr_ilu_keeps_all(const bsr_ilu_options *o)
{
    return o->kind != BSR_ILU0 && o->tau1 == 0 && bsr_ilu_tau2(o->kind, o->tau1, o->tau2) == 0 &&
           o->cap == BSR_ILU_CAP_NONE && o->fill <= 0;
}

/* Nonzero when F's setup keeps every block and P A P^T (ap, ac) is
 * structurally symmetric. */
int ilu_complete_ok(const bsr_ilu *F)
{
    return !complete_off && F->mode == 1 && bsr_ilu_keeps_all(&F->opt) &&
           bsr_pattern_symmetric(F->n, F->ap, F->ac);
}

double bsr_ilu_complete_line(const bsr_ilu_options *o, int b)
{
    return bsr_ilu_keeps_all(o) && o->max_work > 0 ? BSR_SEP_SLACK * o->max_work / ((double)b * b * b) : 0;
}

bsr_status ilu_complete_bound(const bsr_ilu *F, const bsr_matrix *A, const bsr_order_ahead *ahead)
{
    const double line = bsr_ilu_complete_line(&F->opt, F->b);
    if (!(line > 0) || !bsr_pattern_symmetric(A->nbrows, A->rowptr, A->colind)) return BSR_OK;
    const double bbb = (double)F->b * F->b * F->b;
    double est;
    int sep;
    if (!bsr_order_ahead_estimate(ahead, line, A->nbrows, &est, &sep))   /* not made beside the probe */
        BSR_TRY(bsr_sep_products(A, line, &est, &sep));
    if (est <= line) return BSR_OK;
    return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: the complete factor would pass its work bound, %.3g block "
                     "multiply-adds (bsr_ilu_options.max_work, the solver's option work; a product of two blocks "
                     "is b^3 = %d): the top levels of a dissection alone (its top separator %d block rows) take "
                     "an estimated %.3g or more, over %.0fx the bound (neither ordered nor factored)",
                     F->opt.max_work, F->b * F->b * F->b, sep, est * bbb, BSR_SEP_SLACK);
}

/* The elimination tree of the symmetric pattern (ap, ac): parent[i] (-1: a
 * root), by path-compressed ancestors (CSparse's cs_etree). */
static void etree(const bsr_ilu *F, int *parent, int *anc)
{
    for (int i = 0; i < F->n; i++) {
        parent[i] = anc[i] = -1;
        for (int p = F->ap[i]; p < F->ap[i + 1] && F->ac[p] < i; p++)
            for (int j = F->ac[p], next; j != -1 && j < i; j = next) {
                next = anc[j];
                anc[j] = i;
                if (next == -1) parent[j] = i;
            }
    }
}

/* Row i of L: the tree paths from A's lower columns up to i (marked with
 * i in mark), into col when given (unsorted); returns their count. */
static int row_reach(const bsr_ilu *F, const int *parent, int i, int *mark, int *col)
{
    int m = 0;
    mark[i] = i;
    for (int p = F->ap[i]; p < F->ap[i + 1] && F->ac[p] < i; p++)
        for (int j = F->ac[p]; mark[j] != i; j = parent[j]) {
            mark[j] = i;
            if (col) col[m] = j;
            m++;
        }
    return m;
}

/* a[0..m) ascending (distinct values below 256^bytes), tmp [m] scratch:
 * insertion for short rows, else a least-significant-digit radix sort a
 * byte a pass (a complete LU's rows hold hundreds to thousands of
 * columns; qsort's comparisons took most of the pattern's time). */
static void sort_cols(int *a, int m, int *tmp, int bytes)
{
    if (m < 48) {
        for (int x = 1; x < m; x++) {
            const int v = a[x];
            int y = x - 1;
            for (; y >= 0 && a[y] > v; y--) a[y + 1] = a[y];
            a[y + 1] = v;
        }
        return;
    }
    int *src = a, *dst = tmp;
    for (int p = 0; p < bytes; p++) {
        int cnt[257] = {0};
        const int sh = 8 * p;
        for (int x = 0; x < m; x++) cnt[((unsigned)src[x] >> sh & 255u) + 1]++;
        for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
        for (int x = 0; x < m; x++) dst[cnt[(unsigned)src[x] >> sh & 255u]++] = src[x];
        int *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, sizeof(int) * (size_t)m);
}

/* F->rows of the complete pattern: L's rows by the reach (counted, then
 * listed and sorted, rows in parallel), U's as L's columns with the pivot
 * first (rows in parallel too, in contiguous chunks of L's blocks, so each
 * column's rows stay ascending); the rows' block products counted against
 * F->nprod_max. */
bsr_status ilu_rows_complete(bsr_ilu *F)
{
    const int n = F->n, nt = bsr_team(n, BSR_ROW_GRAIN);
    int bytes = 1;
    while (bytes < 4 && (unsigned)n > 1u << (8 * bytes)) bytes++;
    int *parent = bsr_malloc(sizeof(int) * ((size_t)n + 1), "complete pattern");
    int *mark = bsr_malloc(sizeof(int) * ((size_t)n + 1) * (size_t)nt, "complete pattern"), *sorted = NULL;
    int64_t *lp = bsr_malloc(sizeof(int64_t) * ((size_t)n + 1), "complete pattern");
    int64_t *up = bsr_malloc(sizeof(int64_t) * ((size_t)n + 1), "complete pattern");
    int *cut = bsr_malloc(sizeof(int) * ((size_t)nt + 1), "complete pattern");
    bsr_status s = parent && mark && lp && up && cut ? BSR_OK : BSR_ERR_NOMEM;
    if (s) goto done;
    etree(F, parent, mark);
    /* the rows' lengths: L's by the reach, U's (the pivot first) by L's columns */
    lp[0] = 0;
    #pragma omp parallel num_threads(nt)
    {
        int *mk = mark + (size_t)omp_get_thread_num() * ((size_t)n + 1);
        for (int i = 0; i < n; i++) mk[i] = -1;
        #pragma omp for schedule(dynamic, 256)
        for (int i = 0; i < n; i++) lp[i + 1] = row_reach(F, parent, i, mk, NULL);
    }
    int64_t maxl = 0;
    for (int i = 0; i < n; i++) {
        if (lp[i + 1] > maxl) maxl = lp[i + 1];
        lp[i + 1] += lp[i];
    }
    const int64_t nl = lp[n];
    if (nl > INT_MAX / 2 - n) {
        s = bsr_error(BSR_ERR_UNSUPPORTED, "ILU: the complete pattern has %lld blocks in L (> INT_MAX / 2)",
                      (long long)nl);
        goto done;
    }
    free(F->rowbuf);
    F->rowbuf = bsr_malloc(sizeof(int) * ((size_t)(2 * nl + n) + 1), "complete pattern");
    if (!F->rows) F->rows = bsr_calloc((size_t)n + 1, sizeof(ilu_row_t), "ILU rows");
    sorted = bsr_malloc(sizeof(int) * ((size_t)maxl + 1) * (size_t)nt, "complete pattern");
    if (!F->rowbuf || !F->rows || !sorted) { s = BSR_ERR_NOMEM; goto done; }
    int *lc = F->rowbuf, *uc = F->rowbuf + nl;
    #pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        int *mk = mark + (size_t)t * ((size_t)n + 1), *tmp = sorted + (size_t)t * ((size_t)maxl + 1);
        for (int i = 0; i < n; i++) mk[i] = -1;
        #pragma omp for schedule(dynamic, 256)
        for (int i = 0; i < n; i++) {
            int *c = lc + lp[i];
            sort_cols(c, row_reach(F, parent, i, mk, c), tmp, bytes);
        }
    }
    /* U = L^T with the pivot first.  Chunk t (rows cut[t] .. cut[t+1], about
     * nl / nt blocks) counts its blocks of each column k in cnt_t[k], which
     * then becomes where its rows go in U's row k (after the pivot and the
     * earlier chunks' rows), and fills them in row order */
    cut[0] = 0;
    for (int t = 1, i = 0; t <= nt; t++) {
        while (i < n && lp[i] < nl / nt * t) i++;
        cut[t] = t == nt ? n : i;
    }
    #pragma omp parallel num_threads(nt)
    {
        #pragma omp for schedule(static)
        for (int t = 0; t < nt; t++) {
            int *cnt = mark + (size_t)t * ((size_t)n + 1);
            for (int k = 0; k < n; k++) cnt[k] = 0;
            for (int64_t q = lp[cut[t]]; q < lp[cut[t + 1]]; q++) cnt[lc[q]]++;
        }
        #pragma omp single
        {
            up[0] = 0;
            for (int k = 0; k < n; k++) {
                int64_t at = up[k] + 1;
                for (int h = 0; h < nt; h++) {
                    int *c = mark + (size_t)h * ((size_t)n + 1) + k;
                    const int m = *c;
                    *c = (int)at;
                    at += m;
                }
                up[k + 1] = at;
                uc[up[k]] = k;
            }
        }
        #pragma omp for schedule(static)
        for (int t = 0; t < nt; t++) {
            int *cnt = mark + (size_t)t * ((size_t)n + 1);
            for (int i = cut[t]; i < cut[t + 1]; i++)
                for (int64_t q = lp[i]; q < lp[i + 1]; q++) uc[cnt[lc[q]]++] = i;
        }
    }
    /* the rows' block products, as they count them: for each L block (i, k)
     * one a block of row k of U past its pivot */
    int64_t work = 0;
    #pragma omp parallel for schedule(static) reduction(+ : work) num_threads(nt)
    for (int i = 0; i < n; i++)
        for (int64_t q = lp[i]; q < lp[i + 1]; q++) work += up[lc[q] + 1] - up[lc[q]] - 1;
    for (int k = 0; k < n; k++) {
        ilu_row_t *r = &F->rows[k];
        memset(r, 0, sizeof *r);
        r->nl = (int)(lp[k + 1] - lp[k]);
        r->lcol = lc + lp[k];
        r->nu = (int)(up[k + 1] - up[k]);
        r->ucol = uc + up[k];
    }
    F->nprod = work;
    F->st.work = (double)work * F->b * F->b * F->b;
    F->st.dropped = 0;
    F->st.second_order_total = 0;
    F->st.second_order_peak = 0;
    if (F->nprod_max > 0 && work > F->nprod_max) {
        char m[256];
        ilu_work_bound_msg(F, m, sizeof m);
        s = bsr_error(BSR_ERR_UNSUPPORTED, "%s", m);
    }
done:
    free(parent); free(mark); free(sorted); free(lp); free(up); free(cut);
    return s;
}
