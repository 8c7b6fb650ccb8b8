/* SPDX-License-Identifier: BSD-3-Clause */
/* The frozen pattern of a threshold factorization (see ilu_impl.h): built
 * from the rows of the setup's factorization, then kept, so that refactor
 * (CPU: ilu_row with F->use_fz; device: kernels/ilu/ilu0_gpu.cu) factors new
 * values into the same L, U (and ILU2's R, W) and every schedule and device
 * copy stays valid. */
#include "ilu_impl.h"
#include <limits.h>
#include <string.h>

void ilu_pattern_free(ilu_pattern *P)
{
    if (!P) return;
    free(P->lp); free(P->lc); free(P->up); free(P->uc); free(P->lk); free(P->uk);
    free(P->lmap); free(P->umap);
    if (P->lv) bsr_levels_free(P->lv);
    free(P);
}

/* Merge the ascending lists a (class 0), r (class 1) and x (class 2) into
 * col/cls; where the i-th entry of a lands goes to amap[i] (when amap is
 * set), as base + its index in the merged row. */
static void merge_row(const int *a, int na, const int *r, int nr, const int *x, int nx, int *col,
                      unsigned char *cls, int *amap, int base)
{
    int i = 0, j = 0, h = 0, t = 0;
    while (i < na || j < nr || h < nx) {
        const int va = i < na ? a[i] : INT_MAX, vr = j < nr ? r[j] : INT_MAX, vx = h < nx ? x[h] : INT_MAX;
        if (va <= vr && va <= vx) {
            if (amap) amap[i] = base + t;
            col[t] = a[i++]; cls[t++] = 0;
        } else if (vr <= vx) {
            col[t] = r[j++]; cls[t++] = 1;
        } else {
            col[t] = x[h++]; cls[t++] = 2;
        }
    }
}

/* Row k of the pattern: lower = L + R + the capped-out L blocks, upper = the
 * pivot, then U + W. */
static void pattern_row(ilu_pattern *P, const ilu_row_t *rk, int k, const int *l0, const int *u0)
{
    const int lb = P->lp[k], ub = P->up[k];
    merge_row(rk->lcol, rk->nl, rk->rcol, rk->nr, rk->xcol, rk->nx, P->lc + lb, P->lk + lb,
              P->lmap ? P->lmap + l0[k] : NULL, lb);
    P->uc[ub] = k;   /* the pivot: always first order */
    P->uk[ub] = 0;
    if (P->umap) P->umap[u0[k]] = ub;
    merge_row(rk->ucol + 1, rk->nu - 1, rk->ucol + rk->nu, rk->nw, NULL, 0, P->uc + ub + 1, P->uk + ub + 1,
              P->umap ? P->umap + u0[k] + 1 : NULL, ub + 1);
}

/* The lower pattern of P as a matrix view (no values), for its level schedule. */
bsr_matrix ilu_pattern_lower(const ilu_pattern *P, int b)
{
    bsr_matrix view = {0};
    view.nbrows = view.nbcols = P->n;
    view.b = b;
    view.nnzb = (int)P->nlo;
    view.prec = BSR_DOUBLE;
    view.rowptr = P->lp;
    view.colind = P->lc;
    return view;
}

bsr_status ilu_pattern_build(bsr_ilu *F)
{
    ilu_pattern_free(F->fz);
    F->fz = NULL;
    const int n = F->n;
    ilu_pattern *P = bsr_calloc(1, sizeof *P, "ILU pattern");
    if (!P) return BSR_ERR_NOMEM;
    P->n = n;
    P->lp = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU pattern");
    P->up = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU pattern");
    int *l0 = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU pattern");   /* first L / U block of each row */
    int *u0 = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU pattern");
    bsr_status s = P->lp && P->up && l0 && u0 ? BSR_OK : BSR_ERR_NOMEM;
    int64_t nsec = 0;
    if (!s) {
        P->lp[0] = P->up[0] = l0[0] = u0[0] = 0;
        #pragma omp parallel for schedule(static) reduction(+ : nsec) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int k = 0; k < n; k++) {
            const ilu_row_t *r = &F->rows[k];
            P->lp[k + 1] = r->nl + r->nr + r->nx;
            P->up[k + 1] = r->nu + r->nw;
            l0[k + 1] = r->nl;
            u0[k + 1] = r->nu;
            nsec += r->nr + r->nw + r->nx;
        }
        P->nlo = bsr_scan_par(P->lp + 1, n);
        P->nup = bsr_scan_par(P->up + 1, n);
        bsr_scan_par(l0 + 1, n);
        bsr_scan_par(u0 + 1, n);
        P->nsec = nsec;
        if (P->nlo > INT_MAX || P->nup > INT_MAX)
            s = bsr_error(BSR_ERR_UNSUPPORTED, "ILU pattern: %lld + %lld blocks (> INT_MAX)", (long long)P->nlo,
                          (long long)P->nup);
    }
    if (!s) {
        P->lc = bsr_malloc(sizeof(int) * ((size_t)P->nlo + 1), "ILU pattern");
        P->uc = bsr_malloc(sizeof(int) * ((size_t)P->nup + 1), "ILU pattern");
        P->lk = bsr_malloc((size_t)P->nlo + 1, "ILU pattern");
        P->uk = bsr_malloc((size_t)P->nup + 1, "ILU pattern");
        if (nsec) {   /* without a second-order part (or capped-out L blocks) L, U are the patterns themselves */
            P->lmap = bsr_malloc(sizeof(int) * ((size_t)l0[n] + 1), "ILU pattern");
            P->umap = bsr_malloc(sizeof(int) * ((size_t)u0[n] + 1), "ILU pattern");
        }
        if (!P->lc || !P->uc || !P->lk || !P->uk || (nsec && (!P->lmap || !P->umap))) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
        for (int k = 0; k < n; k++) pattern_row(P, &F->rows[k], k, l0, u0);
    }
    free(l0); free(u0);
    if (s) { ilu_pattern_free(P); return s; }
    F->fz = P;
    return BSR_OK;
}
