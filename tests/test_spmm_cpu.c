/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU SpMM's one-vector kernels (b fixed, src/spmm.c) against its
 * generic loops: Y = alpha A x + beta Y for one vector equals, bit for bit,
 * the first column of the same product on two vectors, for b = 1..10, float
 * and double, beta zero and not, S1 and OpenMP kernels, and every form of
 * the CPU kernels this processor has (bsr_blk_mulsub_force: with AVX, b = 4
 * in double takes its AVX row, b = 5 too). */
#include "harness.h"
#include "internal.h"
#include "blockops.h"
#include <string.h>

/* Entry (row e, column j) of a k-column multivec of precision p, as double. */
static double at(const bsr_multivec *X, int64_t e, int j, int k)
{
    const void *d = bsr_multivec_cdata(X);
    return X->prec == BSR_DOUBLE ? ((const double *)d)[e * k + j] : ((const float *)d)[e * k + j];
}

/* One vector = first of two, bit for bit, in the kernels' form `form`. */
static int one_vs_two(int form)
{
    const double betas[2] = {0.0, -0.75};
    const bsr_spmm_kernel kern[2] = {BSR_SPMM_S1, BSR_SPMM_AUTO};
    int compared = 0;
    CU_ASSERT_NOT_EQUAL(bsr_blk_mulsub_force(form), -1);
    CU_ASSERT_EQUAL(bsr_cpu_avx(), form == 2);
    for (int b = 1; b <= BSR_MAX_BLOCK; b++)
        for (int prec = 0; prec < 2; prec++) {
            bsr_precision p = prec ? BSR_FLOAT : BSR_DOUBLE;
            int n = 2000 / b + 50;
            bsr_matrix *A = bsr_test_random_matrix(n, n, b, 1, 9, p, 40 + b);
            CU_ASSERT_PTR_NOT_NULL_FATAL(A);
            const int64_t N = (int64_t)n * b;
            for (int ib = 0; ib < 2; ib++)
                for (int ik = 0; ik < 2; ik++) {
                    bsr_multivec *X1, *Y1, *X2, *Y2;
                    BSR_ASSERT_OK(bsr_multivec_create(&X1, N, 1, p));
                    BSR_ASSERT_OK(bsr_multivec_create(&Y1, N, 1, p));
                    BSR_ASSERT_OK(bsr_multivec_create(&X2, N, 2, p));
                    BSR_ASSERT_OK(bsr_multivec_create(&Y2, N, 2, p));
                    BSR_ASSERT_OK(bsr_multivec_random(X2, 3 + b));
                    BSR_ASSERT_OK(bsr_multivec_random(Y2, 5 + b));
                    size_t es = bsr_precision_size(p);
                    char *x1 = bsr_multivec_data(X1), *y1 = bsr_multivec_data(Y1);
                    const char *x2 = bsr_multivec_cdata(X2), *y2 = bsr_multivec_cdata(Y2);
                    for (int64_t e = 0; e < N; e++) {
                        memcpy(x1 + e * es, x2 + 2 * e * es, es);
                        memcpy(y1 + e * es, y2 + 2 * e * es, es);
                    }
                    double y0 = at(Y1, 0, 0, 1);
                    BSR_ASSERT_OK(bsr_spmm_cpu(kern[ik], 1.25, A, X1, betas[ib], Y1));
                    BSR_ASSERT_OK(bsr_spmm_cpu(kern[ik], 1.25, A, X2, betas[ib], Y2));
                    int same = 1;
                    for (int64_t e = 0; e < N; e++)
                        if (memcmp((const char *)bsr_multivec_cdata(Y1) + e * es,
                                   (const char *)bsr_multivec_cdata(Y2) + 2 * e * es, es)) same = 0;
                    CU_ASSERT(same);
                    CU_ASSERT(at(Y1, 0, 0, 1) != y0);   /* the product wrote Y */
                    compared++;
                    bsr_multivec_destroy(X1); bsr_multivec_destroy(Y1);
                    bsr_multivec_destroy(X2); bsr_multivec_destroy(Y2);
                }
            bsr_matrix_destroy(A);
        }
    bsr_blk_mulsub_force(-1);
    return compared;
}

static void test_one_vs_two(void)
{
    const int best = bsr_blk_mulsub_force(-1);
    printf("\n  forms 0..%d (2: AVX) ", best);
    for (int form = 0; form <= best; form++) CU_ASSERT_EQUAL(one_vs_two(form), BSR_MAX_BLOCK * 2 * 4);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"one vector (b fixed) = first of two (generic), bit for bit", test_one_vs_two},
        {NULL, NULL}};
    return bsr_test_main("spmm_cpu", tests, argc, argv);
}
