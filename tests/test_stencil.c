/* SPDX-License-Identifier: BSD-3-Clause */
/* Stencil module (issue 8): generators (sizes, symmetry, row sums, exact
 * residual, elliptic2d second order), red-black Gauss-Seidel and wavefront
 * SOR against their sequential references, UMFPACK and the exact solution,
 * GPU versions against the CPU ones, invalid parameters. */
#include "harness.h"
#include "stencil_impl.h"
#include "gen_limit.h"
#include <math.h>
#include <string.h>

/* Generated problem of spec (asserted to succeed). */
static bsr_problem gen(const char *spec)
{
    bsr_problem P;
    bsr_status s = bsr_generate(spec, BSR_DOUBLE, &P);
    if (s) fprintf(stderr, "\n  %s: %s\n", spec, bsr_last_error());
    CU_ASSERT_EQUAL_FATAL(s, BSR_OK);
    return P;
}

/* ||A x* - rhs||_inf / (max_i sum_j |a_ij| |x*_j|). */
static double exact_resid(const bsr_problem *P)
{
    int64_t n = bsr_multivec_rows(P->rhs);
    bsr_multivec *R;
    bsr_multivec_create(&R, n, 1, BSR_DOUBLE);
    bsr_spmm_cpu(BSR_SPMM_S1, 1.0, P->A, P->xexact, 0.0, R);
    const double *r = bsr_multivec_cdata(R), *b = bsr_multivec_cdata(P->rhs), *x = bsr_multivec_cdata(P->xexact);
    const bsr_matrix *A = P->A;
    int bs = A->b;
    double num = 0, den = 0;
    for (int i = 0; i < A->nbrows; i++)
        for (int ii = 0; ii < bs; ii++) {
            double s = 0;
            for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
                for (int c = 0; c < bs; c++)
                    s += fabs(((double *)A->val)[((size_t)q * bs + ii) * bs + c] * x[(size_t)A->colind[q] * bs + c]);
            num = fmax(num, fabs(r[(size_t)i * bs + ii] - b[(size_t)i * bs + ii]));
            den = fmax(den, s);
        }
    bsr_multivec_destroy(R);
    return num / den;
}

/* Test: generator sizes and holes. */
static void test_sizes(void)
{
    static const struct { const char *spec; int nbrows, b; } t[] = {
        {"poisson2d:10", 64, 1},          {"poisson3d:6", 64, 1},
        {"poisson2d:n=5,nx=7", 15, 1},    {"poisson3d:5,nx=4,nz=6", 2 * 3 * 4, 1},
        {"heat2d:9,0.01", 49, 1},         {"heat3d:7,dt=0.1,scheme=cn", 125, 1},
        {"elliptic2d:9", 49, 1},          {"elliptic2d:n=9,ny=5", 21, 1},
        {"convdiff2d:7,50", 25, 1},       {"convdiff3d:6,pe=5,scheme=central", 64, 1},
        {"cfd3d:6", 64, 4},               {"cfd3d:6,5,100", 64, 5},
        {"cfd3d:n=6,b=5,model=comp,nx=7", 80, 5},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bsr_problem P = gen(t[i].spec);
        CU_ASSERT_EQUAL(bsr_matrix_nbrows(P.A), t[i].nbrows);
        CU_ASSERT_EQUAL(bsr_matrix_block(P.A), t[i].b);
        CU_ASSERT_EQUAL(bsr_multivec_rows(P.rhs), (int64_t)t[i].nbrows * t[i].b);
        CU_ASSERT_PTR_NOT_NULL(P.xexact);
        bsr_problem_free(&P);
    }
    /* holes switch cells off: fewer rows, same for the same seed, different for another */
    bsr_problem P = gen("poisson3d:12,holes=0.2"), Q = gen("poisson3d:12,holes=0.2,seed=7");
    int nr = bsr_matrix_nbrows(P.A);
    CU_ASSERT(nr < 1000 && nr > 1000 * 0.7);
    CU_ASSERT(bsr_matrix_nnzb(P.A) != bsr_matrix_nnzb(Q.A) || nr != bsr_matrix_nbrows(Q.A));
    bsr_problem_free(&P); bsr_problem_free(&Q);
}

/* Test: generator symmetry and dominance. */
static void test_symmetry(void)
{
    static const struct { const char *spec; int sym; } t[] = {
        {"poisson2d:12", 1}, {"poisson3d:8,ax=1,ay=0.01,az=100", 1}, {"heat2d:12,scheme=cn", 1},
        {"heat3d:8", 1}, {"elliptic2d:17", 1}, {"elliptic2d:17,sigma=one,holes=0.1", 1},
        {"poisson3d:9,holes=0.3", 1}, {"convdiff2d:12,0", 1}, {"convdiff2d:12,30", 0},
        {"convdiff3d:8,30,scheme=central", 0}, {"cfd3d:6", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bsr_problem P = gen(t[i].spec);
        bsr_matrix_info f;
        BSR_ASSERT_OK(bsr_matrix_get_info(P.A, &f));
        if (f.numerically_symmetric != t[i].sym) printf("\n  %s: symmetric = %d\n", t[i].spec, f.numerically_symmetric);
        CU_ASSERT_EQUAL(f.numerically_symmetric, t[i].sym);
        CU_ASSERT(f.structurally_symmetric);
        CU_ASSERT_EQUAL(f.missing_diag, 0);
        bsr_problem_free(&P);
    }
    /* central convection at high Peclet / strong flow: not diagonally dominant */
    const char *nd[] = {"convdiff2d:20,400,scheme=central", "cfd3d:8,4,200,scheme=central"};
    for (int i = 0; i < 2; i++) {
        bsr_problem P = gen(nd[i]);
        bsr_matrix_info f;
        bsr_matrix_get_info(P.A, &f);
        CU_ASSERT(f.diag_dominant_rows < f.n / 2);
        bsr_problem_free(&P);
    }
}

/* Rows away from the boundary sum to 0 (Laplacians, elliptic2d); heat rows to 1/dt. */
static void test_row_sums(void)
{
    static const struct { const char *spec; double sum; } t[] = {
        {"poisson2d:12", 0}, {"poisson3d:9,ax=3", 0}, {"elliptic2d:17", 0}, {"heat2d:12,dt=0.5", 2},
        {"heat3d:9,dt=0.25", 4}, {"convdiff2d:12,pe=20", 0},
    };
    for (size_t c = 0; c < sizeof t / sizeof t[0]; c++) {
        bsr_stencil S;
        BSR_ASSERT_OK(bsr_stencil_generate(t[c].spec, &S));
        int checked = 0;
        double worst = 0;
        for (int k = S.dim == 3; k < S.nz - (S.dim == 3); k++)
            for (int j = 1; j < S.ny - 1; j++)
                for (int i = 1; i < S.nx - 1; i++) {
                    int64_t p = ((int64_t)k * S.ny + j) * S.nx + i;
                    double s = 0;
                    for (int d = 0; d < S.ncoef; d++) s += S.coef[d * S.n + p];
                    worst = fmax(worst, fabs(s - t[c].sum) / S.coef[p]);
                    checked++;
                }
        CU_ASSERT(checked > 0);
        if (worst > 1e-13) printf("\n  %s: interior row sum off by %.2e\n", t[c].spec, worst);
        CU_ASSERT(worst <= 1e-13);
        /* a boundary row has a positive sum (Dirichlet folded) */
        double s = 0;
        for (int d = 0; d < S.ncoef; d++) s += S.coef[d * S.n];
        CU_ASSERT(s > t[c].sum + 1e-9 * S.coef[0]);
        bsr_stencil_free(&S);
    }
}

/* Test: exact-solution residual at rounding level. */
static void test_exact_residual(void)
{
    const char *specs[] = {"poisson2d:20", "poisson3d:10,holes=0.15", "heat2d:15,dt=0.01,scheme=cn",
                           "heat3d:9,1e-4", "convdiff2d:20,100", "convdiff3d:9,pe=50,scheme=central",
                           "poisson2d:n=17,nx=33,ax=0.001", "cfd3d:7", "cfd3d:7,5,50,scheme=central",
                           "cfd3d:7,b=5,model=comp,dt=0.01,holes=0.1"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        bsr_problem P = gen(specs[i]);
        double r = exact_resid(&P);
        if (r > 1e-14) printf("\n  %s: ||A x* - b|| / (|A||x*|) = %.2e\n", specs[i], r);
        CU_ASSERT(r <= 1e-14);
        bsr_problem_free(&P);
    }
    /* float generation stays consistent too */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("cfd3d:6,5", BSR_FLOAT, &P));
    CU_ASSERT_EQUAL(bsr_matrix_precision(P.A), BSR_FLOAT);
    bsr_problem_free(&P);
}

/* Solve P by UMFPACK; return ||x - x*|| / ||x*||. */
static double direct_error(const bsr_problem *P)
{
    int64_t n = bsr_multivec_rows(P->rhs);
    double *x = malloc((size_t)n * sizeof(double));
    BSR_ASSERT_OK(stc_direct_solve(P->A, bsr_multivec_cdata(P->rhs), x));
    const double *xe = bsr_multivec_cdata(P->xexact);
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) { e += (x[i] - xe[i]) * (x[i] - xe[i]); s += xe[i] * xe[i]; }
    free(x);
    return sqrt(e / s);
}

/* Test: elliptic2d second-order convergence. */
static void test_elliptic2d_order(void)
{
    const char *fmt[] = {"elliptic2d:%d", "elliptic2d:n=%d,x0=1.5,y1=3"};
    for (int c = 0; c < 2; c++) {
        double prev = 0;
        for (int N = 17; N <= 129; N = 2 * N - 1) { /* h halves */
            char spec[64];
            snprintf(spec, sizeof spec, fmt[c], N);
            bsr_problem P = gen(spec);
            double e = direct_error(&P);
            if (prev > 0) {
                double ratio = prev / e;
                if (ratio < 3.6 || ratio > 4.4) printf("\n  %s: error %.3e, ratio %.3f\n", spec, e, ratio);
                CU_ASSERT(ratio > 3.6 && ratio < 4.4);
            }
            CU_ASSERT(e < 1e-3);
            prev = e;
            bsr_problem_free(&P);
        }
    }
    /* sigma = 1: the 5-point Laplacian is exact on x^3 y^3 (u_xxxx = u_yyyy = 0) */
    bsr_problem Q = gen("elliptic2d:33,sigma=one,holes=0.1");
    CU_ASSERT(direct_error(&Q) < 1e-12);
    bsr_problem_free(&Q);
    /* the truncation error makes A u - b O(h^2), not zero */
    bsr_problem P = gen("elliptic2d:33");
    double r = exact_resid(&P);
    CU_ASSERT(r > 1e-10 && r < 1e-2);
    bsr_problem_free(&P);
}

/* Test: cfd3d nonsingular (UMFPACK). */
static void test_cfd3d_solvable(void)
{
    const char *specs[] = {"cfd3d:8", "cfd3d:8,5,30", "cfd3d:8,5,model=comp,dt=0.1", "cfd3d:8,4,300,scheme=central,holes=0.1"};
    for (int i = 0; i < 4; i++) {
        bsr_problem P = gen(specs[i]);
        double e = direct_error(&P);
        if (e > 1e-9) printf("\n  %s: direct solve error %.2e\n", specs[i], e);
        CU_ASSERT(e < 1e-9);
        bsr_problem_free(&P);
    }
}

/* Test-only scalar ILU(0) + right-preconditioned BiCGStab on the CSR of A
 * (the library's block solvers live in other modules): returns iterations to
 * ||r|| <= tol ||b||, or -1.  x from 0. */
static int ilu_bicgstab(const bsr_matrix *A, const double *b, double *x, double tol, int maxit)
{
    bsr_csr C;
    if (bsr_to_csr(A, 1, &C)) return -1;
    int n = C.nrows, it = -1;
    double *lu = malloc((size_t)C.nnz * sizeof(double)), *w = malloc(8 * (size_t)n * sizeof(double));
    int64_t *diag = malloc((size_t)n * sizeof(int64_t)), *pos = malloc((size_t)n * sizeof(int64_t));
    memcpy(lu, C.val, (size_t)C.nnz * sizeof(double));
    for (int i = 0; i < n; i++) pos[i] = -1;
    for (int i = 0; i < n; i++) { /* IKJ ILU(0) */
        for (int64_t q = C.rowptr[i]; q < C.rowptr[i + 1]; q++) pos[C.colind[q]] = q;
        for (int64_t q = C.rowptr[i]; q < C.rowptr[i + 1] && C.colind[q] < i; q++) {
            int k = C.colind[q];
            lu[q] /= lu[diag[k]];
            for (int64_t r = diag[k] + 1; r < C.rowptr[k + 1]; r++)
                if (pos[C.colind[r]] >= 0) lu[pos[C.colind[r]]] -= lu[q] * lu[r];
        }
        diag[i] = pos[i];
        for (int64_t q = C.rowptr[i]; q < C.rowptr[i + 1]; q++) pos[C.colind[q]] = -1;
    }
    double *r = w, *r0 = w + n, *p = w + 2 * (size_t)n, *v = w + 3 * (size_t)n, *ph = w + 4 * (size_t)n,
           *sv = w + 5 * (size_t)n, *sh = w + 6 * (size_t)n, *t = w + 7 * (size_t)n;
#define PREC(y, z) /* y = (LU)^{-1} z */                                                        \
    do {                                                                                       \
        for (int i = 0; i < n; i++) {                                                          \
            double a = z[i];                                                                   \
            for (int64_t q = C.rowptr[i]; q < diag[i]; q++) a -= lu[q] * y[C.colind[q]];       \
            y[i] = a;                                                                          \
        }                                                                                      \
        for (int i = n - 1; i >= 0; i--) {                                                     \
            double a = y[i];                                                                   \
            for (int64_t q = diag[i] + 1; q < C.rowptr[i + 1]; q++) a -= lu[q] * y[C.colind[q]]; \
            y[i] = a / lu[diag[i]];                                                            \
        }                                                                                      \
    } while (0)
#define MATVEC(y, z)                                                                           \
    for (int i = 0; i < n; i++) {                                                              \
        double a = 0;                                                                          \
        for (int64_t q = C.rowptr[i]; q < C.rowptr[i + 1]; q++) a += C.val[q] * z[C.colind[q]]; \
        y[i] = a;                                                                              \
    }
    double bn = 0, rho = 1, alpha = 1, om = 1;
    for (int i = 0; i < n; i++) { x[i] = 0; r[i] = r0[i] = b[i]; p[i] = v[i] = 0; bn += b[i] * b[i]; }
    bn = sqrt(bn);
    for (int k = 1; k <= maxit; k++) {
        double rh = 0;
        for (int i = 0; i < n; i++) rh += r0[i] * r[i];
        double beta = rh / rho * alpha / om;
        rho = rh;
        for (int i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - om * v[i]);
        PREC(ph, p);
        MATVEC(v, ph);
        double d = 0;
        for (int i = 0; i < n; i++) d += r0[i] * v[i];
        alpha = rho / d;
        for (int i = 0; i < n; i++) sv[i] = r[i] - alpha * v[i];
        PREC(sh, sv);
        MATVEC(t, sh);
        double tt = 0, ts = 0, rn = 0;
        for (int i = 0; i < n; i++) { tt += t[i] * t[i]; ts += t[i] * sv[i]; }
        om = ts / tt;
        for (int i = 0; i < n; i++) { x[i] += alpha * ph[i] + om * sh[i]; r[i] = sv[i] - om * t[i]; rn += r[i] * r[i]; }
        if (!isfinite(rn)) break;
        if (sqrt(rn) <= tol * bn) { it = k; break; }
    }
#undef PREC
#undef MATVEC
    free(lu); free(w); free(diag); free(pos);
    bsr_csr_free(&C);
    return it;
}

/* cfd3d at moderate convection is solvable by ILU-preconditioned BiCGStab. */
static void test_cfd3d_ilu_bicgstab(void)
{
    const char *specs[] = {"cfd3d:14", "cfd3d:14,5,30", "cfd3d:14,5,10,model=comp,dt=0.05", "cfd3d:14,4,10,holes=0.1",
                           "cfd3d:14,5,100,stab=0.01"};
    for (int c = 0; c < 5; c++) {
        bsr_problem P = gen(specs[c]);
        int64_t n = bsr_multivec_rows(P.rhs);
        double *x = malloc((size_t)n * sizeof(double));
        int it = ilu_bicgstab(P.A, bsr_multivec_cdata(P.rhs), x, 1e-10, 1000);
        const double *xe = bsr_multivec_cdata(P.xexact);
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; i++) { e = fmax(e, fabs(x[i] - xe[i])); m = fmax(m, fabs(xe[i])); }
        printf("\n  %s: ILU(0)-BiCGStab %d iterations, error %.1e", specs[c], it, e / m);
        CU_ASSERT(it > 0 && e / m < 1e-6);
        free(x);
        bsr_problem_free(&P);
    }
}

/* Zeroed array of n doubles. */
static double *vec0(int64_t n) { return calloc((size_t)n, sizeof(double)); }

/* max |a - b| / max |b| */
static double vdiff(const double *a, const double *b, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) { d = fmax(d, fabs(a[i] - b[i])); m = fmax(m, fabs(b[i])); }
    return m > 0 ? d / m : d;
}

/* Test: RB-GS SEQ = OMP = GPU. */
static void test_rbgs_backends(void)
{
    const char *specs[] = {"elliptic2d:33", "poisson3d:n=12,nx=9,holes=0.1", "convdiff2d:30,20,holes=0.05"};
    for (int c = 0; c < 3; c++) {
        bsr_stencil S;
        BSR_ASSERT_OK(bsr_stencil_generate(specs[c], &S));
        double *u0 = vec0(S.n), *u1 = vec0(S.n), *u2 = vec0(S.n);
        bsr_iter_info i0, i1, i2;
        BSR_ASSERT_OK(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, 1e-6, 100000, 1, u0, &i0));
        BSR_ASSERT_OK(bsr_rbgs(BSR_STENCIL_OMP, &S, 1.0, 1e-6, 100000, 1, u1, &i1));
        CU_ASSERT(i0.converged && i0.iters > 5);
        CU_ASSERT_EQUAL(i0.iters, i1.iters);
        CU_ASSERT(memcmp(u0, u1, (size_t)S.n * sizeof(double)) == 0);
        /* over-relaxed, checked every 3rd iteration: stops at a multiple of 3 */
        memset(u2, 0, (size_t)S.n * sizeof(double));
        BSR_ASSERT_OK(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.5, 1e-6, 100000, 3, u2, &i2));
        CU_ASSERT(i2.iters % 3 == 0 && i2.iters < i0.iters);
        if (bsr_test_have_gpu()) {
            for (int check = 1; check <= 4; check += 3) {
                memset(u2, 0, (size_t)S.n * sizeof(double));
                BSR_ASSERT_OK(bsr_rbgs(BSR_STENCIL_GPU, &S, 1.0, 1e-6, 100000, check, u2, &i2));
                if (check == 1) {
                    double d = vdiff(u2, u0, S.n);
                    if (d > 1e-13) printf("\n  %s: GPU RB-GS differs by %.2e (iters %d vs %d)\n", specs[c], d, i2.iters, i0.iters);
                    CU_ASSERT(d <= 1e-13);
                    CU_ASSERT(abs(i2.iters - i0.iters) <= 1);
                } else CU_ASSERT(i2.iters % 4 == 0 && i2.converged);
            }
            /* maxit reached: NOCONV with the iterate returned */
            memset(u2, 0, (size_t)S.n * sizeof(double));
            CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_GPU, &S, 1.0, 1e-14, 3, 1, u2, &i2), BSR_ERR_NOCONV);
            memset(u1, 0, (size_t)S.n * sizeof(double));
            bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, 1e-14, 3, 1, u1, &i1);
            CU_ASSERT(i2.iters == 3 && vdiff(u2, u1, S.n) <= 1e-13);
        }
        free(u0); free(u1); free(u2);
        bsr_stencil_free(&S);
    }
}

/* RB-GS run to a tight tolerance = the direct solution = a Krylov (ILU(0)-BiCGStab)
 * solution of the same system; and O(h^2) vs the PDE. */
static void test_rbgs_solution(void)
{
    double prev = 0;
    for (int N = 17; N <= 65; N = 2 * N - 1) {
        char spec[64];
        snprintf(spec, sizeof spec, "elliptic2d:%d,holes=%s", N, N == 17 ? "0.05" : "0");
        bsr_stencil S;
        bsr_problem P;
        BSR_ASSERT_OK(bsr_stencil_generate(spec, &S));
        BSR_ASSERT_OK(bsr_stencil_to_problem(&S, BSR_DOUBLE, &P));
        double *u = vec0(S.n), *x = malloc((size_t)S.n * sizeof(double));
        bsr_iter_info I;
        BSR_ASSERT_OK(bsr_rbgs(BSR_STENCIL_OMP, &S, 1.8, 1e-15, 1000000, 1, u, &I));
        BSR_ASSERT_OK(stc_direct_solve(P.A, bsr_multivec_cdata(P.rhs), x));
        /* compare on the active cells (holes hold x* in u, are absent from P) */
        double d = 0, m = 0, e = 0, s = 0;
        for (int64_t p = 0, r = 0; p < S.n; p++) {
            if (S.hole && S.hole[p]) { CU_ASSERT(fabs(u[p] - S.xexact[p]) <= 1e-12 * fabs(S.xexact[p])); continue; }
            d = fmax(d, fabs(u[p] - x[r])); m = fmax(m, fabs(x[r]));
            e += (u[p] - S.xexact[p]) * (u[p] - S.xexact[p]); s += S.xexact[p] * S.xexact[p];
            r++;
        }
        CU_ASSERT(d / m < 1e-11);
        CU_ASSERT(bsr_stencil_resid_max(&S, u) < 1e-8 * m);
        /* the same solution from a Krylov solver (ILU(0)-BiCGStab) on P */
        double *xk = malloc((size_t)S.n * sizeof(double)), dk = 0;
        int it = ilu_bicgstab(P.A, bsr_multivec_cdata(P.rhs), xk, 1e-13, 2000);
        CU_ASSERT(it > 0);
        for (int64_t p = 0, r = 0; p < S.n; p++)
            if (!(S.hole && S.hole[p])) { dk = fmax(dk, fabs(u[p] - xk[r])); r++; }
        if (!(it > 0 && dk / m < 1e-10)) printf("\n  %s: BiCGStab %d iterations, RB-GS differs by %.2e", spec, it, dk / m);
        CU_ASSERT(dk / m < 1e-10);
        free(xk);
        e = sqrt(e / s);
        if (prev > 0 && N > 17) CU_ASSERT(prev / e > 3.6 && prev / e < 4.4);
        if (N >= 33) prev = e;
        free(u); free(x);
        bsr_problem_free(&P);
        bsr_stencil_free(&S);
    }
    CU_ASSERT(prev > 0);
}

/* Lexicographic SOR/SSOR written independently of the library, natural order. */
static void sor_naive(const bsr_stencil *S, double omega, int symmetric, int sweeps, double *u)
{
    const int nx = S->nx, ny = S->ny, nz = S->nz;
    for (int it = 0; it < sweeps; it++)
        for (int half = 0; half <= symmetric; half++)
            for (int64_t q = 0; q < S->n; q++) {
                int64_t p = half ? S->n - 1 - q : q;
                int i = (int)(p % nx), j = (int)(p / nx % ny), k = (int)(p / nx / ny);
                int64_t nb[7] = {p, i > 0 ? p - 1 : -1, i < nx - 1 ? p + 1 : -1, j > 0 ? p - nx : -1,
                                 j < ny - 1 ? p + nx : -1, k > 0 ? p - (int64_t)nx * ny : -1,
                                 k < nz - 1 ? p + (int64_t)nx * ny : -1};
                double s = 0;
                for (int d = 1; d < S->ncoef; d++)
                    if (nb[d] >= 0) s += S->coef[d * S->n + p] * u[nb[d]];
                double gs = (S->f[p] - s) / S->coef[p];
                u[p] = u[p] + omega * (gs - u[p]);
            }
}

/* Test: wavefront SOR = lexicographic SOR. */
static void test_sor_wavefront(void)
{
    const char *specs[] = {"poisson3d:n=11,nx=9,nz=6,holes=0.1", "convdiff3d:10,30,scheme=central,ny=13",
                           "elliptic2d:n=19,nx=13", "heat3d:3,dt=1"};
    for (int c = 0; c < 4; c++) {
        bsr_stencil S;
        BSR_ASSERT_OK(bsr_stencil_generate(specs[c], &S));
        for (int sym = 0; sym <= 1; sym++) {
            double *ref = vec0(S.n), *u = vec0(S.n);
            sor_naive(&S, 1.3, sym, 4, ref);
            bsr_iter_info I;
            BSR_ASSERT_OK(bsr_sor(BSR_STENCIL_SEQ, BSR_SOR_NATURAL, &S, 1.3, sym, 0, 4, u, &I));
            CU_ASSERT(I.iters == 4 && memcmp(u, ref, (size_t)S.n * sizeof(double)) == 0);
            for (int lay = 0; lay <= 1; lay++) {
                memset(u, 0, (size_t)S.n * sizeof(double));
                BSR_ASSERT_OK(bsr_sor(BSR_STENCIL_OMP, (bsr_sor_layout)lay, &S, 1.3, sym, 0, 4, u, &I));
                CU_ASSERT(memcmp(u, ref, (size_t)S.n * sizeof(double)) == 0);
                if (bsr_test_have_gpu()) {
                    memset(u, 0, (size_t)S.n * sizeof(double));
                    BSR_ASSERT_OK(bsr_sor(BSR_STENCIL_GPU, (bsr_sor_layout)lay, &S, 1.3, sym, 0, 4, u, &I));
                    double d = vdiff(u, ref, S.n);
                    if (d > 1e-13) printf("\n  %s: GPU SOR layout %d sym %d differs by %.2e\n", specs[c], lay, sym, d);
                    CU_ASSERT(d <= 1e-13 && I.iters == 4);
                }
            }
            free(ref); free(u);
        }
        /* converged SSOR = direct solution */
        double *u = vec0(S.n), *x = malloc((size_t)S.n * sizeof(double));
        bsr_problem P;
        bsr_iter_info I;
        BSR_ASSERT_OK(bsr_sor(BSR_STENCIL_OMP, BSR_SOR_HYPERPLANE, &S, 1.5, 1, 1e-14, 100000, u, &I));
        CU_ASSERT(I.converged);
        BSR_ASSERT_OK(bsr_stencil_to_problem(&S, BSR_DOUBLE, &P));
        BSR_ASSERT_OK(stc_direct_solve(P.A, bsr_multivec_cdata(P.rhs), x));
        double d = 0, m = 0;
        for (int64_t p = 0, r = 0; p < S.n; p++)
            if (!(S.hole && S.hole[p])) { d = fmax(d, fabs(u[p] - x[r])); m = fmax(m, fabs(x[r])); r++; }
        CU_ASSERT(d / m < 1e-10);
        if (bsr_test_have_gpu()) { /* GPU to tolerance: same sweeps */
            double *v = vec0(S.n);
            bsr_iter_info J;
            BSR_ASSERT_OK(bsr_sor(BSR_STENCIL_GPU, BSR_SOR_HYPERPLANE, &S, 1.5, 1, 1e-14, 100000, v, &J));
            CU_ASSERT(abs(J.iters - I.iters) <= 1 && vdiff(v, u, S.n) < 1e-12);
            free(v);
        }
        free(u); free(x);
        bsr_problem_free(&P);
        bsr_stencil_free(&S);
    }
}

/* bsr_generate_limit_rows (the fuzzing harness's cap): specs over it fail
 * with BSR_ERR_UNSUPPORTED and build nothing, for the structured and the row
 * generators; specs at the cap build; 0 lifts it. */
static void test_size_cap(void)
{
    static const char *const over[] = {"stencil3d:5:4", "rotconv3d:5,2", "poisson2d:12", "poisson3d:7",
                                       "cfd3d:7,4,10", "convdiff2d:9,ny=17", "stencil3d:600:4",
                                       "coupled3d:5,3"};
    static const char *const at[] = {"stencil3d:4:4", "rotconv3d:4,2", "poisson2d:10", "poisson3d:6",
                                     "cfd3d:6,4,10", "convdiff2d:10,ny=10", "coupled3d:4,3"};
    bsr_generate_limit_rows(64);
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        bsr_problem P;
        CU_ASSERT_EQUAL(bsr_generate(over[i], BSR_DOUBLE, &P), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "limit of 64"));
        CU_ASSERT_PTR_NULL(P.A);
    }
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        bsr_problem P = gen(at[i]);
        CU_ASSERT(bsr_matrix_nbrows(P.A) <= 64);
        bsr_problem_free(&P);
    }
    bsr_generate_limit_rows(0);
    bsr_problem P = gen(over[0]);
    CU_ASSERT_EQUAL(bsr_matrix_nbrows(P.A), 125);
    bsr_problem_free(&P);
}

/* Every generator takes ',' and ':' between its items (issue 40: stencil3d:4,4
 * was refused while rotconv3d:10:4 and cfd3d:12:4:10 took either): the two
 * spellings build the same matrix, bit for bit, and stencil3d's items are
 * checked like the others' (g=, b=, too many, missing). */
static void test_separators(void)
{
    static const char *const specs[] = {"stencil3d:4:2", "poisson2d:8:ax=2", "poisson3d:6:ax=2", "heat2d:8:0.01",
                                        "heat3d:6:0.01:scheme=cn", "elliptic2d:8:sigma=one", "convdiff2d:8:5",
                                        "convdiff3d:6:5", "cfd3d:6:4:10", "rotconv3d:5:2",
                                        "coupled3d:5:3:shift=0.2"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        char comma[64];
        snprintf(comma, sizeof comma, "%s", specs[i]);
        char *c = strchr(comma, ':');
        for (c = c ? strchr(c + 1, ':') : NULL; c; c = strchr(c + 1, ':')) *c = ',';
        bsr_problem P = gen(specs[i]);
        bsr_problem Q;
        bsr_status st = bsr_generate(comma, BSR_DOUBLE, &Q);
        if (st) printf("\n  %s: %s", comma, bsr_last_error());
        CU_ASSERT_EQUAL_FATAL(st, BSR_OK);
        const int b = bsr_matrix_block(P.A);
        CU_ASSERT_EQUAL(bsr_matrix_nbrows(Q.A), bsr_matrix_nbrows(P.A));
        CU_ASSERT_EQUAL(bsr_matrix_block(Q.A), b);
        CU_ASSERT_EQUAL_FATAL(bsr_matrix_nnzb(Q.A), bsr_matrix_nnzb(P.A));
        CU_ASSERT_EQUAL(memcmp(bsr_matrix_values(Q.A), bsr_matrix_values(P.A),
                               sizeof(double) * (size_t)bsr_matrix_nnzb(P.A) * b * b), 0);
        bsr_problem_free(&P);
        bsr_problem_free(&Q);
    }
    bsr_problem P = gen("stencil3d:g=3,b=2");
    CU_ASSERT(bsr_matrix_nbrows(P.A) == 27 && bsr_matrix_block(P.A) == 2);
    bsr_problem_free(&P);
    P = gen("stencil3d:3");   /* b = 4 by default */
    CU_ASSERT_EQUAL(bsr_matrix_block(P.A), 4);
    bsr_problem_free(&P);
    static const struct { const char *spec, *msg; } bad[] = {
        {"stencil3d:4,4,4", "too many positional"}, {"stencil3d:4:11", "b=11 out of range"},
        {"stencil3d:", "grid size is missing"},     {"stencil3d:0,4", "g=0 out of range"},
        {"stencil3d:4,", "trailing"},               {"stencil3d:4x", "not an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bsr_problem Q;
        CU_ASSERT_EQUAL(bsr_generate(bad[i].spec, BSR_DOUBLE, &Q), BSR_ERR_ARG);
        if (!strstr(bsr_last_error(), bad[i].msg)) printf("\n  %s: '%s' lacks '%s'", bad[i].spec, bsr_last_error(), bad[i].msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), bad[i].msg));
    }
}

/* Test: invalid parameters rejected. */
static void test_invalid(void)
{
    static const struct { const char *spec, *msg; } t[] = {
        {"poisson2d:2", "n=2 out of range"},        {"poisson2d:abc", "not an integer"},
        {"poisson2d:5,foo=1", "unknown parameter 'foo'"}, {"heat2d:9,dt=-1", "dt=-1 out of range"},
        {"heat2d:9,scheme=xx", "be|cn"},            {"cfd3d:8,b=6", "b=6 out of range"},
        {"cfd3d:8,6", "b=6"},                       {"elliptic2d:9,x0=2,x1=1", "empty domain"},
        {"convdiff2d:9,pe=nan", "not a finite number"}, {"poisson3d:9,holes=0.95", "holes"},
        {"poisson2d:9,,", "empty item"},            {"poisson2d:9,n=9", "given twice"},
        {"poisson2d:9,9", "too many positional"},   {"poisson2d:9,", "trailing"},
        {"nosuch:3", "unknown generator"},          {"poisson2d:=3", "malformed"},
        {"convdiff2d:9,1e400", "not a finite"},     {"poisson3d:2000", "out of range"},
        {"elliptic2d:9,sigma=two", "invxy|one"},    {"cfd3d:8,model=comp,mach=0", "mach"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bsr_problem P;
        bsr_status s = bsr_generate(t[i].spec, BSR_DOUBLE, &P);
        CU_ASSERT_EQUAL(s, BSR_ERR_ARG);
        if (!strstr(bsr_last_error(), t[i].msg)) printf("\n  %s: message '%s' lacks '%s'\n", t[i].spec, bsr_last_error(), t[i].msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), t[i].msg));
        CU_ASSERT_PTR_NULL(P.A);
    }
    bsr_stencil S;
    CU_ASSERT_EQUAL(bsr_stencil_generate("cfd3d:8", &S), BSR_ERR_ARG);
    BSR_ASSERT_OK(bsr_stencil_generate("poisson2d:8", &S));
    double *u = vec0(S.n);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, 2.0, 1e-6, 10, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, 1e-6, 0, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, 1e-6, 10, 0, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, NULL, 1.0, 1e-6, 10, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_sor(BSR_STENCIL_OMP, (bsr_sor_layout)7, &S, 1.0, 0, 0, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, 1e-30, 2, 1, u, NULL), BSR_ERR_NOCONV);
    if (!bsr_test_have_gpu()) {
        CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_GPU, &S, 1.0, 1e-6, 10, 1, u, NULL), BSR_ERR_NODEVICE);
        CU_ASSERT_EQUAL(bsr_sor(BSR_STENCIL_GPU, BSR_SOR_HYPERPLANE, &S, 1.0, 0, 0, 1, u, NULL), BSR_ERR_NODEVICE);
    }
    S.f[5] = NAN;
    CU_ASSERT_EQUAL(bsr_sor(BSR_STENCIL_SEQ, BSR_SOR_NATURAL, &S, 1.0, 0, 0, 1, u, NULL), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "(5,0,0)"));
    S.f[5] = 0;
    double c9 = S.coef[9];
    S.coef[9] = 0;
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_OMP, &S, 1.0, 1e-6, 10, 1, u, NULL), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "(3,1,0)"));
    S.coef[9] = c9;
    /* NaN parameters, NULL arguments, bad precision: statuses, no crash */
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, NAN, 1e-6, 10, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_rbgs(BSR_STENCIL_SEQ, &S, 1.0, NAN, 10, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_sor(BSR_STENCIL_SEQ, BSR_SOR_NATURAL, &S, NAN, 0, 0, 1, u, NULL), BSR_ERR_ARG);
    CU_ASSERT(isnan(bsr_stencil_resid_max(NULL, u)));
    CU_ASSERT(isnan(bsr_stencil_resid_max(&S, NULL)));
    bsr_problem P;
    CU_ASSERT_EQUAL(bsr_stencil_to_problem(&S, (bsr_precision)7, &P), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "bsr_stencil_to_problem: precision 7"));
    CU_ASSERT_EQUAL(bsr_generate("poisson2d:9", (bsr_precision)7, &P), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "bsr_generate: poisson2d:9: precision 7"));
    CU_ASSERT_PTR_NULL(P.A);
    free(u);
    bsr_stencil_free(&S);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"generator sizes and holes", test_sizes},
        {"generator symmetry and dominance", test_symmetry},
        {"interior row sums", test_row_sums},
        {"exact-solution residual at rounding level", test_exact_residual},
        {"elliptic2d second-order convergence", test_elliptic2d_order},
        {"cfd3d nonsingular (UMFPACK)", test_cfd3d_solvable},
        {"cfd3d solvable by ILU(0)-BiCGStab", test_cfd3d_ilu_bicgstab},
        {"RB-GS SEQ = OMP = GPU", test_rbgs_backends},
        {"RB-GS solution = UMFPACK = BiCGStab, O(h^2) vs exact", test_rbgs_solution},
        {"wavefront SOR = lexicographic SOR", test_sor_wavefront},
        {"invalid parameters rejected", test_invalid},
        {"',' and ':' in every generator's parameters", test_separators},
        {"size cap of bsr_generate_limit_rows", test_size_cap},
        {NULL, NULL},
    };
    return bsr_test_main("stencil", tests, argc, argv);
}
