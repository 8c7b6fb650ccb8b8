/* SPDX-License-Identifier: BSD-3-Clause */
/* Block incomplete Cholesky: IC(0) (precond=ic0) and IC2 (precond=ic2, ILU2's
 * thresholds): the factors against A (on its pattern; complete without
 * dropping), symmetry of the apply, refactor bits, errors and the shift, and
 * CG convergence against Jacobi, SSOR and each other. */
#include "harness.h"
#include "precond_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Symmetric positive definite n x n block matrix of block size b: a symmetric
 * block pattern (tridiagonal when tri, else the tridiagonal plus random
 * couplings), values B + B^T plus a diagonal making every row strictly
 * diagonally dominant.  dense (n*b)^2 receives A when not NULL. */
static bsr_matrix *spd_matrix(int n, int b, int tri, uint64_t seed, double *dense)
{
    int N = n * b;
    double *a = calloc((size_t)N * N, sizeof *a);
    unsigned char *pat = calloc((size_t)n * n, 1);
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        pat[(size_t)i * n + i] = 1;
        if (i + 1 < n) pat[(size_t)i * n + i + 1] = pat[(size_t)(i + 1) * n + i] = 1;
        if (!tri)
            for (int t = 0; t < 2; t++) {
                int j = (int)((bsr_test_unif_pm(&s) + 1) * 0.5 * n);
                if (j >= 0 && j < n) pat[(size_t)i * n + j] = pat[(size_t)j * n + i] = 1;
            }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            if (pat[(size_t)i * n + j])
                for (int r = 0; r < b; r++)
                    for (int c = 0; c < b; c++) {
                        double v = bsr_test_unif_pm(&s);
                        a[(size_t)(i * b + r) * N + j * b + c] += v;
                        a[(size_t)(j * b + c) * N + i * b + r] += v;
                    }
    for (int r = 0; r < N; r++) {
        double off = 0;
        for (int c = 0; c < N; c++)
            if (c != r) off += fabs(a[(size_t)r * N + c]);
        a[(size_t)r * N + r] = off + 1.0;
    }
    int *rowptr = malloc(sizeof(int) * (n + 1)), *colind = malloc(sizeof(int) * (size_t)n * n), nz = 0;
    double *val = malloc(sizeof(double) * (size_t)n * n * b * b);
    rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            if (pat[(size_t)i * n + j]) {
                for (int r = 0; r < b; r++)
                    for (int c = 0; c < b; c++) val[(size_t)nz * b * b + r * b + c] = a[(size_t)(i * b + r) * N + j * b + c];
                colind[nz++] = j;
            }
        rowptr[i + 1] = nz;
    }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rowptr, colind, val, BSR_DOUBLE, 0));
    if (dense) memcpy(dense, a, sizeof(double) * (size_t)N * N);
    free(a); free(pat); free(rowptr); free(colind); free(val);
    return A;
}

/* IC(0) preconditioner of A from an options string. */
static bsr_status make_pc(const bsr_matrix *A, const char *opts, bsr_pc **pc)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    bsr_status s = bsr_solver_options_parse(&o, opts);
    if (s) return s;
    return bsr_pc_create(A, &o, NULL, NULL, NULL, pc);
}

/* M = L U as a dense (n*b)^2 matrix from the stored factors (L unit lower
 * strict part, U with inverted diagonal blocks). */
static void dense_m(const bsr_matrix *L, const bsr_matrix *U, double *M)
{
    int n = L->nbrows, b = L->b, bb = b * b, N = n * b;
    double *Ld = calloc((size_t)N * N, sizeof *Ld), *Ud = calloc((size_t)N * N, sizeof *Ud);
    for (int r = 0; r < N; r++) Ld[(size_t)r * N + r] = 1;
    for (int i = 0; i < n; i++) {
        for (int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++)
            for (int e = 0; e < bb; e++)
                Ld[(size_t)(i * b + e / b) * N + L->colind[p] * b + e % b] = bsr_val_get(L->val, L->prec, (size_t)p * bb + e);
        for (int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) {
            double blk[BSR_MAX_BLOCK * BSR_MAX_BLOCK], inv[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
            for (int e = 0; e < bb; e++) blk[e] = bsr_val_get(U->val, U->prec, (size_t)p * bb + e);
            if (U->colind[p] == i) {   /* stored inverted */
                CU_ASSERT_EQUAL_FATAL(bsr_block_invert(b, blk, inv), 0);
                memcpy(blk, inv, sizeof(double) * bb);
            }
            for (int e = 0; e < bb; e++) Ud[(size_t)(i * b + e / b) * N + U->colind[p] * b + e % b] = blk[e];
        }
    }
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            double v = 0;
            for (int q = 0; q < N; q++) v += Ld[(size_t)r * N + q] * Ud[(size_t)q * N + c];
            M[(size_t)r * N + c] = v;
        }
    free(Ld); free(Ud);
}

/* M = L D L^T equals A everywhere on a block tridiagonal A (no fill), and on
 * A's block pattern otherwise, where it differs from A somewhere outside. */
static void test_factors(void)
{
    for (int tri = 1; tri >= 0; tri--)
        for (int b = 1; b <= 10; b++) {
            int n = 14, N = n * b;
            double *a = malloc(sizeof(double) * N * N), *m = malloc(sizeof(double) * N * N);
            bsr_matrix *A = spd_matrix(n, b, tri, 1000 + b, a);
            bsr_pc *pc = NULL;
            BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic0", &pc));
            const bsr_matrix *L, *U;
            bsr_pc_ic0_factors(pc, &L, &U);
            CU_ASSERT_FATAL(L && U);
            CU_ASSERT_EQUAL(L->nnzb + U->nnzb, A->nnzb);
            dense_m(L, U, m);
            double amax = 0, on = 0, off = 0;
            for (int e = 0; e < N * N; e++) amax = fmax(amax, fabs(a[e]));
            for (int r = 0; r < N; r++)
                for (int c = 0; c < N; c++) {
                    double d = fabs(m[(size_t)r * N + c] - a[(size_t)r * N + c]);
                    if (bsr_matrix_find(A, r / b, c / b) >= 0) on = fmax(on, d);
                    else off = fmax(off, d);
                }
            if (on > 1e-12 * amax || (tri && off > 1e-12 * amax))
                printf("\n  b=%d tri=%d: |M-A| on the pattern %.3g, outside %.3g (|A| %.3g)\n", b, tri, on, off, amax);
            CU_ASSERT(on <= 1e-12 * amax);
            if (tri) CU_ASSERT(off <= 1e-12 * amax);
            if (!tri) CU_ASSERT(off > 1e-8 * amax);   /* the dropped fill: M is incomplete */
            bsr_pc_destroy(pc);
            bsr_matrix_destroy(A);
            free(a); free(m);
        }
}

/* Apply X -> M^{-1} X through pc for two random vectors: symmetric and positive. */
static void check_symmetric_apply(bsr_pc *pc, int64_t N)
{
    bsr_multivec *X, *Y, *MX, *MY;
    BSR_ASSERT_OK(bsr_multivec_create(&X, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&MX, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&MY, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(X, 1));
    BSR_ASSERT_OK(bsr_multivec_random(Y, 2));
    BSR_ASSERT_OK(pc->apply(pc, X, MX));
    BSR_ASSERT_OK(pc->apply(pc, Y, MY));
    double xmy, ymx, xmx;
    BSR_ASSERT_OK(bsr_multivec_dot(X, MY, &xmy));
    BSR_ASSERT_OK(bsr_multivec_dot(Y, MX, &ymx));
    BSR_ASSERT_OK(bsr_multivec_dot(X, MX, &xmx));
    CU_ASSERT(fabs(xmy - ymx) <= 1e-12 * (fabs(xmy) + fabs(ymx)) + 1e-300);
    CU_ASSERT(xmx > 0);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(MX); bsr_multivec_destroy(MY);
}

/* M^{-1} is symmetric: x^T M^{-1} y = y^T M^{-1} x, and positive: x^T M^{-1} x > 0. */
static void test_apply_symmetric(void)
{
    for (int b = 1; b <= 10; b += 3) {
        bsr_matrix *A = spd_matrix(40, b, 0, 77 + b, NULL);
        bsr_pc *pc = NULL;
        BSR_ASSERT_OK(make_pc(A, "precond=ic0", &pc));
        check_symmetric_apply(pc, (int64_t)40 * b);
        bsr_pc_destroy(pc);
        bsr_matrix_destroy(A);
    }
}

/* A refactor with new values gives a fresh setup's factors bit for bit. */
static void test_refactor_bits(void)
{
    for (int b = 1; b <= 10; b += 4)
        for (int f = 0; f < 2; f++) {
            const char *opts = f ? "precond=ic0,precond_precision=float" : "precond=ic0";
            bsr_matrix *A1 = spd_matrix(30, b, 0, 5, NULL), *A2 = spd_matrix(30, b, 0, 5, NULL);
            /* same pattern (same seed), new values: scale and perturb the values symmetrically */
            bsr_matrix *T = spd_matrix(30, b, 0, 5, NULL);
            double *v2 = (double *)A2->val;
            const double *vt = T->val;
            for (int64_t e = 0; e < (int64_t)A2->nnzb * b * b; e++) v2[e] = 2.5 * vt[e];
            bsr_pc *p1 = NULL, *p2 = NULL;
            BSR_ASSERT_OK(make_pc(A1, opts, &p1));
            BSR_ASSERT_OK(p1->refactor(p1, A2));
            BSR_ASSERT_OK(make_pc(A2, opts, &p2));
            const bsr_matrix *L1, *U1, *L2, *U2;
            bsr_pc_ic0_factors(p1, &L1, &U1);
            bsr_pc_ic0_factors(p2, &L2, &U2);
            size_t es = f ? sizeof(float) : sizeof(double);
            CU_ASSERT_EQUAL(memcmp(L1->val, L2->val, es * L1->nnzb * b * b), 0);
            CU_ASSERT_EQUAL(memcmp(U1->val, U2->val, es * U1->nnzb * b * b), 0);
            /* and differ from the factors of A1 */
            bsr_pc *p3 = NULL;
            BSR_ASSERT_OK(make_pc(A1, opts, &p3));
            const bsr_matrix *L3, *U3;
            bsr_pc_ic0_factors(p3, &L3, &U3);
            CU_ASSERT_NOT_EQUAL(memcmp(U1->val, U3->val, es * U1->nnzb * b * b), 0);
            bsr_pc_destroy(p1); bsr_pc_destroy(p2); bsr_pc_destroy(p3);
            bsr_matrix_destroy(A1); bsr_matrix_destroy(A2); bsr_matrix_destroy(T);
        }
}

/* A symmetric matrix with one entry changed: setup with opts is BSR_ERR_VALUE,
 * its message holding want. */
static void check_nonsymmetric_values(const char *opts, const char *want)
{
    bsr_pc *pc = NULL;
    bsr_matrix *A = spd_matrix(10, 2, 1, 3, NULL);
    ((double *)A->val)[(size_t)A->rowptr[4] * 4 + 1] += 0.25;
    CU_ASSERT_EQUAL(make_pc(A, opts, &pc), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
    bsr_matrix_destroy(A);
}

/* Nonsymmetric values or pattern, a non-square matrix and a pivot that is not
 * positive definite give the documented errors. */
static void test_errors(void)
{
    bsr_pc *pc = NULL;
    /* values: one entry of a symmetric matrix changed */
    check_nonsymmetric_values("precond=ic0", "symmetric");
    /* refactor checks the new values too */
    bsr_matrix *A = spd_matrix(10, 2, 1, 3, NULL);
    BSR_ASSERT_OK(make_pc(A, "precond=ic0", &pc));
    ((double *)A->val)[1] += 0.25;   /* block (0,0) entry (0,1) */
    CU_ASSERT_EQUAL(pc->refactor(pc, A), BSR_ERR_VALUE);
    bsr_pc_destroy(pc);
    pc = NULL;
    bsr_matrix_destroy(A);
    /* pattern: (0,2) without (2,0) */
    {
        int rowptr[] = {0, 2, 3, 4};
        int colind[] = {0, 2, 1, 2};
        double val[] = {4, 1, 4, 4};
        BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic0", &pc), BSR_ERR_STRUCTURE);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "(0,2)"));
        bsr_matrix_destroy(A);
    }
    /* not square */
    A = bsr_test_random_matrix(4, 5, 2, 1, 3, BSR_DOUBLE, 9);
    CU_ASSERT_EQUAL(make_pc(A, "precond=ic0", &pc), BSR_ERR_SIZE);
    bsr_matrix_destroy(A);
    /* symmetric indefinite: [[1,2],[2,1]] has the pivot 1 - 4 = -3 in block row 1 */
    {
        int rowptr[] = {0, 2, 4};
        int colind[] = {0, 1, 0, 1};
        double val[] = {1, 2, 2, 1};
        BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic0", &pc), BSR_ERR_SINGULAR);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 1"));
        /* and through the solver */
        bsr_solver *s = NULL;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "method=cg,precond=ic0"));
        CU_ASSERT_EQUAL(bsr_solver_setup(s, A), BSR_ERR_SINGULAR);
        bsr_solver_destroy(s);
        bsr_matrix_destroy(A);
    }
    /* a 2 x 2 block whose pivot is indefinite: diag(1, -1) */
    {
        int rowptr[] = {0, 1};
        int colind[] = {0};
        double val[] = {1, 0, 0, -1};
        BSR_ASSERT_OK(bsr_matrix_create(&A, 1, 1, 2, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic0", &pc), BSR_ERR_SINGULAR);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0"));
        bsr_matrix_destroy(A);
    }
    CU_ASSERT_PTR_NULL(pc);
}

/* opts parsed into *o (defaults first) and checked; its printed string holds
 * want and parses back into *o2. */
static void round_trip(const char *opts, const char *want, bsr_solver_options *o, bsr_solver_options *o2)
{
    char buf[1024];
    bsr_solver_options_default(o);
    BSR_ASSERT_OK(bsr_solver_options_parse(o, opts));
    BSR_ASSERT_OK(bsr_solver_options_check(o));
    bsr_solver_options_string(o, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
    bsr_solver_options_default(o2);
    BSR_ASSERT_OK(bsr_solver_options_parse(o2, buf));
}

/* Options: method=cg takes ic0, the printed string parses back, the ILUs are
 * still refused under CG. */
static void test_options(void)
{
    bsr_solver_options o, o2;
    round_trip("method=cg,precond=ic0", "precond=ic0", &o, &o2);
    CU_ASSERT_EQUAL(o.precond, BSR_PC_IC0);
    CU_ASSERT_STRING_EQUAL(bsr_pc_name(BSR_PC_IC0), "ic0");
    CU_ASSERT_EQUAL(o2.precond, BSR_PC_IC0);
    CU_ASSERT_EQUAL(o2.method, BSR_CG);
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=icc"));
    CU_ASSERT_EQUAL(o.precond, BSR_PC_IC0);
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=cg,precond=ilu0"));
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "ic0"));
}

/* Iterations of CG with precond pc (extra options) on spec, to rtol 1e-10
 * against the generator's right-hand side, with the true residual checked. */
static int cg_iters(const char *spec, const char *pc, const char *extra, bsr_precision prec)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(spec, prec, &P));
    char cfg[256];
    snprintf(cfg, sizeof cfg, "method=cg,precond=%s,rtol=%s,maxit=2000%s", pc,
             prec == BSR_FLOAT ? "2e-7" : "1e-10", extra);
    bsr_solver *s = bsr_test_solver(NULL, cfg, P.A);
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, prec));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st));
    int it = st.col[0].iterations;
    CU_ASSERT(st.col[0].relres <= (prec == BSR_FLOAT ? 1e-5 : 1e-9));
    printf("\n    %s %s%s: %d iterations, relres %.2e", spec, pc, extra, it, st.col[0].relres);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
    return it;
}

/* CG + IC(0) converges on the symmetric generators in fewer iterations than
 * CG + Jacobi and CG + SSOR; float factors and float iterations converge. */
static void test_cg(void)
{
    static const char *specs[] = {"poisson3d:16", "poisson2d:40", "heat3d:12,1e-2"};
    for (size_t g = 0; g < sizeof specs / sizeof specs[0]; g++) {
        int ic = cg_iters(specs[g], "ic0", "", BSR_DOUBLE);
        int jac = cg_iters(specs[g], "jacobi", "", BSR_DOUBLE);
        int ssor = cg_iters(specs[g], "ssor", "", BSR_DOUBLE);
        CU_ASSERT(ic < jac);
        CU_ASSERT(ic < ssor);
        int icf = cg_iters(specs[g], "ic0", ",precond_precision=float", BSR_DOUBLE);
        CU_ASSERT(icf <= ic + 3);
    }
    cg_iters("poisson3d:12", "ic0", ",precision=float,precond_precision=float", BSR_FLOAT);
}

/* ---- IC2 ------------------------------------------------------------------ */

/* B = P A P^T as a dense (n*b)^2 matrix (perm NULL: A). */
static void dense_perm(const double *a, int n, int b, const int *perm, double *B)
{
    int N = n * b;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int pi = perm ? perm[i] : i, pj = perm ? perm[j] : j;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++)
                    B[(size_t)(i * b + r) * N + j * b + c] = a[(size_t)(pi * b + r) * N + pj * b + c];
        }
}

/* Without dropping (tau1 = tau2 = 0) IC2 is the complete factorization:
 * M = P A P^T to rounding, in natural and RCM order, b = 1..10. */
static void test_ic2_complete(void)
{
    static const char *orders[] = {"natural", "rcm"};
    for (int o = 0; o < 2; o++)
        for (int b = 1; b <= 10; b++) {
            int n = 14, N = n * b;
            double *a = malloc(sizeof(double) * N * N), *m = malloc(sizeof(double) * N * N), *pa = malloc(sizeof(double) * N * N);
            bsr_matrix *A = spd_matrix(n, b, 0, 2000 + b, a);
            char opts[96];
            snprintf(opts, sizeof opts, "method=cg,precond=ic2,tau1=0,tau2=0,cap=none,reorder=%s", orders[o]);
            bsr_pc *pc = NULL;
            BSR_ASSERT_OK(make_pc(A, opts, &pc));
            const bsr_matrix *L, *U;
            const int *perm;
            bsr_pc_ic2_factors(pc, &L, &U, &perm);
            CU_ASSERT_FATAL(L && U);
            CU_ASSERT_EQUAL(o == 0, perm == NULL);
            dense_m(L, U, m);
            dense_perm(a, n, b, perm, pa);
            double amax = 0, d = 0;
            for (int e = 0; e < N * N; e++) {
                amax = fmax(amax, fabs(a[e]));
                d = fmax(d, fabs(m[e] - pa[e]));
            }
            if (d > 1e-12 * amax) printf("\n  b=%d %s: |M - PAP^T| %.3g (|A| %.3g)\n", b, orders[o], d, amax);
            CU_ASSERT(d <= 1e-12 * amax);
            CU_ASSERT_PTR_NOT_NULL(strstr(pc->info, "IC2"));
            bsr_pc_destroy(pc);
            bsr_matrix_destroy(A);
            free(a); free(m); free(pa);
        }
}

/* With thresholds that keep no fill (tau1, tau2 near 1, natural order, A's
 * blocks kept) IC2 is IC(0): the same patterns and the same factors to
 * rounding. */
static void test_ic2_is_ic0(void)
{
    for (int b = 1; b <= 10; b += 3) {
        bsr_matrix *A = spd_matrix(30, b, 0, 300 + b, NULL);
        bsr_pc *p0 = NULL, *p2 = NULL;
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic0", &p0));
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0.999999,tau2=0.999999,reorder=natural", &p2));
        const bsr_matrix *L0, *U0, *L2, *U2;
        const int *perm;
        bsr_pc_ic0_factors(p0, &L0, &U0);
        bsr_pc_ic2_factors(p2, &L2, &U2, &perm);
        CU_ASSERT_FATAL(L0 && L2 && U0 && U2);
        CU_ASSERT_EQUAL_FATAL(L0->nnzb, L2->nnzb);
        CU_ASSERT_EQUAL_FATAL(U0->nnzb, U2->nnzb);
        CU_ASSERT_EQUAL(memcmp(L0->colind, L2->colind, sizeof(int) * L0->nnzb), 0);
        CU_ASSERT_EQUAL(memcmp(U0->colind, U2->colind, sizeof(int) * U0->nnzb), 0);
        double d = 0, mx = 0;
        for (int64_t e = 0; e < (int64_t)U0->nnzb * b * b; e++) {
            mx = fmax(mx, fabs(((const double *)U0->val)[e]));
            d = fmax(d, fabs(((const double *)U0->val)[e] - ((const double *)U2->val)[e]));
        }
        for (int64_t e = 0; e < (int64_t)L0->nnzb * b * b; e++)
            d = fmax(d, fabs(((const double *)L0->val)[e] - ((const double *)L2->val)[e]));
        CU_ASSERT(d <= 1e-12 * fmax(mx, 1));
        bsr_pc_destroy(p0); bsr_pc_destroy(p2);
        bsr_matrix_destroy(A);
    }
}

/* With dropping (the defaults, second-order blocks and the cap at work) M^{-1}
 * stays symmetric and positive, on random SPD matrices and a generator. */
static void test_ic2_apply_symmetric(void)
{
    for (int b = 1; b <= 10; b += 3) {
        bsr_matrix *A = spd_matrix(60, b, 0, 91 + b, NULL);
        bsr_pc *pc = NULL;
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0.05", &pc));
        CU_ASSERT_PTR_NOT_NULL(strstr(pc->info, "second-order"));
        check_symmetric_apply(pc, (int64_t)60 * b);
        bsr_pc_destroy(pc);
        bsr_matrix_destroy(A);
    }
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("elliptic2d:30", BSR_DOUBLE, &P));
    bsr_pc *pc = NULL;
    BSR_ASSERT_OK(make_pc(P.A, "method=cg,precond=ic2", &pc));
    check_symmetric_apply(pc, bsr_multivec_rows(P.rhs));
    bsr_pc_destroy(pc);
    bsr_problem_free(&P);
}

/* The stored factors of an IC2 preconditioner (double or float) equal bit for bit. */
static void same_ic2_factors(const bsr_pc *p1, const bsr_pc *p2, size_t es, int want_equal)
{
    const bsr_matrix *L1, *U1, *L2, *U2;
    const int *q1, *q2;
    bsr_pc_ic2_factors(p1, &L1, &U1, &q1);
    bsr_pc_ic2_factors(p2, &L2, &U2, &q2);
    CU_ASSERT_FATAL(L1 && L2 && U1 && U2);
    const int bb = L1->b * L1->b;
    CU_ASSERT_EQUAL_FATAL(L1->nnzb, L2->nnzb);
    CU_ASSERT_EQUAL_FATAL(U1->nnzb, U2->nnzb);
    int same = !memcmp(L1->val, L2->val, es * L1->nnzb * bb) && !memcmp(U1->val, U2->val, es * U1->nnzb * bb);
    CU_ASSERT_EQUAL(same, want_equal);
}

/* Refactor factors into the setup's pattern: with the setup's values the
 * same bits; with values scaled by 2.5 (the thresholds see the same scaled
 * matrix, so a fresh setup chooses the same pattern) a fresh setup's bits;
 * a refactor whose values are not positive definite fails, after which the
 * apply refuses until a refactor succeeds. */
static void test_ic2_refactor(void)
{
    for (int b = 1; b <= 10; b += 4)
        for (int f = 0; f < 2; f++) {
            const char *opts = f ? "method=cg,precond=ic2,tau1=0.05,precond_precision=float" : "method=cg,precond=ic2,tau1=0.05";
            const size_t es = f ? sizeof(float) : sizeof(double);
            bsr_matrix *A1 = spd_matrix(40, b, 0, 7, NULL), *A2 = spd_matrix(40, b, 0, 7, NULL);
            for (int64_t e = 0; e < (int64_t)A2->nnzb * b * b; e++) ((double *)A2->val)[e] *= 2.5;
            bsr_pc *p1 = NULL, *p2 = NULL, *p3 = NULL;
            BSR_ASSERT_OK(make_pc(A1, opts, &p1));
            BSR_ASSERT_OK(make_pc(A1, opts, &p3));
            BSR_ASSERT_OK(p3->refactor(p3, A1));
            same_ic2_factors(p1, p3, es, 1);
            BSR_ASSERT_OK(p1->refactor(p1, A2));
            BSR_ASSERT_OK(make_pc(A2, opts, &p2));
            same_ic2_factors(p1, p2, es, 1);
            same_ic2_factors(p1, p3, es, 0);
            /* a failed refactor leaves no factors to apply */
            bsr_matrix *Abad = spd_matrix(40, b, 0, 7, NULL);
            for (int i = 0; i < Abad->nbrows; i++)
                for (int p = Abad->rowptr[i]; p < Abad->rowptr[i + 1]; p++)
                    if (Abad->colind[p] == i) ((double *)Abad->val)[(size_t)p * b * b] = -1;
            CU_ASSERT_EQUAL(p1->refactor(p1, Abad), BSR_ERR_SINGULAR);
            bsr_multivec *X, *Y;
            BSR_ASSERT_OK(bsr_multivec_create(&X, (int64_t)40 * b, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y, (int64_t)40 * b, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_fill(X, 1));
            CU_ASSERT_EQUAL(p1->apply(p1, X, Y), BSR_ERR_ARG);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "last factorization failed"));
            BSR_ASSERT_OK(p1->refactor(p1, A2));
            BSR_ASSERT_OK(p1->apply(p1, X, Y));
            same_ic2_factors(p1, p2, es, 1);
            bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
            bsr_pc_destroy(p1); bsr_pc_destroy(p2); bsr_pc_destroy(p3);
            bsr_matrix_destroy(A1); bsr_matrix_destroy(A2); bsr_matrix_destroy(Abad);
        }
}

/* The refactor's rows of a level run on the team: the factors are the same
 * bits on 1 and on 4 threads. */
static void test_ic2_threads(void)
{
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    for (int b = 1; b <= 4; b += 3) {
        bsr_matrix *A = spd_matrix(600, b, 0, 17 + b, NULL);
        bsr_pc *p1 = NULL, *p4 = NULL;
        omp_set_num_threads(1);
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0.05", &p1));
        BSR_ASSERT_OK(p1->refactor(p1, A));
        omp_set_num_threads(4);
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0.05", &p4));
        BSR_ASSERT_OK(p4->refactor(p4, A));
        same_ic2_factors(p1, p4, sizeof(double), 1);
        bsr_pc_destroy(p1); bsr_pc_destroy(p4);
        bsr_matrix_destroy(A);
    }
    omp_set_num_threads(saved);
#endif
}

/* Errors: nonsymmetric values, a diagonal entry that is not positive, a
 * symmetric indefinite matrix that no shift makes factorable; and a
 * positive definite matrix whose incomplete factor breaks down without a
 * shift is factored with one (reported). */
static void test_ic2_errors(void)
{
    bsr_pc *pc = NULL;
    bsr_matrix *A;
    check_nonsymmetric_values("precond=ic2", "precond=ic2 needs a symmetric matrix");
    {
        int rowptr[] = {0, 2, 4};
        int colind[] = {0, 1, 0, 1};
        double val[] = {1, 2, 2, -1};
        BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic2", &pc), BSR_ERR_SINGULAR);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "not positive"));
        bsr_matrix_destroy(A);
        val[3] = 1;   /* [[1,2],[2,1]]: indefinite, pivot 1 - 4 (1 + alpha)^-1 < 0 for every shift tried */
        BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic2,tau1=0,reorder=natural", &pc), BSR_ERR_SINGULAR);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "even with the diagonal shifted"));
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 1"));
        bsr_matrix_destroy(A);
    }
    /* SPD (eigenvalues 0.113, 0.718, 6.06, 8.11) but not an M-matrix: IC(0)
     * meets a negative pivot in row 3; IC2 without fill (tau1, tau2 near 1)
     * shifts the diagonal, and without dropping needs no shift */
    {
        int rowptr[] = {0, 3, 6, 9, 12};
        int colind[] = {0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3};
        double val[] = {4, 2, -2, 2, 4, -3, -2, 2, -2, -3, -2, 5};
        BSR_ASSERT_OK(bsr_matrix_create(&A, 4, 4, 1, rowptr, colind, val, BSR_DOUBLE, 0));
        CU_ASSERT_EQUAL(make_pc(A, "precond=ic0", &pc), BSR_ERR_SINGULAR);
        pc = NULL;
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0.999999,tau2=0.999999,reorder=natural", &pc));
        CU_ASSERT_PTR_NULL(strstr(pc->info, "shift 0,"));
        check_symmetric_apply(pc, 4);
        bsr_pc_destroy(pc);
        pc = NULL;
        BSR_ASSERT_OK(make_pc(A, "method=cg,precond=ic2,tau1=0,reorder=natural", &pc));   /* complete: no shift */
        CU_ASSERT_PTR_NOT_NULL(strstr(pc->info, "shift 0,"));
        bsr_pc_destroy(pc);
        bsr_matrix_destroy(A);
    }
}

/* CG + IC2 at its defaults converges on the symmetric generators in fewer
 * iterations than CG + IC(0); float factors within a few iterations. */
static void test_ic2_cg(void)
{
    static const char *specs[] = {"poisson3d:16", "heat3d:12,1e-2", "elliptic2d:100"};
    for (size_t g = 0; g < sizeof specs / sizeof specs[0]; g++) {
        int ic2 = cg_iters(specs[g], "ic2", "", BSR_DOUBLE);
        int ic0 = cg_iters(specs[g], "ic0", "", BSR_DOUBLE);
        CU_ASSERT(ic2 < ic0);
        int icf = cg_iters(specs[g], "ic2", ",precond_precision=float", BSR_DOUBLE);
        CU_ASSERT(icf <= ic2 + 3);
    }
    cg_iters("poisson3d:12", "ic2", ",precision=float,precond_precision=float", BSR_FLOAT);
}

/* Options: precond=ic2 under CG, its thresholds and cap printed and parsed back. */
static void test_ic2_options(void)
{
    bsr_solver_options o, o2;
    round_trip("method=cg,precond=ic2,tau1=0.02,cap=3", "precond=ic2,tau1=0.02,tau2=0.0004,keep_pattern=1,cap=3", &o, &o2);
    CU_ASSERT_EQUAL(o2.precond, BSR_PC_IC2);
    CU_ASSERT_EQUAL(o2.cap, 3);
    CU_ASSERT_DOUBLE_EQUAL(o2.tau1, 0.02, 0);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"factors", test_factors},
        {"apply_symmetric", test_apply_symmetric},
        {"refactor_bits", test_refactor_bits},
        {"errors", test_errors},
        {"options", test_options},
        {"cg", test_cg},
        {"ic2_complete", test_ic2_complete},
        {"ic2_is_ic0", test_ic2_is_ic0},
        {"ic2_apply_symmetric", test_ic2_apply_symmetric},
        {"ic2_refactor", test_ic2_refactor},
        {"ic2_threads", test_ic2_threads},
        {"ic2_errors", test_ic2_errors},
        {"ic2_cg", test_ic2_cg},
        {"ic2_options", test_ic2_options},
        {NULL, NULL},
    };
    return bsr_test_main("ic", tests, argc, argv);
}
