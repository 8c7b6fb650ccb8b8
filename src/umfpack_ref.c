/* SPDX-License-Identifier: BSD-3-Clause */
/* UMFPACK reference solve: sparse LU of A (as scalar CSR, in double) by
 * SuiteSparse UMFPACK, then one solve per column.  CSR arrays are passed as
 * the CSC arrays of A^T and solved with UMFPACK_At, which avoids a transpose. */
#include "solver_impl.h"
#include <string.h>
#include <time.h>
#if __has_include(<suitesparse/umfpack.h>)
#include <suitesparse/umfpack.h>
#else
#include <umfpack.h>
#endif

/* UMFPACK status as text with the failing call's name. */
static bsr_status umf_fail(const char *call, long st)
{
    const char *why = st == UMFPACK_ERROR_out_of_memory ? "out of memory"
                      : st == UMFPACK_WARNING_singular_matrix ? "matrix is singular"
                      : st == UMFPACK_ERROR_invalid_matrix ? "invalid matrix" : "failed";
    return bsr_error(st == UMFPACK_WARNING_singular_matrix ? BSR_ERR_SINGULAR
                     : st == UMFPACK_ERROR_out_of_memory ? BSR_ERR_NOMEM : BSR_ERR_INTERNAL,
                     "UMFPACK %s: %s (status %ld)", call, why, st);
}

bsr_status bsr_umfpack_solve(const bsr_matrix *A, const bsr_multivec *B, bsr_multivec *X,
                             double *times)
{
    BSR_CHECK_ARG(A && B && X, "bsr_umfpack_solve: NULL argument");
    int64_t n = (int64_t)A->nbrows * A->b;
    if (A->nbrows != A->nbcols || B->n != n || X->n != n || B->k != X->k)
        return bsr_error(BSR_ERR_SIZE, "bsr_umfpack_solve: A is %lld x %lld, B %lld x %d, X %lld x %d",
                         (long long)n, (long long)A->nbcols * A->b, (long long)B->n, B->k,
                         (long long)X->n, X->k);
    double t0 = bsr_now();
    bsr_csr C;
    memset(&C, 0, sizeof C);
    BSR_TRY(bsr_to_csr(A, 1, &C));
    bsr_status s = BSR_OK;
    int k = B->k;
    SuiteSparse_long *Ap = NULL, *Ai = NULL;
    double *b = NULL, *x = NULL;
    void *Sym = NULL, *Num = NULL;
    Ap = bsr_malloc(sizeof *Ap * (size_t)(n + 1), "UMFPACK pointers");
    Ai = bsr_malloc(sizeof *Ai * (size_t)(C.nnz ? C.nnz : 1), "UMFPACK indices");
    b = bsr_malloc(sizeof(double) * (size_t)n * k, "UMFPACK rhs");
    x = bsr_malloc(sizeof(double) * (size_t)n * k, "UMFPACK solution");
    if (!Ap || !Ai || !b || !x) { s = BSR_ERR_NOMEM; goto done; }
    for (int64_t i = 0; i <= n; i++) Ap[i] = C.rowptr[i];
    for (int64_t e = 0; e < C.nnz; e++) Ai[e] = C.colind[e];
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_dl_defaults(control);
    long st = umfpack_dl_symbolic(n, n, Ap, Ai, C.val, &Sym, control, info);
    if (st != UMFPACK_OK) { s = umf_fail("symbolic", st); goto done; }
    st = umfpack_dl_numeric(Ap, Ai, C.val, Sym, &Num, control, info);
    if (st != UMFPACK_OK) { s = umf_fail("numeric", st); goto done; }
    double t1 = bsr_now();
    if ((s = bsr_multivec_to_colmajor(B, b, n))) goto done;
    for (int j = 0; j < k; j++) {
        st = umfpack_dl_solve(UMFPACK_At, Ap, Ai, C.val, x + (size_t)j * n, b + (size_t)j * n, Num, control, info);
        if (st != UMFPACK_OK) { s = umf_fail("solve", st); goto done; }
    }
    s = bsr_multivec_from_colmajor(X, x, n);
    if (times) { times[0] = t1 - t0; times[1] = bsr_now() - t1; }
done:
    if (Sym) umfpack_dl_free_symbolic(&Sym);
    if (Num) umfpack_dl_free_numeric(&Num);
    free(Ap); free(Ai); free(b); free(x);
    bsr_csr_free(&C);
    return s;
}
