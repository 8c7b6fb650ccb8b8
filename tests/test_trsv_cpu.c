/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU triangular solves' paths (src/trsv/trsv.c): natural order with the
 * b-specialized kernels, the level schedule (one thread and a team), and the
 * automatic choice all give the bits of the generic reference kernel run in
 * level order, for b = 1..10, float and double, several right-hand-side
 * counts, on random triangles and on ILU(0) factors of a generated problem. */
#include "harness.h"
#include "internal.h"
#include "../kernels/trsv/trsv.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* A random n x n block triangle: upper = 0: strictly lower, up to maxl
 * blocks per row in the span rows before it; upper = 1: the diagonal block
 * first, then up to maxl blocks in the span rows after it.  Off-diagonal
 * entries scaled by 1/(b * row length) so that the solve stays bounded. */
static bsr_matrix *random_triangle(int n, int b, int upper, int maxl, int span, bsr_precision p, uint64_t seed)
{
    int *rowptr = malloc(sizeof(int) * (n + 1)), *colind = malloc(sizeof(int) * (size_t)n * (maxl + 1));
    double *val = malloc(sizeof(double) * (size_t)n * (maxl + 1) * b * b);
    int *mark = calloc((size_t)n, sizeof(int));
    uint64_t s = seed;
    int nz = 0;
    rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        int r0 = nz;
        if (upper) colind[nz++] = i;
        int avail = upper ? n - 1 - i : i, want = (int)((bsr_test_unif_pm(&s) + 1.0) * 0.5 * (maxl + 1));
        if (want > maxl) want = maxl;
        if (want > avail) want = avail;
        for (int t = 0; t < want; t++) {
            int w = span < avail ? span : avail, c;
            do c = upper ? i + 1 + (int)((bsr_test_unif_pm(&s) + 1.0) * 0.5 * w) % w : i - 1 - (int)((bsr_test_unif_pm(&s) + 1.0) * 0.5 * w) % w;
            while (mark[c] == i + 1);
            mark[c] = i + 1;
            colind[nz++] = c;
        }
        double sc = 1.0 / (b * (nz - r0 + 1));
        for (int q = r0; q < nz; q++)
            for (int e = 0; e < b * b; e++) {
                double v = bsr_test_unif_pm(&s);
                val[(size_t)q * b * b + e] = upper && q == r0 ? v + (e % (b + 1) == 0 ? 2.0 : 0.0) : v * sc;
            }
        rowptr[i + 1] = nz;
    }
    void *pv = val;
    float *fv = NULL;
    if (p == BSR_FLOAT) {
        fv = malloc(sizeof(float) * (size_t)nz * b * b);
        for (size_t e = 0; e < (size_t)nz * b * b; e++) fv[e] = (float)val[e];
        pv = fv;
    }
    bsr_matrix *T = NULL;
    CU_ASSERT_EQUAL(bsr_matrix_create(&T, n, n, b, rowptr, colind, pv, p, 0), BSR_OK);
    free(rowptr); free(colind); free(val); free(fv); free(mark);
    return T;
}

/* Nonzero when the schedule visits rows in an order other than 0..n-1 (or
 * n-1..0 for U): the level path then differs from the natural one. */
static int order_differs(const bsr_levels *lv, int upper)
{
    for (int q = 0; q < lv->n; q++)
        if (lv->rows[q] != (upper ? lv->n - 1 - q : q)) return 1;
    return 0;
}

/* Every path on T (k columns) against the reference in lv's order, bit for
 * bit; the solution also checked finite and different from the right-hand
 * side (the solve did something).  Returns the number of paths compared. */
static int check_paths(const bsr_matrix *T, const bsr_levels *lv, int upper, int k, uint64_t seed)
{
    const int64_t N = (int64_t)T->nbrows * T->b;
    const bsr_precision p = T->prec;
    const size_t bytes = bsr_precision_size(p) * (size_t)N * k;
    bsr_multivec *X, *R, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&X, N, k, p));
    BSR_ASSERT_OK(bsr_multivec_create(&R, N, k, p));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, N, k, p));
    BSR_ASSERT_OK(bsr_multivec_random(X, seed));
    BSR_ASSERT_OK(bsr_trsv_cpu(T, lv, upper, BSR_TRSV_CPU_REFERENCE, X, R));
    CU_ASSERT(memcmp(bsr_multivec_cdata(R), bsr_multivec_cdata(X), bytes) != 0);
    int finite = 1;
    for (int64_t e = 0; e < N * k; e++) {
        double v = p == BSR_DOUBLE ? ((const double *)bsr_multivec_cdata(R))[e] : ((const float *)bsr_multivec_cdata(R))[e];
        if (!isfinite(v)) finite = 0;
    }
    CU_ASSERT(finite);
    int n = 0;
    const bsr_trsv_cpu_path paths[] = {BSR_TRSV_CPU_NATURAL, BSR_TRSV_CPU_LEVELS, BSR_TRSV_CPU_AUTO};
    const int threads[] = {1, 3};
    int nt0 = omp_get_max_threads();
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(threads[t]);
        for (int q = 0; q < 3; q++) {
            BSR_ASSERT_OK(bsr_multivec_fill(Y, NAN));
            BSR_ASSERT_OK(bsr_trsv_cpu(T, lv, upper, paths[q], X, Y));
            CU_ASSERT(!memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(R), bytes));
            n++;
        }
        /* the public entry points, with and without the schedule, in place */
        for (int w = 0; w < 2; w++) {
            BSR_ASSERT_OK(bsr_multivec_copy(Y, X));
            BSR_ASSERT_OK((upper ? bsr_trsv_upper : bsr_trsv_lower)(T, w ? lv : NULL, Y, Y));
            CU_ASSERT(!memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(R), bytes));
            n++;
        }
    }
    omp_set_num_threads(nt0);
    /* the reference without a schedule (natural order) */
    BSR_ASSERT_OK(bsr_trsv_cpu(T, NULL, upper, BSR_TRSV_CPU_REFERENCE, X, Y));
    CU_ASSERT(!memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(R), bytes));
    /* x = -0 everywhere: the signs of the zeros (U: the pivot product starts
     * from +0, so -0 entries come out +0) */
    BSR_ASSERT_OK(bsr_multivec_fill(X, -0.0));
    BSR_ASSERT_OK(bsr_trsv_cpu(T, lv, upper, BSR_TRSV_CPU_REFERENCE, X, R));
    for (int q = 0; q < 2; q++) {
        BSR_ASSERT_OK(bsr_trsv_cpu(T, lv, upper, q ? BSR_TRSV_CPU_LEVELS : BSR_TRSV_CPU_NATURAL, X, Y));
        CU_ASSERT(!memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(R), bytes));
    }
    bsr_multivec_destroy(X); bsr_multivec_destroy(R); bsr_multivec_destroy(Y);
    return n + 1;
}

/* Random triangles, b = 1..10, float and double, k = 1, 3, 17 (17: two
 * accumulator chunks); schedules with levels wide enough for a team. */
static void test_random(void)
{
    const int ks[3] = {1, 3, 17};
    int compared = 0;
    for (int b = 1; b <= BSR_MAX_BLOCK; b++)
        for (int prec = 0; prec < 2; prec++)
            for (int upper = 0; upper < 2; upper++) {
                int n = bsr_test_quick() ? 300 : 700;
                bsr_matrix *T = random_triangle(n, b, upper, 6, 120, prec ? BSR_FLOAT : BSR_DOUBLE,
                                                1000 * b + 10 * prec + upper);
                CU_ASSERT_PTR_NOT_NULL_FATAL(T);
                bsr_levels *lv = NULL;
                BSR_ASSERT_OK(bsr_levels_build(T, upper, &lv));
                CU_ASSERT(lv->nlevels > 1 && lv->max_width >= 32);
                CU_ASSERT(order_differs(lv, upper));
                for (int ik = 0; ik < 3; ik++) compared += check_paths(T, lv, upper, ks[ik], 77 + b + ik);
                bsr_levels_free(lv);
                bsr_matrix_destroy(T);
            }
    CU_ASSERT_EQUAL(compared, BSR_MAX_BLOCK * 2 * 2 * 3 * 11);
}

/* ILU(0) factors of stencil3d:12:4 under natural and ND orderings, double
 * and float factors, with the factorization's own schedules; and the whole
 * apply with one vector against the same vector among two, and in place. */
static void test_stencil(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:12:4", BSR_DOUBLE, &P));
    const bsr_order_kind kinds[2] = {BSR_ORDER_NATURAL, BSR_ORDER_ND};
    for (int prec = 0; prec < 2; prec++) {
        bsr_matrix *A = P.A;
        if (prec) BSR_ASSERT_OK(bsr_matrix_copy(P.A, BSR_FLOAT, &A));
        for (int o = 0; o < 2; o++) {
            bsr_ilu_options io;
            bsr_ilu_options_default(&io, BSR_ILU0);
            bsr_order_options_default(&io.order, kinds[o]);
            bsr_ilu *F = NULL;
            bsr_ilu_factors f;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &io, &F));
            BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
            CU_ASSERT_EQUAL(f.L->prec, prec ? BSR_FLOAT : BSR_DOUBLE);
            CU_ASSERT(order_differs(f.lvL, 0) && order_differs(f.lvU, 1));
            for (int k = 1; k <= 2; k++) {
                check_paths(f.L, f.lvL, 0, k, 5 + k);
                check_paths(f.U, f.lvU, 1, k, 9 + k);
            }
            /* the whole apply: one vector (the b-specialized gather and row
             * kernels) = the first of two (the generic loops), bit for bit */
            const int64_t N = (int64_t)f.L->nbrows * f.L->b;
            bsr_multivec *X1, *Y1, *X2, *Y2;
            BSR_ASSERT_OK(bsr_multivec_create(&X1, N, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y1, N, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&X2, N, 2, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y2, N, 2, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_random(X2, 31));
            double *x1 = bsr_multivec_data(X1);
            const double *x2 = bsr_multivec_cdata(X2);
            for (int64_t e = 0; e < N; e++) x1[e] = x2[2 * e];
            BSR_ASSERT_OK(bsr_ilu_apply(F, X1, Y1));
            BSR_ASSERT_OK(bsr_ilu_apply(F, X2, Y2));
            const double *y1 = bsr_multivec_cdata(Y1), *y2 = bsr_multivec_cdata(Y2);
            int same = 1, moved = 0;
            for (int64_t e = 0; e < N; e++) {
                if (memcmp(&y1[e], &y2[2 * e], sizeof(double))) same = 0;
                if (y1[e] != x1[e]) moved = 1;
            }
            CU_ASSERT(same && moved);
            /* in place (Y = X): the same bits too */
            BSR_ASSERT_OK(bsr_ilu_apply(F, X1, X1));
            CU_ASSERT_EQUAL(memcmp(x1, y1, sizeof(double) * (size_t)N), 0);
            bsr_multivec_destroy(X1); bsr_multivec_destroy(Y1); bsr_multivec_destroy(X2); bsr_multivec_destroy(Y2);
            bsr_ilu_destroy(F);
        }
        if (A != P.A) bsr_matrix_destroy(A);
    }
    bsr_problem_free(&P);
}

/* bsr_trsv_tail (the device solve's chain of long rows, found on the host):
 * a natural-order ILU(0) factor of bsr_test_chain_tail_matrix has L's
 * 160-row chain after one wide level and U a chain from its start; a chain
 * of 10 rows is too short, and a stencil's factors (narrow last levels of
 * short rows) have none. */
static void test_tail(void)
{
    static const int nts[] = {160, 10};
    for (int c = 0; c < 3; c++) {
        bsr_problem P = {0};
        bsr_matrix *A = NULL;
        if (c < 2) A = bsr_test_chain_tail_matrix(900, nts[c], 2, 4242);
        else BSR_ASSERT_OK(bsr_generate("stencil3d:12:4", BSR_DOUBLE, &P));
        bsr_ilu *F = bsr_test_ilu0(c < 2 ? A : P.A, BSR_ORDER_NATURAL);
        bsr_ilu_factors f;
        BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
        const int tl = bsr_trsv_tail(f.L, f.lvL, 0), tu = bsr_trsv_tail(f.U, f.lvU, 1);
        CU_ASSERT_EQUAL(tl, c == 0 ? 160 : 0);
        CU_ASSERT_EQUAL(tu, c == 0 ? 900 : 0);
        bsr_ilu_destroy(F);
        bsr_matrix_destroy(A);
        bsr_problem_free(&P);
    }
}

/* Inputs the solves refuse. */
static void test_refused(void)
{
    bsr_matrix *L = random_triangle(50, 3, 0, 3, 10, BSR_DOUBLE, 1), *U = random_triangle(50, 3, 1, 3, 10, BSR_DOUBLE, 2);
    bsr_multivec *X, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&X, 150, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, 151, 1, BSR_DOUBLE));
    CU_ASSERT_EQUAL(bsr_trsv_cpu(U, NULL, 0, BSR_TRSV_CPU_NATURAL, X, X), BSR_ERR_STRUCTURE);
    CU_ASSERT_EQUAL(bsr_trsv_cpu(L, NULL, 1, BSR_TRSV_CPU_NATURAL, X, X), BSR_ERR_STRUCTURE);
    CU_ASSERT_EQUAL(bsr_trsv_cpu(L, NULL, 0, BSR_TRSV_CPU_NATURAL, X, Y), BSR_ERR_SIZE);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_matrix_destroy(L); bsr_matrix_destroy(U);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"paths = reference bit for bit, random triangles b = 1..10", test_random},
        {"paths = reference bit for bit, ILU(0) of stencil3d:12:4", test_stencil},
        {"the tail of long rows (bsr_trsv_tail)", test_tail},
        {"bad inputs refused", test_refused},
        {NULL, NULL}};
    return bsr_test_main("trsv_cpu", tests, argc, argv);
}
