/* SPDX-License-Identifier: BSD-3-Clause */
/* Determinism (issue 24): the default-path solve (setup from scratch, then
 * BiCGStab with ILU(0) or ILU2), run twice, gives the same solution bit for
 * bit, in double and in float, with one and with two right-hand sides; on the
 * CPU also with one OpenMP thread against the default count, and on the GPU
 * when there is one (skipped otherwise).  Run as its own ctest, so that
 * `ctest -j` runs it beside other suites: thread timing differs from run to
 * run while the bits must not. */
#include "harness.h"
#include "internal.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One solve from scratch: a fresh problem, solver, setup and solve of k
 * right-hand sides (deterministic random B, X = 0); X's bytes into out
 * (allocated), the most iterations of a column into *iters. */
static void solve_once(bsr_context *ctx, const char *spec, bsr_precision prec, const char *cfg, int k,
                       char **out, size_t *bytes, int *iters)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(spec, prec, &P));
    int64_t n = bsr_multivec_rows(P.rhs);
    bsr_multivec *B, *X;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, k, prec));
    BSR_ASSERT_OK(bsr_multivec_random(B, 11));
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, k, prec));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
    bsr_solver *s;
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, cfg));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    bsr_status e = bsr_solver_solve(s, B, X, &st);
    if (e) printf("\n  %s k=%d: %s: %s", cfg, k, bsr_status_string(e), bsr_last_error());
    CU_ASSERT_EQUAL(e, BSR_OK);
    *iters = 0;
    for (int j = 0; j < st.k; j++) if (st.col[j].iterations > *iters) *iters = st.col[j].iterations;
    *bytes = (size_t)n * k * bsr_precision_size(prec);
    *out = malloc(*bytes);
    memcpy(*out, bsr_multivec_data(X), *bytes);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

/* Solve twice (and, on the CPU, once more on one thread) for BiCGStab and
 * IDR(4), every precision, preconditioner and k in 1, 2; every run must give
 * the first's bits. */
static void check_backend(bsr_context *ctx, const char *spec)
{
    static const char *const pcs[] = {"ilu0", "ilu2"};
    static const char *const methods[] = {"bicgstab", "idr"};
    bsr_team_force(1);   /* the default team's parallel paths at these sizes too */
    for (int mp = 0; mp < 4; mp++)   /* method m, precision p */
        for (int q = 0; q < 2; q++)
            for (int k = 1; k <= 2; k++) {
                const int m = mp >> 1, p = mp & 1;
                const bsr_precision prec = p ? BSR_FLOAT : BSR_DOUBLE;
                char cfg[160];
                snprintf(cfg, sizeof cfg, "method=%s,precond=%s%s", methods[m], pcs[q],
                         p ? ",precision=float,precond_precision=float,rtol=1e-5" : "");
                char *x0, *x1;
                size_t bytes;
                int it0, it1;
                solve_once(ctx, spec, prec, cfg, k, &x0, &bytes, &it0);
                solve_once(ctx, spec, prec, cfg, k, &x1, &bytes, &it1);
                int same = it0 == it1 && !memcmp(x0, x1, bytes);
                CU_ASSERT(same);
                int same1 = 1;
                if (!ctx) {   /* the results do not depend on the number of threads */
                    int nt = omp_get_max_threads();
                    omp_set_num_threads(1);
                    free(x1);
                    solve_once(ctx, spec, prec, cfg, k, &x1, &bytes, &it1);
                    omp_set_num_threads(nt);
                    same1 = it0 == it1 && !memcmp(x0, x1, bytes);
                    CU_ASSERT(same1);
                }
                printf("\n    %s %-72s k=%d: %d iterations, %s%s", ctx ? "cuda" : "cpu ", cfg, k, it0,
                       same ? "bitwise equal" : "DIFFERENT", same1 ? "" : ", DIFFERENT on one thread");
                free(x0); free(x1);
            }
    bsr_team_force(0);
    printf("\n  ");
}

static void test_cpu(void) { check_backend(NULL, "stencil3d:16:4"); }

static void test_cuda(void)
{
    if (!bsr_test_have_gpu()) { BSR_TEST_SKIP("skipped: no CUDA device"); return; }
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    check_backend(ctx, "stencil3d:32:4");
    bsr_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"CPU: default-path solve twice, bit for bit", test_cpu},
        {"CUDA: default-path solve twice, bit for bit", test_cuda},
        {NULL, NULL},
    };
    return bsr_test_main("determinism", tests, argc, argv);
}
