/* SPDX-License-Identifier: BSD-3-Clause */
/* IDR(s) on the CUDA backend (src/krylov/krylov_idr.c through the device vector
 * table): converged to the known solution like the CPU backend (iterations
 * within rounding's drift), s = 1, 4, 8, k = 1 and 5, double and float, with
 * host and device-resident multivectors; two device runs bit-identical; the
 * fused update + dot against the separate calls bit for bit; a NaN column
 * stops as NaN while the others converge.  Skips (exit 77) without a GPU. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

/* The device agrees with the host: converged, iterations within 2 + 1/8,
 * the error to x* alike; and device-resident B, X give the same bits. */
static void test_agrees(void)
{
    static const char *const specs[] = {"convdiff2d:48,30", "rotconv3d:10", "cfd3d:8,4"};
    static const char *const pcs[] = {"none", "jacobi", "ilu0"};
    static const int ss[] = {1, 4, 8};
    for (int g = 0; g < 3; g++)
        for (int kk = 0; kk < 2; kk++) {
            const int k = kk ? 5 : 1;
            bsr_problem P;
            bsr_multivec *B, *Xs, *Xc, *Xg, *Bd, *Xd;
            bsr_test_problem_k(specs[g], k, 23, &P, &B, &Xs);
            const int64_t n = bsr_multivec_rows(B);
            BSR_ASSERT_OK(bsr_multivec_create(&Xc, n, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Xg, n, k, BSR_DOUBLE));
            for (int p = 0; p < 3; p++)
                for (int q = 0; q < 3; q++)
                    for (int fl = 0; fl < 2; fl++) {
                        if (fl && (p != 2 || q != 1)) continue;   /* float: ILU(0), IDR(4) */
                        char cfg[192];
                        /* ILU(0) in natural order on both backends (the CPU default is
                         * nested dissection, the device's natural): the same factors */
                        snprintf(cfg, sizeof cfg, "method=idr,idr_s=%d,precond=%s,rtol=%s,maxit=4000%s%s", ss[q], pcs[p],
                                 fl ? "1e-5" : "1e-10", fl ? ",precision=float,precond_precision=float" : "",
                                 p == 2 ? ",reorder=natural" : "");
                        bsr_solver_stats sc, sg;
                        bsr_status rc = bsr_test_solve(NULL, cfg, P.A, B, Xc, &sc), rg = bsr_test_solve(ctx, cfg, P.A, B, Xg, &sg);
                        if (rc != rg || rg) printf("\n  %s on %s k=%d: CPU %s, GPU %s", cfg, specs[g], k,
                                                   bsr_status_string(rc), bsr_status_string(rg));
                        CU_ASSERT_EQUAL(rc, BSR_OK);
                        CU_ASSERT_EQUAL(rg, BSR_OK);
                        CU_ASSERT_EQUAL(sg.device, 1);
                        for (int j = 0; j < k; j++) {
                            const int ic = sc.col[j].iterations, ig = sg.col[j].iterations;
                            /* rounding drifts long unpreconditioned runs further */
                            const int drift = 2 + ic / (p == 2 ? 8 : 3);
                            if (abs(ic - ig) > drift) printf("\n  %s on %s: CPU %d, GPU %d iterations", cfg, specs[g], ic, ig);
                            CU_ASSERT(abs(ic - ig) <= drift);
                            CU_ASSERT(bsr_reason_converged(sg.col[j].reason));
                        }
                        const double tol = fl ? 1e-2 : 1e-6, ec = bsr_test_rel_err(Xc, Xs), eg = bsr_test_rel_err(Xg, Xs);
                        if (!(eg < tol)) printf("\n  %s on %s: error CPU %.3e, GPU %.3e", cfg, specs[g], ec, eg);
                        CU_ASSERT(ec < tol && eg < tol);
                        bsr_solver_stats_free(&sc);
                        bsr_solver_stats_free(&sg);
                        if (fl || q != 1) continue;
                        /* device-resident B and X: as host ones */
                        BSR_ASSERT_OK(bsr_multivec_create(&Bd, n, k, BSR_DOUBLE));
                        BSR_ASSERT_OK(bsr_multivec_copy(Bd, B));
                        BSR_ASSERT_OK(bsr_multivec_upload(ctx, Bd));
                        BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Xd, n, k, BSR_DOUBLE));
                        BSR_ASSERT_OK(bsr_ctx_fill(ctx, Xd, 0.0));
                        bsr_solver *s = bsr_test_solver(ctx, cfg, P.A);
                        BSR_ASSERT_OK(bsr_solver_solve(s, Bd, Xd, &sg));
                        CU_ASSERT(bsr_multivec_on_device(Xd));
                        BSR_ASSERT_OK(bsr_multivec_download(ctx, Xd));
                        CU_ASSERT(bsr_test_rel_err(Xd, Xg) <= 1e-12);
                        bsr_solver_stats_free(&sg);
                        bsr_solver_destroy(s);
                        bsr_multivec_destroy(Bd); bsr_multivec_destroy(Xd);
                    }
            bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
            bsr_multivec_destroy(Xc); bsr_multivec_destroy(Xg);
            bsr_problem_free(&P);
        }
}

/* Two device runs bit-identical; fused update + dot against the separate
 * calls: the same iterations and bits. */
static void test_deterministic(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X[3];
    bsr_test_problem_k("rotconv3d:10", 3, 23, &P, &B, &Xs);
    const int64_t n = bsr_multivec_rows(B);
    const char *cfg = "method=idr,idr_s=4,precond=ilu0,rtol=1e-10";
    int its[3][3];
    for (int r = 0; r < 3; r++) {
        bsr_solver_stats st;
        BSR_ASSERT_OK(bsr_multivec_create(&X[r], n, 3, BSR_DOUBLE));
        bsr_kops_set_unfused(r == 2);
        BSR_ASSERT_OK(bsr_test_solve(ctx, cfg, P.A, B, X[r], &st));
        for (int j = 0; j < 3; j++) its[r][j] = st.col[j].iterations;
        bsr_solver_stats_free(&st);
    }
    bsr_kops_set_unfused(0);
    CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
    CU_ASSERT(bsr_test_same_bits(X[0], X[2]));
    for (int j = 0; j < 3; j++) CU_ASSERT(its[0][j] == its[1][j] && its[0][j] == its[2][j]);
    for (int r = 0; r < 3; r++) bsr_multivec_destroy(X[r]);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* A NaN in one column of b: that column stops as NaN at iteration 0, the
 * others converge, the status says which. */
static void test_nan_column(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X;
    bsr_test_problem_k("convdiff2d:32,30", 3, 23, &P, &B, &Xs);
    const int64_t n = bsr_multivec_rows(B);
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 3, BSR_DOUBLE));
    ((double *)bsr_multivec_data(B))[7 * 3 + 2] = NAN;
    bsr_solver_stats st;
    CU_ASSERT_EQUAL(bsr_test_solve(ctx, "method=idr,precond=ilu0,rtol=1e-10", P.A, B, X, &st), BSR_ERR_NOCONV);
    CU_ASSERT(bsr_reason_converged(st.col[0].reason) && bsr_reason_converged(st.col[1].reason));
    CU_ASSERT_EQUAL(st.col[2].reason, BSR_DIVERGED_NAN);
    CU_ASSERT_EQUAL(st.col[2].iterations, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "column 2"));
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"IDR(s) on the device agrees with the CPU", test_agrees},
                                     {"IDR(s) on the device: deterministic, fused = separate", test_deterministic},
                                     {"IDR(s) on the device: a NaN column", test_nan_column},
                                     {NULL, NULL}};
    return bsr_test_gpu_main("gpu_idr", tests, argc, argv, &ctx);
}
