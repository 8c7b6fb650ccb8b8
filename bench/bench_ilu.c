/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench ilu`: fill, setup time and accuracy of block ILU(0), ILUT
 * and ILU2 under several orderings.  Anchors measured in the same run: the
 * same factorization on one CPU core (serial row order, 1 thread), and the
 * complete sparse LU of UMFPACK (fill and time). */
#include "cli.h"
#include "ilu_impl.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Print the `bench ilu` usage to f. */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: bsrsolve bench ilu [FILE.mtx | --gen SPEC] [options]\n"
        "  --tau LIST        tau1 values for ILUT/ILU2 (default 1e-1,3e-2,1e-2)\n"
        "  --kinds LIST      ilu0,ilut,ilu2 (default all)\n"
        "  --orders LIST     natural,rcm,center,nd,metis,amd (default natural,rcm,nd)\n"
        "  --nd-depth H      ND tree depth (default auto)\n"
        "  --repeat R        setups per case, the median is printed (default 3)\n"
        "  --error-limit N   compute ||A-LU||_F/||A||_F up to N scalar rows (default 2e6)\n"
        "  --no-anchor       skip the UMFPACK complete-LU anchor\n"
        "  --float           factors stored in single precision\n"
        "  --block B|auto    block size for Matrix Market input\n"
        "  --csv FILE        also write the table as CSV\n"
        "Columns: fill = (blocks of L+U)/(blocks of A); MB = factor bytes; setup = scaling +\n"
        "ordering + symbolic + factorization (median); refac = bsr_ilu_refactor with the same\n"
        "values; factor = numeric part of setup; 1core = the\n"
        "same factorization on one thread; err = ||Ds P A P^T - LU||_F/||Ds P A P^T||_F;\n"
        "q = ||B - A M^{-1} B||_F/||B||_F for 4 random B (smaller is a better preconditioner);\n"
        "reg = regularized pivots; 2nd = second-order blocks held at peak (ILU2).\n");
}

/* Split a comma list into at most max items (modifies s). */
static int split(char *s, char **items, int max)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ",")) items[n++] = t;
    return n;
}

/* ||B - A M^{-1} B||_F / ||B||_F over 4 random columns. */
static double quality(const bsr_matrix *A, const bsr_ilu *F)
{
    int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_precision p = bsr_matrix_precision(A);
    bsr_multivec *B = NULL, *X = NULL, *R = NULL;
    double q = NAN;
    if (bsr_multivec_create(&B, n, 4, p) || bsr_multivec_create(&X, n, 4, p) ||
        bsr_multivec_create(&R, n, 4, p)) goto done;
    bsr_multivec_random(B, 2026);
    if (bsr_ilu_apply(F, B, X) || bsr_multivec_copy(R, B) || bsr_spmm(-1.0, A, X, 1.0, R)) goto done;
    double nb[4], nr[4], sb = 0, sr = 0;
    bsr_multivec_norm2(B, nb);
    bsr_multivec_norm2(R, nr);
    for (int j = 0; j < 4; j++) { sb += nb[j] * nb[j]; sr += nr[j] * nr[j]; }
    q = sqrt(sr / sb);
done:
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(R);
    return q;
}

/* `bsrsolve bench ilu`: fill, setup time, error and quality of ILU(0)/ILUT/ILU2 under several
 * orderings. */
int bench_ilu(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--tau", "--kinds", "--orders", "--nd-depth",
                                         "--repeat", "--error-limit", "--csv", NULL};
    static const char *const known[] = {"--float", "--no-anchor", "--help", "-h", NULL};
    if (cli_flag(argc, argv, "--help") || cli_flag(argc, argv, "-h")) { usage(stdout); return 0; }
    if (cli_check_options(argc, argv, known, valued)) return 2;
    const char *file = cli_positional(argc, argv, valued);
    char taus_s[256], kinds_s[128], orders_s[128];
    snprintf(taus_s, sizeof taus_s, "%s", cli_opt(argc, argv, "--tau") ? cli_opt(argc, argv, "--tau") : "1e-1,3e-2,1e-2");
    snprintf(kinds_s, sizeof kinds_s, "%s", cli_opt(argc, argv, "--kinds") ? cli_opt(argc, argv, "--kinds") : "ilu0,ilut,ilu2");
    snprintf(orders_s, sizeof orders_s, "%s", cli_opt(argc, argv, "--orders") ? cli_opt(argc, argv, "--orders") : "natural,rcm,nd");
    char *tau_it[32], *kind_it[8], *ord_it[8];
    int ntau = split(taus_s, tau_it, 32), nkind = split(kinds_s, kind_it, 8), nord = split(orders_s, ord_it, 8);
    double taus[32];
    for (int i = 0; i < ntau; i++) {
        char *end;
        taus[i] = strtod(tau_it[i], &end);
        if (*end || !(taus[i] >= 0)) { fprintf(stderr, "bsrsolve: bad --tau value '%s'\n", tau_it[i]); return 2; }
    }
    bsr_ilu_kind kinds[8];
    for (int i = 0; i < nkind; i++) {
        if (!strcmp(kind_it[i], "ilu0")) kinds[i] = BSR_ILU0;
        else if (!strcmp(kind_it[i], "ilut")) kinds[i] = BSR_ILUT;
        else if (!strcmp(kind_it[i], "ilu2")) kinds[i] = BSR_ILU2;
        else { fprintf(stderr, "bsrsolve: unknown --kinds item '%s' (ilu0, ilut, ilu2)\n", kind_it[i]); return 2; }
    }
    bsr_order_options oo[8];
    for (int i = 0; i < nord; i++) {
        bsr_status s = bsr_order_parse(ord_it[i], &oo[i]);
        if (s) return cli_fail(s);
        if (cli_opt(argc, argv, "--nd-depth") && oo[i].kind == BSR_ORDER_ND) oo[i].depth = atoi(cli_opt(argc, argv, "--nd-depth"));
    }
    int repeat = cli_opt(argc, argv, "--repeat") ? atoi(cli_opt(argc, argv, "--repeat")) : 3;
    if (repeat < 1 || repeat > 100) { fprintf(stderr, "bsrsolve: --repeat must be 1..100\n"); return 2; }
    double err_limit = cli_opt(argc, argv, "--error-limit") ? atof(cli_opt(argc, argv, "--error-limit")) : 2e6;
    int fprec = cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE;

    bsr_problem P;
    bsr_status s = cli_load(file, cli_opt(argc, argv, "--gen"), cli_opt(argc, argv, "--block"), BSR_DOUBLE,
                            CLI_DEFAULT_PROBLEM, &P, NULL);
    if (s) return cli_fail(s);
    const bsr_matrix *A = P.A;
    int b = bsr_matrix_block(A), nb = bsr_matrix_nbrows(A);
    int64_t nsc = (int64_t)nb * b;
    int nthreads = omp_get_max_threads();
    printf("bench ilu: %s  n = %lld (%d block rows, b = %d), nnzb = %d, %d threads, factors in %s\n",
           P.name, (long long)nsc, nb, b, bsr_matrix_nnzb(A), nthreads, fprec == BSR_FLOAT ? "float" : "double");
    if (!cli_flag(argc, argv, "--no-anchor")) {
        double fill = 0, t = 0;
        s = ilu_umfpack_lu(A, &fill, &t);
        if (s) printf("anchor UMFPACK complete LU: %s (%s)\n", bsr_status_string(s), bsr_last_error());
        else printf("anchor UMFPACK complete LU (1 core, own ordering): scalar fill %.2f, symbolic+numeric %.3f s\n", fill, t);
    }
    FILE *csv = NULL;
    if (cli_opt(argc, argv, "--csv")) {
        csv = fopen(cli_opt(argc, argv, "--csv"), "w");
        if (!csv) { fprintf(stderr, "bsrsolve: cannot write %s\n", cli_opt(argc, argv, "--csv")); bsr_problem_free(&P); return 1; }
        fprintf(csv, "matrix,order,kind,tau1,tau2,fill,mb,setup_s,refactor_s,factor_s,factor_1core_s,err,q,levels_L,levels_U,reg,dropped,second_peak,tree\n");
    }
    printf("%-8s %-5s %7s %6s %8s %8s %8s %8s %8s %6s %10s %10s %11s %4s %9s %8s\n", "order", "kind", "tau1",
           "fill", "MB", "setup_s", "refac_s", "factor_s", "1core_s", "x1core", "err", "q", "levels L/U", "reg",
           "dropped", "2nd");
    int rc = 0;
    for (int io = 0; io < nord && !rc; io++)
        for (int ik = 0; ik < nkind && !rc; ik++)
            for (int it = 0; it < (kinds[ik] == BSR_ILU0 ? 1 : ntau) && !rc; it++) {
                bsr_ilu_options o;
                bsr_ilu_options_default(&o, kinds[ik]);
                o.order = oo[io];
                o.tau1 = kinds[ik] == BSR_ILU0 ? 0 : taus[it];
                o.prec = fprec;
                double ts[100], tf[100];
                bsr_ilu *F = NULL;
                for (int r = 0; r < repeat && !rc; r++) {
                    bsr_ilu_destroy(F);
                    F = NULL;
                    s = bsr_ilu_setup(A, &o, &F);
                    if (s) { rc = cli_fail(s); break; }
                    bsr_ilu_stats st;
                    bsr_ilu_get_stats(F, &st);
                    ts[r] = st.setup_s;
                    tf[r] = st.factor_s;
                }
                if (rc) break;
                /* refactor with the same values (a CFD time step's cost) */
                double tr[100];
                for (int r = 0; r < repeat && !rc; r++) {
                    double t0 = bsr_now();
                    s = bsr_ilu_refactor(F, A);
                    tr[r] = bsr_now() - t0;
                    if (s) rc = cli_fail(s);
                }
                if (rc) break;
                /* one-core anchor: the same factors, serial row order, 1 thread */
                double t1[100];
                o.parallel = 0;
                omp_set_num_threads(1);
                for (int r = 0; r < repeat; r++) {
                    bsr_ilu *G = NULL;
                    if (bsr_ilu_setup(A, &o, &G) == BSR_OK) {
                        bsr_ilu_stats sg;
                        bsr_ilu_get_stats(G, &sg);
                        t1[r] = sg.factor_s;
                    } else t1[r] = NAN;
                    bsr_ilu_destroy(G);
                }
                omp_set_num_threads(nthreads);
                bsr_ilu_stats st;
                bsr_ilu_get_stats(F, &st);
                double err = NAN;
                if (nsc <= err_limit) bsr_ilu_error_norm(F, &err);
                double q = quality(A, F);
                double msetup = bsr_median(ts, repeat), mfac = bsr_median(tf, repeat), m1 = bsr_median(t1, repeat);
                double mref = bsr_median(tr, repeat);
                double tau2 = bsr_ilu_tau2(kinds[ik], o.tau1, o.tau2);
                char tau_s[32], lev[32];
                if (kinds[ik] == BSR_ILU0) snprintf(tau_s, sizeof tau_s, "-"); else snprintf(tau_s, sizeof tau_s, "%.0e", o.tau1);
                snprintf(lev, sizeof lev, "%d/%d", st.nlevels_L, st.nlevels_U);
                printf("%-8s %-5s %7s %6.2f %8.2f %8.4f %8.4f %8.4f %8.4f %6.2f %10.3e %10.3e %11s %4d %9lld %8lld%s\n",
                       bsr_order_kind_name(oo[io].kind), kind_it[ik], tau_s, st.fill, st.bytes_factors / 1e6,
                       msetup, mref, mfac, m1, m1 / mfac, err, q, lev, st.pivots_regularized, (long long)st.dropped,
                       (long long)st.second_order_peak, st.tree_parallel ? " tree" : "");
                if (csv)
                    fprintf(csv, "%s,%s,%s,%g,%g,%.4f,%.3f,%.6f,%.6f,%.6f,%.6f,%.6e,%.6e,%d,%d,%d,%lld,%lld,%d\n", P.name,
                            bsr_order_kind_name(oo[io].kind), kind_it[ik], o.tau1, tau2, st.fill,
                            st.bytes_factors / 1e6, msetup, mref, mfac, m1, err, q, st.nlevels_L, st.nlevels_U,
                            st.pivots_regularized, (long long)st.dropped, (long long)st.second_order_peak,
                            st.tree_parallel);
                bsr_ilu_destroy(F);
            }
    if (csv) fclose(csv);
    bsr_problem_free(&P);
    return rc;
}
