/* Maximum-product transversal (reorder/match.c): a permutation, scaled
 * blocks <= 1 with the matched ones = 1, a zero-diagonal matrix with a known
 * perfect matching found, structural singularity named, valid matchings of
 * the real matrices. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic uniform in [0,1). */
static double rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* n x n blocks of b: no diagonal block; block (i, sigma(i)) of norm ~5..6,
 * `extra` random blocks per row of entries in [-0.1, 0.1) elsewhere; sigma a
 * permutation without fixed points.  The maximum-product matching is sigma. */
static bsr_matrix *zero_diag(int n, int b, int extra, int *sigma, uint64_t seed)
{
    for (int i = 0; i < n; i++) sigma[i] = i;
    for (int i = n - 1; i > 0; i--) {   /* Sattolo: one cycle, no fixed point */
        int j = (int)(rnd(&seed) * i);
        int t = sigma[i]; sigma[i] = sigma[j]; sigma[j] = t;
    }
    int bb = b * b, cap = n * (extra + 1);
    int *rp = calloc((size_t)n + 1, sizeof(int)), *ci = malloc(sizeof(int) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap * bb);
    int m = 0;
    for (int i = 0; i < n; i++) {
        int row0 = m;
        for (int t = 0; t <= extra; t++) {
            int j = t == 0 ? sigma[i] : (int)(rnd(&seed) * n);
            int dup = j == i;
            for (int q = row0; q < m; q++) dup |= ci[q] == j;
            if (dup) continue;
            ci[m] = j;
            for (int e = 0; e < bb; e++)
                v[(size_t)m * bb + e] = t == 0 ? (e % (b + 1) == 0 ? 5.0 / sqrt(b) : 0.3 * rnd(&seed))
                                             : 0.2 * rnd(&seed) - 0.1;
            m++;
        }
        rp[i + 1] = m;
    }
    bsr_matrix *A = NULL;
    bsr_status s = bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0);
    if (s) fprintf(stderr, "zero_diag: %s\n", bsr_last_error());
    free(rp); free(ci); free(v);
    return A;
}

/* Check M on A: match a permutation, nperm right, every scaled block norm
 * <= 1 and the matched ones = 1 (relative 1e-10). */
static void check_matching(const bsr_matrix *A, const bsr_matching *M)
{
    const int n = bsr_matrix_nbrows(A), b = bsr_matrix_block(A), bb = b * b;
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    const double *v = bsr_matrix_values(A);
    CU_ASSERT_EQUAL_FATAL(M->n, n);
    int *seen = calloc((size_t)n, sizeof(int)), nperm = 0;
    for (int j = 0; j < n; j++) {
        CU_ASSERT_FATAL(M->match[j] >= 0 && M->match[j] < n);
        CU_ASSERT_EQUAL(seen[M->match[j]], 0);
        seen[M->match[j]] = 1;
        nperm += M->match[j] != j;
    }
    CU_ASSERT_EQUAL(nperm, M->nperm);
    int matched_seen = 0;
    double worst = 0.0;
    for (int i = 0; i < n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            double s = 0.0;
            for (int e = 0; e < bb; e++) s += v[(size_t)p * bb + e] * v[(size_t)p * bb + e];
            double w = sqrt(s) * M->dr[i] * M->dc[ci[p]];
            if (w > worst) worst = w;
            if (M->match[ci[p]] == i) { CU_ASSERT_DOUBLE_EQUAL(w, 1.0, 1e-10); matched_seen++; }
        }
    CU_ASSERT(worst <= 1.0 + 1e-10);
    CU_ASSERT_EQUAL(matched_seen, n);   /* every matched pair is a stored block */
    free(seen);
}

/* Zero diagonal with a known perfect matching (b = 1 and b = 3): found exactly. */
static void test_known_matching(void)
{
    for (int b = 1; b <= 3; b += 2) {
        int n = 400, *sigma = malloc(sizeof(int) * n);
        bsr_matrix *A = zero_diag(n, b, 4, sigma, 7 + b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(A);
        bsr_matching *M = NULL;
        BSR_ASSERT_OK(bsr_match_mpt(A, &M));
        check_matching(A, M);
        int wrong = 0;
        for (int i = 0; i < n; i++) wrong += M->match[sigma[i]] != i;
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT_EQUAL(M->nperm, n);
        bsr_matching_free(M);
        bsr_matrix_destroy(A);
        free(sigma);
    }
}

/* Random and irregular patterns: a valid matching with the scaling property;
 * the same result twice (deterministic). */
static void test_random_valid(void)
{
    for (int b = 1; b <= 4; b++) {
        bsr_matrix *R = bsr_test_irregular_matrix(300, b, 11 + b);
        bsr_matching *M = NULL, *M2 = NULL;
        BSR_ASSERT_OK(bsr_match_mpt(R, &M));
        check_matching(R, M);
        BSR_ASSERT_OK(bsr_match_mpt(R, &M2));
        CU_ASSERT_EQUAL(memcmp(M->match, M2->match, sizeof(int) * 300), 0);
        CU_ASSERT_EQUAL(memcmp(M->dr, M2->dr, sizeof(double) * 300), 0);
        bsr_matching_free(M);
        bsr_matching_free(M2);
        bsr_matrix_destroy(R);
    }
}

/* Rows 0 and 1 both only in column 0: structurally singular, named. */
static void test_singular(void)
{
    int rp[] = {0, 1, 2, 4, 6}, ci[] = {0, 0, 1, 2, 2, 3};
    double v[] = {1, 2, 3, 4, 5, 6};
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 4, 4, 1, rp, ci, v, BSR_DOUBLE, 0));
    bsr_matching *M = NULL;
    CU_ASSERT_EQUAL(bsr_match_mpt(A, &M), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NULL(M);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "1 of 4 block rows"));
    bsr_clear_error();
    bsr_matrix_destroy(A);
}

/* Every real matrix: a valid matching (or a named structural singularity). */
static void test_real_valid(void)
{
    char **list = NULL;
    int nf = bsr_test_real_list(&list, 64);
    if (!nf) { BSR_TEST_SKIP("no real-matrix folder"); return; }
    for (int f = 0; f < nf; f++) {
        if (strstr(list[f], "_rhs")) continue;
        bsr_matrix *A = NULL;
        if (bsr_mm_read(list[f], 1, BSR_DOUBLE, &A, NULL)) { bsr_clear_error(); continue; }
        bsr_matching *M = NULL;
        bsr_status s = bsr_match_mpt(A, &M);
        if (s) { CU_ASSERT_EQUAL(s, BSR_ERR_SINGULAR); bsr_clear_error(); }
        else check_matching(A, M);
        bsr_matching_free(M);
        bsr_matrix_destroy(A);
    }
    bsr_test_free_list(list, nf);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"known matching on a zero diagonal (b 1, 3)", test_known_matching},
        {"random patterns: permutation, scaling, deterministic", test_random_valid},
        {"structurally singular", test_singular},
        {"real matrices: valid matchings", test_real_valid},
        {NULL, NULL}};
    return bsr_test_main("match", tests, argc, argv);
}
