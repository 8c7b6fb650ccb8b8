/* SPDX-License-Identifier: BSD-3-Clause */
/* Anchor for `bench ilu`: the complete sparse LU of the same matrix by
 * UMFPACK (its own fill-reducing ordering), for its fill and time. */
#include "ilu_impl.h"
#include <omp.h>
#include <umfpack.h>

/* Complete LU of A (scalar, double) by UMFPACK: *fill = (nnz(L) + nnz(U) -
 * n) / nnz(A), *seconds = symbolic + numeric time.  The CSR arrays are
 * given as CSC, i.e. A^T is factored (explicit zeros inside blocks dropped):
 * the same fill as A up to UMFPACK's pivot choices. */
bsr_status ilu_umfpack_lu(const bsr_matrix *A, double *fill, double *seconds)
{
    bsr_csr C;
    BSR_TRY(bsr_to_csr(A, 0, &C));
    int64_t n = C.nrows, nz = C.nnz;
    SuiteSparse_long *Ap = bsr_malloc(sizeof(SuiteSparse_long) * (size_t)(n + 1), "UMFPACK anchor");
    SuiteSparse_long *Ai = bsr_malloc(sizeof(SuiteSparse_long) * (size_t)(nz + 1), "UMFPACK anchor");
    if (!Ap || !Ai) { free(Ap); free(Ai); bsr_csr_free(&C); return BSR_ERR_NOMEM; }
    for (int64_t i = 0; i <= n; i++) Ap[i] = (SuiteSparse_long)C.rowptr[i];
    for (int64_t p = 0; p < nz; p++) Ai[p] = C.colind[p];
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    void *Sym = NULL, *Num = NULL;
    umfpack_dl_defaults(control);
    double t0 = bsr_now();
    SuiteSparse_long st = umfpack_dl_symbolic(n, n, Ap, Ai, C.val, &Sym, control, info);
    if (st == UMFPACK_OK) st = umfpack_dl_numeric(Ap, Ai, C.val, Sym, &Num, control, info);
    *seconds = bsr_now() - t0;
    bsr_status s = BSR_OK;
    if (st != UMFPACK_OK && st != UMFPACK_WARNING_singular_matrix)
        s = bsr_error(BSR_ERR_INTERNAL, "UMFPACK anchor: status %ld", (long)st);
    else {
        SuiteSparse_long lnz, unz, nr, nc, nzud;
        umfpack_dl_get_lunz(&lnz, &unz, &nr, &nc, &nzud, Num);
        *fill = nz ? (double)(lnz + unz - n) / (double)nz : 0.0;
    }
    if (Sym) umfpack_dl_free_symbolic(&Sym);
    if (Num) umfpack_dl_free_numeric(&Num);
    free(Ap); free(Ai);
    bsr_csr_free(&C);
    return s;
}
