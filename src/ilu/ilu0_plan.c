/* SPDX-License-Identifier: BSD-3-Clause */
/* Host reference of the device ILU(0)'s plan (see ilu0_plan.h): the shared
 * per-row functions in OpenMP loops, two-pass where the output is a list
 * (count, prefix sum, fill); the results do not depend on the threads. */
#include "ilu0_plan.h"
#include "ilu_impl.h"
#include <string.h>

bsr_status bsr_ilu_fpattern(const bsr_ilu *F, bsr_ilu_fpat *P)
{
    memset(P, 0, sizeof *P);
    P->n = F->n;
    if (F->mode == 0 && F->L && F->U && F->lvL) {
        P->Lp = F->L->rowptr; P->Lc = F->L->colind; P->nL = F->L->nnzb;
        P->Up = F->U->rowptr; P->Uc = F->U->colind; P->nU = F->U->nnzb;
        P->lv = F->lvL;
        return BSR_OK;
    }
    const ilu_pattern *z = F->fz;
    if (F->mode != 1 || !z)
        return bsr_error(BSR_ERR_ARG, "ILU: F has neither ILU(0)'s host patterns nor a frozen threshold pattern");
    P->Lp = z->lp; P->Lc = z->lc; P->nL = (int)z->nlo; P->lk = z->lk;
    P->Up = z->up; P->Uc = z->uc; P->nU = (int)z->nup; P->uk = z->uk;
    P->lmap = z->lmap; P->umap = z->umap;
    P->lv = z->lv;
    P->frozen = 1;
    return BSR_OK;
}

bsr_status bsr_ilu0_plan_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw)
{
    const int n = F->n;
    int bad = n;
    bsr_ilu_fpat P;
    BSR_TRY(bsr_ilu_fpattern(F, &P));
    #pragma omp parallel for schedule(static) reduction(min : bad) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++)
        if (!bsr_ilu0_map_row(k, F->ap, F->ac, P.Lp, P.Lc, P.Up, P.Uc, P.nL, P.frozen, adst, adiag, diagw) && k < bad)
            bad = k;
    if (bad < n)
        return bsr_error(BSR_ERR_INTERNAL, "bsr_gpu_ilu0_create: permuted row %d of A does not match the ILU(0) pattern", bad);
    return BSR_OK;
}

bsr_status bsr_ilu0_plan_updates(const bsr_ilu *F, int64_t **pptr, int **plist, int64_t *pn)
{
    *pptr = NULL; *plist = NULL; *pn = 0;
    bsr_ilu_fpat P;
    BSR_TRY(bsr_ilu_fpattern(F, &P));
    const int n = F->n, nL = P.nL;
    int64_t *ptr = bsr_malloc(((size_t)nL + 1) * sizeof(int64_t), "ILU(0) update lists");
    if (!ptr) return BSR_ERR_NOMEM;
    ptr[0] = 0;
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++)
        for (int l = P.Lp[i]; l < P.Lp[i + 1]; l++)
            ptr[l + 1] = bsr_ilu0_updates_of(i, l, P.Lp, P.Lc, P.Up, P.Uc, P.lk, P.uk, nL, NULL);
    for (int l = 0; l < nL; l++) ptr[l + 1] += ptr[l];   /* a reference: serial is fast enough */
    const int64_t len = ptr[nL];
    int *list = bsr_malloc(((size_t)len + 1) * 2 * sizeof(int), "ILU(0) update lists");
    if (!list) { free(ptr); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++)
        for (int l = P.Lp[i]; l < P.Lp[i + 1]; l++)
            bsr_ilu0_updates_of(i, l, P.Lp, P.Lc, P.Up, P.Uc, P.lk, P.uk, nL, list + 2 * (size_t)ptr[l]);
    *pptr = ptr; *plist = list; *pn = len;
    return BSR_OK;
}
