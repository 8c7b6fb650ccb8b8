/* SPDX-License-Identifier: BSD-3-Clause */
/* Input for distributed solves under mpiexec -n 1, 2, 4 (ctest runs all
 * three): generated rows equal to the serial generator's bit for bit
 * (uneven and empty ranges), a generated problem distributed in place, a
 * matrix file read by rank 0 and scattered (METIS k-way and equal ranges)
 * solving to the serial solution, vectors scattered and gathered back bit
 * for bit, rank 0's failures reported on every rank. */
#include "harness_mpi.h"
#include "bsrsolve_mpi.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

/* Rows [r0, r0 + R->nrows) of the serial problem P equal R bit for bit:
 * pattern (global columns), values, rhs, exact solution. */
static int same_rows(const bsr_problem *P, const bsr_problem_rows *R)
{
    const bsr_matrix *A = P->A;
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int b = bsr_matrix_block(A), n = R->nrows;
    int64_t r0 = R->row0;
    size_t es = bsr_precision_size(bsr_matrix_precision(A)), bb = (size_t)b * b * es;
    if (R->nglobal != bsr_matrix_nbrows(A) || R->b != b) return 0;
    for (int i = 0; i <= n; i++)
        if (R->rowptr[i] != rp[r0 + i] - rp[r0]) return 0;
    int nnz = R->rowptr[n];
    for (int q = 0; q < nnz; q++)
        if (R->colind[q] != ci[rp[r0] + q]) return 0;
    if (memcmp(R->val, (const char *)bsr_matrix_values(A) + bb * (size_t)rp[r0], bb * (size_t)nnz)) return 0;
    size_t row = (size_t)b * es;
    if (memcmp(bsr_multivec_cdata(R->rhs), (const char *)bsr_multivec_cdata(P->rhs) + row * (size_t)r0,
               row * (size_t)n))
        return 0;
    if (!P->xexact != !R->xexact) return 0;
    return !P->xexact || !memcmp(bsr_multivec_cdata(R->xexact),
                                 (const char *)bsr_multivec_cdata(P->xexact) + row * (size_t)r0, row * (size_t)n);
}

/* bsr_generate_rows against bsr_generate on uneven ranges, the first and
 * last rows, empty ranges, the whole problem; double and float; the row
 * generators and one that falls back to the whole problem. */
static void test_rows_bitwise(void)
{
    static const char *specs[] = {"stencil3d:7:3", "stencil3d:5:1", "rotconv3d:6,4", "rotconv3d:5,5,conv=30,cfl=0",
                                  "convdiff2d:12,5"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (int ip = 0; ip < 2; ip++) {
            bsr_precision p = ip ? BSR_FLOAT : BSR_DOUBLE;
            bsr_problem P;
            BSR_ASSERT_OK(bsr_generate(specs[s], p, &P));
            int N = bsr_matrix_nbrows(P.A), b0;
            int64_t nd;
            BSR_ASSERT_OK(bsr_generate_dims(specs[s], &nd, &b0));
            CU_ASSERT_EQUAL(nd, N);
            CU_ASSERT_EQUAL(b0, bsr_matrix_block(P.A));
            /* (row0, rows); each rank also takes its own uneven share */
            int64_t cut = (int64_t)N * (rank + 1) * (rank + 1) / ((nranks + 1) * (nranks + 1));
            const int64_t ranges[][2] = {{0, 0}, {0, 1}, {5, 17}, {N / 2, 50}, {N - 3, 3}, {N, 0}, {0, N}, {17, N - 40},
                                         {cut, N - cut}};
            for (size_t t = 0; t < sizeof ranges / sizeof ranges[0]; t++) {
                bsr_problem_rows R;
                BSR_ASSERT_OK(bsr_generate_rows(specs[s], p, ranges[t][0], (int)ranges[t][1], &R));
                int same = same_rows(&P, &R);
                if (!same) printf("\n  %s %s rows %lld + %lld differ ", specs[s], ip ? "float" : "double",
                                  (long long)ranges[t][0], (long long)ranges[t][1]);
                CU_ASSERT_TRUE(same);
                CU_ASSERT_STRING_EQUAL(R.name, P.name);
                bsr_problem_rows_free(&R);
            }
            bsr_problem_rows R;
            CU_ASSERT_EQUAL(bsr_generate_rows(specs[s], p, N - 2, 3, &R), BSR_ERR_ARG); /* past the end */
            CU_ASSERT_EQUAL(bsr_generate_rows(specs[s], p, -1, 1, &R), BSR_ERR_ARG);
            bsr_problem_free(&P);
        }
    bsr_problem_rows R;
    CU_ASSERT_EQUAL(bsr_generate_rows("stencil3d:0", BSR_DOUBLE, 0, 1, &R), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_generate_rows("nosuch:3", BSR_DOUBLE, 0, 1, &R), BSR_ERR_ARG);
}

/* Rows of a grid beyond 32-bit indices: stencil3d:2000 has 8e9 rows; its
 * last rows still come out, with their columns and rhs. */
static void test_rows_64bit(void)
{
    int64_t n;
    int b;
    BSR_ASSERT_OK(bsr_generate_dims("stencil3d:2000:1", &n, &b));
    CU_ASSERT_EQUAL(n, (int64_t)8000000000);
    bsr_problem_rows R;
    BSR_ASSERT_OK(bsr_generate_rows("stencil3d:2000:1", BSR_DOUBLE, n - 2, 2, &R));
    CU_ASSERT_EQUAL(R.rowptr[2], 9);  /* the last two cells: an edge (5 blocks), the corner (4) */
    CU_ASSERT_EQUAL(R.colind[0], n - 2 - 2000 * 2000);
    CU_ASSERT_EQUAL(R.colind[4], n - 1);
    CU_ASSERT_EQUAL(R.colind[8], n - 1);
    CU_ASSERT_TRUE(isfinite(((const double *)bsr_multivec_cdata(R.rhs))[1]));
    bsr_problem_rows_free(&R);
}

/* The global norm of this rank's rows of X - Y over ||Y||. */
static double dist_rel_err(const bsr_multivec *X, const bsr_multivec *Y)
{
    const double *x = bsr_multivec_cdata(X), *y = bsr_multivec_cdata(Y);
    double loc[2] = {0, 0}, glob[2];
    for (int64_t i = 0; i < bsr_multivec_rows(X) * bsr_multivec_cols(X); i++) {
        loc[0] += (x[i] - y[i]) * (x[i] - y[i]);
        loc[1] += y[i] * y[i];
    }
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(glob[0] / glob[1]);
}

/* A generated problem distributed in place solves to its exact solution;
 * equal consecutive ranges; one rank gives the serial solver's iterations. */
static void test_generate_solve(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    const char *spec = "stencil3d:9:3", *opts = "precond=ilu0,rtol=1e-10";
    bsr_dmatrix *A;
    bsr_problem_rows R;
    BSR_ASSERT_OK(bsr_dmatrix_generate(&A, d, spec, BSR_DOUBLE, &R));
    int64_t q = 729 / nranks, rem = 729 % nranks;
    CU_ASSERT_EQUAL(bsr_dmatrix_nrows(A), q + (rank < rem));
    CU_ASSERT_EQUAL(bsr_dmatrix_row0(A), q * rank + (rank < rem ? rank : rem));
    CU_ASSERT_EQUAL(bsr_dmatrix_nglobal(A), 729);
    bsr_dsolver *s;
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
    BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
    BSR_ASSERT_OK(bsr_dsolver_setup(s, A));
    bsr_multivec *X;
    bsr_multivec_create(&X, bsr_multivec_rows(R.rhs), 1, BSR_DOUBLE);
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_dsolver_solve(s, R.rhs, X, &st));
    double err = dist_rel_err(X, R.xexact);
    CU_ASSERT(err < 1e-7);
    if (nranks == 1) {   /* the serial solver on the serial problem: the same iterations */
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &P));
        bsr_solver *ss;
        BSR_ASSERT_OK(bsr_solver_create_str(&ss, NULL, opts));
        BSR_ASSERT_OK(bsr_solver_setup(ss, P.A));
        bsr_multivec *Xs;
        bsr_multivec_create(&Xs, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE);
        bsr_solver_stats st2;
        BSR_ASSERT_OK(bsr_solver_solve(ss, P.rhs, Xs, &st2));
        CU_ASSERT_EQUAL(st.col[0].iterations, st2.col[0].iterations);
        CU_ASSERT_TRUE(!memcmp(bsr_multivec_cdata(X), bsr_multivec_cdata(Xs), sizeof(double) * 729 * 3));
        bsr_solver_stats_free(&st2);
        bsr_multivec_destroy(Xs);
        bsr_solver_destroy(ss);
        bsr_problem_free(&P);
    }
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_dsolver_destroy(s);
    bsr_dmatrix_destroy(A);
    bsr_problem_rows_free(&R);
    /* a bad spec fails on every rank alike */
    CU_ASSERT_EQUAL(bsr_dmatrix_generate(&A, d, "stencil3d:x", BSR_DOUBLE, &R), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(A);
    bsr_dist_destroy(d);
}

/* The example matrix file, on rank 0 only (NULL elsewhere). */
static bsr_matrix *read_example(void)
{
    if (rank != 0) return NULL;
    const char *src = getenv("BSR_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/matrices/stencil3d_4_4.mtx", src ? src : ".");
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_mm_read(path, 0, BSR_DOUBLE, &A, NULL));
    return A;
}

/* perm is a permutation of 0..n-1 (rank 0). */
static int is_permutation(const int64_t *perm, int64_t n)
{
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = perm[i] >= 0 && perm[i] < n && !seen[perm[i]];
        if (ok) seen[perm[i]] = 1;
    }
    free(seen);
    return ok;
}

/* Scatter then gather gives the vector back bit for bit (k = 1 and 3,
 * double and float, with and without the renumbering); METIS's partition
 * is the same twice and every rank gets rows. */
static void test_vec_roundtrip(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    bsr_matrix *A0 = read_example();
    for (int m = 0; m < 2; m++) {
        bsr_dmatrix *A, *A2;
        int64_t *perm, *perm2;
        BSR_ASSERT_OK(bsr_dmatrix_scatter(&A, d, A0, m ? BSR_PART_CONTIGUOUS : BSR_PART_METIS, &perm));
        BSR_ASSERT_OK(bsr_dmatrix_scatter(&A2, d, A0, m ? BSR_PART_CONTIGUOUS : BSR_PART_METIS, &perm2));
        CU_ASSERT_EQUAL(bsr_dmatrix_nglobal(A), 64);
        CU_ASSERT_EQUAL(bsr_dmatrix_block(A), 4);
        CU_ASSERT(bsr_dmatrix_nrows(A) > 0);
        CU_ASSERT_EQUAL(bsr_dmatrix_nrows(A), bsr_dmatrix_nrows(A2));
        if (rank == 0) {
            CU_ASSERT_TRUE(is_permutation(perm, 64));
            CU_ASSERT_TRUE(!memcmp(perm, perm2, sizeof(int64_t) * 64));  /* deterministic */
            if (m) for (int i = 0; i < 64; i++) CU_ASSERT_EQUAL(perm[i], i);
        } else {
            CU_ASSERT_PTR_NULL(perm);
        }
        for (int k = 1; k <= 3; k += 2)
            for (int ip = 0; ip < 2; ip++)
                for (int useperm = 0; useperm < 2; useperm++) {
                    bsr_precision p = ip ? BSR_FLOAT : BSR_DOUBLE;
                    bsr_multivec *G = NULL, *G2 = NULL, *L = NULL;
                    if (rank == 0) {
                        bsr_multivec_create(&G, 256, k, p);
                        bsr_multivec_random(G, 7 + k);
                        bsr_multivec_create(&G2, 256, k, p);
                    }
                    BSR_ASSERT_OK(bsr_dmatrix_scatter_vec(A, useperm ? perm : NULL, G, &L));
                    CU_ASSERT_EQUAL(bsr_multivec_rows(L), (int64_t)bsr_dmatrix_nrows(A) * 4);
                    CU_ASSERT_EQUAL(bsr_multivec_cols(L), k);
                    BSR_ASSERT_OK(bsr_dmatrix_gather_vec(A, useperm ? perm : NULL, L, G2));
                    if (rank == 0)
                        CU_ASSERT_TRUE(!memcmp(bsr_multivec_cdata(G), bsr_multivec_cdata(G2),
                                               (size_t)256 * k * bsr_precision_size(p)));
                    bsr_multivec_destroy(G); bsr_multivec_destroy(G2); bsr_multivec_destroy(L);
                }
        free(perm); free(perm2);
        bsr_dmatrix_destroy(A);
        bsr_dmatrix_destroy(A2);
    }
    bsr_matrix_destroy(A0);
    bsr_dist_destroy(d);
}

/* The file read by rank 0, scattered (METIS), solved and gathered: the
 * serial solution within the tolerance. */
static void test_scatter_solve(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    bsr_matrix *A0 = read_example();
    const char *opts = "precond=ilu0,rtol=1e-10";
    bsr_dmatrix *A;
    int64_t *perm;
    BSR_ASSERT_OK(bsr_dmatrix_scatter(&A, d, A0, BSR_PART_METIS, &perm));
    bsr_multivec *B0 = NULL, *Xs = NULL, *Xd = NULL;
    if (rank == 0) {   /* the serial solution */
        bsr_multivec_create(&B0, 256, 2, BSR_DOUBLE);
        bsr_multivec_random(B0, 3);
        bsr_multivec_create(&Xs, 256, 2, BSR_DOUBLE);
        bsr_multivec_create(&Xd, 256, 2, BSR_DOUBLE);
        bsr_solver *s;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, opts));
        BSR_ASSERT_OK(bsr_solver_setup(s, A0));
        BSR_ASSERT_OK(bsr_solver_solve(s, B0, Xs, NULL));
        bsr_solver_destroy(s);
    }
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
    bsr_dsolver *ds;
    BSR_ASSERT_OK(bsr_dsolver_create(&ds, d, &o));
    BSR_ASSERT_OK(bsr_dsolver_setup(ds, A));
    bsr_multivec *B, *X;
    BSR_ASSERT_OK(bsr_dmatrix_scatter_vec(A, perm, B0, &B));
    bsr_multivec_create(&X, bsr_multivec_rows(B), 2, BSR_DOUBLE);
    BSR_ASSERT_OK(bsr_dsolver_solve(ds, B, X, NULL));
    BSR_ASSERT_OK(bsr_dmatrix_gather_vec(A, perm, X, Xd));
    if (rank == 0) {
        double err = bsr_test_rel_err(Xd, Xs);
        printf("\n  stencil3d_4_4.mtx scattered over %d ranks: |x - x_serial|/|x_serial| %.1e ", nranks, err);
        CU_ASSERT(err < 1e-7);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_multivec_destroy(B0); bsr_multivec_destroy(Xs); bsr_multivec_destroy(Xd);
    bsr_dsolver_destroy(ds);
    bsr_dmatrix_destroy(A);
    free(perm);
    bsr_matrix_destroy(A0);
    bsr_dist_destroy(d);
}

/* Graphs with nothing to cut: a block diagonal matrix (no edges) and fewer
 * rows than ranks; equal ranges, some ranks without rows. */
static void test_trivial_graphs(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    for (int n = 3; n <= 10; n += 7) {
        bsr_matrix *A0 = NULL;
        if (rank == 0) {
            int rp[11], ci[10];
            double v[40];
            for (int i = 0; i <= n; i++) rp[i] = i;
            for (int i = 0; i < n; i++) ci[i] = i;
            for (int e = 0; e < 4 * n; e++) v[e] = e % 5 == 0 ? 3 : 0.5;
            BSR_ASSERT_OK(bsr_matrix_create(&A0, n, n, 2, rp, ci, v, BSR_DOUBLE, 0));
        }
        bsr_dmatrix *A;
        BSR_ASSERT_OK(bsr_dmatrix_scatter(&A, d, A0, BSR_PART_METIS, NULL));
        int q = n / nranks, rem = n % nranks;
        CU_ASSERT_EQUAL(bsr_dmatrix_nrows(A), q + (rank < rem));
        bsr_dmatrix_destroy(A);
        bsr_matrix_destroy(A0);
    }
    bsr_dist_destroy(d);
}

/* Rank 0 without a matrix, or with a rectangular one, and vectors of the
 * wrong size: every rank returns the error, rank 0's message included. */
static void test_root_failures(void)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    bsr_dmatrix *A = NULL;
    int64_t *perm = (int64_t *)1;
    CU_ASSERT_EQUAL(bsr_dmatrix_scatter(&A, d, NULL, BSR_PART_METIS, &perm), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(A);
    CU_ASSERT_PTR_NULL(perm);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "no matrix on rank 0"));
    if (rank > 0) CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "rank 0:"));
    bsr_matrix *R = rank == 0 ? bsr_test_random_matrix(6, 5, 2, 1, 3, BSR_DOUBLE, 1) : NULL;
    CU_ASSERT_EQUAL(bsr_dmatrix_scatter(&A, d, R, BSR_PART_METIS, NULL), BSR_ERR_SIZE);
    bsr_matrix_destroy(R);
    bsr_matrix *A0 = read_example();
    CU_ASSERT_EQUAL(bsr_dmatrix_scatter(&A, d, A0, (bsr_part_method)7, NULL), BSR_ERR_ARG);
    BSR_ASSERT_OK(bsr_dmatrix_scatter(&A, d, A0, BSR_PART_METIS, &perm));
    bsr_multivec *G = NULL, *L = NULL;
    if (rank == 0) bsr_multivec_create(&G, 255, 1, BSR_DOUBLE);  /* one row short */
    CU_ASSERT_EQUAL(bsr_dmatrix_scatter_vec(A, perm, G, &L), BSR_ERR_SIZE);
    CU_ASSERT_PTR_NULL(L);
    bsr_multivec_destroy(G);
    G = NULL;
    if (rank == 0) bsr_multivec_create(&G, 256, 1, BSR_DOUBLE);
    /* the last rank's part has a row too many */
    bsr_multivec_create(&L, (int64_t)bsr_dmatrix_nrows(A) * 4 + (rank == nranks - 1), 1, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_dmatrix_gather_vec(A, perm, L, G), BSR_ERR_SIZE);
    bsr_multivec_destroy(G); bsr_multivec_destroy(L);
    free(perm);
    bsr_dmatrix_destroy(A);
    bsr_matrix_destroy(A0);
    bsr_dist_destroy(d);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"generated rows equal to the serial generator's bit for bit", test_rows_bitwise},
        {"generated rows beyond 32-bit indices", test_rows_64bit},
        {"generated problem distributed in place solves", test_generate_solve},
        {"vectors scattered and gathered back bit for bit", test_vec_roundtrip},
        {"matrix file scattered from rank 0 solves as the serial solver", test_scatter_solve},
        {"graphs with nothing to cut", test_trivial_graphs},
        {"rank 0's failures reported on every rank", test_root_failures},
        {NULL, NULL},
    };
    return bsr_test_mpi_main("dist_io", tests, argc, argv, &rank, &nranks);
}
