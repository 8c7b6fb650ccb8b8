/* SPDX-License-Identifier: BSD-3-Clause */
/* The frozen pattern of a threshold factorization (see ilu_impl.h): built
 * from the rows of the setup's factorization, then kept, so that refactor
 * (CPU: ilu_row with F->use_fz; device: kernels/ilu/ilu0_gpu.cu) factors new
 * values into the same L, U (and ILU2's R, W) and every schedule and device
 * copy stays valid. */
#include "ilu_impl.h"
#include "ilu_pattern_row.h"
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

/* Row k of the pattern: lower = L + R + the capped-out L blocks, upper = the
 * pivot, then U + W. */
static void pattern_row(ilu_pattern *P, const ilu_row_t *rk, int k, const int *l0, const int *u0)
{
    ilu_pattern_row_fill(k, rk->lcol, rk->nl, rk->rcol, rk->nr, rk->xcol, rk->nx, rk->ucol, rk->nu, rk->ucol + rk->nu,
                         rk->nw, P->lp[k], P->up[k], P->lc, P->lk, P->uc, P->uk, P->lmap ? P->lmap + l0[k] : NULL,
                         P->umap ? P->umap + u0[k] : NULL);
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
