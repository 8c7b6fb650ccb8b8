/* Host reference of the device ILU(0)'s plan (see ilu0_plan.h): the shared
 * per-row functions in OpenMP loops, two-pass where the output is a list
 * (count, prefix sum, fill); the results do not depend on the threads. */
#include "ilu0_plan.h"
#include "ilu_impl.h"
#include <limits.h>

bsr_status bsr_ilu0_plan_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw)
{
    const int n = F->n;
    int bad = n;
    #pragma omp parallel for schedule(static) reduction(min : bad) if (n >= BSR_PAR_ROWS)
    for (int k = 0; k < n; k++)
        if (!bsr_ilu0_map_row(k, F->ap, F->ac, F->L->rowptr, F->L->colind, F->U->rowptr, F->U->colind,
                              F->L->nnzb, adst, adiag, diagw) && k < bad)
            bad = k;
    if (bad < n)
        return bsr_error(BSR_ERR_INTERNAL, "bsr_gpu_ilu0_create: permuted row %d of A does not match the ILU(0) pattern", bad);
    return BSR_OK;
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
        for (int l = L->rowptr[i]; l < L->rowptr[i + 1]; l++)
            ptr[l + 1] = bsr_ilu0_updates_of(i, l, L->rowptr, L->colind, U->rowptr, U->colind, nL, NULL);
    int64_t len = bsr_scan_par(ptr + 1, nL);
    if (len > INT_MAX) { free(ptr); return bsr_error(BSR_ERR_UNSUPPORTED, "ILU(0) update lists: more than INT_MAX entries"); }
    int *list = bsr_malloc(((size_t)len + 1) * 2 * sizeof(int), "ILU(0) update lists");
    if (!list) { free(ptr); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) if (n >= BSR_PAR_ROWS)
    for (int i = 0; i < n; i++)
        for (int l = L->rowptr[i]; l < L->rowptr[i + 1]; l++)
            bsr_ilu0_updates_of(i, l, L->rowptr, L->colind, U->rowptr, U->colind, nL, list + 2 * (size_t)ptr[l]);
    *pptr = ptr; *plist = list; *pn = len;
    return BSR_OK;
}
