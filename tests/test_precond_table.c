/* SPDX-License-Identifier: BSD-3-Clause */
/* The preconditioner table (precond_table.c): every (kind, backend) row that
 * should exist is there exactly once and builds its kind; a missing pair
 * gives BSR_ERR_UNSUPPORTED with a message naming kind and backend. */
#include "harness.h"
#include "precond_impl.h"
#include <stdlib.h>
#include <string.h>

static const bsr_pc_kind all_kinds[] = {BSR_PC_NONE, BSR_PC_JACOBI, BSR_PC_SSOR, BSR_PC_ILU0,
                                        BSR_PC_ILUT, BSR_PC_ILU2, BSR_PC_IC0, BSR_PC_IC2};
#define NKINDS ((int)(sizeof all_kinds / sizeof all_kinds[0]))

/* Nonzero when (kind, backend) must have a row in this build. */
static int expected(bsr_pc_kind kind, bsr_backend be)
{
    if (be == BSR_BACKEND_CPU) return 1;
#ifdef BSR_HAVE_CUDA
    return kind == BSR_PC_NONE || kind == BSR_PC_JACOBI || kind == BSR_PC_IC0 || BSR_PC_IS_ILU(kind);
#else
    (void)kind;
    return 0;   /* a CPU-only build registers no CUDA row */
#endif
}

/* Each expected pair is found, is the row of that pair, has a setup, and is
 * listed once; each pair not expected is missing. */
static void test_rows(void)
{
    static const bsr_backend backends[] = {BSR_BACKEND_CPU, BSR_BACKEND_CUDA};
    int nrows;
    const bsr_pc_row *rows = bsr_pc_rows(&nrows);
    int nexp = 0;
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < NKINDS; k++) {
            const bsr_pc_kind kind = all_kinds[k];
            const bsr_backend be = backends[b];
            const bsr_pc_row *row = NULL;
            bsr_status s = bsr_pc_row_find(kind, be, &row);
            int listed = 0;
            for (int r = 0; r < nrows; r++) listed += rows[r].kind == kind && rows[r].backend == be;
            if (expected(kind, be)) {
                nexp++;
                if (s != BSR_OK)
                    fprintf(stderr, "\n  missing row (%s, %s): %s\n", bsr_pc_name(kind), be ? "cuda" : "cpu",
                            bsr_last_error());
                CU_ASSERT_EQUAL(s, BSR_OK);
                CU_ASSERT_EQUAL(listed, 1);
                CU_ASSERT_PTR_NOT_NULL_FATAL(row);
                CU_ASSERT_EQUAL(row->kind, kind);
                CU_ASSERT_EQUAL(row->backend, be);
                CU_ASSERT_PTR_NOT_NULL(row->ops);
                CU_ASSERT_PTR_NOT_NULL(row->ops->setup);
                /* every kind but none computes something (none: M = I, the copy) */
                CU_ASSERT_EQUAL(row->ops->apply != NULL, kind != BSR_PC_NONE);
            } else {
                CU_ASSERT_EQUAL(s, BSR_ERR_UNSUPPORTED);
                CU_ASSERT_PTR_NULL(row);
                CU_ASSERT_EQUAL(listed, 0);
            }
        }
    CU_ASSERT_EQUAL(nrows, nexp);   /* no row outside the expected pairs */
}

/* The message of a missing pair names the kind and the backend. */
static void test_unsupported(void)
{
    static const bsr_pc_kind missing[] = {BSR_PC_SSOR, BSR_PC_IC2};
    for (int m = 0; m < 2; m++) {
        const bsr_pc_row *row = (const bsr_pc_row *)&row;
        CU_ASSERT_EQUAL(bsr_pc_row_find(missing[m], BSR_BACKEND_CUDA, &row), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NULL(row);
        const char *msg = bsr_last_error();
        char want[64];
        snprintf(want, sizeof want, "(kind %s, backend cuda)", bsr_pc_name(missing[m]));
        if (!strstr(msg, want)) fprintf(stderr, "\n  message: %s\n", msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
    }
    /* a kind outside the enumeration is a bad argument, not a missing row */
    const bsr_pc_row *row;
    CU_ASSERT_EQUAL(bsr_pc_row_find((bsr_pc_kind)99, BSR_BACKEND_CPU, &row), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "unknown preconditioner 99"));
}

/* bsr_pc_create on the host makes each kind from its row: the object's name
 * is the kind's, and apply computes Y = M^{-1} X (finite, nonzero for x != 0). */
static void test_create_cpu(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("poisson2d:12", BSR_DOUBLE, &P));
    for (int k = 0; k < NKINDS; k++) {
        bsr_solver_options o;
        bsr_solver_options_default(&o);
        o.precond = all_kinds[k];
        bsr_pc *pc = NULL;
        BSR_ASSERT_OK(bsr_pc_create(P.A, &o, NULL, NULL, NULL, &pc));
        CU_ASSERT_STRING_EQUAL(pc->name, bsr_pc_name(all_kinds[k]));
        CU_ASSERT_EQUAL(pc->dev_s, 0.0);   /* a host row does no device work */
        if (pc->apply) {
            bsr_multivec *X, *Y;
            const int64_t n = bsr_multivec_rows(P.rhs);
            BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_fill(X, 1.0));
            BSR_ASSERT_OK(bsr_multivec_fill(Y, 0.0));
            BSR_ASSERT_OK(pc->apply(pc, X, Y));
            double nrm = 0;
            BSR_ASSERT_OK(bsr_multivec_norm2(Y, &nrm));
            CU_ASSERT(nrm > 0 && nrm < 1e300);
            if (pc->refactor) BSR_ASSERT_OK(pc->refactor(pc, P.A));
            bsr_multivec_destroy(X);
            bsr_multivec_destroy(Y);
        }
        bsr_pc_destroy(pc);
    }
    bsr_problem_free(&P);
}

/* On a GPU: the solver on the CUDA backend asks the table too, so ssor and
 * IC2 are refused at setup with the kind and backend named, and each CUDA
 * row (the ILUs factored on the device and, with match=mpt, on the host;
 * IC(0) under CG as the device ILU(0))
 * solves, refactors with new values and solves again to rtol, reporting
 * its kind. */
static void test_solver_cuda(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("poisson2d:12", BSR_DOUBLE, &P));
    static const char *bad[] = {"method=cg,precond=ssor", "method=cg,precond=ic2"};
    static const char *want[] = {"(kind ssor, backend cuda)", "(kind ic2, backend cuda)"};
    for (int i = 0; i < 2; i++) {
        bsr_solver *s = NULL;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, bad[i]));
        CU_ASSERT_EQUAL(bsr_solver_setup(s, P.A), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want[i]));
        bsr_solver_destroy(s);
    }
    static const char *good[] = {"precond=none", "precond=jacobi", "precond=ilu0", "precond=ilut",
                                 "precond=ilu2", "precond=ilu0,match=mpt", "precond=ilu2,factor=cpu",
                                 "precond=ic0,method=cg"};
    bsr_matrix *A2 = NULL;   /* new values on A's pattern: A scaled by 2 */
    BSR_ASSERT_OK(bsr_matrix_copy(P.A, BSR_DOUBLE, &A2));
    const int b = bsr_matrix_block(A2);
    const size_t nv = (size_t)bsr_matrix_nnzb(A2) * b * b;
    double *v = malloc(sizeof(double) * nv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t e = 0; e < nv; e++) v[e] = 2.0 * ((const double *)bsr_matrix_values(P.A))[e];
    BSR_ASSERT_OK(bsr_matrix_set_values(A2, v, 0));
    free(v);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "%s,rtol=1e-9,maxit=2000", good[i]);
        bsr_solver *s = bsr_test_solver(ctx, cfg, P.A);
        bsr_multivec *X;
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
        for (int pass = 0; pass < 2; pass++) {
            if (pass) BSR_ASSERT_OK(bsr_solver_refactor(s, A2));
            BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
            bsr_solver_stats st;
            memset(&st, 0, sizeof st);
            BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st));
            CU_ASSERT(st.device);
            CU_ASSERT(st.col[0].relres <= 1e-9 * 1.0001);
            const char *name = good[i] + strlen("precond=");
            CU_ASSERT_EQUAL(strncmp(st.precond_info, name, strcspn(name, ",")), 0);
            printf("\n    %s, pass %d: %d iterations, %s", cfg, pass, st.col[0].iterations, st.precond_info);
            bsr_solver_stats_free(&st);
        }
        bsr_multivec_destroy(X);
        bsr_solver_destroy(s);
    }
    bsr_matrix_destroy(A2);
    bsr_problem_free(&P);
    bsr_context_destroy(ctx);
}

/* The RCM variant a rank keeps against the slowest rank's levels: the
 * lowest-numbered within a tenth of them, its own where none is; the levels
 * of rotconv3d:48,4's overlapped subdomains (bench/RESULTS.md, issue 41's
 * hard class: variants 0-3, 0 not tried). */
static void test_rcm_pick(void)
{
    /* four ranks: rank 0's fewest is variant 0's 1394; ranks 1-3 take
     * variant 1 (1488, 1406, 1445), not their fewest (variant 2 or 3) */
    const int r0[4] = {1394, 2600, 1439, 3808}, r1[4] = {2780, 1488, 1133, 600}, r2[4] = {2240, 1406, 523, 0};
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(r0, 0, 1394), 0);
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(r1, 3, 1394), 1);
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(r2, 2, 1394), 1);
    /* two ranks: rank 0 unskewed at 812, rank 1 keeps variant 2 (673):
     * variant 1's 1582 would make it the slowest */
    const int s1[4] = {2719, 1582, 673, 0};
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(s1, 2, 812), 2);
    /* the rank itself the slowest: its own fewest */
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(s1, 2, 673), 2);
    /* nothing within reach (a bound below every variant): the kept one */
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(s1, 2, 100), 2);
    /* untried variants never chosen */
    const int t[4] = {900, 0, 700, 0};
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(t, 2, 800), 2);
    CU_ASSERT_EQUAL(bsr_rcm_variant_pick(t, 2, 820), 0);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"rows", test_rows},
        {"unsupported", test_unsupported},
        {"create_cpu", test_create_cpu},
        {"solver_cuda", test_solver_cuda},
        {"rcm_pick", test_rcm_pick},
        {NULL, NULL},
    };
    return bsr_test_main("precond_table", tests, argc, argv);
}
