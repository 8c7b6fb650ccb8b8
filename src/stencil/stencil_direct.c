/* SPDX-License-Identifier: BSD-3-Clause */
/* Direct solve of a scalar (b = 1 or any b, via scalar CSR) system with
 * UMFPACK: the exact discrete solution the stencil tests compare against. */
#include "stencil_impl.h"
#include <umfpack.h>

/* x = A^{-1} rhs by UMFPACK (the exact discrete solution for tests). */
bsr_status stc_direct_solve(const bsr_matrix *A, const double *rhs, double *x)
{
    BSR_CHECK_ARG(A && rhs && x && A->nbrows == A->nbcols, "stc_direct_solve: NULL argument or non-square matrix");
    bsr_csr C;
    BSR_TRY(bsr_to_csr(A, 1, &C));
    int n = C.nrows, *Ap = bsr_malloc((size_t)(n + 1) * sizeof(int), "UMFPACK row pointers");
    if (!Ap) { bsr_csr_free(&C); return BSR_ERR_NOMEM; }
    if (C.nnz > INT32_MAX) { free(Ap); bsr_csr_free(&C); return bsr_error(BSR_ERR_UNSUPPORTED, "stc_direct_solve: too many nonzeros"); }
    for (int i = 0; i <= n; i++) Ap[i] = (int)C.rowptr[i];
    void *sym = NULL, *num = NULL;
    /* CSR of A is CSC of A^T: solve A^T^T x = b with UMFPACK_At */
    int st = umfpack_di_symbolic(n, n, Ap, C.colind, C.val, &sym, NULL, NULL);
    if (st == UMFPACK_OK) st = umfpack_di_numeric(Ap, C.colind, C.val, sym, &num, NULL, NULL);
    if (st == UMFPACK_OK) st = umfpack_di_solve(UMFPACK_At, Ap, C.colind, C.val, x, rhs, num, NULL, NULL);
    umfpack_di_free_symbolic(&sym);
    umfpack_di_free_numeric(&num);
    free(Ap);
    bsr_csr_free(&C);
    if (st == UMFPACK_WARNING_singular_matrix) return bsr_error(BSR_ERR_SINGULAR, "stc_direct_solve: UMFPACK: matrix is singular");
    if (st != UMFPACK_OK) return bsr_error(BSR_ERR_INTERNAL, "stc_direct_solve: UMFPACK status %d", st);
    return BSR_OK;
}
