/* SPDX-License-Identifier: BSD-3-Clause */
/* The hard-class generators.  rotconv3d: sizes, A x* = rhs, nonsymmetric
 * dense coupling in the blocks (diagonal blocks' off-diagonal entries 0.1..0.3
 * of the diagonal), determinism, invalid parameters, a nonsingular system
 * (UMFPACK), and the class it was made for: block ILU(0)-BiCGStab fails at
 * 20^3 cells while ILU2 converges to the exact solution.  coupled3d: sizes,
 * the block structure it states, A x* = rhs, determinism, invalid
 * parameters, smooth-mode symbols with eigenvalues in the left half-plane
 * (rough modes' in the right), and ILU(0)-BiCGStab failing where UMFPACK
 * solves. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* Generated problem of spec in precision prec (asserted to succeed). */
static bsr_problem gen(const char *spec, bsr_precision prec)
{
    bsr_problem P;
    bsr_status s = bsr_generate(spec, prec, &P);
    if (s) fprintf(stderr, "\n  %s: %s\n", spec, bsr_last_error());
    CU_ASSERT_EQUAL_FATAL(s, BSR_OK);
    return P;
}

/* P (6^3 cells, generated from spec) is deterministic: the same matrix and
 * rhs again, the float problem is its rounding, and the spec other_fmt (with
 * the block size for %d: another seed) gives another matrix. */
static void same_again(const bsr_problem *P, const char *spec, const char *other_fmt)
{
    const bsr_matrix *A = P->A;
    const int b = bsr_matrix_block(A);
    bsr_problem Q = gen(spec, BSR_DOUBLE), F = gen(spec, BSR_FLOAT);
    size_t nv = (size_t)A->nnzb * b * b;
    CU_ASSERT_EQUAL(memcmp(A->val, Q.A->val, nv * sizeof(double)), 0);
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_cdata(P->rhs), bsr_multivec_cdata(Q.rhs), 216 * b * sizeof(double)), 0);
    int fbad = 0;
    for (size_t e = 0; e < nv; e++) fbad += ((const float *)F.A->val)[e] != (float)((const double *)A->val)[e];
    CU_ASSERT_EQUAL(fbad, 0);
    bsr_problem_free(&Q);
    bsr_problem_free(&F);
    char other[64];
    snprintf(other, sizeof other, other_fmt, b);
    Q = gen(other, BSR_DOUBLE);
    CU_ASSERT_NOT_EQUAL(memcmp(A->val, Q.A->val, nv * sizeof(double)), 0);
    bsr_problem_free(&Q);
}

/* Entry (r, c) of block q of A (double). */
static double ent(const bsr_matrix *A, int q, int r, int c)
{
    return ((const double *)A->val)[((size_t)q * A->b + r) * A->b + c];
}

/* Position of block (i, j) in A, -1 when absent. */
static int find_block(const bsr_matrix *A, int i, int j)
{
    for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
        if (A->colind[q] == j) return q;
    return -1;
}

/* ||A x* - rhs||_inf / max_i sum_j |a_ij| |x*_j|, recomputed here by a plain loop. */
static double exact_resid(const bsr_problem *P)
{
    const bsr_matrix *A = P->A;
    const double *x = bsr_multivec_cdata(P->xexact), *f = bsr_multivec_cdata(P->rhs);
    int b = A->b;
    double num = 0, den = 0;
    for (int i = 0; i < A->nbrows; i++)
        for (int r = 0; r < b; r++) {
            double s = 0, sa = 0;
            for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
                for (int c = 0; c < b; c++) {
                    double t = ent(A, q, r, c) * x[(size_t)A->colind[q] * b + c];
                    s += t;
                    sa += fabs(t);
                }
            num = fmax(num, fabs(s - f[(size_t)i * b + r]));
            den = fmax(den, sa);
        }
    return num / den;
}

/* spec's system is nonsingular: UMFPACK recovers x* to 1e-10. */
static void umfpack_recovers(const char *spec)
{
    bsr_problem P = gen(spec, BSR_DOUBLE);
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_umfpack_solve(P.A, P.rhs, X, NULL));
    double e = bsr_test_rel_err(X, P.xexact);
    printf("\n  %s: UMFPACK error vs exact %.1e", spec, e);
    CU_ASSERT(e < 1e-10);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

/* name's default size (20^3 block rows of block size bdef), and the spec
 * small of nsmall block rows, whose x* solves it to rounding. */
static void default_and_small(const char *name, int bdef, const char *small, int nsmall)
{
    bsr_problem P = gen(name, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_matrix_nbrows(P.A), 8000);
    CU_ASSERT_EQUAL(bsr_matrix_block(P.A), bdef);
    bsr_problem_free(&P);
    P = gen(small, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_matrix_nbrows(P.A), nsmall);
    CU_ASSERT(exact_resid(&P) <= 1e-14);
    bsr_problem_free(&P);
}

/* spec is refused: BSR_ERR_ARG, no matrix, a message naming the generator
 * name and containing msg. */
static void expect_refused(const char *spec, const char *msg, const char *name)
{
    bsr_problem P;
    bsr_status s = bsr_generate(spec, BSR_DOUBLE, &P);
    CU_ASSERT_EQUAL(s, BSR_ERR_ARG);
    const char *m = bsr_last_error();
    if (!strstr(m, msg) || !strstr(m, name)) printf("\n  %s: message '%s' lacks '%s'\n", spec, m, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, msg));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, name));
    CU_ASSERT_PTR_NULL(P.A);
}

/* P (spec: 6^3 cells, blocks of b): its sizes, A x* = rhs, and a nontrivial
 * exact solution. */
static void check_cube6(const bsr_problem *P, const char *spec, int b)
{
    const bsr_matrix *A = P->A;
    CU_ASSERT_EQUAL(bsr_matrix_nbrows(A), 216);
    CU_ASSERT_EQUAL(bsr_matrix_block(A), b);
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 7 * 216 - 6 * 36);
    CU_ASSERT_EQUAL(bsr_multivec_rows(P->rhs), 216 * b);
    CU_ASSERT_EQUAL(bsr_multivec_rows(P->xexact), 216 * b);
    double res = exact_resid(P);
    if (res > 1e-14) printf("\n  %s: |A x* - rhs| %.2e\n", spec, res);
    CU_ASSERT(res <= 1e-14);
    const double *x = bsr_multivec_cdata(P->xexact);
    double xmax = 0;
    for (int64_t i = 0; i < 216 * b; i++) xmax = fmax(xmax, fabs(x[i]));
    CU_ASSERT(xmax > 0.5); /* a nontrivial exact solution */
}

/* For b = 4 and 5, the problem name:6,b: check_cube6, then blocks (the
 * generator's own structure of the matrix), then same_again with other_fmt
 * (deterministic, float is its rounding, another seed another matrix); last
 * default_and_small(name, bdef, small, nsmall). */
static void cube6_tests(const char *name, void (*blocks)(const bsr_matrix *A, const char *spec, int b),
                        const char *other_fmt, int bdef, const char *small, int nsmall)
{
    for (int b = 4; b <= 5; b++) {
        char spec[64];
        snprintf(spec, sizeof spec, "%s:6,%d", name, b);
        bsr_problem P = gen(spec, BSR_DOUBLE);
        check_cube6(&P, spec, b);
        blocks(P.A, spec, b);
        same_again(&P, spec, other_fmt);
        bsr_problem_free(&P);
    }
    default_and_small(name, bdef, small, nsmall);
}

/* rotconv3d:6,b's own structure (its matrix A, spec spec): dominant positive
 * diagonal blocks with dense non-symmetric couplings; A != A^T. */
static void rotconv_blocks(const bsr_matrix *A, const char *spec, int b)
{
    /* diagonal blocks: positive diagonal, dense off-diagonal part of relative size
     * 0.1..0.3 (times the convective fraction of the diagonal, 0.9..1 here), both
     * ends reached, non-symmetric */
    double rmin = 1e300, rmax = 0, bskew = 0;
    int bad = 0, nondom = 0;
    for (int i = 0; i < A->nbrows; i++) {
        int q = find_block(A, i, i);
        CU_ASSERT_FATAL(q >= 0);
        for (int r = 0; r < b; r++) {
            double d = ent(A, q, r, r), off = 0;
            bad += !(d > 0);
            for (int c = 0; c < b; c++) {
                if (c == r) continue;
                double rel = fabs(ent(A, q, r, c)) / d;
                rmin = fmin(rmin, rel);
                rmax = fmax(rmax, rel);
                bskew = fmax(bskew, fabs(ent(A, q, r, c) - ent(A, q, c, r)) / d);
            }
            for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                for (int c = 0; c < b; c++)
                    if (p != q || c != r) off += fabs(ent(A, p, r, c));
            nondom += off > d;
        }
    }
    printf("\n  %s: diagonal blocks' |off|/diag in [%.3f, %.3f], max |D - D^T|/diag %.2f, %d of %d rows not "
           "diagonally dominant", spec, rmin, rmax, bskew, nondom, 216 * b);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(rmin >= 0.09 && rmin < 0.12);
    CU_ASSERT(rmax <= 0.3 && rmax > 0.27);
    CU_ASSERT(bskew > 0.2);
    CU_ASSERT(nondom > 216 * b / 2);

    /* A != A^T, and the neighbour blocks carry dense off-diagonal coupling */
    double asym = 0, amax = 0, ncoup = 0;
    for (int i = 0; i < A->nbrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            int j = A->colind[q], t = find_block(A, j, i);
            CU_ASSERT_FATAL(t >= 0); /* structurally symmetric 7-point stencil */
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) {
                    amax = fmax(amax, fabs(ent(A, q, r, c)));
                    asym = fmax(asym, fabs(ent(A, q, r, c) - ent(A, t, c, r)));
                    if (j != i && r != c) ncoup = fmax(ncoup, fabs(ent(A, q, r, c) / ent(A, q, r, r)));
                }
        }
    CU_ASSERT(asym > 0.1 * amax);
    CU_ASSERT(ncoup > 0.3);
}

/* Test: sizes, A x* = rhs, nonsymmetry, the dense couplings, determinism, float. */
static void test_structure(void)
{
    /* the default size and a rectangular-free odd size */
    cube6_tests("rotconv3d", rotconv_blocks, "rotconv3d:6,%d,seed=7", 4, "rotconv3d:n=3,b=1", 27);
}

/* Test: nonsingular, and UMFPACK recovers x* (the system is well posed). */
static void test_direct(void)
{
    const char *specs[] = {"rotconv3d:8,4", "rotconv3d:8,5", "rotconv3d:7,5,cfl=0"};
    for (int i = 0; i < 3; i++) umfpack_recovers(specs[i]);
}

/* Test: invalid parameters give BSR_ERR_ARG naming key and value. */
static void test_invalid(void)
{
    static const struct { const char *spec, *msg; } t[] = {
        {"rotconv3d:2,4", "n=2 out of range"},
        {"rotconv3d:6,11", "b=11 out of range"},
        {"rotconv3d:6,0", "b=0 out of range"},
        {"rotconv3d:6,4,nu=-1", "nu=-1 out of range"},
        {"rotconv3d:6,4,nu=0", "nu=0 out of range"},
        {"rotconv3d:6,4,conv=-5", "conv=-5 out of range"},
        {"rotconv3d:6,4,couple=5", "couple=5 out of range"},
        {"rotconv3d:6,4,kcouple=2", "kcouple=2 out of range"},
        {"rotconv3d:6,4,cfl=-1", "cfl=-1 out of range"},
        {"rotconv3d:6,4,conv=abc", "conv='abc' is not a finite number"},
        {"rotconv3d:6,4,foo=1", "unknown parameter 'foo'"},
        {"rotconv3d:6,4,holes=0.1", "unknown parameter 'holes'"},
        {"rotconv3d:6,4,5", "too many positional"},
        {"rotconv3d:6,x", "b='x' is not an integer"},
        {"rotconv3d:6,4,n=6", "given twice"},
        {"rotconv3d:700", "n=700 out of range"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) expect_refused(t[i].spec, t[i].msg, "rotconv3d");
}

/* Solve P with options; returns the status, *err = ||x - x*|| / ||x*||, *st filled. */
static bsr_status solve(const bsr_problem *P, const char *opts, double *err, bsr_solver_stats *st)
{
    bsr_solver *S;
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_solver_create_str(&S, NULL, opts));
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P->rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
    BSR_ASSERT_OK(bsr_solver_setup(S, P->A));
    bsr_status s = bsr_solver_solve(S, P->rhs, X, st);
    *err = bsr_test_rel_err(X, P->xexact);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(S);
    return s;
}

/* Solve P with opts and print the outcome: converge says whether it must
 * converge (1: BSR_OK by rtol, error vs x* <= 1e-6) or fail (0: not
 * converged or breakdown, error > 1e-6); crawl > 0 (with converge 0) also
 * accepts a converged solve of crawl iterations or more. */
static void expect_outcome_crawl(const bsr_problem *P, const char *opts, int converge, int crawl)
{
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    double err;
    bsr_status s = solve(P, opts, &err, &st);
    bsr_reason why = st.k > 0 ? st.col[0].reason : BSR_REASON_NONE;
    printf("\n  %s: %s, %d iterations, relres %.1e, error vs exact %.1e", opts, bsr_reason_string(why),
           st.k > 0 ? st.col[0].iterations : -1, st.k > 0 ? st.col[0].relres : NAN, err);
    if (converge) {
        CU_ASSERT_EQUAL(s, BSR_OK);
        CU_ASSERT_EQUAL(why, BSR_CONVERGED_RTOL);
        CU_ASSERT(err <= 1e-6);
    } else if (crawl > 0 && s == BSR_OK) {
        CU_ASSERT(st.k > 0 && st.col[0].iterations >= crawl);
    } else {
        CU_ASSERT(s == BSR_ERR_NOCONV || s == BSR_ERR_BREAKDOWN);
        CU_ASSERT(!bsr_reason_converged(why));
        CU_ASSERT(!(err <= 1e-6));
    }
    bsr_solver_stats_free(&st);
}

static void expect_outcome(const bsr_problem *P, const char *opts, int converge)
{
    expect_outcome_crawl(P, opts, converge, 0);
}

/* Test: rotconv3d:20,4 (8000 block rows): ILU(0)-BiCGStab fails in default
 * nested dissection and crawls in natural order (195 iterations with
 * BiCGStab's omega kept at |cos(t,s)| >= 0.7, a breakdown without that rule:
 * at least 20x ILU2's), ILU2 converges with error <= 1e-6.  One thread:
 * the outcome is the same with two (bsrsolve --gen rotconv3d:20,4 shows it), and
 * spinning OpenMP threads on a busy 2-core machine would make this test 10x slower. */
static void test_ilu0_fails_ilu2_converges(void)
{
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    bsr_problem P = gen("rotconv3d:20,4", BSR_DOUBLE);
    static const struct { const char *opts; int converge, crawl; } t[] = {
        {"method=bicgstab,precond=ilu0,rtol=1e-10,maxit=1000", 0, 0},
        {"method=bicgstab,precond=ilu0,reorder=natural,rtol=1e-10,maxit=1000", 0, 160},
        {"method=bicgstab,precond=ilu2,tau1=1e-2,rtol=1e-10,maxit=1000", 1, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) expect_outcome_crawl(&P, t[i].opts, t[i].converge, t[i].crawl);
    bsr_problem_free(&P);
    omp_set_num_threads(nt);
}

/* ---- coupled3d --------------------------------------------------------- */

/* Coefficients c[0..n] of det(lambda I - M) (c[n] = 1) of the row-major n x n
 * M, by the Faddeev-LeVerrier recursion. */
static void charpoly(int n, const double *M, double *c)
{
    double Mk[100], T[100];
    memset(Mk, 0, sizeof Mk);
    c[n] = 1;
    for (int k = 1; k <= n; k++) {
        /* T = M Mk (Mk = M_{k-1}), then M_k = T + c[n-k+1] I; c[n-k] = -tr(M M_k) / k */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += M[i * n + l] * Mk[l * n + j];
                T[i * n + j] = s + (i == j ? c[n - k + 1] : 0);
            }
        memcpy(Mk, T, sizeof(double) * (size_t)n * n);
        double tr = 0;
        for (int i = 0; i < n; i++)
            for (int l = 0; l < n; l++) tr += M[i * n + l] * Mk[l * n + i];
        c[n - k] = -tr / k;
    }
}

/* Number of eigenvalues of the row-major n x n M (n <= 10) with negative real
 * part: the sign changes of the first column of the Routh array of
 * det(-lambda I - M), whose roots are M's eigenvalues negated (a zero in the
 * first column is replaced by a tiny positive value). */
static int left_eigs(int n, const double *M)
{
    double c[11], R[12][12];
    charpoly(n, M, c);
    memset(R, 0, sizeof R);
    for (int i = 0; i <= n; i++) { /* q(lambda) = p(-lambda): coefficient of lambda^i times (-1)^i */
        double q = (i % 2 ? -1 : 1) * c[i];
        int from_top = n - i; /* position from the highest power */
        R[from_top % 2][from_top / 2] = q;
    }
    int changes = 0;
    for (int r = 2; r <= n; r++)
        for (int j = 0; j < 11; j++) {
            double p = R[r - 1][0];
            if (p == 0) p = R[r - 1][0] = 1e-300;
            R[r][j] = (p * R[r - 2][j + 1] - R[r - 2][0] * R[r - 1][j + 1]) / p;
        }
    for (int r = 1; r <= n; r++) {
        double a = R[r - 1][0], b2 = R[r][0] == 0 ? 1e-300 : R[r][0];
        changes += (a > 0) != (b2 > 0);
    }
    return changes;
}

/* Number of negative eigenvalues of the symmetric part of the row-major n x n
 * M: the negative pivots of its LDL^T factorization (Sylvester's inertia;
 * -1 when a pivot is zero). */
static int sym_negative(int n, const double *M)
{
    double S[100];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) S[i * n + j] = 0.5 * (M[i * n + j] + M[j * n + i]);
    int neg = 0;
    for (int k = 0; k < n; k++) {
        double p = S[k * n + k];
        if (p == 0) return -1;
        neg += p < 0;
        for (int i = k + 1; i < n; i++) {
            double l = S[i * n + k] / p;
            for (int j = k + 1; j < n; j++) S[i * n + j] -= l * S[k * n + j];
        }
    }
    return neg;
}

/* Test: the eigenvalue counters on matrices of known spectra. */
static void test_counters(void)
{
    const double d3[9] = {1, 0, 0, 0, -1, 0, 0, 0, 2};
    CU_ASSERT_EQUAL(left_eigs(3, d3), 1);
    CU_ASSERT_EQUAL(sym_negative(3, d3), 1);
    const double rot[4] = {-0.1, 2, -2, -0.1}; /* -0.1 +- 2i: two on the left, symmetric part -0.1 I */
    CU_ASSERT_EQUAL(left_eigs(2, rot), 2);
    CU_ASSERT_EQUAL(sym_negative(2, rot), 2);
    const double up[9] = {1, 5, 0, 0, 2, 5, 0, 0, 3}; /* stable, symmetric part indefinite */
    CU_ASSERT_EQUAL(left_eigs(3, up), 0);
    CU_ASSERT(sym_negative(3, up) > 0);
    double m5[25]; /* blocks of diag(-1, -2) and a 3 x 3 with eigenvalues 1, 2 +- i */
    memset(m5, 0, sizeof m5);
    m5[0] = -1; m5[6] = -2; m5[12] = 1; m5[18] = 2; m5[19] = 1; m5[23] = -1; m5[24] = 2;
    CU_ASSERT_EQUAL(left_eigs(5, m5), 2);
}

/* Smooth- and rough-mode symbols of the interior rows of a coupled3d problem
 * of n^3 cells: the row's diagonal block plus cos(theta) times the sum of its
 * neighbour blocks, theta = pi/(n+1) (the lowest Dirichlet mode) and pi.
 * Counts the rows whose smooth symbol has an eigenvalue of negative real part
 * (*left), an indefinite symmetric part (*indef), and whose rough symbol has
 * any eigenvalue of negative real part (*rough_left); returns the interior
 * rows. */
static int symbols(const bsr_matrix *A, int n, int *left, int *indef, int *rough_left)
{
    const int b = A->b;
    int rows = 0;
    *left = *indef = *rough_left = 0;
    const double ct = cos(3.14159265358979323846 / (n + 1));
    for (int i = 0; i < A->nbrows; i++) {
        if (A->rowptr[i + 1] - A->rowptr[i] != 7) continue;
        double S[100], R[100];
        int q = find_block(A, i, i);
        for (int e = 0; e < b * b; e++) S[e] = R[e] = ent(A, q, e / b, e % b);
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (p != q)
                for (int e = 0; e < b * b; e++) {
                    S[e] += ct * ent(A, p, e / b, e % b);
                    R[e] -= ent(A, p, e / b, e % b);
                }
        double sc = 1 / ent(A, q, 0, 0); /* O(1) entries for the characteristic polynomial */
        for (int e = 0; e < b * b; e++) { S[e] *= sc; R[e] *= sc; }
        int ns = sym_negative(b, S);
        *left += left_eigs(b, S) > 0;
        *indef += ns > 0 && ns < b;
        *rough_left += left_eigs(b, R) > 0;
        rows++;
    }
    return rows;
}

/* coupled3d:6,b's own structure (its matrix A, spec spec): the scalar part,
 * the shifts and the coupling sizes stated in the generator. */
static void coupled_blocks(const bsr_matrix *A, const char *spec, int b)
{
    /* interior rows: the scalar part (the blocks' diagonals) sums to d s_p, s_p in [0, 0.05];
     * diagonal block d (I + S + C): |C_pq| in [0.35/3, 0.35]; neighbours -w (I + 0.1 C):
     * off-diagonal over diagonal 0.1 C_pq; upstream weights 1 + |P_a| <= 1 + 2.6 */
    double smin = 1e300, smax = -1e300, cmin = 1e300, cmax = 0, nbad = 0, wmax = 0, skew = 0;
    for (int i = 0; i < A->nbrows; i++) {
        int q = find_block(A, i, i), interior = A->rowptr[i + 1] - A->rowptr[i] == 7;
        for (int r = 0; r < b; r++) {
            double rs = 0, dr = ent(A, q, r, r);
            for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) rs += ent(A, p, r, r);
            double d = 0; /* d = sum of the six face weights = the neighbours' |diagonal| + boundary faces' 1 */
            for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                if (p != q) d -= ent(A, p, r, r);
            if (!interior) continue;
            smin = fmin(smin, rs / d);
            smax = fmax(smax, rs / d);
            for (int c = 0; c < b; c++) {
                if (c == r) continue;
                double cpq = ent(A, q, r, c) / d;
                cmin = fmin(cmin, fabs(cpq));
                cmax = fmax(cmax, fabs(cpq));
                skew = fmax(skew, fabs(cpq - ent(A, q, c, r) / d));
                for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                    if (p != q) nbad += fabs(ent(A, p, r, c) / ent(A, p, r, r) - 0.1 * cpq) > 1e-14;
            }
            for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                if (p != q) wmax = fmax(wmax, -ent(A, p, r, r));
            CU_ASSERT(dr > d);
        }
    }
    printf("\n  %s: interior scalar row sums / d in [%.3f, %.3f], |C| in [%.3f, %.3f], max |C - C^T| %.2f, "
           "max face weight %.2f", spec, smin, smax, cmin, cmax, skew, wmax);
    CU_ASSERT(smin >= 0 && smin < 0.01);
    CU_ASSERT(smax <= 0.05 && smax > 0.04);
    CU_ASSERT(cmin >= 0.35 / 3 - 1e-12 && cmin < 0.13);
    CU_ASSERT(cmax <= 0.35 + 1e-12 && cmax > 0.33);
    CU_ASSERT(skew > 0.3);
    CU_ASSERT_EQUAL(nbad, 0);
    CU_ASSERT(wmax > 1.8 && wmax <= 3.6 + 1e-12);
}

/* Test: sizes, the stated block structure (zero-row-sum scalar part, shifts,
 * coupling sizes), A x* = rhs, determinism, another seed, float. */
static void test_coupled_structure(void)
{
    /* the default size, a size with b = 1 and an odd n (a cell on the axis) */
    cube6_tests("coupled3d", coupled_blocks, "coupled3d:6,%d,seed=9", 5, "coupled3d:n=5,b=1", 125);
}

/* Test: invalid parameters give BSR_ERR_ARG naming generator, key and value. */
static void test_coupled_invalid(void)
{
    static const struct { const char *spec, *msg; } t[] = {
        {"coupled3d:2,5", "n=2 out of range"},
        {"coupled3d:6,11", "b=11 out of range"},
        {"coupled3d:6,0", "b=0 out of range"},
        {"coupled3d:6,5,couple=-0.1", "couple=-0.1 out of range"},
        {"coupled3d:6,5,ncouple=1.5", "ncouple=1.5 out of range"},
        {"coupled3d:6,5,shift=-1", "shift=-1 out of range"},
        {"coupled3d:6,5,pemin=-1", "pemin=-1 out of range"},
        {"coupled3d:6,5,pemin=3", "pemax=2.6 below pemin=3"},
        {"coupled3d:6,5,shift=x", "shift='x' is not a finite number"},
        {"coupled3d:6,5,conv=1", "unknown parameter 'conv'"},
        {"coupled3d:6,5,4", "too many positional"},
        {"coupled3d:6,5,b=4", "given twice"},
        {"coupled3d:6,5,seed=1.5", "seed='1.5' is not an integer"},
        {"coupled3d:6,5,", "trailing separator"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) expect_refused(t[i].spec, t[i].msg, "coupled3d");
}

/* Test: the intended property.  At the default parameters most interior
 * cells' smooth-mode symbol has an eigenvalue with negative real part and an
 * indefinite symmetric part, while every rough-mode symbol is stable; without
 * the coupling (couple=0) no smooth symbol is on the left. */
static void test_coupled_indefinite(void)
{
    static const struct { const char *spec; int n; double left_min, left_max; } t[] = {
        {"coupled3d:10,5", 10, 0.5, 1}, {"coupled3d:10,4", 10, 0.3, 1},
        {"coupled3d:10,5,couple=0", 10, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bsr_problem P = gen(t[i].spec, BSR_DOUBLE);
        int left, indef, rough;
        int rows = symbols(P.A, t[i].n, &left, &indef, &rough);
        printf("\n  %s: of %d interior cells, smooth symbol with a left eigenvalue %d, indefinite symmetric part "
               "%d; rough symbol with a left eigenvalue %d", t[i].spec, rows, left, indef, rough);
        CU_ASSERT_EQUAL(rows, (t[i].n - 2) * (t[i].n - 2) * (t[i].n - 2));
        CU_ASSERT(left >= t[i].left_min * rows && left <= t[i].left_max * rows);
        if (t[i].left_max > 0) CU_ASSERT(indef >= left);
        if (t[i].left_max == 0) CU_ASSERT_EQUAL(indef, 0);
        CU_ASSERT_EQUAL(rough, 0);
        bsr_problem_free(&P);
    }
}

/* Test: the class it was made for, at 1000 block rows: UMFPACK recovers x*
 * (defaults, b = 4 and 5) and ILU(0)-BiCGStab fails (couple 0.6: at this
 * size the defaults still converge, they fail at 20^3 cells; couple 0.5
 * failed until BiCGStab kept |cos(t,s)| >= 0.7, and now takes 773
 * iterations). */
static void test_coupled_ilu0_fails(void)
{
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    const char *direct[] = {"coupled3d:10,5", "coupled3d:10,4", "coupled3d:10,5,couple=0.6"};
    for (int i = 0; i < 3; i++) umfpack_recovers(direct[i]);
    bsr_problem P = gen("coupled3d:10,5,couple=0.6", BSR_DOUBLE);
    expect_outcome(&P, "method=bicgstab,precond=ilu0,rtol=1e-10,maxit=1000", 0);
    bsr_problem_free(&P);
    omp_set_num_threads(nt);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"rotconv3d sizes, A x* = rhs, dense nonsymmetric coupling, determinism", test_structure},
        {"rotconv3d nonsingular (UMFPACK recovers x*)", test_direct},
        {"rotconv3d invalid parameters rejected", test_invalid},
        {"rotconv3d:20,4: ILU(0)-BiCGStab fails or crawls, ILU2 converges", test_ilu0_fails_ilu2_converges},
        {"eigenvalue counters (Routh array, LDL^T inertia)", test_counters},
        {"coupled3d sizes, block structure, A x* = rhs, determinism", test_coupled_structure},
        {"coupled3d invalid parameters rejected", test_coupled_invalid},
        {"coupled3d: smooth-mode symbols indefinite, rough ones stable", test_coupled_indefinite},
        {"coupled3d:10,5: UMFPACK solves, ILU(0)-BiCGStab fails", test_coupled_ilu0_fails},
        {NULL, NULL},
    };
    return bsr_test_main("rotconv", tests, argc, argv);
}
