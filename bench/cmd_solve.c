/* `bsrsolve [FILE | --gen SPEC]`: for now, matrix statistics and a CPU SpMM
 * timing (S1 vs OpenMP); the solver issue turns this into a full solve. */
#include "cli.h"
#include <stdlib.h>

int cmd_solve(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--k", NULL};
    static const char *const known[] = {"--json", "--float", NULL};
    if (cli_check_options(argc, argv, known, valued)) return 2;
    bsr_problem P;
    bsr_status s = cli_load(cli_positional(argc, argv, valued), cli_opt(argc, argv, "--gen"),
                            cli_opt(argc, argv, "--block"),
                            cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE,
                            CLI_DEFAULT_PROBLEM, &P, NULL);
    if (s) return cli_fail(s);
    bsr_matrix_info f;
    bsr_matrix_get_info(P.A, &f);
    const char *ks = cli_opt(argc, argv, "--k");
    int k = ks ? atoi(ks) : 1;
    if (k < 1 || k > 64) { fprintf(stderr, "bsrsolve: --k must be 1..64\n"); bsr_problem_free(&P); return 2; }
    bsr_multivec *X = NULL, *Y = NULL;
    if ((s = bsr_multivec_create(&X, f.n, k, bsr_matrix_precision(P.A))) ||
        (s = bsr_multivec_create(&Y, f.n, k, bsr_matrix_precision(P.A))) ||
        (s = bsr_multivec_random(X, 42))) goto fail;
    double t[2];
    for (int v = 0; v < 2; v++) {
        double times[5];
        for (int r = 0; r < 5; r++) {
            double t0 = cli_now();
            if ((s = bsr_spmm_cpu(v ? BSR_SPMM_OMP : BSR_SPMM_S1, 1.0, P.A, X, 0.0, Y))) goto fail;
            times[r] = cli_now() - t0;
        }
        t[v] = cli_median(times, 5);
    }
    double bytes = (double)f.nnzb * (f.b * f.b * bsr_precision_size(bsr_matrix_precision(P.A)) + sizeof(int)) +
                   2.0 * f.n * k * bsr_precision_size(bsr_matrix_precision(P.A));
    printf("problem   %s: n = %lld, b = %d, block rows %d, nnzb %d, fill ratio %.3f\n", P.name,
           (long long)f.n, f.b, f.nbrows, f.nnzb, f.fill_ratio);
    printf("SpMM k=%d  S1 %.3f ms (%.2f GB/s)   OpenMP %.3f ms (%.2f GB/s, %.2fx S1)\n", k,
           1e3 * t[0], bytes / t[0] * 1e-9, 1e3 * t[1], bytes / t[1] * 1e-9, t[0] / t[1]);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_problem_free(&P);
    return 0;
fail:
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_problem_free(&P);
    return cli_fail(s);
}
