/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed matrices and solvers under mpiexec -n 1, 2, 4 (ctest runs all
 * three): the product equal to the serial one bit for bit, one rank equal to
 * the serial solver, several converging to the serial solution, uneven
 * partitions, a rank without rows, an empty halo, bad input reported on
 * every rank; on a GPU machine the same solves with the ranks' CUDA contexts. */
#include "harness_mpi.h"
#include "bsrsolve_mpi.h"
#include "dist_impl.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

/* Rows [r0, r1) of a global matrix as the arrays a rank passes. */
typedef struct { int n; int *rowptr; int64_t *colind; void *val; } rows;
static rows take_rows(const bsr_matrix *A, int64_t r0, int64_t r1)
{
    rows R;
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int b = bsr_matrix_block(A);
    size_t bb = (size_t)b * b, es = bsr_precision_size(bsr_matrix_precision(A));
    R.n = (int)(r1 - r0);
    int nnz = rp[r1] - rp[r0];
    R.rowptr = malloc(sizeof(int) * (size_t)(R.n + 1));
    R.colind = malloc(sizeof(int64_t) * (size_t)(nnz + 1));
    R.val = malloc(es * bb * (size_t)(nnz + 1));
    for (int i = 0; i <= R.n; i++) R.rowptr[i] = rp[r0 + i] - rp[r0];
    for (int q = 0; q < nnz; q++) R.colind[q] = ci[rp[r0] + q];
    memcpy(R.val, (const char *)bsr_matrix_values(A) + es * bb * (size_t)rp[r0], es * bb * (size_t)nnz);
    return R;
}
static void free_rows(rows *R) { free(R->rowptr); free(R->colind); free(R->val); }

/* This rank's first row and row count of N rows split with weights r + 1
 * (uneven); empty_rank >= 0 gets none. */
static void split(int64_t N, int empty_rank, int64_t *r0, int64_t *r1)
{
    double w = 0, c = 0;
    for (int r = 0; r < nranks; r++) w += r == empty_rank ? 0 : r + 1;
    int64_t lo = 0;
    for (int r = 0; r < nranks; r++) {
        c += r == empty_rank ? 0 : r + 1;
        int64_t hi = r == nranks - 1 ? N : (int64_t)floor(N * (c / w));
        if (r == rank) { *r0 = lo; *r1 = hi; }
        lo = hi;
    }
}

/* A's rows [r0, r1) as this rank's part of a distributed matrix. */
static bsr_dmatrix *distribute_range(bsr_dist *d, const bsr_matrix *A, int64_t r0, int64_t r1)
{
    rows R = take_rows(A, r0, r1);
    bsr_dmatrix *D = NULL;
    bsr_status st = bsr_dmatrix_create(&D, d, bsr_matrix_nbrows(A), R.n, bsr_matrix_block(A), R.rowptr, R.colind,
                                       R.val, bsr_matrix_precision(A), 0);
    if (st) fprintf(stderr, "\n  rank %d: %s\n", rank, bsr_last_error());
    CU_ASSERT_EQUAL(st, BSR_OK);
    free_rows(&R);
    return D;
}

/* A distributed over the uneven split above. */
static bsr_dmatrix *distribute(bsr_dist *d, const bsr_matrix *A, int empty_rank, int64_t *r0, int64_t *r1)
{
    split(bsr_matrix_nbrows(A), empty_rank, r0, r1);
    return distribute_range(d, A, *r0, *r1);
}

/* Rows [r0, r1) of X (block size b) as a multivector of their own. */
static bsr_multivec *slice(const bsr_multivec *X, int b, int64_t r0, int64_t r1)
{
    bsr_multivec *S = NULL;
    int k = bsr_multivec_cols(X);
    bsr_precision p = bsr_multivec_precision(X);
    bsr_multivec_create(&S, (r1 - r0) * b, k, p);
    size_t es = bsr_precision_size(p);
    memcpy(bsr_multivec_data(S), (const char *)bsr_multivec_cdata(X) + (size_t)r0 * b * k * es,
           (size_t)(r1 - r0) * b * k * es);
    return S;
}

/* Host allocations made by the last same_product's bsr_dmatrix_spmm. */
static long spmm_allocs;

/* D X against the serial A X, bit for bit, on rows [r0, r1). */
static int same_product(bsr_dmatrix *D, const bsr_matrix *A, int k, int64_t r0, int64_t r1)
{
    int b = bsr_matrix_block(A), N = bsr_matrix_nbrows(A);
    bsr_precision p = bsr_matrix_precision(A);
    bsr_multivec *X, *Y;
    bsr_multivec_create(&X, (int64_t)N * b, k, p);
    bsr_multivec_create(&Y, (int64_t)N * b, k, p);
    bsr_multivec_random(X, 5);
    bsr_spmm(1.0, A, X, 0.0, Y);
    bsr_multivec *Xl = slice(X, b, r0, r1), *Yl = slice(Y, b, r0, r1), *Zl = slice(Y, b, r0, r1);
    bsr_multivec_fill(Zl, -7);
    bsr_fault_arm(BSR_FAULT_HOST_ALLOC, 0);   /* disarmed: counts only */
    bsr_status st = bsr_dmatrix_spmm(D, Xl, Zl);
    spmm_allocs = bsr_fault_count(BSR_FAULT_HOST_ALLOC);
    CU_ASSERT_EQUAL(st, BSR_OK);
    size_t bytes = (size_t)(r1 - r0) * b * k * bsr_precision_size(p);
    int same = !st && memcmp(bsr_multivec_cdata(Yl), bsr_multivec_cdata(Zl), bytes) == 0;
    bsr_multivec_destroy(Xl); bsr_multivec_destroy(Yl); bsr_multivec_destroy(Zl);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    return bsr_test_all_ranks(same);
}

/* The distributed product equals the serial one bit for bit (random
 * patterns, b = 1, 3, 4, k = 1, 3, double and float, uneven partitions,
 * one rank without rows when there are several). */
static void test_spmm_bitwise(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    const int bs[] = {1, 3, 4}, ks[] = {1, 3};
    for (int ib = 0; ib < 3; ib++)
        for (int ik = 0; ik < 2; ik++)
            for (int ip = 0; ip < 2; ip++)
                for (int empty = -1; empty < (nranks > 1 ? 2 : 0); empty++) {
                    bsr_precision p = ip ? BSR_FLOAT : BSR_DOUBLE;
                    bsr_matrix *A = bsr_test_random_matrix(157, 157, bs[ib], 1, 9, p, 11 + ib);
                    int64_t r0, r1;
                    bsr_dmatrix *D = distribute(d, A, empty, &r0, &r1);
                    int same = same_product(D, A, ks[ik], r0, r1);
                    if (!same) printf("\n  b %d k %d %s, rank without rows %d: product differs\n", bs[ib], ks[ik],
                                      ip ? "float" : "double", empty);
                    CU_ASSERT_TRUE(same);
                    /* the product's buffers are kept between calls: another k, then this k
                     * again, twice (the second time nothing is allocated) */
                    CU_ASSERT_TRUE(same_product(D, A, ks[1 - ik], r0, r1));
                    CU_ASSERT_TRUE(same_product(D, A, ks[ik], r0, r1));
                    CU_ASSERT_TRUE(same_product(D, A, ks[ik], r0, r1));
                    CU_ASSERT_EQUAL(spmm_allocs, 0);
                    bsr_dmatrix_info info;
                    BSR_ASSERT_OK(bsr_dmatrix_get_info(D, &info));
                    CU_ASSERT_EQUAL(info.interior + info.interface, r1 - r0);
                    if (nranks == 1) CU_ASSERT_EQUAL(info.ghosts, 0);
                    if (r1 > r0 && r1 - r0 < 157) CU_ASSERT(info.ghosts > 0);  /* random columns cross ranks */
                    bsr_dmatrix_destroy(D);
                    bsr_matrix_destroy(A);
                }
    bsr_dist_destroy(d);
}

/* Block diagonal, split on its blocks: no halo anywhere, every row interior. */
static void test_empty_halo(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    int N = 12 * nranks, b = 2, nz = 0;
    int *rp = malloc(sizeof(int) * (N + 1)), *ci = malloc(sizeof(int) * 3 * N);
    double *v = malloc(sizeof(double) * 3 * N * b * b);
    rp[0] = 0;
    for (int i = 0; i < N; i++) {
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N && j / 12 == i / 12) ci[nz++] = j;
        rp[i + 1] = nz;
    }
    for (int e = 0; e < nz * b * b; e++) v[e] = (e % 7) - 3 + (e % 5 == 0 ? 10 : 0);
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_matrix_create(&A, N, N, b, rp, ci, v, BSR_DOUBLE, 0));
    bsr_dmatrix *D = distribute_range(d, A, 12 * rank, 12 * rank + 12);
    bsr_dmatrix_info info;
    BSR_ASSERT_OK(bsr_dmatrix_get_info(D, &info));
    CU_ASSERT_EQUAL(info.interior, 12);
    CU_ASSERT_EQUAL(info.ghosts, 0);
    CU_ASSERT_EQUAL(info.sent, 0);
    CU_ASSERT_TRUE(same_product(D, A, 2, 12 * rank, 12 * rank + 12));
    bsr_dmatrix_destroy(D);
    bsr_matrix_destroy(A);
    free(rp); free(ci); free(v);
    bsr_dist_destroy(d);
}

/* Distributed solve of a generated problem against the serial solver: one
 * rank gives its bits, several the serial solution within the tolerance;
 * two solves give the same bits; a refactor with new values still solves. */
static void solve_case(bsr_context *ctx, const char *spec, const char *opts, int empty)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &P));
    int b = bsr_matrix_block(P.A);
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, ctx));
    int64_t r0, r1;
    bsr_dmatrix *D = distribute(d, P.A, empty, &r0, &r1);
    /* serial reference on every rank */
    bsr_solver *s;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, opts));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    bsr_multivec *X;
    bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE);
    bsr_multivec_fill(X, 0);
    bsr_solver_stats st1, st2, st3;
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st1));
    /* distributed */
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
    bsr_dsolver *ds;
    BSR_ASSERT_OK(bsr_dsolver_create(&ds, d, &o));
    bsr_status sst = bsr_dsolver_setup(ds, D);
    if (sst) fprintf(stderr, "\n  rank %d: %s\n", rank, bsr_last_error());
    CU_ASSERT_EQUAL_FATAL(sst, BSR_OK);
    bsr_multivec *B = slice(P.rhs, b, r0, r1), *Xd = slice(X, b, r0, r1), *Xd2 = slice(X, b, r0, r1),
                 *Xs = slice(X, b, r0, r1);
    bsr_multivec_fill(Xd, 0);
    bsr_multivec_fill(Xd2, 0);
    CU_ASSERT_EQUAL(bsr_dsolver_solve(ds, B, Xd, &st2), BSR_OK);
    CU_ASSERT_EQUAL(bsr_dsolver_solve(ds, B, Xd2, &st3), BSR_OK);
    size_t bytes = (size_t)(r1 - r0) * b * sizeof(double);
    CU_ASSERT_TRUE(bsr_test_all_ranks(memcmp(bsr_multivec_cdata(Xd), bsr_multivec_cdata(Xd2), bytes) == 0));
    CU_ASSERT_EQUAL(st2.col[0].iterations, st3.col[0].iterations);
    /* the same iteration count and residual on every rank */
    int it = st2.col[0].iterations, itmax = 0, itmin = 0;
    MPI_Allreduce(&it, &itmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&it, &itmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(itmax, itmin);
    CU_ASSERT(st2.col[0].relres <= o.rtol * 1.0001);
    if (nranks == 1 && ctx == NULL) {
        CU_ASSERT_TRUE(memcmp(bsr_multivec_cdata(Xd), bsr_multivec_cdata(Xs), bytes) == 0);
        CU_ASSERT_EQUAL(st2.col[0].iterations, st1.col[0].iterations);
    }
    /* the serial solution within the tolerance (both solve to rtol) */
    double err = bsr_test_rel_err(Xd, Xs), errmax = 0;
    MPI_Allreduce(&err, &errmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("\n  %s %s, %d ranks%s: %d iterations (serial %d), |x - x_serial|/|x_serial| %.1e ", spec, opts,
               nranks, empty >= 0 ? " (one without rows)" : "", it, st1.col[0].iterations, errmax);
    CU_ASSERT(errmax < 1e-5);
    /* refactor: new values on the same pattern (the diagonal blocks doubled) */
    const int *rp = bsr_matrix_rowptr(P.A), *ci = bsr_matrix_colind(P.A);
    int nnz = bsr_matrix_nnzb(P.A);
    double *v = malloc(sizeof(double) * (size_t)nnz * b * b);
    memcpy(v, bsr_matrix_values(P.A), sizeof(double) * (size_t)nnz * b * b);
    for (int i = 0; i < bsr_matrix_nbrows(P.A); i++)
        for (int q = rp[i]; q < rp[i + 1]; q++)
            if (ci[q] == i)
                for (int e = 0; e < b * b; e++) v[(size_t)q * b * b + e] *= 2;
    /* a NaN on the last rank with rows: every rank fails, and A is refused until good values come */
    int holder = r1 > r0 ? rank : -1, last = -1;
    MPI_Allreduce(&holder, &last, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double *bad = rank == last ? &v[(size_t)rp[r1] * b * b - 1] : NULL, keep = bad ? *bad : 0;
    if (bad) *bad = NAN;
    CU_ASSERT_EQUAL(bsr_dmatrix_set_values(D, v + (size_t)rp[r0] * b * b, 0), BSR_ERR_VALUE);
    CU_ASSERT_EQUAL(bsr_dsolver_refactor(ds, D), BSR_ERR_VALUE);
    CU_ASSERT_EQUAL(bsr_dsolver_solve(ds, B, Xd, NULL), BSR_ERR_VALUE);
    if (bad) *bad = keep;
    BSR_ASSERT_OK(bsr_dmatrix_set_values(D, v + (size_t)rp[r0] * b * b, 0));
    BSR_ASSERT_OK(bsr_dsolver_refactor(ds, D));
    bsr_solver_stats st4;
    bsr_multivec_fill(Xd, 0);
    CU_ASSERT_EQUAL(bsr_dsolver_solve(ds, B, Xd, &st4), BSR_OK);
    /* its residual, through the distributed product */
    bsr_multivec *R = slice(X, b, r0, r1);
    BSR_ASSERT_OK(bsr_dmatrix_spmm(D, Xd, R));
    double loc[2] = {0, 0}, glob[2];
    const double *r = bsr_multivec_cdata(R), *bb = bsr_multivec_cdata(B);
    for (int64_t i = 0; i < (r1 - r0) * b; i++) { loc[0] += (bb[i] - r[i]) * (bb[i] - r[i]); loc[1] += bb[i] * bb[i]; }
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT(sqrt(glob[0] / glob[1]) <= o.rtol * 1.01);
    free(v);
    bsr_solver_stats_free(&st1); bsr_solver_stats_free(&st2); bsr_solver_stats_free(&st3); bsr_solver_stats_free(&st4);
    bsr_multivec_destroy(R); bsr_multivec_destroy(B); bsr_multivec_destroy(Xd); bsr_multivec_destroy(Xd2);
    bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
    bsr_dsolver_destroy(ds);
    bsr_solver_destroy(s);
    bsr_dmatrix_destroy(D);
    bsr_dist_destroy(d);
    bsr_problem_free(&P);
}

static void test_solve_cpu(void)
{
    solve_case(NULL, "stencil3d:10:4", "precond=ilu0,rtol=1e-9", -1);
    solve_case(NULL, "stencil3d:9:3", "precond=ilu2,tau1=0.05,method=gmres,rtol=1e-9", -1);
    solve_case(NULL, "convdiff2d:24,10", "precond=ilut,rtol=1e-9", nranks > 1 ? 1 : -1);
    solve_case(NULL, "stencil3d:8:1", "method=cg,precond=jacobi,rtol=1e-9", nranks > 1 ? 0 : -1);
    solve_case(NULL, "stencil3d:10:4", "precond=ilu0,overlap=1,rtol=1e-9", -1);
    solve_case(NULL, "convdiff2d:24,10", "precond=ilu2,tau1=0.05,overlap=1,rtol=1e-9", nranks > 1 ? 1 : -1);
    solve_case(NULL, "convdiff2d:24,10", "precond=ilu0,method=idr,rtol=1e-9", nranks > 1 ? 1 : -1);
    solve_case(NULL, "convdiff2d:24,10", "precond=ilu0,method=gmres,restart=8,deflate=3,orth=cgs2,rtol=1e-9", -1);
}

/* Iterations of a distributed solve of spec with opts. */
static int iterations(const char *spec, const char *opts)
{
    bsr_problem P;
    bsr_generate(spec, BSR_DOUBLE, &P);
    int b = bsr_matrix_block(P.A);
    bsr_dist *d;
    bsr_dist_create(&d, MPI_COMM_WORLD, NULL);
    int64_t r0, r1;
    bsr_dmatrix *D = distribute(d, P.A, -1, &r0, &r1);
    bsr_dsolver *s;
    bsr_dsolver_create(&s, d, NULL);
    bsr_dsolver_destroy(s);
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    bsr_solver_options_parse(&o, opts);
    BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
    BSR_ASSERT_OK(bsr_dsolver_setup(s, D));
    bsr_multivec *B = slice(P.rhs, b, r0, r1), *X = slice(P.rhs, b, r0, r1);
    bsr_multivec_fill(X, 0);
    bsr_solver_stats st;
    CU_ASSERT_EQUAL(bsr_dsolver_solve(s, B, X, &st), BSR_OK);
    int it = st.col[0].iterations;
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_dsolver_destroy(s);
    bsr_dmatrix_destroy(D);
    bsr_dist_destroy(d);
    bsr_problem_free(&P);
    return it;
}

/* Overlap makes the iterations grow more slowly with the ranks than block
 * Jacobi does: never more iterations, and fewer on several ranks. */
static void test_overlap_fewer(void)
{
    const char *spec = "poisson3d:20";
    int bj = iterations(spec, "precond=ilu0,rtol=1e-9"), ras = iterations(spec, "precond=ilu0,overlap=1,rtol=1e-9");
    printf("\n  %s, %d ranks: block Jacobi %d iterations, overlap 1 %d ", spec, nranks, bj, ras);
    CU_ASSERT(ras <= bj);
    if (nranks >= 2) CU_ASSERT(ras < bj);
}

/* The error control runs in a distributed solve as in a serial one, with
 * opts: the same estimate, corrections and iterations on every rank, the
 * estimate within a factor 2 of the true error and that error within etol
 * (etol given: corrections made; auto: the estimate made). */
static void etol_case(const char *opts)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("rotconv3d:12,4", BSR_DOUBLE, &P));
    int b = bsr_matrix_block(P.A);
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    int64_t r0, r1;
    bsr_dmatrix *D = distribute(d, P.A, -1, &r0, &r1);
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
    const double etol = o.etol > 0 ? o.etol : 100 * o.rtol;   /* (auto: 100 rtol with ILU2) */
    bsr_dsolver *ds;
    BSR_ASSERT_OK(bsr_dsolver_create(&ds, d, &o));
    BSR_ASSERT_OK(bsr_dsolver_setup(ds, D));
    bsr_multivec *B = slice(P.rhs, b, r0, r1), *X = slice(P.rhs, b, r0, r1), *Xe = slice(P.xexact, b, r0, r1);
    bsr_multivec_fill(X, 0);
    bsr_solver_stats st;
    CU_ASSERT_EQUAL_FATAL(bsr_dsolver_solve(ds, B, X, &st), BSR_OK);
    const bsr_col_stats *c = &st.col[0];
    double mine[3] = {c->err_est, c->err_rounds, c->err_its}, lo[3], hi[3];
    MPI_Allreduce(mine, lo, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, hi, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CU_ASSERT(lo[0] == hi[0] && lo[1] == hi[1] && lo[2] == hi[2]);
    /* the true error ||x - x*|| / ||x|| over all ranks */
    double loc[2] = {0, 0}, glob[2];
    const double *x = bsr_multivec_cdata(X), *xe = bsr_multivec_cdata(Xe);
    for (int64_t i = 0; i < (r1 - r0) * b; i++) { loc[0] += (x[i] - xe[i]) * (x[i] - xe[i]); loc[1] += x[i] * x[i]; }
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double err = sqrt(glob[0] / glob[1]);
    if (rank == 0)
        printf("\n  rotconv3d:12,4 %s, %d ranks: %d iterations, %d correction(s) in %d more, estimate %.2e, error %.2e ",
               opts, nranks, c->iterations, c->err_rounds, c->err_its, c->err_est, err);
    CU_ASSERT(c->err_its > 0 && !c->err_predicted && (o.etol < 0 || c->err_rounds >= 1));
    CU_ASSERT(c->err_est <= etol && !c->err_low);
    CU_ASSERT(err <= etol && err <= 2 * c->err_est && c->err_est <= 2 * err);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(Xe);
    bsr_dsolver_destroy(ds);
    bsr_dmatrix_destroy(D);
    bsr_dist_destroy(d);
    bsr_problem_free(&P);
}

static void test_etol(void)
{
    etol_case("precond=ilu2,rtol=1e-5,etol=1e-9");
    etol_case("precond=ilu2,rtol=1e-5,etol=1e-9,overlap=1");
    etol_case("precond=ilu2,rtol=1e-8,overlap=1");
}

/* The product on the device (the solver's path: halo through pinned host
 * buffers or device pointers) equals the serial device product bit for bit
 * (every ROWJ variant sums a row in stored order, and the local matrices
 * keep the global order), b = 1, 4, 5, k = 1, 3, double and float. */
static void gpu_product(bsr_context *ctx)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, ctx));
    const int bs[] = {1, 4, 5}, ks[] = {1, 3};
    int all_same = 1;
    for (int ib = 0; ib < 3; ib++)
        for (int ik = 0; ik < 2; ik++)
            for (int ip = 0; ip < 2; ip++) {
                bsr_precision p = ip ? BSR_FLOAT : BSR_DOUBLE;
                int b = bs[ib], k = ks[ik], N = 211;
                bsr_matrix *A = bsr_test_random_matrix(N, N, b, 1, 9, p, 21 + ib);
                bsr_multivec *X, *Y;
                bsr_multivec_create(&X, (int64_t)N * b, k, p);
                bsr_multivec_create(&Y, (int64_t)N * b, k, p);
                bsr_multivec_random(X, 9);
                BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
                BSR_ASSERT_OK(bsr_multivec_upload(ctx, X));
                BSR_ASSERT_OK(bsr_multivec_upload(ctx, Y));
                BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 1.0, A, X, 0.0, Y));
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
                int64_t r0, r1;
                bsr_dmatrix *D = distribute(d, A, -1, &r0, &r1);
                bsr_multivec *Xl = slice(X, b, r0, r1), *Yl = slice(Y, b, r0, r1), *Xi = slice(X, b, r0, r1),
                             *Zi = slice(Y, b, r0, r1), *Zl = slice(Y, b, r0, r1);
                BSR_ASSERT_OK(bsr_dmatrix_permute(D, Xl, Xi, 1));
                BSR_ASSERT_OK(bsr_multivec_upload(ctx, Xi));
                BSR_ASSERT_OK(bsr_multivec_upload(ctx, Zi));
                CU_ASSERT_EQUAL(bsr_dmatrix_spmm_internal(D, ctx, Xi, Zi, NULL), BSR_OK);
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Zi));
                BSR_ASSERT_OK(bsr_dmatrix_permute(D, Zi, Zl, 0));
                size_t bytes = (size_t)(r1 - r0) * b * k * bsr_precision_size(p);
                int same = memcmp(bsr_multivec_cdata(Yl), bsr_multivec_cdata(Zl), bytes) == 0;
                if (!bsr_test_all_ranks(same)) {
                    all_same = 0;
                    if (rank == 0) printf("\n  b %d k %d %s: device product differs", b, k, ip ? "float" : "double");
                }
                bsr_multivec_destroy(Xl); bsr_multivec_destroy(Yl); bsr_multivec_destroy(Xi);
                bsr_multivec_destroy(Zi); bsr_multivec_destroy(Zl);
                bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
                bsr_dmatrix_destroy(D);
                bsr_matrix_destroy(A);
            }
    CU_ASSERT_TRUE(all_same);
    if (rank == 0) printf("\n  device product (%s halo) equal to the serial device product: %s ",
                          bsr_dist_cuda_aware(d) ? "device-pointer" : "pinned host", all_same ? "yes" : "no");
    bsr_dist_destroy(d);
}

/* The same on each rank's CUDA context (ranks share the GPUs round robin). */
static void test_solve_gpu(void)
{
    int ndev = bsr_device_count(), have = bsr_test_all_ranks(ndev > 0);
    if (!have) { BSR_TEST_SKIP("no CUDA device on some rank: distributed GPU solves skipped"); return; }
    bsr_context *ctx;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, rank % ndev, NULL));
    gpu_product(ctx);
    solve_case(ctx, "stencil3d:10:4", "precond=ilu0,rtol=1e-9", -1);
    solve_case(ctx, "stencil3d:9:5", "precond=ilu2,tau1=0.05,rtol=1e-9", nranks > 1 ? 1 : -1);
    solve_case(ctx, "stencil3d:10:4", "precond=ilu0,overlap=1,rtol=1e-9", -1);
    solve_case(ctx, "stencil3d:10:4", "precond=ilu0,method=idr,rtol=1e-9", -1);
    bsr_context_destroy(ctx);
}

/* Bad input on one rank is reported on every rank, never a hang. */
static void test_bad_input(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    bsr_matrix *R0 = bsr_test_random_matrix(40, 40, 2, 1, 5, BSR_DOUBLE, 3), *A = bsr_test_dominant(R0, 1, 1);
    bsr_matrix_destroy(R0);
    int64_t r0, r1;
    split(40, -1, &r0, &r1);
    rows R = take_rows(A, r0, r1);
    bsr_dmatrix *D = NULL;
    /* inconsistent global sizes: the last rank says 41 */
    bsr_status st = bsr_dmatrix_create(&D, d, rank == nranks - 1 ? 41 : 40, R.n, 2, R.rowptr, R.colind, R.val,
                                       BSR_DOUBLE, 0);
    CU_ASSERT_EQUAL(st, BSR_ERR_SIZE);
    CU_ASSERT_PTR_NULL(D);
    /* rows that do not add up */
    st = bsr_dmatrix_create(&D, d, 40 + nranks, R.n, 2, R.rowptr, R.colind, R.val, BSR_DOUBLE, 0);
    CU_ASSERT_EQUAL(st, BSR_ERR_SIZE);
    CU_ASSERT(strstr(bsr_last_error(), "block rows") != NULL);
    /* a column outside the global range on the last rank */
    if (rank == nranks - 1 && R.rowptr[R.n] > 0) R.colind[R.rowptr[R.n] - 1] = 40;
    st = bsr_dmatrix_create(&D, d, 40, R.n, 2, R.rowptr, R.colind, R.val, BSR_DOUBLE, 0);
    CU_ASSERT_EQUAL(st, BSR_ERR_STRUCTURE);
    if (rank != nranks - 1) {
        char want[32];
        snprintf(want, sizeof want, "rank %d:", nranks - 1);
        CU_ASSERT(strstr(bsr_last_error(), want) != NULL);
    }
    if (rank == nranks - 1 && R.rowptr[R.n] > 0) R.colind[R.rowptr[R.n] - 1] = 0;
    /* a NaN on rank 0, then a rank that cannot supply its rows (NULL) */
    ((double *)R.val)[0] = rank == 0 ? NAN : ((double *)R.val)[0];
    CU_ASSERT_EQUAL(bsr_dmatrix_create(&D, d, 40, R.n, 2, R.rowptr, R.colind, R.val, BSR_DOUBLE, 0), BSR_ERR_VALUE);
    ((double *)R.val)[0] = 1;
    CU_ASSERT_EQUAL(bsr_dmatrix_create(&D, d, 40, R.n, 2, rank == 0 ? NULL : R.rowptr, R.colind, R.val,
                                       BSR_DOUBLE, 0), BSR_ERR_ARG);
    /* wrong local vector sizes in a solve */
    BSR_ASSERT_OK(bsr_dmatrix_create(&D, d, 40, R.n, 2, R.rowptr, R.colind, R.val, BSR_DOUBLE, 0));
    bsr_dsolver *s;
    BSR_ASSERT_OK(bsr_dsolver_create(&s, d, NULL));
    CU_ASSERT_EQUAL(bsr_dsolver_solve(s, NULL, NULL, NULL), BSR_ERR_ARG);
    bsr_multivec *B, *X;
    bsr_multivec_create(&B, (int64_t)R.n * 2 + (rank == 0), 1, BSR_DOUBLE);
    bsr_multivec_create(&X, (int64_t)R.n * 2 + (rank == 0), 1, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_dsolver_setup(s, D), BSR_OK);
    CU_ASSERT_EQUAL(bsr_dsolver_solve(s, B, X, NULL), BSR_ERR_SIZE);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_dsolver_destroy(s);
    /* a working precision other than the matrix's: refused at setup, saying so */
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu0,precision=float"));
    BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
    CU_ASSERT_EQUAL(bsr_dsolver_setup(s, D), BSR_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "precision=float"));
    bsr_dsolver_destroy(s);
    bsr_dmatrix_destroy(D);
    free_rows(&R);
    bsr_matrix_destroy(A);
    bsr_dist_destroy(d);
}

/* A local failure on one rank at any point of a solve (its n-th local
 * operation: vector, product, preconditioner, reduction) stops the solve on
 * every rank with that failure, never a hang; the next solve succeeds. */
static void test_failure_midsolve(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:8:2", BSR_DOUBLE, &P));
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    int64_t r0, r1;
    bsr_dmatrix *D = distribute(d, P.A, -1, &r0, &r1);
    for (int c = 0; c < 4; c++) {   /* BiCGStab, GMRES with overlap, IDR(4), GMRES-DR(8, 3) */
        bsr_solver_options o;
        bsr_solver_options_default(&o);
        o.precond = BSR_PC_ILU0;
        o.overlap = c == 1;
        o.method = c == 1 || c == 3 ? BSR_GMRES : c == 2 ? BSR_IDR : BSR_BICGSTAB;
        o.orth = BSR_ORTH_CGS2;
        if (c == 3) {
            o.restart = 8;
            o.deflate = 3;
        }
        bsr_dsolver *s;
        BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
        BSR_ASSERT_OK(bsr_dsolver_setup(s, D));
        bsr_multivec *B = slice(P.rhs, 2, r0, r1), *X = slice(P.rhs, 2, r0, r1);
        int fired = 0;
        int agreed = bsr_test_injected_failures(s, B, X, NULL, "injected", &bsr_dist_fail_at, &fired);
        CU_ASSERT_TRUE(bsr_test_all_ranks(agreed));
        CU_ASSERT(fired >= 10);  /* the failures did happen, at many points of the solve */
        bsr_multivec_destroy(B); bsr_multivec_destroy(X);
        bsr_dsolver_destroy(s);
    }
    bsr_dmatrix_destroy(D);
    bsr_dist_destroy(d);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"product equal to the serial one bit for bit", test_spmm_bitwise},
        {"empty halo", test_empty_halo},
        {"solves against the serial solver (CPU)", test_solve_cpu},
        {"overlap: fewer iterations than block Jacobi", test_overlap_fewer},
        {"the error control on every rank alike", test_etol},
        {"GPU: solves against the serial solver", test_solve_gpu},
        {"bad input reported on every rank", test_bad_input},
        {"a failure on one rank mid-solve stops every rank", test_failure_midsolve},
        {NULL, NULL},
    };
    return bsr_test_mpi_main("dist", tests, argc, argv, &rank, &nranks);
}
