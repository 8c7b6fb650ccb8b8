/* SPDX-License-Identifier: BSD-3-Clause */
/* The rows of a threshold factorization made on the device: F->rows pointing
 * into one buffer, filled from the columns the device published (its upper
 * slots and its pool of lower columns), in parallel over rows. */
#include "ilu_impl.h"
#include <limits.h>
#include <string.h>

bsr_status ilu_rows_from_dev(bsr_ilu *F, const ilu_dev_cols *c)
{
    const int n = F->n;
    int *len = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ILU rows");   /* row k's columns start at len[k] */
    if (!len) return BSR_ERR_NOMEM;
    len[0] = 0;
    #pragma omp parallel for schedule(static) if (n >= BSR_PAR_ROWS) num_threads(bsr_team_size())
    for (int k = 0; k < n; k++)
        len[k + 1] = c->lcnt[3 * (size_t)k] + c->lcnt[3 * (size_t)k + 1] + c->lcnt[3 * (size_t)k + 2] +
                     c->ucnt[2 * (size_t)k] + c->ucnt[2 * (size_t)k + 1];
    const int64_t tot = bsr_scan_par(len + 1, n);
    bsr_status s = BSR_OK;
    if (tot > INT_MAX) s = bsr_error(BSR_ERR_UNSUPPORTED, "ILU rows: %lld blocks (> INT_MAX)", (long long)tot);
    /* zeroed: on a failure below the rows own nothing for ilu_rows_free */
    if (!s && !F->rows && !(F->rows = bsr_calloc((size_t)n + 1, sizeof(ilu_row_t), "ILU rows")))
        s = BSR_ERR_NOMEM;
    if (!s) {
        free(F->rowbuf);
        if (!(F->rowbuf = bsr_malloc(sizeof(int) * ((size_t)tot + 1), "ILU rows"))) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        #pragma omp parallel for schedule(static) if (n >= BSR_PAR_ROWS) num_threads(bsr_team_size())
        for (int k = 0; k < n; k++) {
            ilu_row_t *r = &F->rows[k];
            int *col = F->rowbuf + len[k];
            memset(r, 0, sizeof *r);
            r->nl = c->lcnt[3 * (size_t)k]; r->nr = c->lcnt[3 * (size_t)k + 1]; r->nx = c->lcnt[3 * (size_t)k + 2];
            r->nu = c->ucnt[2 * (size_t)k]; r->nw = c->ucnt[2 * (size_t)k + 1];
            const int nlo = r->nl + r->nr + r->nx, nup = r->nu + r->nw;
            memcpy(col, c->lpool + c->loff[k], sizeof(int) * (size_t)nlo);
            r->lcol = col; r->rcol = col + r->nl; r->xcol = col + r->nl + r->nr;
            memcpy(col + nlo, c->ucol + c->uoff[k], sizeof(int) * (size_t)nup);
            r->ucol = col + nlo;
        }
    }
    free(len);
    return s;
}

/* Fill blocks of U and of W that row k's upper slot holds: its cap, no more
 * than the workspace can fill. */
static long long slot_fill(const bsr_ilu *F, int k)
{
    const long long P = ilu_row_cap(F, k), len = F->ap[k + 1] - F->ap[k];
    return P < len + 64 ? P : len + 64;
}

long long ilu_dev_slots(const bsr_ilu *F, long long *uoff, int *adiag)
{
    const int n = F->n;
    long long lcap = 0;
    uoff[0] = 0;
    #pragma omp parallel for schedule(static) reduction(+ : lcap) if (n >= BSR_PAR_ROWS) num_threads(bsr_team_size())
    for (int k = 0; k < n; k++) {
        int nau = 0, len = F->ap[k + 1] - F->ap[k];
        if (adiag) adiag[k] = -1;
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            nau += F->ac[p] > k;
            if (adiag && F->ac[p] == k) adiag[k] = p;
        }
        const long long P = slot_fill(F, k);
        uoff[k + 1] = 1 + nau + 2 * P;
        lcap += 2 * len + 8 * P + 16;
    }
    for (int k = 0; k < n; k++) uoff[k + 1] += uoff[k];
    return lcap;
}
