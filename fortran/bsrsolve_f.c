/* SPDX-License-Identifier: BSD-3-Clause */
/* C side of the Fortran module (bsrsolve.f90): the calls whose arguments do
 * not map directly onto ISO_C_BINDING types (1-based indices, 64-bit CSR row
 * pointers, the stats structure, whose layout stays private to C). */
#include <bsrsolve.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Message of the last error raised here (argument checks of this file). */
static _Thread_local char f_error[256];

/* Record msg as this thread's error of the Fortran layer; returns s. */
static int fail(int s, const char *msg)
{
    snprintf(f_error, sizeof f_error, "%s", msg);
    return s;
}

/* Last error: this layer's own, else the library's. */
const char *bsrf_last_error(void)
{
    return f_error[0] ? f_error : bsr_last_error();
}

/* Forget both layers' last errors. */
void bsrf_clear_error(void)
{
    f_error[0] = 0;
    bsr_clear_error();
}

/* Copy of idx[0..n) shifted to 0-based (NULL when out of memory). */
static int *rebase(const int *idx, size_t n, int base)
{
    int *out = malloc((n ? n : 1) * sizeof *out);
    if (out)
        for (size_t i = 0; i < n; i++) out[i] = idx[i] - base;
    return out;
}

/* A (double) from BSR arrays with indices based at `base` (0 or 1); blocks
 * column-major when colmajor is nonzero. */
int bsrf_matrix_from_bsr(bsr_matrix **A, int nbrows, int nbcols, int b, const int *rowptr,
                         const int *colind, const double *val, int base, int colmajor)
{
    bsrf_clear_error();
    *A = NULL;
    if (base != 0 && base != 1) return fail(BSR_ERR_ARG, "bsr_matrix_from_bsr: base must be 0 or 1");
    if (nbrows < 0) return fail(BSR_ERR_ARG, "bsr_matrix_from_bsr: negative row count");
    if (rowptr[0] != base) return fail(BSR_ERR_STRUCTURE, "bsr_matrix_from_bsr: rowptr(1) is not the base");
    int nnzb = rowptr[nbrows] - base;
    if (nnzb < 0) return fail(BSR_ERR_STRUCTURE, "bsr_matrix_from_bsr: rowptr decreases");
    int *rp = rebase(rowptr, (size_t)nbrows + 1, base);
    int *ci = rebase(colind, (size_t)nnzb, base);
    int s = BSR_ERR_NOMEM;
    if (rp && ci)
        s = bsr_matrix_create(A, nbrows, nbcols, b, rp, ci, val, BSR_DOUBLE,
                              colmajor ? BSR_COLMAJOR_BLOCKS : 0);
    free(rp);
    free(ci);
    return s;
}

/* A (double, b x b blocks; b = 0 picks one) from an n x n scalar CSR matrix
 * with indices based at `base`; duplicates are summed.  *b_used = b chosen. */
int bsrf_matrix_from_csr(bsr_matrix **A, int n, const int *rowptr, const int *colind,
                         const double *val, int base, int b, int *b_used)
{
    bsrf_clear_error();
    *A = NULL;
    if (base != 0 && base != 1) return fail(BSR_ERR_ARG, "bsr_matrix_from_csr: base must be 0 or 1");
    if (n < 1) return fail(BSR_ERR_ARG, "bsr_matrix_from_csr: n < 1");
    if (rowptr[0] != base) return fail(BSR_ERR_STRUCTURE, "bsr_matrix_from_csr: rowptr(1) is not the base");
    for (int i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i]) return fail(BSR_ERR_STRUCTURE, "bsr_matrix_from_csr: rowptr decreases");
    int64_t nnz = (int64_t)rowptr[n] - base;
    for (int64_t p = 0; p < nnz; p++)
        if (colind[p] < base || colind[p] >= n + base)
            return fail(BSR_ERR_STRUCTURE, "bsr_matrix_from_csr: column index out of range");
    bsr_csr C = { n, n, nnz, malloc(((size_t)n + 1) * sizeof(int64_t)), rebase(colind, (size_t)nnz, base),
                  (double *)val };
    int s = BSR_ERR_NOMEM;
    if (C.rowptr && C.colind) {
        for (int i = 0; i <= n; i++) C.rowptr[i] = rowptr[i] - base;
        bsr_convert_info info = { 0, 0 };
        s = bsr_from_csr(&C, b, 0, BSR_DOUBLE, A, &info);
        if (b_used) *b_used = s ? 0 : info.b;
    }
    free(C.rowptr);
    free(C.colind);
    return s;
}

/* New values of A from CSR arrays whose pattern gives A's block pattern. */
int bsrf_matrix_csr_values(bsr_matrix *A, int n, const int *rowptr, const int *colind,
                           const double *val, int base)
{
    bsr_matrix *T;
    int s = bsrf_matrix_from_csr(&T, n, rowptr, colind, val, base, bsr_matrix_block(A), NULL);
    if (s) return s;
    int N = bsr_matrix_nbrows(A);
    if (bsr_matrix_nbrows(T) != N || bsr_matrix_nnzb(T) != bsr_matrix_nnzb(A) ||
        memcmp(bsr_matrix_rowptr(T), bsr_matrix_rowptr(A), ((size_t)N + 1) * sizeof(int)) ||
        memcmp(bsr_matrix_colind(T), bsr_matrix_colind(A), (size_t)bsr_matrix_nnzb(A) * sizeof(int)))
        s = fail(BSR_ERR_STRUCTURE, "bsr_matrix_set_csr_values: the block pattern differs from the matrix's");
    else
        s = bsr_matrix_set_values(A, bsr_matrix_values(T), 0);
    bsr_matrix_destroy(T);
    return s;
}

/* An empty stats record for bsr_solver_solve. */
bsr_solver_stats *bsrf_stats_new(void)
{
    return calloc(1, sizeof(bsr_solver_stats));
}

/* Sizes for the module: what 0 the block rows of matrix p, 1 its block
 * size, 2 the rows of multivector p, 3 its columns, 4 the columns stats
 * record p describes. */
int64_t bsrf_size(const void *p, int what)
{
    switch (what) {
    case 0: return bsr_matrix_nbrows(p);
    case 1: return bsr_matrix_block(p);
    case 2: return bsr_multivec_rows(p);
    case 3: return bsr_multivec_cols(p);
    default: {
        const bsr_solver_stats *st = p;
        return st->col ? st->k : 0;
    }
    }
}

/* Free object p (NULL: nothing) of kind 0 context, 1 matrix, 2 multivector,
 * 3 solver, 4 stats record from bsrf_stats_new. */
void bsrf_free(void *p, int kind)
{
    switch (kind) {
    case 0: bsr_context_destroy(p); break;
    case 1: bsr_matrix_destroy(p); break;
    case 2: bsr_multivec_destroy(p); break;
    case 3: bsr_solver_destroy(p); break;
    default:
        if (!p) return;
        bsr_solver_stats_free(p);
        free(p);
    }
}

/* Name of status code (what 0) or of a stopping reason (what 1). */
const char *bsrf_name(int what, int code)
{
    return what ? bsr_reason_string((bsr_reason)code) : bsr_status_string((bsr_status)code);
}

/* Setup (refactor 0) or refactor of s for A. */
int bsrf_solver_prepare(bsr_solver *s, const bsr_matrix *A, int refactor)
{
    return refactor ? bsr_solver_refactor(s, A) : bsr_solver_setup(s, A);
}

/* X = the column-major array a (leading dimension ld; to 0), or a = X (to 1). */
int bsrf_colmajor(bsr_multivec *X, double *a, int64_t ld, int to)
{
    return to ? bsr_multivec_to_colmajor(X, a, ld) : bsr_multivec_from_colmajor(X, a, ld);
}

/* Column j (0-based) of the record: iterations, reason, relative and absolute residual. */
void bsrf_stats_col(const bsr_solver_stats *st, int j, int *iterations, int *reason,
                    double *relres, double *resnorm)
{
    const bsr_col_stats *c = &st->col[j];
    *iterations = c->iterations;
    *reason = (int)c->reason;
    *relres = c->relres;
    *resnorm = c->resnorm;
}

/* Setup and solve seconds, preconditioner fill, and whether it ran on the device. */
void bsrf_stats_run(const bsr_solver_stats *st, double *setup_s, double *solve_s, double *fill,
                    int *device)
{
    *setup_s = st->setup_s;
    *solve_s = st->solve_s;
    *fill = st->fill;
    *device = st->device;
}

/* The preconditioner's description in words. */
const char *bsrf_stats_info(const bsr_solver_stats *st)
{
    return st->precond_info;
}
