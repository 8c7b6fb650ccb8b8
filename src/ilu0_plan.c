/* Host symbolic work of the device ILU(0) (see ilu0_plan.h): per-row loops
 * in parallel, two-pass where the output is a list (count, prefix sum,
 * fill), so that the first touch of the big arrays is spread over the
 * threads; the results do not depend on the number of threads. */
#include "ilu0_plan.h"
#include "ilu_impl.h"
#include <limits.h>

/* Destinations of permuted row k of A; 0 when a block is outside the patterns. */
static int map_row(const bsr_ilu *F, int k, int *adst, int *adiag, int *diagw)
{
    const bsr_matrix *L = F->L, *U = F->U;
    const int nL = L->nnzb;
    int pl = L->rowptr[k], pu = U->rowptr[k] + 1;
    adiag[k] = -1;
    diagw[k] = nL + U->rowptr[k];
    for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
        int j = F->ac[p];
        if (j < k) {
            if (pl >= L->rowptr[k + 1] || L->colind[pl] != j) return 0;
            adst[p] = pl++;
        } else if (j == k) {
            adst[p] = diagw[k];
            adiag[k] = p;
        } else {
            if (pu >= U->rowptr[k + 1] || U->colind[pu] != j) return 0;
            adst[p] = nL + pu++;
        }
    }
    return 1;
}

bsr_status bsr_ilu0_plan_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw)
{
    const int n = F->n;
    int bad = n;
    #pragma omp parallel for schedule(static) reduction(min : bad) if (n >= BSR_PAR_ROWS)
    for (int k = 0; k < n; k++)
        if (!map_row(F, k, adst, adiag, diagw) && k < bad) bad = k;
    if (bad < n)
        return bsr_error(BSR_ERR_INTERNAL, "bsr_gpu_ilu0_create: permuted row %d of A does not match the ILU(0) pattern", bad);
    return BSR_OK;
}

/* The update list of L block l (row i, column k) into out (pairs; NULL: count
 * only); returns its length.  Row i's pattern is L's row then U's row (the
 * pivot first), columns ascending, and U's row k ascends too: the columns j of
 * U_kj found in row i come from one merge that starts after block l. */
static int updates_of(const bsr_matrix *L, const bsr_matrix *U, int i, int l, int *out)
{
    const int nL = L->nnzb, k = L->colind[l];
    int len = 1, a = l + 1, a1 = L->rowptr[i + 1], u = U->rowptr[i], u1 = U->rowptr[i + 1];
    if (out) { out[0] = nL + U->rowptr[k]; out[1] = -1; }
    for (int q = U->rowptr[k] + 1; q < U->rowptr[k + 1]; q++) {
        int j = U->colind[q], t = -1;
        while (a < a1 && L->colind[a] < j) a++;
        if (a < a1) {   /* j below row i's diagonal, or absent */
            if (L->colind[a] == j) t = a;
        } else {
            while (u < u1 && U->colind[u] < j) u++;
            if (u < u1 && U->colind[u] == j) t = nL + u;
        }
        if (t < 0) continue;
        if (out) { out[2 * len] = nL + q; out[2 * len + 1] = t; }
        len++;
    }
    return len;
}

bsr_status bsr_ilu0_plan_updates(const bsr_ilu *F, int **pptr, int **plist, int64_t *pn)
{
    const bsr_matrix *L = F->L, *U = F->U;
    const int n = F->n, nL = L->nnzb;
    *pptr = NULL; *plist = NULL; *pn = 0;
    int *ptr = bsr_malloc(((size_t)nL + 1) * sizeof(int), "ILU(0) update lists");
    if (!ptr) return BSR_ERR_NOMEM;
    ptr[0] = 0;
    #pragma omp parallel for schedule(static) if (n >= BSR_PAR_ROWS)
    for (int i = 0; i < n; i++)
        for (int l = L->rowptr[i]; l < L->rowptr[i + 1]; l++) ptr[l + 1] = updates_of(L, U, i, l, NULL);
    int64_t len = bsr_scan_par(ptr + 1, nL);
    if (len > INT_MAX) { free(ptr); return bsr_error(BSR_ERR_UNSUPPORTED, "ILU(0) update lists: more than INT_MAX entries"); }
    int *list = bsr_malloc(((size_t)len + 1) * 2 * sizeof(int), "ILU(0) update lists");
    if (!list) { free(ptr); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) if (n >= BSR_PAR_ROWS)
    for (int i = 0; i < n; i++)
        for (int l = L->rowptr[i]; l < L->rowptr[i + 1]; l++) updates_of(L, U, i, l, list + 2 * (size_t)ptr[l]);
    *pptr = ptr; *plist = list; *pn = len;
    return BSR_OK;
}
