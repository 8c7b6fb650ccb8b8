/* SPDX-License-Identifier: BSD-3-Clause */
/* GMRES-DR (src/krylov/krylov_gmres.c, option deflate) on the CUDA backend, through the
 * device vector table: converged to the known solution like the CPU backend
 * (iterations within rounding's drift), k = 1 and 3, double and float, and
 * flexible (flex=1); the
 * indefinite coupled3d case where GMRES(20) stalls converged on the device
 * too; two device runs bit-identical.  Skips (exit 77) without a GPU. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

/* The device agrees with the host (ILU(0) in natural order on both: the
 * same factors): converged, iterations within 2 + 1/8, the error alike. */
static void test_agrees(void)
{
    static const char *const specs[] = {"convdiff2d:48,30", "rotconv3d:10", "coupled3d:12,4,couple=0.4"};
    for (int g = 0; g < 3; g++)
        for (int kk = 0; kk < 2; kk++) {
            const int k = kk ? 3 : 1;
            bsr_problem P;
            bsr_multivec *B, *Xs, *Xc, *Xg;
            bsr_test_problem_k(specs[g], k, 29, &P, &B, &Xs);
            const int64_t n = bsr_multivec_rows(B);
            BSR_ASSERT_OK(bsr_multivec_create(&Xc, n, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Xg, n, k, BSR_DOUBLE));
            for (int v = 0; v < 3; v++) {   /* double, float, double flexible */
                const int fl = v == 1;
                char cfg[192];
                snprintf(cfg, sizeof cfg, "method=gmres,restart=20,deflate=8,orth=%s,precond=ilu0,reorder=natural,"
                         "etol=off,rtol=%s,maxit=3000%s%s", fl ? "mgs" : "cgs2", fl ? "1e-5" : "1e-9",
                         fl ? ",precision=float,precond_precision=float" : "", v == 2 ? ",flex=1" : "");
                bsr_solver_stats sc, sg;
                bsr_status rc = bsr_test_solve(NULL, cfg, P.A, B, Xc, &sc), rg = bsr_test_solve(ctx, cfg, P.A, B, Xg, &sg);
                if (rc != rg || rg)
                    printf("\n  %s on %s k=%d: CPU %s, GPU %s", cfg, specs[g], k, bsr_status_string(rc),
                           bsr_status_string(rg));
                CU_ASSERT_EQUAL(rc, BSR_OK);
                CU_ASSERT_EQUAL(rg, BSR_OK);
                CU_ASSERT_EQUAL(sg.device, 1);
                for (int j = 0; j < k && !rc && !rg; j++) {
                    const int ic = sc.col[j].iterations, ig = sg.col[j].iterations, drift = 2 + ic / 8;
                    if (abs(ic - ig) > drift) printf("\n  %s on %s: CPU %d, GPU %d iterations", cfg, specs[g], ic, ig);
                    CU_ASSERT(abs(ic - ig) <= drift);
                    CU_ASSERT(bsr_reason_converged(sg.col[j].reason));
                }
                const double tol = fl ? 1e-2 : (g == 2 ? 1e-4 : 1e-6);
                const double ec = bsr_test_rel_err(Xc, Xs), eg = bsr_test_rel_err(Xg, Xs);
                printf("\n  %s k=%d %s: iterations CPU %d, GPU %d; error CPU %.3e, GPU %.3e", specs[g], k,
                       fl ? "float" : v == 2 ? "double, flex=1" : "double", rc ? -1 : sc.col[0].iterations, rg ? -1 : sg.col[0].iterations, ec, eg);
                CU_ASSERT(ec < tol && eg < tol);
                if (!rc) bsr_solver_stats_free(&sc);
                if (!rg) bsr_solver_stats_free(&sg);
            }
            bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
            bsr_multivec_destroy(Xc); bsr_multivec_destroy(Xg);
            bsr_problem_free(&P);
        }
}

/* Two device runs: the same iterations and bits. */
static void test_deterministic(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X[2];
    bsr_test_problem_k("rotconv3d:10", 3, 29, &P, &B, &Xs);
    const int64_t n = bsr_multivec_rows(B);
    const char *cfg = "method=gmres,restart=12,deflate=5,orth=cgs2,precond=ilu0,rtol=1e-10";
    int its[2][3];
    for (int r = 0; r < 2; r++) {
        bsr_solver_stats st;
        BSR_ASSERT_OK(bsr_multivec_create(&X[r], n, 3, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_test_solve(ctx, cfg, P.A, B, X[r], &st));
        for (int j = 0; j < 3; j++) its[r][j] = st.col[j].iterations;
        bsr_solver_stats_free(&st);
    }
    CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
    for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(its[0][j], its[1][j]);
    for (int r = 0; r < 2; r++) bsr_multivec_destroy(X[r]);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"GMRES-DR on the device agrees with the CPU", test_agrees},
                                     {"GMRES-DR on the device: deterministic", test_deterministic},
                                     {NULL, NULL}};
    return bsr_test_gpu_main("gpu_gmresdr", tests, argc, argv, &ctx);
}
