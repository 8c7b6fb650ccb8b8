/* SPDX-License-Identifier: BSD-3-Clause */
/* An outside program using the installed bsrsolve: builds a 3D grid problem
 * with 3 x 3 blocks by hand, solves it for a known solution, refactors with
 * new values and solves again, and checks every solution against the
 * residual it recomputes from its own arrays.  Exits 1 on a wrong result;
 * with --perturb it spoils the solution before checking (so must fail). */
#include <bsrsolve.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { G = 10, NB = G * G * G, B = 3, N = NB * B };

static int rowptr[NB + 1], colind[7 * NB];
static double val[7 * NB * B * B];
static int perturb;

/* The grid operator: per point a coupled diagonal block, diagonal blocks
 * (skewed by direction) to the 6 neighbours; strictly diagonally dominant.
 * Rows in column order: bsr_matrix_set_values takes A's own (sorted) order. */
static void build(void)
{
    static const int d[7][3] = { {0,0,-1}, {0,-1,0}, {-1,0,0}, {0,0,0}, {1,0,0}, {0,1,0}, {0,0,1} };
    int k = 0;
    for (int p = 0; p < NB; p++) {
        int x = p % G, y = p / G % G, z = p / (G * G);
        rowptr[p] = k;
        for (int e = 0; e < 7; e++) {
            int X = x + d[e][0], Y = y + d[e][1], Z = z + d[e][2];
            if (X < 0 || X >= G || Y < 0 || Y >= G || Z < 0 || Z >= G) continue;
            double *V = &val[(size_t)k * B * B];
            for (int r = 0; r < B; r++)
                for (int c = 0; c < B; c++)
                    V[r * B + c] = e == 3 ? (r == c ? 6.5 + r : 0.1 * (r - c))
                                          : (r == c ? -1.0 + (e % 2 ? 0.2 : -0.2) * (r + 1) / B : 0.0);
            colind[k++] = X + G * (Y + G * Z);
        }
    }
    rowptr[NB] = k;
}

/* y = s * A x from the arrays above. */
static void matvec(double s, const double *x, double *y)
{
    for (int p = 0; p < NB; p++)
        for (int r = 0; r < B; r++) {
            double t = 0;
            for (int k = rowptr[p]; k < rowptr[p + 1]; k++)
                for (int c = 0; c < B; c++) t += val[((size_t)k * B + r) * B + c] * x[colind[k] * B + c];
            y[p * B + r] = s * t;
        }
}

/* 0 when x solves (s A) x = b to 1e-8 and is within 1e-6 of xe. */
static int check(const char *what, double s, const double *b, const double *xs, const double *xe)
{
    static double x[N], r[N];
    memcpy(x, xs, sizeof x);
    if (perturb) x[N / 2] += 1e-3;
    matvec(s, x, r);
    double rr = 0, bb = 0, err = 0;
    for (int i = 0; i < N; i++) {
        rr += (b[i] - r[i]) * (b[i] - r[i]);
        bb += b[i] * b[i];
        err = fmax(err, fabs(x[i] - xe[i]));
    }
    double rel = sqrt(rr / bb);
    printf("%s: residual %.1e, max error %.1e\n", what, rel, err);
    return !(rel <= 1e-8 && err <= 1e-6);
}

/* Stop with the library's message when e is not BSR_OK. */
static void ok(bsr_status e, const char *what)
{
    if (e == BSR_OK) return;
    fprintf(stderr, "consumer: %s: %s: %s\n", what, bsr_status_string(e), bsr_last_error());
    exit(1);
}

int main(int argc, char **argv)
{
    perturb = argc > 1 && !strcmp(argv[1], "--perturb");
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", BSR_VERSION_MAJOR, BSR_VERSION_MINOR, BSR_VERSION_PATCH);
#ifdef EXPECT_VERSION
    if (strcmp(v, EXPECT_VERSION) || strcmp(BSR_VERSION, EXPECT_VERSION)) {
        fprintf(stderr, "consumer: header version %s (%s), expected %s\n", BSR_VERSION, v, EXPECT_VERSION);
        return 1;
    }
    if (strcmp(bsr_version(), EXPECT_VERSION)) {
        fprintf(stderr, "consumer: library version %s, expected %s\n", bsr_version(), EXPECT_VERSION);
        return 1;
    }
#endif
    printf("bsrsolve %s (library %s)\n", BSR_VERSION, bsr_version());
    static double xe[N], b[N], x[N];
    build();
    for (int i = 0; i < N; i++) xe[i] = cos(0.1 * i) + 2.0;
    matvec(1.0, xe, b);

    bsr_matrix *A;
    bsr_multivec *Bv, *Xv;
    bsr_solver *s;
    bsr_solver_stats st;
    ok(bsr_matrix_create(&A, NB, NB, B, rowptr, colind, val, BSR_DOUBLE, 0), "matrix");
    ok(bsr_multivec_create(&Bv, N, 1, BSR_DOUBLE), "multivec");
    ok(bsr_multivec_create(&Xv, N, 1, BSR_DOUBLE), "multivec");
    ok(bsr_multivec_from_colmajor(Bv, b, N), "rhs");
    ok(bsr_solver_create_str(&s, NULL, "method=bicgstab,precond=ilu0,rtol=1e-11"), "solver");
    ok(bsr_solver_setup(s, A), "setup");
    ok(bsr_solver_solve(s, Bv, Xv, &st), "solve");
    printf("solve: %d iterations, %s\n", st.col[0].iterations, bsr_reason_string(st.col[0].reason));
    bsr_solver_stats_free(&st);
    ok(bsr_multivec_to_colmajor(Xv, x, N), "solution");
    int bad = check("setup + solve", 1.0, b, x, xe);

    /* a time step: A doubled on the same pattern, x = xe / 2 */
    static double val2[sizeof val / sizeof *val], xe2[N];
    for (size_t i = 0; i < sizeof val / sizeof *val; i++) val2[i] = 2 * val[i];
    for (int i = 0; i < N; i++) xe2[i] = xe[i] / 2;
    ok(bsr_matrix_set_values(A, val2, 0), "new values");
    ok(bsr_solver_refactor(s, A), "refactor");
    ok(bsr_solver_solve(s, Bv, Xv, &st), "solve after refactor");
    bsr_solver_stats_free(&st);
    ok(bsr_multivec_to_colmajor(Xv, x, N), "solution");
    bad |= check("refactor + solve", 2.0, b, x, xe2);

    bsr_solver_destroy(s);
    bsr_multivec_destroy(Bv);
    bsr_multivec_destroy(Xv);
    bsr_matrix_destroy(A);
    puts(bad ? "consumer: FAILED" : "consumer: ok");
    return bad;
}
