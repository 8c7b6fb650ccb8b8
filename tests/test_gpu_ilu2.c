/* SPDX-License-Identifier: BSD-3-Clause */
/* ILUT / ILU2 factored on the device into the frozen pattern of the setup
 * (kernels/ilu/ilu0_gpu.cu with classes) against the host's frozen refactor
 * (src/ilu/ilu_row.c with F->use_fz) on the same plan: factors (bit for bit in
 * double), scaling and regularized pivots for b = 1, 4, 5, natural and ND order, A in double and
 * float, after the values changed so much that a fresh setup would drop
 * differently (off-diagonal blocks times 0.05 or 0.5); every device plan equal
 * to the host reference (BSR_ILU0_PLAN_CHECK).  The solver's time step on
 * the CUDA backend (setup on A, refactor on the changed A; its pattern made
 * and kept on the device) takes the CPU backend's iterations and reaches
 * rtol in the true residual; a refactor that
 * fails leaves a solver that refuses to solve (no stale factors) until a good
 * refactor; pattern=refresh and pattern=auto report their new patterns.
 * A complete LU's dense tail (its updates from the columns left of it by
 * one GEMM, then its blocked dense LU) within 1e-12 of the host's, and its
 * breakdowns keyed as the host's.  Skips (77) without a GPU.  BSR_TEST_QUICK (sanitizer runs): double with
 * one value change against the host, two time steps. */
#include "harness.h"
#include "internal.h"
#include "ilu_impl.h"
#include "solver_impl.h"
#include "gpu_ilu.h"
#include "ilu0_plan.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

static int nest_rows;   /* check_tau's last device factor: its rows that nest (bsr_gpu_ilu0_nest_rows) */
static int tail_rows;   /* and the rows of its dense tail (bsr_gpu_ilu0_tail_rows) */
static int lift_order;  /* check_tau's ordering with lift (bsr_order_options.lift) */
static int lifted_rows; /* and its rows lifted to the end (bsr_ordering.dense_rows) */
static double tol_double;   /* check_tau's bound on the factors' difference in double (0: the same bits) */

/* Setup of kind (tau1) on A (host), then A2 factored into the frozen
 * pattern on the host and on the device; factors and scaling compared. */
static void check_tau(const char *what, const bsr_matrix *A, const bsr_matrix *A2, bsr_ilu_kind kind,
                      bsr_order_kind ord, double tau1)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, kind);
    o.tau1 = tau1;
    o.order.kind = ord;
    o.order.lift = lift_order;
    o.keep_pattern = kind == BSR_ILU2;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    lifted_rows = F->ord ? F->ord->dense_rows : 0;
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    BSR_ASSERT_OK(bsr_ilu_refactor(F, A2));
    bsr_ilu_factors f;
    bsr_ilu_stats st;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
    BSR_ASSERT_OK(bsr_ilu_get_stats(F, &st));
    const int n = F->n, bb = F->b * F->b, nL = f.L->nnzb, nU = f.U->nnzb;
    double *Lv = malloc(sizeof(double) * ((size_t)nL * bb + 1)), *Uv = malloc(sizeof(double) * ((size_t)nU * bb + 1));
    double *S = malloc(sizeof(double) * ((size_t)n * bb + 1));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, (bsr_matrix *)A2));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A2, NULL));
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, Lv, Uv, S));
    /* the host factors are in A's precision; compare in double */
    double *hL = malloc(sizeof(double) * ((size_t)nL * bb + 1)), *hU = malloc(sizeof(double) * ((size_t)nU * bb + 1));
    double *hS = malloc(sizeof(double) * ((size_t)n * bb + 1));
    for (size_t e = 0; e < (size_t)nL * bb; e++) hL[e] = f.L->prec == BSR_DOUBLE ? ((double *)f.L->val)[e] : ((float *)f.L->val)[e];
    for (size_t e = 0; e < (size_t)nU * bb; e++) hU[e] = f.U->prec == BSR_DOUBLE ? ((double *)f.U->val)[e] : ((float *)f.U->val)[e];
    for (size_t e = 0; e < (size_t)n * bb; e++)
        hS[e] = f.L->prec == BSR_DOUBLE ? ((const double *)f.scale_left)[e] : ((const float *)f.scale_left)[e];
    const double tol = A->prec == BSR_DOUBLE ? tol_double : 1e-5;   /* double: the same bits but for a dense tail */
    double eL = bsr_test_rel_diff(Lv, hL, BSR_DOUBLE, (size_t)nL * bb), eU = bsr_test_rel_diff(Uv, hU, BSR_DOUBLE, (size_t)nU * bb);
    double eS = bsr_test_rel_diff(S, hS, BSR_DOUBLE, (size_t)n * bb);
    int nreg = -1;
    BSR_ASSERT_OK(bsr_gpu_ilu0_stats(D, &nreg, NULL, NULL));
    BSR_ASSERT_OK(bsr_gpu_ilu0_nest_rows(D, &nest_rows));
    tail_rows = bsr_gpu_ilu0_tail_rows(D);
    if (!(eL <= tol && eU <= tol && eS <= tol) || nreg != st.pivots_regularized)
        printf("\n  %s kind %d order %d: L %.2e U %.2e S %.2e (tol %.0e), pivots %d/%d\n", what, (int)kind, (int)ord, eL,
               eU, eS, tol, nreg, st.pivots_regularized);
    CU_ASSERT(eL <= tol);
    CU_ASSERT(eU <= tol);
    CU_ASSERT(eS <= tol);
    CU_ASSERT_EQUAL(nreg, st.pivots_regularized);
    /* a fresh setup on A2 would have chosen another pattern: the test covers changed dropping */
    bsr_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A2, &o, &G));
    bsr_ilu_stats sg;
    BSR_ASSERT_OK(bsr_ilu_get_stats(G, &sg));
    if (tau1 > 0) {
        CU_ASSERT(sg.nnzb_L != st.nnzb_L || sg.nnzb_U != st.nnzb_U || sg.dropped != st.dropped);
    } else {   /* every block kept: the same pattern */
        CU_ASSERT(sg.nnzb_L == st.nnzb_L && sg.dropped == 0);
    }
    bsr_ilu_destroy(G);
    free(Lv); free(Uv); free(S); free(hL); free(hU); free(hS);
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
}

static void check(const char *what, const bsr_matrix *A, const bsr_matrix *A2, bsr_ilu_kind kind, bsr_order_kind ord)
{
    check_tau(what, A, A2, kind, ord, 0.05);
}

static void test_factor_vs_host(void)
{
    const char *specs[] = {"convdiff3d:10,40", "cfd3d:8,4,10", "cfd3d:6,5,10"};
    const double scale[] = {0.05, 0.5};
    for (int sp = 0; sp < 3; sp++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[sp], BSR_DOUBLE, &P));
        for (int prec = 0; prec < 2; prec++)
            for (int sc = 0; sc < 2; sc++) {
                if (bsr_test_quick() && (sc || prec)) continue;
                bsr_precision p = prec ? BSR_FLOAT : BSR_DOUBLE;
                bsr_matrix *A = bsr_test_offdiag_scaled(P.A, 1.0, p), *A2 = bsr_test_offdiag_scaled(P.A, scale[sc], p);
                for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++) {
                    check(specs[sp], A, A2, (bsr_ilu_kind)kind, BSR_ORDER_NATURAL);
                    if (!prec) check(specs[sp], A, A2, (bsr_ilu_kind)kind, BSR_ORDER_ND);
                }
                bsr_matrix_destroy(A); bsr_matrix_destroy(A2);
            }
        bsr_problem_free(&P);
    }
}

/* The system the solver's complete device factor solves in the tests below. */
#define COMPLETE_SOLVE "coupled3d:8,5,couple=0.45"

/* P solved from zero by the complete device factor in the order ord
 * ("reorder=..."), after its setup (X[0]) and after a refactor on the same
 * values (X[1]): one iteration each, to rtol 1e-10, the same bits (X[r]
 * malloc'd copies of the solutions). */
static void solve_complete(const bsr_problem *P, const char *ord, double *X[2])
{
    char cfg[160];
    snprintf(cfg, sizeof cfg, "precond=ilu2,tau1=0,cap=none,factor=gpu,%s,fallback=off,rtol=1e-10", ord);
    const int64_t n = bsr_multivec_rows(P->rhs);
    bsr_solver *s = bsr_test_solver(ctx, cfg, P->A);
    bsr_multivec *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    for (int r = 0; r < 2; r++) {
        if (r) BSR_ASSERT_OK(bsr_solver_refactor(s, P->A));   /* a refactor reads the kept pattern */
        BSR_ASSERT_OK(bsr_multivec_fill(Y, 0));
        bsr_solver_stats st;
        BSR_ASSERT_OK(bsr_solver_solve(s, P->rhs, Y, &st));
        CU_ASSERT_EQUAL(st.col[0].iterations, 1);
        CU_ASSERT(st.col[0].relres < 1e-10);
        bsr_solver_stats_free(&st);
        X[r] = malloc(sizeof(double) * (size_t)n);
        memcpy(X[r], bsr_multivec_cdata(Y), sizeof(double) * (size_t)n);
    }
    CU_ASSERT_EQUAL(memcmp(X[0], X[1], sizeof(double) * (size_t)n), 0);
    bsr_multivec_destroy(Y);
    bsr_solver_destroy(s);
}

/* The complete LU's pattern (tau1 = 0, no cap, ND: from the elimination
 * tree), factored on the device with the plan's update lists and without
 * them (BSR_ILU0_FLY: the rows find their targets as they go, the rows of
 * its separators' supernodes a panel at a time), each equal to the host's
 * frozen refactor bit for bit (b = 1, 4, 5: a warp a row; 7: a thread a
 * row), random values too; the solver's in-place device factor
 * without lists solves to the same bits as with them, in one iteration. */
static void test_complete_fly(void)
{
    const char *specs[] = {"coupled3d:6,4,couple=0.45", "coupled3d:6,5,couple=0.45", "stencil3d:7:1", "stencil3d:5:7"};
    for (int sp = 0; sp < 4; sp++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[sp], BSR_DOUBLE, &P));
        bsr_matrix *A2 = bsr_test_offdiag_scaled(P.A, 0.5, BSR_DOUBLE);
        for (int fly = 0; fly < 2; fly++) {
            setenv("BSR_ILU0_FLY", fly ? "1" : "0", 1);
            check_tau(specs[sp], P.A, A2, BSR_ILU2, BSR_ORDER_ND, 0.0);
            /* without lists, the separators' rows nest: panels */
            if (fly) {
                CU_ASSERT(nest_rows > P.A->nbrows / 8);
            } else {
                CU_ASSERT_EQUAL(nest_rows, 0);
            }
            check_tau(specs[sp], P.A, A2, BSR_ILUT, BSR_ORDER_NATURAL, 0.0);
        }
        bsr_matrix_destroy(A2);
        bsr_problem_free(&P);
    }
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(COMPLETE_SOLVE, BSR_DOUBLE, &P));
    double *X[2][2];
    for (int fly = 0; fly < 2; fly++) {
        setenv("BSR_ILU0_FLY", fly ? "1" : "0", 1);
        solve_complete(&P, "reorder=nd:auto", X[fly]);
    }
    CU_ASSERT_EQUAL(memcmp(X[0][1], X[1][1], sizeof(double) * (size_t)bsr_multivec_rows(P.rhs)), 0);
    free(X[0][0]); free(X[0][1]); free(X[1][0]); free(X[1][1]);
    bsr_problem_free(&P);
    unsetenv("BSR_ILU0_FLY");
}

/* The complete LU's pattern without update lists, its dense tail forced
 * down to 8 rows (BSR_ILU0_TAIL: the tail's updates from the columns left
 * of it by one GEMM, then its blocked LU, panels of a quarter of its rows
 * at most, so several here; 512 rows at least unless
 * forced, so none of these has one by default): the host's frozen refactor
 * within 1e-12 (the dense order of the sums), b = 1, 4, 5, ND order, and
 * METIS's order with and without its top lifted to the end (lift: a longer
 * tail whose pattern has zeros); the solver's device factor in METIS's
 * lifted order so made solves in one iteration, to the bits of a
 * refactor. */
static void test_complete_tail(void)
{
    const char *specs[] = {"coupled3d:7,4,couple=0.45", "coupled3d:7,5,couple=0.45", "stencil3d:9:1"};
    setenv("BSR_ILU0_FLY", "1", 1);
    for (int sp = 0; sp < 3; sp++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[sp], BSR_DOUBLE, &P));
        bsr_matrix *A2 = bsr_test_offdiag_scaled(P.A, 0.5, BSR_DOUBLE);
        unsetenv("BSR_ILU0_TAIL");
        check_tau(specs[sp], P.A, A2, BSR_ILU2, BSR_ORDER_ND, 0.0);
        CU_ASSERT_EQUAL(tail_rows, 0);
        setenv("BSR_ILU0_TAIL", "8", 1);
        tol_double = 1e-12;
        check_tau(specs[sp], P.A, A2, BSR_ILU2, BSR_ORDER_ND, 0.0);
        CU_ASSERT(tail_rows >= 8);
        /* METIS's order with its top lifted: a longer tail, with zeros */
        check_tau(specs[sp], P.A, A2, BSR_ILU2, BSR_ORDER_METIS_ND, 0.0);
        const int complete = tail_rows;
        lift_order = 1;
        check_tau(specs[sp], P.A, A2, BSR_ILU2, BSR_ORDER_METIS_ND, 0.0);
        lift_order = 0;
        tol_double = 0.0;
        printf("\n  %s: tail %d rows in METIS's order, %d lifted (%d rows)", specs[sp], complete, tail_rows,
               lifted_rows);
        CU_ASSERT(lifted_rows > complete);
        CU_ASSERT_EQUAL(tail_rows, lifted_rows);
        bsr_matrix_destroy(A2);
        bsr_problem_free(&P);
    }
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(COMPLETE_SOLVE, BSR_DOUBLE, &P));
    double *X[2];
    solve_complete(&P, "reorder=metis,lift=1", X);
    free(X[0]); free(X[1]);
    bsr_problem_free(&P);
    unsetenv("BSR_ILU0_TAIL");
    unsetenv("BSR_ILU0_FLY");
}

/* Scalar entry (r, c) of tail_dense's matrices, n blocks of b a side:
 * diagonally dominant (how 0); block row 7's first row equal to block row
 * 6's left of column 8 b, so that row 7's pivot block is singular (how 1);
 * b = 1: 1e306 at (7, 3) and 1e8 at (3, 7), so that row 7's pivot
 * overflows (how 2). */
static double tail_entry(int n, int b, int how, int r, int c)
{
    if (how == 1 && r == 7 * b && c < 8 * b) r = 6 * b;
    if (how == 2 && r == 7 && c == 3) return 1e306;
    if (how == 2 && r == 3 && c == 7) return 1e8;
    return r == c ? 4.0 * n * b : 1.0 / (1 + abs(r - c)) + 0.1 * ((r * 7 + c * 3) % 5);
}

static bsr_matrix *tail_dense(int n, int b, int how)
{
    const int nb = n * b;
    int *rp = malloc(sizeof(int) * (size_t)(n + 1)), *ci = malloc(sizeof(int) * (size_t)n * n);
    double *v = malloc(sizeof(double) * (size_t)nb * nb);
    for (int i = 0; i <= n; i++) rp[i] = i * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            ci[i * n + j] = j;
            for (int a = 0; a < b; a++)
                for (int q = 0; q < b; q++)
                    v[((size_t)(i * n + j) * b + a) * b + q] = tail_entry(n, b, how, i * b + a, j * b + q);
        }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    return A;
}

/* ILU(0) of A in natural order on the host (strict pivots or not), and its
 * device factorization's plan (*F, *D); the dense tail's tests. */
static void natural_ilu0(const bsr_matrix *A, int strict, bsr_ilu **F, bsr_gpu_ilu0 **D)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.order.kind = BSR_ORDER_NATURAL;
    o.strict_pivots = strict;
    *F = NULL;
    *D = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, F));
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, *F, D));
}

/* A breakdown inside the dense tail: a dense 12 x 12 block matrix is all
 * tail (forced down to 8 rows; ILU(0) in natural order, 4 panels of 3
 * block columns), set up on good values and factored on bad ones.  Row 7's
 * singular pivot block: refused under strict pivots with the host's status
 * and message (naming block row 7), else regularized and counted as the
 * host counts it (b = 1, 4); row 7's pivot overflowing: the host's status
 * and message (b = 1).  Good values factor again afterwards. */
static void test_tail_breakdown(void)
{
    const int n = 12;
    setenv("BSR_ILU0_FLY", "1", 1);
    setenv("BSR_ILU0_TAIL", "8", 1);
    for (int c = 0; c < 5; c++) {
        const int b = c < 2 || c == 4 ? 1 : 4, how = c == 4 ? 2 : 1, strict = c % 2 == 0 && c < 4;
        bsr_matrix *A0 = tail_dense(n, b, 0), *A = tail_dense(n, b, how);
        bsr_ilu *F;
        bsr_gpu_ilu0 *D;
        natural_ilu0(A0, strict, &F, &D);
        CU_ASSERT_EQUAL(bsr_gpu_ilu0_tail_rows(D), n);
        BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
        const bsr_status sd = bsr_gpu_ilu0_factor(D, A, NULL);
        char gmsg[512];
        snprintf(gmsg, sizeof gmsg, "%s", sd == BSR_OK ? "" : bsr_last_error());
        const bsr_status sh = bsr_ilu_refactor(F, A);
        CU_ASSERT_EQUAL(sd, sh);
        if (strict || how == 2) {
            CU_ASSERT_EQUAL(sd, BSR_ERR_SINGULAR);
            CU_ASSERT(strstr(gmsg, "block row 7") != NULL);
            CU_ASSERT_STRING_EQUAL(gmsg, bsr_last_error());
        } else {
            bsr_ilu_stats st;
            int nreg = -1;
            BSR_ASSERT_OK(bsr_ilu_get_stats(F, &st));
            BSR_ASSERT_OK(bsr_gpu_ilu0_stats(D, &nreg, NULL, NULL));
            CU_ASSERT(st.pivots_regularized >= 1);
            CU_ASSERT_EQUAL(nreg, st.pivots_regularized);
        }
        if (strict || how == 2 || sd != BSR_OK) printf("\n  b %d how %d strict %d: %s", b, how, strict, gmsg);
        bsr_matrix_destroy(A);
        BSR_ASSERT_OK(bsr_matrix_upload(ctx, A0));   /* good values again */
        BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A0, NULL));
        bsr_matrix_destroy(A0);
        bsr_gpu_ilu0_destroy(D);
        bsr_ilu_destroy(F);
    }
    unsetenv("BSR_ILU0_TAIL");
    unsetenv("BSR_ILU0_FLY");
}

/* The dense tail's workspace (T) is held while factoring only: the device
 * bytes after a factorization are T's less than after the plan, and the
 * same after a second one, whose factors have the same bits; a
 * factorization whose workspace cannot be allocated goes without the tail
 * (its rows in the launch) to the same factors within 1e-12, and so do
 * those after it.  A dense 12 x 12 block matrix, b = 4, all tail. */
static void test_tail_workspace(void)
{
    const int n = 12, b = 4;
    const size_t tbytes = (size_t)(n * b) * (n * b) * sizeof(double), vals = (size_t)n * n * b * b;
    setenv("BSR_ILU0_FLY", "1", 1);
    setenv("BSR_ILU0_TAIL", "8", 1);
    bsr_matrix *A = tail_dense(n, b, 0);
    bsr_ilu *F;
    bsr_gpu_ilu0 *D;
    natural_ilu0(A, 0, &F, &D);
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_tail_rows(D), n);
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    double *f[3], *sc = malloc(sizeof(double) * (size_t)n * b * b);
    size_t live[4];
    bsr_cuda_mem_bytes(ctx, &live[0], NULL, 0);
    for (int k = 0; k < 3; k++) {
        f[k] = calloc(2 * vals, sizeof(double));   /* (L and U fill part of their halves: the rest compares as zeros) */
        if (k == 2) bsr_fault_arm(BSR_FAULT_DEV_ALLOC, 1);   /* the workspace's first allocation fails */
        BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A, NULL));
        bsr_fault_reset();
        BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, f[k], f[k] + vals, sc));
        bsr_cuda_mem_bytes(ctx, &live[k + 1], NULL, 0);
    }
    printf("\n  device bytes: %zu after the plan, %zu / %zu after two factorizations, %zu without the tail (T %zu)",
           live[0], live[1], live[2], live[3], tbytes);
    CU_ASSERT(live[1] + tbytes <= live[0]);
    CU_ASSERT_EQUAL(live[2], live[1]);
    CU_ASSERT(live[3] <= live[1]);
    CU_ASSERT(memcmp(f[0], f[1], sizeof(double) * 2 * vals) == 0);
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_tail_rows(D), 0);
    CU_ASSERT(bsr_test_rel_diff(f[2], f[0], BSR_DOUBLE, 2 * vals) <= 1e-12);
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A, NULL));   /* and later ones */
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, f[1], f[1] + vals, sc));
    CU_ASSERT(memcmp(f[1], f[2], sizeof(double) * 2 * vals) == 0);
    for (int k = 0; k < 3; k++) free(f[k]);
    free(sc);
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    unsetenv("BSR_ILU0_TAIL");
    unsetenv("BSR_ILU0_FLY");
}

/* One solve from zero: iterations (most over columns), true relative residual. */
static int solve(bsr_solver *s, const bsr_multivec *B, double *relres, bsr_solver_stats *keep)
{
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 1, BSR_DOUBLE));
    bsr_solver_stats st;
    bsr_status e = bsr_solver_solve(s, B, X, &st);
    CU_ASSERT_EQUAL(e, BSR_OK);
    int it = st.col ? st.col[0].iterations : -1;
    *relres = st.col ? st.col[0].relres : INFINITY;
    if (keep) *keep = st;
    else bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    return it;
}

/* Setup on A, refactor on A with its off-diagonal blocks scaled: the device
 * takes the CPU's iterations and reaches rtol (b = 1, 4, 5; ILUT, ILU2). */
static void test_time_step(void)
{
    const char *specs[] = {"convdiff3d:12,40", "cfd3d:10,4,10", "cfd3d:8,5,10"};
    const char *pcs[] = {"ilut,tau1=0.02", "ilu2,tau1=0.05"};
    const double scale[] = {0.05, 0.5};
    for (int sp = 0; sp < 3; sp++)
        for (int pc = 0; pc < 2; pc++)
            for (int sc = 0; sc < 2; sc++) {
                if (bsr_test_quick() && (sc != pc || sp == 0)) continue;
                bsr_problem P;
                BSR_ASSERT_OK(bsr_generate(specs[sp], BSR_DOUBLE, &P));
                bsr_matrix *A2 = bsr_test_offdiag_scaled(P.A, scale[sc], BSR_DOUBLE);
                char cfg[160];
                /* one ordering on both backends (their defaults differ: natural on the device) */
                snprintf(cfg, sizeof cfg, "method=bicgstab,precond=%s,rtol=1e-10,reorder=natural", pcs[pc]);
                bsr_solver *sg = bsr_test_solver(ctx, cfg, P.A), *sc_ = bsr_test_solver(NULL, cfg, P.A);
                double rg, rc;
                bsr_solver_stats st;
                solve(sg, P.rhs, &rg, &st);
                CU_ASSERT(strstr(st.precond_info, "on the device") != NULL);
                CU_ASSERT_EQUAL(st.pattern_new, 1);
                /* factored on the device: the pattern pass chose the pattern there and kept it
                 * there (no host values, no host pattern) */
                const bsr_ilu *Fg = bsr_solver_host_ilu(sg);
                CU_ASSERT(Fg && !Fg->valid && Fg->pattern_only && Fg->dsym && !Fg->fz && !Fg->L);
                bsr_solver_stats_free(&st);
                BSR_ASSERT_OK(bsr_solver_refactor(sg, A2));
                BSR_ASSERT_OK(bsr_solver_refactor(sc_, A2));
                int ig = solve(sg, P.rhs, &rg, &st), ic = solve(sc_, P.rhs, &rc, NULL);
                CU_ASSERT_EQUAL(st.pattern_new, 0);
                bsr_solver_stats_free(&st);
                if (abs(ig - ic) > 1 || !(rg <= 1e-10))
                    printf("\n  %s %s x%g: device %d its relres %.2e, cpu %d its relres %.2e\n", specs[sp], pcs[pc],
                           scale[sc], ig, rg, ic, rc);
                CU_ASSERT(abs(ig - ic) <= 1);
                CU_ASSERT(rg <= 1e-10);
                bsr_solver_destroy(sg);
                bsr_solver_destroy(sc_);
                bsr_matrix_destroy(A2);
                bsr_problem_free(&P);
            }
}

/* A refactor that fails on the device (a zero block row) leaves no factors
 * in use: solve refuses, a good refactor mends it. */
static void test_failed_refactor(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("cfd3d:6,4,10", BSR_DOUBLE, &P));
    bsr_matrix *Abad = bsr_test_offdiag_scaled(P.A, 1.0, BSR_DOUBLE);
    for (int p = Abad->rowptr[3]; p < Abad->rowptr[4]; p++)
        memset((double *)Abad->val + (size_t)p * 16, 0, 16 * sizeof(double));
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu2,tau1=0.05,rtol=1e-10"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    double r;
    solve(s, P.rhs, &r, NULL);
    CU_ASSERT_EQUAL(bsr_solver_refactor(s, Abad), BSR_ERR_SINGULAR);
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    bsr_solver_stats st;
    CU_ASSERT_NOT_EQUAL(bsr_solver_solve(s, P.rhs, X, &st), BSR_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "refactor failed"));
    bsr_solver_stats_free(&st);
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    solve(s, P.rhs, &r, NULL);
    CU_ASSERT(r <= 1e-10);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_matrix_destroy(Abad);
    bsr_problem_free(&P);
}

/* An ILU2 plan set up symbolic_only holds no host values: device factors
 * made from it must wait for the device numeric (values_later), and a
 * re-upload of host values is refused; made that way, the device numeric
 * fills them and they apply. */
static void test_symbolic_only_plan(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("cfd3d:6,4,10", BSR_DOUBLE, &P));
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU2);
    o.tau1 = 0.05, o.order.kind = BSR_ORDER_NATURAL, o.symbolic_only = 1;   /* patterns only: no values */
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
    bsr_gpu_ilu *G = NULL;
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_create(ctx, F, &go, &G), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(G);
    go.values_later = 1;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
    CU_ASSERT_EQUAL(bsr_gpu_ilu_refactor(G, F), BSR_ERR_ARG);
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, P.A));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, P.A, G));
    /* the device numeric filled them: they apply as a full setup's host factors do */
    o.symbolic_only = 0;
    bsr_ilu *H = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &H));
    bsr_multivec *Y = NULL, *Z = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&Y, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Z, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, P.rhs, Y));   /* host X: Y comes back to the host */
    BSR_ASSERT_OK(bsr_ilu_apply(H, P.rhs, Z));
    CU_ASSERT(bsr_test_max_rel_err(Y, Z) <= 1e-12);
    /* created into its preconditioner (the solver's way): ILU2's
     * second-order blocks are not stored, so not in place, but gathered
     * straight out of the factorization's pattern (maps composed): the same
     * bits, and the same factors downloaded */
    bsr_gpu_ilu *G2 = NULL;
    bsr_gpu_ilu0 *D2 = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G2));
    BSR_ASSERT_OK(bsr_gpu_ilu0_create_into(ctx, F, G2, &D2));
    bsr_ilu_fpat fp;
    BSR_ASSERT_OK(bsr_ilu_fpattern(F, &fp));
    if (!fp.lmap) printf("\n  (no second-order blocks: in place) ... ");
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_in_place(D2), fp.lmap == NULL);
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D2, P.A, G2));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D2, P.A, G), BSR_ERR_ARG);   /* D2's values go to G2 only */
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G2, P.rhs, Z));
    CU_ASSERT(memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(Z),
                     sizeof(double) * (size_t)bsr_multivec_rows(P.rhs)) == 0);
    {
        bsr_ilu_factors hf;
        BSR_ASSERT_OK(bsr_ilu_get_factors(H, &hf));
        const size_t bb = (size_t)bsr_matrix_block(P.A) * bsr_matrix_block(P.A);
        const size_t nl = (size_t)bsr_matrix_nnzb(hf.L) * bb, nu = (size_t)bsr_matrix_nnzb(hf.U) * bb;
        double *l1 = malloc(sizeof(double) * (nl + 1)), *u1 = malloc(sizeof(double) * (nu + 1));
        double *l2 = malloc(sizeof(double) * (nl + 1)), *u2 = malloc(sizeof(double) * (nu + 1));
        BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, l1, u1, NULL));
        BSR_ASSERT_OK(bsr_gpu_ilu0_download(D2, l2, u2, NULL));
        CU_ASSERT(memcmp(l1, l2, sizeof(double) * nl) == 0);
        CU_ASSERT(memcmp(u1, u2, sizeof(double) * nu) == 0);
        free(l1); free(u1); free(l2); free(u2);
    }
    bsr_gpu_ilu0_destroy(D2);
    bsr_gpu_ilu_destroy(G2);
    bsr_multivec_destroy(Y);
    bsr_multivec_destroy(Z);
    bsr_ilu_destroy(H);
    bsr_gpu_ilu0_destroy(D);
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

/* pattern=refresh: every refactor a new pattern; auto: frozen until the
 * iterations grow past pattern_growth times the first solve's. */
static void test_pattern_modes(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("cfd3d:8,4,10", BSR_DOUBLE, &P));
    bsr_matrix *A2 = bsr_test_offdiag_scaled(P.A, 0.5, BSR_DOUBLE);
    for (int mode = 0; mode < 2; mode++) {
        bsr_solver *s = NULL;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, mode ? "precond=ilu2,tau1=0.05,rtol=1e-10,pattern=auto,pattern_growth=1"
                                                         : "precond=ilu2,tau1=0.05,rtol=1e-10,pattern=refresh"));
        BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
        double r;
        bsr_solver_stats st;
        int it0 = solve(s, P.rhs, &r, NULL);
        BSR_ASSERT_OK(bsr_solver_refactor(s, A2));
        int it1 = solve(s, P.rhs, &r, &st);
        /* refresh: a new pattern; auto: the first solve set the mark, none grew yet */
        CU_ASSERT_EQUAL(st.pattern_new, !mode);
        CU_ASSERT_EQUAL(st.pattern_refreshes, !mode);
        bsr_solver_stats_free(&st);
        BSR_ASSERT_OK(bsr_solver_refactor(s, A2));
        solve(s, P.rhs, &r, &st);
        /* auto with growth 1: a new pattern once a solve took more iterations than the first */
        if (mode) CU_ASSERT_EQUAL(st.pattern_new, it1 > it0);
        CU_ASSERT_EQUAL(st.pattern_refreshes, mode ? it1 > it0 : 2);
        CU_ASSERT(r <= 1e-10);
        bsr_solver_stats_free(&st);
        bsr_solver_destroy(s);
    }
    bsr_matrix_destroy(A2);
    bsr_problem_free(&P);
}

/* The rows of rotconv3d:N,4 (A) from the layer below its middle in z up,
 * numbered as a rank's overlapped rows are: the half's rows above its first
 * layer, that layer, then the layer below (the ghosts); columns outside
 * dropped.  In the default RCM the device's ILU2 chains its U rows (N = 32:
 * levels L 219 U 1106), in variant 2 it does not (L 497 U 196). */
static bsr_matrix *upper_slab(const bsr_matrix *A, int N)
{
    const int b = bsr_matrix_block(A), n = bsr_matrix_nbrows(A), h = N / 2, bb = b * b;
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    const double *va = bsr_matrix_values(A);
    int *newi = malloc(sizeof(int) * (size_t)n), *old = malloc(sizeof(int) * (size_t)n), m = 0;
    for (int c = 0; c < n; c++) newi[c] = -1;
    for (int pass = 0; pass < 3; pass++)
        for (int c = 0; c < n; c++) {
            const int z = c / (N * N);
            if (pass == 0 ? z > h : z == (pass == 1 ? h : h - 1)) { newi[c] = m; old[m++] = c; }
        }
    int *sp = malloc(sizeof(int) * ((size_t)m + 1)), *sc = malloc(sizeof(int) * (size_t)rp[n]);
    double *sv = malloc(sizeof(double) * (size_t)rp[n] * bb);
    sp[0] = 0;
    for (int i = 0, z = 0; i < m; i++) {
        for (int p = rp[old[i]]; p < rp[old[i] + 1]; p++) {
            const int j = newi[ci[p]];
            if (j < 0) continue;
            int q = z++;   /* sorted by the new column */
            for (; q > sp[i] && sc[q - 1] > j; q--) {
                sc[q] = sc[q - 1];
                memcpy(sv + (size_t)q * bb, sv + (size_t)(q - 1) * bb, sizeof(double) * bb);
            }
            sc[q] = j;
            memcpy(sv + (size_t)q * bb, va + (size_t)p * bb, sizeof(double) * bb);
        }
        sp[i + 1] = z;
    }
    bsr_matrix *S = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&S, m, m, b, sp, sc, sv, BSR_DOUBLE, 0));
    free(newi); free(old); free(sp); free(sc); free(sv);
    return S;
}

/* L's and U's levels after key ("... levels L ") in info, summed (-1: not found). */
static int levels_after_key(const char *info, const char *key)
{
    const char *p = strstr(info, key);
    int l, u;
    return p && sscanf(p + strlen(key), "%d U %d", &l, &u) == 2 ? l + u : -1;
}

/* RCM chosen for the device's threshold rows (no reorder given): where the
 * default variant's triangles differ in levels more than 3-fold, the other
 * variants are tried and the fewest levels kept, the factor then being the
 * one that variant gives when asked for (same iterations, same bits); where
 * they do not, one variant only. */
static void test_rcm_variants(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("rotconv3d:32,4", BSR_DOUBLE, &P));
    bsr_matrix *S = upper_slab(P.A, 32);
    const int64_t n = (int64_t)bsr_matrix_nbrows(S) * 4;
    bsr_multivec *B, *X, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_fill(B, 1.0));
    bsr_solver *s = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-8", S);
    bsr_solver_stats st, su;
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    const char *info = st.precond_info, *v = strstr(info, "order rcm variant ");
    const int all0 = levels_after_key(info, "variant 0: levels L "), kept = levels_after_key(info, ", levels L ");
    int var = v ? atoi(v + strlen("order rcm variant ")) : 0;
    if (!v || !strstr(info, "RCM variants") || !(kept > 0 && kept < all0)) printf("\n  %s\n", info);
    CU_ASSERT_PTR_NOT_NULL(v);
    CU_ASSERT(var >= 1 && var <= 3);
    CU_ASSERT(kept > 0 && kept < all0);
    char cfg[64];
    snprintf(cfg, sizeof cfg, "precond=ilu2,rtol=1e-8,reorder=rcm,variant=%d", var);
    bsr_solver *u = bsr_test_solver(ctx, cfg, S);
    BSR_ASSERT_OK(bsr_solver_solve(u, B, Y, &su));
    CU_ASSERT_PTR_NULL(strstr(su.precond_info, "RCM variants"));   /* asked for: no other tried */
    CU_ASSERT_EQUAL(levels_after_key(su.precond_info, "variant 0: levels L "), -1);
    CU_ASSERT_EQUAL(levels_after_key(su.precond_info, ", levels L "), kept);
    CU_ASSERT_EQUAL(st.col[0].iterations, su.col[0].iterations);
    CU_ASSERT(bsr_test_same_bits(X, Y));
    bsr_solver_stats_free(&st);
    bsr_solver_stats_free(&su);
    bsr_solver_destroy(s);
    bsr_solver_destroy(u);
    /* the whole cube in its own numbering: levels within 3-fold, one variant */
    bsr_multivec *Z;
    BSR_ASSERT_OK(bsr_multivec_create(&Z, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    s = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-8", P.A);
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, Z, &st));
    CU_ASSERT_PTR_NULL(strstr(st.precond_info, "RCM variants"));
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "order rcm ("));
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Z);
    bsr_matrix_destroy(S);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    setenv("BSR_ILU0_PLAN_CHECK", "1", 1);
    static const bsr_test tests[] = {
        {"device = host numeric on the frozen pattern, ILUT/ILU2, b 1/4/5, float/double", test_factor_vs_host},
        {"time step on CUDA: CPU's iterations after changed dropping", test_time_step},
        {"failed refactor: no stale factors", test_failed_refactor},
        {"pattern=refresh|auto", test_pattern_modes},
        {"symbolic_only plan: values_later only, no host re-upload", test_symbolic_only_plan},
        {"RCM variants for skewed levels: the fewest kept, as asked for", test_rcm_variants},
        {"the complete pattern: with and without update lists = host, bit for bit", test_complete_fly},
        {"the complete pattern's dense tail by GEMM and dense LU = host within 1e-12", test_complete_tail},
        {"a breakdown inside the dense tail: the host's status, message and count", test_tail_breakdown},
        {"the dense tail's workspace: held while factoring only, none where there is no room", test_tail_workspace},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_ilu2", tests, argc, argv, &ctx);
}
