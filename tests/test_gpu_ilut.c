/* SPDX-License-Identifier: BSD-3-Clause */
/* The threshold rows of ILUT / ILU2 on the device (kernels/ilu/ilut_gpu.cu)
 * against the host's (src/ilu/ilu_row.c) on the same ordering and options: the
 * same frozen pattern, classes included (L, R, capped-out, U, W), the same
 * counters, and the device's factors on that pattern equal to the host
 * setup's within 1e-12 (they are the same bits: both sides form every block
 * in the same order without FMA).  Random block matrices (b = 1..10, caps
 * auto, 2 and a fill bound, natural and RCM order), generated CFD systems in
 * double and float, real matrices; errors name the host's row; a setup
 * without a cap falls back to the host; two device runs give the same
 * pattern.  The pattern, L, U and their schedules made on the device from
 * the rows equal those the host makes of the same rows (BSR_ILU_DSYM_CHECK),
 * and the factors on it come from the device's arrays.  Skips (77) without
 * a GPU; BSR_TEST_QUICK: fewer cases. */
#include "harness.h"
#include "internal.h"
#include "ilu_impl.h"
#include "gpu_ilu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

/* What the device preconditioner makes of an ILUT/ILU2 factored on the
 * device: the symbolic value of A, then the pattern pass with its rows on
 * ctx's device (A's device mirror current); *G NULL on failure. */
static bsr_status setup_dev(const bsr_matrix *A, const bsr_ilu_options *o, bsr_ilu **G)
{
    bsr_status s = ilu_sym_build(A, o, NULL, NULL, G);
    if (!s) s = ilu_pattern_pass(*G, ctx, A);
    if (s && *G) { bsr_ilu_destroy(*G); *G = NULL; }
    return s;
}

/* The frozen patterns of F and G are the same, classes included. */
static int same_pattern(const bsr_ilu *F, const bsr_ilu *G)
{
    const ilu_pattern *p = F->fz, *q = G->fz;
    if (!p || !q || p->n != q->n || p->nlo != q->nlo || p->nup != q->nup || p->nsec != q->nsec) return 0;
    return bsr_test_same_ints(p->lp, q->lp, p->n + 1) && bsr_test_same_ints(p->up, q->up, p->n + 1) && bsr_test_same_ints(p->lc, q->lc, p->nlo) &&
           bsr_test_same_ints(p->uc, q->uc, p->nup) && !memcmp(p->lk, q->lk, (size_t)p->nlo) &&
           !memcmp(p->uk, q->uk, (size_t)p->nup);
}

/* Host setup (full and symbolic_only) against the device's rows on the same
 * options: pattern, counters, and the factors of the device's pattern. */
static void check(const char *what, const bsr_matrix *A, const bsr_ilu_options *o0)
{
    bsr_ilu_options o = *o0;
    o.prec = BSR_DOUBLE;
    bsr_ilu *H = NULL, *S = NULL, *G = NULL, *G2 = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &H));
    o.symbolic_only = 1;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &S));
    BSR_ASSERT_OK(setup_dev(A, &o, &G));
    BSR_ASSERT_OK(setup_dev(A, &o, &G2));
    if (!H || !S || !G || !G2) goto out;
    CU_ASSERT_EQUAL(G->st.tree_parallel, 3);   /* the rows ran on the device */
    CU_ASSERT(G->dsym != NULL);                /* and it made their pattern */
    int same = same_pattern(S, G) && same_pattern(H, G);
    CU_ASSERT(same);
    CU_ASSERT(same_pattern(G, G2));
    CU_ASSERT_EQUAL(S->st.dropped, G->st.dropped);
    CU_ASSERT_EQUAL(S->st.second_order_total, G->st.second_order_total);
    CU_ASSERT_EQUAL(S->st.second_order_peak, G->st.second_order_peak);
    CU_ASSERT_EQUAL(S->st.pivots_regularized, G->st.pivots_regularized);
    CU_ASSERT_EQUAL(S->st.nnzb_L, G->st.nnzb_L);
    CU_ASSERT_EQUAL(S->st.nnzb_U, G->st.nnzb_U);
    if (!same) {
        printf("\n  %s: patterns differ (host L+U %lld+%lld, R+W %lld; device %lld+%lld, %lld)", what,
               (long long)S->fz->nlo, (long long)S->fz->nup, (long long)S->fz->nsec, (long long)G->fz->nlo,
               (long long)G->fz->nup, (long long)G->fz->nsec);
        goto out;
    }
    /* the values on the device's pattern against the host setup's */
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, G, &D));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, (bsr_matrix *)A));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A, NULL));
    bsr_ilu_factors f;
    BSR_ASSERT_OK(bsr_ilu_get_factors(H, &f));
    const int bb = A->b * A->b;
    const size_t mL = (size_t)f.L->nnzb * bb, mU = (size_t)f.U->nnzb * bb;
    double *Lv = malloc(sizeof(double) * (mL + 1)), *Uv = malloc(sizeof(double) * (mU + 1));
    double *Sc = malloc(sizeof(double) * ((size_t)A->nbrows * bb + 1));
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, Lv, Uv, Sc));
    double eL = bsr_test_rel_diff(Lv, bsr_matrix_values(f.L), f.L->prec, mL);
    double eU = bsr_test_rel_diff(Uv, bsr_matrix_values(f.U), f.U->prec, mU);
    CU_ASSERT(eL <= 1e-12);
    CU_ASSERT(eU <= 1e-12);
    if (eL > 1e-12 || eU > 1e-12) printf("\n  %s: factors differ by %.3g (L), %.3g (U)", what, eL, eU);
    free(Lv); free(Uv); free(Sc);
    bsr_gpu_ilu0_destroy(D);
out:
    bsr_ilu_destroy(H); bsr_ilu_destroy(S); bsr_ilu_destroy(G); bsr_ilu_destroy(G2);
}

static bsr_ilu_options opts(bsr_ilu_kind kind, double tau1, bsr_order_kind ord)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, kind);
    o.tau1 = tau1;
    o.order.kind = ord;
    o.keep_pattern = kind == BSR_ILU2;
    o.cap = 0;   /* auto: the solver's default */
    return o;
}

/* Random diagonally weighted matrices, b = 1..10, every kind, cap and order. */
static void test_random(void)
{
    for (int b = 1; b <= 10; b++) {
        if (bsr_test_quick() && b != 1 && b != 4 && b != 7) continue;
        const int n = b <= 4 ? 600 : 200;
        bsr_matrix *R = bsr_test_random_matrix(n, n, b, 2, 9, BSR_DOUBLE, 100 + b);
        bsr_matrix *A = bsr_test_dominant(R, 1.0, 0.5);
        for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++)
            for (int c = 0; c < 3; c++) {
                bsr_ilu_options o = opts((bsr_ilu_kind)kind, c == 2 ? 1e-3 : 0.02, c == 1 ? BSR_ORDER_RCM : BSR_ORDER_NATURAL);
                if (c == 1) o.cap = 2;
                if (c == 2) o.fill = 2.5;
                char what[64];
                snprintf(what, sizeof what, "random b=%d kind %d case %d", b, kind, c);
                check(what, A, &o);
            }
        bsr_matrix_destroy(R); bsr_matrix_destroy(A);
    }
}

/* Generated CFD systems (A in double and float), ILU2 at the solver's defaults. */
static void test_generated(void)
{
    const char *specs[] = {"convdiff3d:10,40", "cfd3d:8,4,10", "cfd3d:6,5,10", "rotconv3d:8,4", "stencil3d:10:4"};
    for (int sp = 0; sp < 5; sp++)
        for (int prec = 0; prec < 2; prec++) {
            if (bsr_test_quick() && prec) continue;
            bsr_problem P;
            BSR_ASSERT_OK(bsr_generate(specs[sp], prec ? BSR_FLOAT : BSR_DOUBLE, &P));
            for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++) {
                bsr_ilu_options o = opts((bsr_ilu_kind)kind, 0.01, BSR_ORDER_NATURAL);
                char what[96];
                snprintf(what, sizeof what, "%s %s kind %d", specs[sp], prec ? "float" : "double", kind);
                check(what, P.A, &o);
            }
            bsr_problem_free(&P);
        }
}

/* Real matrices that ILU2 factors without an error on the host. */
static void test_real(void)
{
    char **files = NULL;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    if (!nf) { BSR_TEST_SKIP("no real matrices"); return; }
    for (int fi = 0; fi < nf && done < (bsr_test_quick() ? 2 : 8); fi++) {
        bsr_matrix *A = NULL;
        if (bsr_mm_read(files[fi], 0, BSR_DOUBLE, &A, NULL) != BSR_OK) { bsr_clear_error(); continue; }
        bsr_ilu_options o = opts(BSR_ILU2, 0.01, BSR_ORDER_NATURAL);
        bsr_ilu *H = NULL;
        bsr_status s = bsr_ilu_setup(A, &o, &H);
        bsr_ilu_destroy(H);
        bsr_clear_error();
        if (!s) {
            check(files[fi], A, &o);
            done++;
        }
        bsr_matrix_destroy(A);
    }
    CU_ASSERT(done > 0);
    bsr_test_free_list(files, nf);
}

/* Pairs of rows [[2,1],[1,2]] chained by weak couplings, except pair 20,
 * [[1,1],[1,1]], whose second pivot is 0: under strict pivots the host and
 * the device name row 41.  Without a cap, or with a row past the device's
 * workspace, the rows are the host's. */
static void test_errors_and_fallback(void)
{
    const int n = 200;
    int *rp = malloc(sizeof(int) * (n + 1)), *ci = malloc(sizeof(int) * 4 * n), nz = 0;
    double *v = malloc(sizeof(double) * 4 * n);
    rp[0] = 0;
    for (int i = 0; i < n; i++) {
        const int mate = i ^ 1, bad = i / 2 == 20;
        if (i >= 2 && !bad) { ci[nz] = i - 2; v[nz++] = 0.01; }
        ci[nz] = i < mate ? i : mate; v[nz++] = i < mate ? (bad ? 1 : 2) : 1;
        ci[nz] = i < mate ? mate : i; v[nz++] = i < mate ? 1 : (bad ? 1 : 2);
        rp[i + 1] = nz;
    }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, 1, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    bsr_ilu_options o = opts(BSR_ILU2, 0.01, BSR_ORDER_NATURAL);
    o.strict_pivots = 1;
    o.symbolic_only = 1;
    bsr_ilu *H = NULL, *G = NULL;
    bsr_status sh = bsr_ilu_setup(A, &o, &H);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", bsr_last_error());
    bsr_status sg = setup_dev(A, &o, &G);
    CU_ASSERT_EQUAL(sh, BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "block row 41"));
    CU_ASSERT_EQUAL(sg, sh);
    if (strcmp(bsr_last_error(), msg)) printf("\n    host:   %s\n    device: %s\n", msg, bsr_last_error());
    CU_ASSERT_STRING_EQUAL(bsr_last_error(), msg);
    CU_ASSERT_PTR_NULL(G);
    bsr_ilu_destroy(H);
    /* values the scaling refuses (a NaN, a zero row): the host's status and message */
    for (int t = 0; t < 2; t++) {
        double *av = (double *)bsr_matrix_values(A);
        const double keep = av[7];
        if (t == 0) av[7] = NAN;
        else for (int p = A->rowptr[60]; p < A->rowptr[61]; p++) av[p] = 0.0;
        H = G = NULL;
        sh = bsr_ilu_setup(A, &o, &H);
        snprintf(msg, sizeof msg, "%s", bsr_last_error());
        sg = setup_dev(A, &o, &G);
        CU_ASSERT_NOT_EQUAL(sh, BSR_OK);
        CU_ASSERT_EQUAL(sg, sh);
        CU_ASSERT_STRING_EQUAL(bsr_last_error(), msg);
        CU_ASSERT_PTR_NULL(G);
        bsr_ilu_destroy(H); bsr_ilu_destroy(G);
        if (t == 0) av[7] = keep;
        else for (int p = A->rowptr[60]; p < A->rowptr[61]; p++) av[p] = 1.0;
    }
    bsr_matrix_destroy(A);
    bsr_problem P;
    /* no cap, or a row longer than the device's workspace (1200 blocks):
     * the host's rows, the same pattern */
    BSR_ASSERT_OK(bsr_generate("cfd3d:6,4,10", BSR_DOUBLE, &P));
    o = opts(BSR_ILU2, 0.01, BSR_ORDER_NATURAL);
    o.cap = BSR_ILU_CAP_NONE;
    o.symbolic_only = 1;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &H));
    BSR_ASSERT_OK(setup_dev(P.A, &o, &G));
    CU_ASSERT_NOT_EQUAL(G->st.tree_parallel, 3);
    CU_ASSERT(same_pattern(H, G));
    bsr_ilu_destroy(H); bsr_ilu_destroy(G);
    bsr_problem_free(&P);
    const int m = 1200;
    rp = malloc(sizeof(int) * (m + 1)); ci = malloc(sizeof(int) * 3 * m + sizeof(int) * m); nz = 0;
    v = malloc(sizeof(double) * 4 * m);
    rp[0] = 0;
    for (int i = 0; i < m; i++) {
        if (i == m - 1) {
            for (int j = 0; j < m; j++) { ci[nz] = j; v[nz++] = j == i ? 4.0 * m : 1.0; }
        } else {
            if (i > 0) { ci[nz] = i - 1; v[nz++] = -1; }
            ci[nz] = i; v[nz++] = 4;
            ci[nz] = i + 1; v[nz++] = -1;
        }
        rp[i + 1] = nz;
    }
    A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, m, m, 1, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    o = opts(BSR_ILU2, 0.01, BSR_ORDER_NATURAL);
    o.symbolic_only = 1;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &H));
    BSR_ASSERT_OK(setup_dev(A, &o, &G));
    CU_ASSERT_NOT_EQUAL(G->st.tree_parallel, 3);
    CU_ASSERT(same_pattern(H, G));
    bsr_ilu_destroy(H); bsr_ilu_destroy(G);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"random b=1..10: pattern, counters, factors = host", test_random},
        {"generated CFD systems, double and float A", test_generated},
        {"real matrices", test_real},
        {"errors name the host's row; no cap: host rows", test_errors_and_fallback},
        {NULL, NULL}};
    /* the pattern made on the device from its rows and on the host from the
     * same rows, compared array for array by every setup; the device plans
     * made from it against the host reference */
    setenv("BSR_ILU_DSYM_CHECK", "1", 1);
    setenv("BSR_ILU0_PLAN_CHECK", "1", 1);
    return bsr_test_gpu_main("gpu threshold rows", tests, argc, argv, &ctx);
}
