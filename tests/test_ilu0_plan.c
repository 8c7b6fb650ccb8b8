/* SPDX-License-Identifier: BSD-3-Clause */
/* Host symbolic work of the device ILU numeric (src/ilu/ilu0_plan.c), no GPU
 * needed: the destination of every block of A in the factors and the update
 * lists equal, array for array, those of a serial mark-based sweep, with 1
 * and several threads, for ILU(0)'s patterns and for the frozen patterns of
 * ILU2 (classes: R * W never formed) and ILUT; a row of A outside ILU(0)'s
 * patterns is named. */
#include "harness.h"
#include "ilu0_plan.h"
#include "ilu_impl.h"
#include <omp.h>
#include <string.h>

/* Reference: the serial map, the pattern's row marked in a dense array (W
 * index per column); a block of A outside a frozen pattern goes to -1, one
 * outside ILU(0)'s patterns names its row. */
static int ref_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw)
{
    bsr_ilu_fpat P;
    BSR_ASSERT_OK(bsr_ilu_fpattern(F, &P));
    int *mark = malloc(sizeof(int) * (F->n + 1)), bad = -1;
    for (int j = 0; j < F->n; j++) mark[j] = -1;
    for (int k = 0; k < F->n && bad < 0; k++) {
        for (int l = P.Lp[k]; l < P.Lp[k + 1]; l++) mark[P.Lc[l]] = l;
        for (int q = P.Up[k]; q < P.Up[k + 1]; q++) mark[P.Uc[q]] = P.nL + q;
        adiag[k] = -1;
        diagw[k] = P.nL + P.Up[k];
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            int j = F->ac[p];
            if (mark[j] < 0 && !P.frozen) { bad = k; break; }
            adst[p] = mark[j];
            if (j == k) adiag[k] = p;
        }
        for (int l = P.Lp[k]; l < P.Lp[k + 1]; l++) mark[P.Lc[l]] = -1;
        for (int q = P.Up[k]; q < P.Up[k + 1]; q++) mark[P.Uc[q]] = -1;
    }
    free(mark);
    return bad;
}

/* Reference: the serial update lists, row i's pattern marked in a dense
 * array (W index per column), one append per match; a second-order lower
 * block skips the second-order upper ones (R * W is never formed). */
static int64_t ref_updates(const bsr_ilu *F, int64_t *ptr, int *list)
{
    bsr_ilu_fpat P;
    BSR_ASSERT_OK(bsr_ilu_fpattern(F, &P));
    const int n = F->n, nL = P.nL;
    int *mark = malloc(sizeof(int) * (n + 1));
    int64_t len = 0;
    for (int j = 0; j < n; j++) mark[j] = -1;
    ptr[0] = 0;
    for (int i = 0; i < n; i++) {
        for (int l = P.Lp[i]; l < P.Lp[i + 1]; l++) mark[P.Lc[l]] = l;
        for (int q = P.Up[i]; q < P.Up[i + 1]; q++) mark[P.Uc[q]] = nL + q;
        for (int l = P.Lp[i]; l < P.Lp[i + 1]; l++) {
            const int k = P.Lc[l], second = P.lk && P.lk[l];
            list[2 * len] = nL + P.Up[k]; list[2 * len + 1] = k; len++;
            for (int q = P.Up[k] + 1; q < P.Up[k + 1]; q++) {
                int t = mark[P.Uc[q]];
                if (t >= 0 && !(second && P.uk[q])) { list[2 * len] = nL + q; list[2 * len + 1] = t; len++; }
            }
            ptr[l + 1] = len;
        }
        for (int l = P.Lp[i]; l < P.Lp[i + 1]; l++) mark[P.Lc[l]] = -1;
        for (int q = P.Up[i]; q < P.Up[i + 1]; q++) mark[P.Uc[q]] = -1;
    }
    free(mark);
    return len;
}

/* Upper bound of the update list length: every upper block of row k per lower block (i,k). */
static int64_t max_updates(const bsr_ilu *F)
{
    bsr_ilu_fpat P;
    BSR_ASSERT_OK(bsr_ilu_fpattern(F, &P));
    int64_t m = 0;
    for (int l = 0; l < P.nL; l++) m += P.Up[P.Lc[l] + 1] - P.Up[P.Lc[l]];
    return m;
}

/* The plan of F with nt threads equals the references (outputs poisoned first). */
static void check_plan(const bsr_ilu *F, int nt, const int *radst, const int *radiag, const int *rdiagw,
                       const int64_t *rptr, const int *rlist, int64_t rn)
{
    const int n = F->n, nA = F->nnzbA;
    int *adst = malloc(sizeof(int) * (nA + 1)), *adiag = malloc(sizeof(int) * (n + 1)), *diagw = malloc(sizeof(int) * (n + 1));
    memset(adst, 0x7f, sizeof(int) * (nA + 1));
    memset(adiag, 0x7f, sizeof(int) * (n + 1));
    memset(diagw, 0x7f, sizeof(int) * (n + 1));
    omp_set_num_threads(nt);
    bsr_team_force(1);   /* nt threads at these sizes too */
    BSR_ASSERT_OK(bsr_ilu0_plan_map(F, adst, adiag, diagw));
    CU_ASSERT(bsr_test_same_ints(adst, radst, (size_t)nA) && bsr_test_same_ints(adiag, radiag, (size_t)n) && bsr_test_same_ints(diagw, rdiagw, (size_t)n));
    int64_t *ptr = NULL;
    int *list = NULL;
    int64_t len = -1;
    BSR_ASSERT_OK(bsr_ilu0_plan_updates(F, &ptr, &list, &len));
    CU_ASSERT_EQUAL(len, rn);
    bsr_ilu_fpat P;
    BSR_ASSERT_OK(bsr_ilu_fpattern(F, &P));
    CU_ASSERT(len == rn && !memcmp(ptr, rptr, sizeof(int64_t) * ((size_t)P.nL + 1)) && bsr_test_same_ints(list, rlist, 2 * (size_t)rn));
    bsr_team_force(0);
    free(adst); free(adiag); free(diagw); free(ptr); free(list);
}

/* Stencil (natural, ND, RCM) and irregular random patterns (natural, ND),
 * 1, 2 and 5 threads: the arrays of the serial references. */
static void test_equals_reference(void)
{
    int nt = omp_get_max_threads();
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:20:3", BSR_DOUBLE, &P));
    bsr_matrix *R = bsr_test_irregular_matrix(9000, 1, 5);
    bsr_problem C;   /* coupled 4 x 4 blocks for the frozen patterns (the random one fills in densely) */
    BSR_ASSERT_OK(bsr_generate("cfd3d:19,4,10", BSR_DOUBLE, &C));
    const bsr_matrix *mats[] = {P.A, P.A, P.A, R, R};
    const bsr_order_kind kinds[] = {BSR_ORDER_NATURAL, BSR_ORDER_ND, BSR_ORDER_RCM, BSR_ORDER_NATURAL, BSR_ORDER_ND};
    for (int m = 0; m < 9; m++) {
        /* ILU(0)'s patterns, then the frozen patterns of ILU2 and ILUT (fill
         * outside A, blocks of A outside the pattern, second-order classes) */
        bsr_ilu *F = NULL;
        if (m < 5) F = bsr_test_ilu0_symbolic(mats[m], kinds[m]);
        else {
            bsr_ilu_options o;
            bsr_ilu_options_default(&o, m < 8 ? BSR_ILU2 : BSR_ILUT);
            o.tau1 = 0.05;
            o.order.kind = m == 6 ? BSR_ORDER_ND : BSR_ORDER_NATURAL;
            BSR_ASSERT_OK(bsr_ilu_setup(m == 7 ? C.A : P.A, &o, &F));
            CU_ASSERT_FATAL(F->fz != NULL);
            if (m < 8) CU_ASSERT(F->fz->nsec > 0);
        }
        const int n = F->n, nA = F->nnzbA;
        CU_ASSERT_FATAL(n >= 2 * BSR_PAR_ROWS);
        bsr_ilu_fpat P;
        BSR_ASSERT_OK(bsr_ilu_fpattern(F, &P));
        int *adst = malloc(sizeof(int) * (nA + 1)), *adiag = malloc(sizeof(int) * (n + 1)), *diagw = malloc(sizeof(int) * (n + 1));
        int64_t *ptr = malloc(sizeof(int64_t) * (P.nL + 1));
        int *list = malloc(sizeof(int) * 2 * (max_updates(F) + P.nL + 1));
        CU_ASSERT_EQUAL(ref_map(F, adst, adiag, diagw), -1);
        int64_t len = ref_updates(F, ptr, list);
        CU_ASSERT(len > P.nL);   /* some real updates besides the pivots */
        for (int t = 1; t <= 5; t += t < 2 ? 1 : 3) check_plan(F, t, adst, adiag, diagw, ptr, list, len);
        free(adst); free(adiag); free(diagw); free(ptr); free(list);
        bsr_ilu_destroy(F);
    }
    bsr_matrix_destroy(R);
    bsr_problem_free(&P);
    bsr_problem_free(&C);
    omp_set_num_threads(nt);
}

/* Rows of A outside the ILU(0) patterns (an L column and a U column
 * altered): the smallest such row is named at any thread count. */
static void test_map_mismatch(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* 4 threads at this size */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:20:3", BSR_DOUBLE, &P));
    bsr_ilu *F = bsr_test_ilu0_symbolic(P.A, BSR_ORDER_NATURAL);
    const int n = F->n, k1 = n / 3, k2 = n / 2;
    int p1 = F->ap[k1], p2 = F->ap[k2 + 1] - 1;   /* k1's first block is in L, k2's last in U */
    CU_ASSERT_FATAL(F->ac[p1] < k1 && F->ac[p2] > k2);
    int s1 = F->ac[p1], s2 = F->ac[p2];
    F->ac[p1] = s1 + 1;
    F->ac[p2] = s2 - 1;
    int *adst = malloc(sizeof(int) * (F->nnzbA + 1)), *adiag = malloc(sizeof(int) * (n + 1)), *diagw = malloc(sizeof(int) * (n + 1));
    for (int r = 0; r < 2; r++) {   /* both rows altered, then only k2 */
        char want[96];
        snprintf(want, sizeof want, "permuted row %d of A does not match", r ? k2 : k1);
        for (int t = 1; t <= 4; t += 3) {
            omp_set_num_threads(t);
            CU_ASSERT_EQUAL(bsr_ilu0_plan_map(F, adst, adiag, diagw), BSR_ERR_INTERNAL);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
        }
        F->ac[p1] = s1;
    }
    F->ac[p2] = s2;
    BSR_ASSERT_OK(bsr_ilu0_plan_map(F, adst, adiag, diagw));
    free(adst); free(adiag); free(diagw);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"map and update lists equal the serial reference (1, 2, 5 threads)", test_equals_reference},
        {"a row outside the patterns is named (smallest, any thread count)", test_map_mismatch},
        {NULL, NULL}};
    return bsr_test_main("ilu0_plan", tests, argc, argv);
}
