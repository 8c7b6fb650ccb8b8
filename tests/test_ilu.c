/* SPDX-License-Identifier: BSD-3-Clause */
/* Block ILU(0) / ILUT / ILU2: exactness limits, scalar reference, error
 * behaviour in tau, statuses, serial = parallel, refactor = setup, CPU
 * triangular solves (S2 vs level-scheduled, vs dense). */
#include "harness.h"
#include "internal.h"
#include "ilu_impl.h"
#include "blockops.h"
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rs = 12345;

/* BSR matrix from a block pattern mask[nb*nb] with random blocks; diagonal
 * blocks get + dom*I (diagonal dominance knob). */
static bsr_matrix *mk_pattern(int nb, int b, const char *mask, double dom, bsr_precision prec)
{
    int *rp = malloc(sizeof(int) * (nb + 1)), *ci = malloc(sizeof(int) * nb * nb + 1), nz = 0;
    double *v = malloc(sizeof(double) * ((size_t)nb * nb * b * b + 1));
    rp[0] = 0;
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            if (!mask[i * nb + j]) continue;
            ci[nz] = j;
            for (int e = 0; e < b * b; e++) v[(size_t)nz * b * b + e] = bsr_test_unif_pm(&rs);
            if (i == j) for (int r = 0; r < b; r++) v[(size_t)nz * b * b + r * b + r] += dom;
            nz++;
        }
        rp[i + 1] = nz;
    }
    bsr_matrix *A = NULL;
    if (prec == BSR_DOUBLE) bsr_matrix_create(&A, nb, nb, b, rp, ci, v, prec, 0);
    else {
        float *f = malloc(sizeof(float) * ((size_t)nz * b * b + 1));
        for (size_t e = 0; e < (size_t)nz * b * b; e++) f[e] = (float)v[e];
        bsr_matrix_create(&A, nb, nb, b, rp, ci, f, prec, 0);
        free(f);
    }
    free(rp); free(ci); free(v);
    return A;
}

/* Random block matrix with bandwidth bw blocks and diagonal shift dom. */
static bsr_matrix *mk_banded(int nb, int b, int bw, double dom)
{
    char *m = calloc((size_t)nb * nb, 1);
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) m[i * nb + j] = abs(i - j) <= bw;
    bsr_matrix *A = mk_pattern(nb, b, m, dom, BSR_DOUBLE);
    free(m);
    return A;
}

/* 2D convection-diffusion -lap u + beta.grad u on an m x m grid, 5-point,
 * first-order upwind, times h^2; beta = pe*(cos 0.4, sin 0.4).  Blocks of b:
 * the scalar stencil times I plus a fixed coupling on the diagonal blocks
 * (b = 1: scalar). */
static bsr_matrix *mk_convdiff(int m, double pe, int b)
{
    int n = m * m, nz = 0;
    double h = 1.0 / (m + 1), bx = pe * cos(0.4), by = pe * sin(0.4);
    int *rp = malloc(sizeof(int) * (n + 1)), *ci = malloc(sizeof(int) * 5 * n);
    double *v = calloc((size_t)5 * n * b * b, sizeof(double));
    rp[0] = 0;
    for (int y = 0; y < m; y++)
        for (int x = 0; x < m; x++) {
            int i = y * m + x;
            double cw = -1 - h * bx, cs = -1 - h * by, ce = -1, cn = -1, cc = 4 + h * (bx + by);
            int nbr[5] = {y > 0 ? i - m : -1, x > 0 ? i - 1 : -1, i, x < m - 1 ? i + 1 : -1, y < m - 1 ? i + m : -1};
            double cf[5] = {cs, cw, cc, ce, cn};
            for (int t = 0; t < 5; t++) {
                if (nbr[t] < 0) continue;
                ci[nz] = nbr[t];
                double *blk = v + (size_t)nz * b * b;
                for (int r = 0; r < b; r++) blk[r * b + r] = cf[t];
                if (t == 2)
                    for (int r = 0; r < b; r++)
                        for (int c = 0; c < b; c++) if (r != c) blk[r * b + c] = 0.3 * cos(r + 2.0 * c);
                nz++;
            }
            rp[i + 1] = nz;
        }
    bsr_matrix *A = NULL;
    bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0);
    free(rp); free(ci); free(v);
    return A;
}

/* Default options of kind with tau1 and the natural ordering. */
static bsr_ilu_options opts(bsr_ilu_kind kind, double tau1)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, kind);
    o.tau1 = tau1;
    o.order.kind = BSR_ORDER_NATURAL;
    return o;
}

/* kind with tau1 = 0.01 over an ND tree of the given depth, factored serially
 * (the reference of the concurrent runs). */
static bsr_ilu_options serial_nd(bsr_ilu_kind kind, int depth)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, kind);
    o.tau1 = 0.01;
    o.order.depth = depth;
    o.parallel = 0;
    return o;
}

/* ||b - A M^{-1} b|| / ||b|| for a random b with k columns (max over columns). */
static double one_step_resid(const bsr_matrix *A, const bsr_ilu *F, int k)
{
    int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_multivec *B, *X, *R;
    bsr_multivec_create(&B, n, k, BSR_DOUBLE);
    bsr_multivec_create(&X, n, k, BSR_DOUBLE);
    bsr_multivec_create(&R, n, k, BSR_DOUBLE);
    bsr_multivec_random(B, 7);
    BSR_ASSERT_OK(bsr_ilu_apply(F, B, X));
    bsr_multivec_copy(R, B);
    BSR_ASSERT_OK(bsr_spmm(-1.0, A, X, 1.0, R));
    double nb[64], nr[64], worst = 0;
    bsr_multivec_norm2(B, nb);
    bsr_multivec_norm2(R, nr);
    for (int j = 0; j < k; j++) if (nr[j] / nb[j] > worst) worst = nr[j] / nb[j];
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(R);
    return worst;
}

/* ||B - A M^{-1} B||_F / ||B||_F for 4 random columns: an estimate of
 * ||I - A M^{-1}||, what right preconditioning needs small. */
static double precond_quality(const bsr_matrix *A, const bsr_ilu *F)
{
    int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_multivec *B, *X, *R;
    bsr_multivec_create(&B, n, 4, BSR_DOUBLE);
    bsr_multivec_create(&X, n, 4, BSR_DOUBLE);
    bsr_multivec_create(&R, n, 4, BSR_DOUBLE);
    bsr_multivec_random(B, 99);
    BSR_ASSERT_OK(bsr_ilu_apply(F, B, X));
    bsr_multivec_copy(R, B);
    BSR_ASSERT_OK(bsr_spmm(-1.0, A, X, 1.0, R));
    double nb[4], nr[4], sb = 0, sr = 0;
    bsr_multivec_norm2(B, nb);
    bsr_multivec_norm2(R, nr);
    for (int j = 0; j < 4; j++) { sb += nb[j] * nb[j]; sr += nr[j] * nr[j]; }
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(R);
    return sqrt(sr / sb);
}

/* ||A - LU||_F/||A||_F of F (asserted to succeed). */
static double err_norm(const bsr_ilu *F)
{
    double e = -1;
    BSR_ASSERT_OK(bsr_ilu_error_norm(F, &e));
    return e;
}

/* Bitwise equality of two matrices (pattern and values). */
static int same_matrix(const bsr_matrix *A, const bsr_matrix *B)
{
    if (A->nbrows != B->nbrows || A->nnzb != B->nnzb || A->b != B->b || A->prec != B->prec) return 0;
    if (memcmp(A->rowptr, B->rowptr, sizeof(int) * (A->nbrows + 1))) return 0;
    if (memcmp(A->colind, B->colind, sizeof(int) * A->nnzb)) return 0;
    return !memcmp(A->val, B->val, bsr_precision_size(A->prec) * A->nnzb * A->b * A->b);
}

/* 1 when F and G have bitwise equal L and U. */
static int same_factors(const bsr_ilu *F, const bsr_ilu *G)
{
    bsr_ilu_factors f, g;
    bsr_ilu_get_factors(F, &f);
    bsr_ilu_get_factors(G, &g);
    return same_matrix(f.L, g.L) && same_matrix(f.U, g.U);
}

/* ---- factorization exactness ---------------------------------------------- */

/* tau1 = 0: every block first-order, L U = A (scaled) to rounding, and
 * M^{-1} solves A x = b in one step; dense pattern and banded, several b. */
static void test_exact_limit(void)
{
    for (int b = 1; b <= 5; b += 2) {
        char mask[8 * 8];
        memset(mask, 1, sizeof mask);
        bsr_matrix *Ad = mk_pattern(8, b, mask, 4.0, BSR_DOUBLE);
        bsr_matrix *Ab = mk_banded(30, b, 2, 2.0 * b);   /* real elimination, well conditioned */
        bsr_matrix *As[2] = {Ad, Ab};
        for (int m = 0; m < 2; m++)
            for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++) {
                bsr_ilu_options o = opts(kind, 0.0);
                bsr_ilu *F = NULL;
                BSR_ASSERT_OK(bsr_ilu_setup(As[m], &o, &F));
                double e = err_norm(F), r = one_step_resid(As[m], F, 3);
                bsr_ilu_stats st;
                bsr_ilu_get_stats(F, &st);
                CU_ASSERT(e < 1e-13);
                CU_ASSERT(r < 1e-11);
                CU_ASSERT_EQUAL(st.dropped, 0);
                CU_ASSERT_EQUAL(st.pivots_regularized, 0);
                if (e >= 1e-13 || r >= 1e-11)
                    printf("\n  b=%d m=%d kind=%d: ||A-LU||/||A|| = %.3g, one-step residual %.3g\n", b, m, kind, e, r);
                bsr_ilu_destroy(F);
            }
        /* the same through RCM and ND permutations (apply undoes them) */
        for (int ord = BSR_ORDER_RCM; ord <= BSR_ORDER_ND; ord++) {
            bsr_ilu_options o = opts(BSR_ILU2, 0.0);
            bsr_order_options_default(&o.order, (bsr_order_kind)ord);
            o.order.depth = 2;
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(Ab, &o, &F));
            bsr_ilu_factors f;
            bsr_ilu_get_factors(F, &f);
            CU_ASSERT_PTR_NOT_NULL(f.ord);
            CU_ASSERT(err_norm(F) < 1e-13);
            CU_ASSERT(one_step_resid(Ab, F, 2) < 1e-11);
            bsr_ilu_destroy(F);
        }
        bsr_matrix_destroy(Ad);
        bsr_matrix_destroy(Ab);
    }
}

/* ILU(0) on a block tridiagonal matrix (exact LU has no fill) is exact. */
static void test_ilu0_no_fill_exact(void)
{
    for (int b = 1; b <= 4; b++) {
        bsr_matrix *A = mk_banded(40, b, 1, 1.0 * b);
        bsr_ilu_options o = opts(BSR_ILU0, 0.5);
        bsr_ilu *F = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        double e = err_norm(F), r = one_step_resid(A, F, 2);
        CU_ASSERT(e < 1e-13);
        CU_ASSERT(r < 1e-11);
        bsr_ilu_stats st;
        bsr_ilu_get_stats(F, &st);
        CU_ASSERT_EQUAL(st.nnzb_L + st.nnzb_U, st.nnzb_A);
        /* on a pattern with fill (2D grid) ILU(0) is not exact, and it is measured as such */
        bsr_matrix *A2 = mk_convdiff(7, 10, b);
        bsr_ilu *G = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A2, &o, &G));
        double eg = err_norm(G);
        CU_ASSERT(eg > 1e-6);
        if (!(eg > 1e-6) || !(e < 1e-13) || !(r < 1e-11)) printf("\n  b=%d: ILU(0) errors %.3g (no fill) %.3g (fill), residual %.3g\n", b, e, eg, r);
        bsr_ilu_get_stats(G, &st);
        CU_ASSERT_EQUAL(st.nnzb_L + st.nnzb_U, st.nnzb_A);
        bsr_ilu_destroy(F); bsr_ilu_destroy(G);
        bsr_matrix_destroy(A); bsr_matrix_destroy(A2);
    }
}

/* keep_pattern: on a convection-dominated matrix whose own blocks tau1 would
 * drop (checked first, so a no-op option fails), ILU2 and ILUT keep every
 * block of A in L or U; with nothing kept outside A's pattern (ILUT, tau1
 * near 1) the factors are ILU(0)'s. */
static void test_keep_pattern(void)
{
    for (int b = 1; b <= 3; b += 2) {
        bsr_matrix *A = mk_convdiff(24, 1000, b);
        const bsr_ilu_kind kinds[2] = {BSR_ILU2, BSR_ILUT};
        for (int ik = 0; ik < 2; ik++) {
            bsr_ilu_options o = opts(kinds[ik], 0.3);
            bsr_ilu *F0 = NULL, *F1 = NULL;
            bsr_ilu_stats s0, s1;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F0));
            o.keep_pattern = 1;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F1));
            bsr_ilu_get_stats(F0, &s0);
            bsr_ilu_get_stats(F1, &s1);
            CU_ASSERT(s0.nnzb_L + s0.nnzb_U < s0.nnzb_A);   /* the case drops A's blocks */
            CU_ASSERT(s1.nnzb_L + s1.nnzb_U >= s1.nnzb_A);
            bsr_ilu_factors fa;
            BSR_ASSERT_OK(bsr_ilu_get_factors(F1, &fa));
            int missing = 0;
            for (int i = 0; i < A->nbrows; i++)
                for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                    int j = A->colind[p];
                    if (bsr_matrix_find(j < i ? fa.L : fa.U, i, j) < 0) missing++;
                }
            CU_ASSERT_EQUAL(missing, 0);
            /* more of the right blocks: a better preconditioner than without */
            CU_ASSERT(precond_quality(A, F1) < precond_quality(A, F0));
            bsr_ilu_destroy(F0); bsr_ilu_destroy(F1);
        }
        /* ILUT(tau1 = 0.999) keeping A's pattern = ILU(0) */
        bsr_ilu_options o = opts(BSR_ILUT, 0.999), z = opts(BSR_ILU0, 0);
        o.keep_pattern = 1;
        bsr_ilu *F = NULL, *Z = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        BSR_ASSERT_OK(bsr_ilu_setup(A, &z, &Z));
        bsr_ilu_stats sf;
        bsr_ilu_get_stats(F, &sf);
        CU_ASSERT_EQUAL(sf.nnzb_L + sf.nnzb_U, sf.nnzb_A);
        double ef = err_norm(F), ez = err_norm(Z);
        CU_ASSERT(fabs(ef - ez) <= 1e-12 * ez);
        if (!(fabs(ef - ez) <= 1e-12 * ez)) printf("\n  b=%d: ILUT keep %.15g vs ILU(0) %.15g\n", b, ef, ez);
        bsr_ilu_destroy(F); bsr_ilu_destroy(Z);
        bsr_matrix_destroy(A);
    }
}

/* F = the factorization of A with options o, *f its factors (asserted). */
static bsr_ilu *factored(const bsr_matrix *A, bsr_ilu_options o, bsr_ilu_factors *f)
{
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    memset(f, 0, sizeof *f);
    if (F) BSR_ASSERT_OK(bsr_ilu_get_factors(F, f));
    return F;
}

/* Factors layout: L strictly lower, U diagonal first holding the inverted
 * pivot (U_kk * pivot = I), columns ascending. */
static void test_factor_layout(void)
{
    bsr_matrix *A = mk_convdiff(8, 50, 3);
    bsr_ilu_factors f;
    bsr_ilu *F = factored(A, opts(BSR_ILU2, 0.05), &f);
    CU_ASSERT_PTR_NULL(f.ord);
    CU_ASSERT_PTR_NOT_NULL(f.scale_left);
    CU_ASSERT_PTR_NULL(f.scale_right);
    for (int i = 0; i < f.L->nbrows; i++) {
        for (int p = f.L->rowptr[i]; p < f.L->rowptr[i + 1]; p++) {
            CU_ASSERT(f.L->colind[p] < i);
            if (p > f.L->rowptr[i]) CU_ASSERT(f.L->colind[p] > f.L->colind[p - 1]);
        }
        CU_ASSERT_EQUAL(f.U->colind[f.U->rowptr[i]], i);
        for (int p = f.U->rowptr[i] + 1; p < f.U->rowptr[i + 1]; p++) CU_ASSERT(f.U->colind[p] > f.U->colind[p - 1]);
    }
    /* on the first row nothing is eliminated: the pivot is the scaled A_00 = I */
    const double *u = f.U->val;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) CU_ASSERT(fabs(u[r * 3 + c] - (r == c)) < 1e-14);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

/* ---- b = 1 against a scalar dense reference --------------------------------- */

/* Scalar ILU0/ILUT/ILU2 in the note's form on a dense array with presence
 * flags: scaling by 1/a_kk (diagonal set to 1), ascending elimination,
 * |l| and |u/d| against tau1/tau2, pivots regularized as documented.
 * Outputs dense L (strict), U (diagonal = 1/pivot) with presence flags. */
static void scalar_ilu(int n, const double *A, const char *pat, int kind, double t1, double t2,
                       double *L, char *Lp, double *U, char *Up, double *ident)
{
    double *W = calloc((size_t)n * n, sizeof(double)), *w = malloc(sizeof(double) * n);
    double *R = calloc((size_t)n * n, sizeof(double)), *dp = malloc(sizeof(double) * n);
    char *Wp = calloc((size_t)n * n, 1), *pr = malloc(n);
    memset(Lp, 0, (size_t)n * n); memset(Up, 0, (size_t)n * n);
    for (int k = 0; k < n; k++) {
        double ds = 1.0 / A[k * n + k], rmax = 0;
        for (int j = 0; j < n; j++) {
            pr[j] = pat[k * n + j] || j == k;
            w[j] = j == k ? 1.0 : ds * A[k * n + j];
            if (pat[k * n + j] && fabs(w[j]) > rmax) rmax = fabs(w[j]);
        }
        for (int i = 0; i < k; i++) {
            if (!pr[i]) continue;
            double l = w[i] * U[i * n + i];
            int first = kind == BSR_ILU0 || fabs(l) >= t1;
            if (!first && fabs(l) < t2) continue;
            if (first) { L[k * n + i] = l; Lp[k * n + i] = 1; }
            else R[k * n + i] = l;
            for (int j = i + 1; j < n; j++) {
                int has = Up[i * n + j] || (first && Wp[i * n + j]);
                if (!has) continue;
                if (kind == BSR_ILU0 && !pr[j]) continue;
                double u = Up[i * n + j] ? U[i * n + j] : W[i * n + j];
                if (!pr[j]) { pr[j] = 1; w[j] = 0.0; }
                w[j] -= l * u;
            }
        }
        double d = w[k], tiny = 1e-8 * rmax;
        if (!(fabs(d) >= tiny)) d = copysign(tiny, d);
        double x = 1.0;
        x /= d;
        dp[k] = d;
        U[k * n + k] = x; Up[k * n + k] = 1;
        for (int j = k + 1; j < n; j++) {
            if (!pr[j]) continue;
            double nr = fabs(x * w[j]);
            if (kind == BSR_ILU0 || nr >= t1) { U[k * n + j] = w[j]; Up[k * n + j] = 1; }
            else if (nr >= t2) { W[k * n + j] = w[j]; Wp[k * n + j] = 1; }
        }
    }
    /* ident = ||Ahat - (I+L)(D+U) - (I+L) W - R (D+U)||_F / ||Ahat||_F, the
     * note's A + E = LU + LW + RU (E: dropped blocks and the R W products) */
    double e2 = 0, a2 = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++) {
            double ahat = k == j ? 1.0 : pat[k * n + j] ? A[k * n + j] / A[k * n + k] : 0.0, s = ahat;
            for (int i = 0; i <= (k < j ? k : j); i++) {
                double lki = i == k ? 1.0 : (Lp[k * n + i] ? L[k * n + i] : 0.0), rki = i == k ? 0.0 : R[k * n + i];
                double uij = i == j ? dp[i] : (Up[i * n + j] ? U[i * n + j] : 0.0), wij = i == j ? 0.0 : W[i * n + j];
                s -= lki * (uij + wij) + rki * uij;
            }
            e2 += s * s;
            a2 += ahat * ahat;
        }
    *ident = sqrt(e2 / a2);
    free(W); free(Wp); free(w); free(pr); free(R); free(dp);
}

/* Test: b=1 equals scalar reference. */
static void test_b1_equals_scalar(void)
{
    const int m = 9, n = m * m;
    bsr_matrix *A = mk_convdiff(m, 80, 1);
    double *Ad = calloc((size_t)n * n, sizeof(double)), *L = calloc((size_t)n * n, sizeof(double)),
           *U = calloc((size_t)n * n, sizeof(double));
    char *pat = calloc((size_t)n * n, 1), *Lp = malloc((size_t)n * n), *Up = malloc((size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            Ad[i * n + A->colind[p]] = ((double *)A->val)[p];
            pat[i * n + A->colind[p]] = 1;
        }
    double taus[3] = {0.2, 0.05, 0.01};
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++)
        for (int t = 0; t < 3; t++) {
            double t1 = taus[t], t2 = kind == BSR_ILU2 ? t1 * t1 : t1;
            bsr_ilu_options o = opts(kind, t1);
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
            double ident;
            scalar_ilu(n, Ad, pat, kind, t1, t2, L, Lp, U, Up, &ident);
            /* ILU2: A + E = LU + LW + RU with ||E|| = O(tau2) (the bits of L, U
             * are checked against this reference below); ILU(0)/ILUT have no R,
             * W, so the same quantity is ||A - LU||, which the library's
             * bsr_ilu_error_norm must reproduce */
            double en = err_norm(F);
            if (kind == BSR_ILU2) {
                CU_ASSERT(ident <= 2 * t2 && ident < 0.5 * en);
                if (!(ident <= 2 * t2)) printf("\n  ILU2 tau %g: ||A + E - LU - LW - RU|| = %.3g\n", t1, ident);
            } else CU_ASSERT(fabs(ident - en) <= 1e-12 * en);
            bsr_ilu_factors f;
            bsr_ilu_get_factors(F, &f);
            int bad = 0;
            char *seen = calloc((size_t)n * n, 1);
            for (int i = 0; i < n; i++) {
                for (int p = f.L->rowptr[i]; p < f.L->rowptr[i + 1]; p++) {
                    int j = f.L->colind[p];
                    seen[i * n + j] = 1;
                    if (!Lp[i * n + j] || ((double *)f.L->val)[p] != L[i * n + j]) bad++;
                }
                for (int p = f.U->rowptr[i]; p < f.U->rowptr[i + 1]; p++) {
                    int j = f.U->colind[p];
                    seen[i * n + j] = 1;
                    if (!Up[i * n + j] || ((double *)f.U->val)[p] != U[i * n + j]) bad++;
                }
            }
            for (int e = 0; e < n * n; e++) if ((Lp[e] || Up[e]) && !seen[e]) bad++;
            CU_ASSERT_EQUAL(bad, 0);
            if (bad) printf("\n  kind %d tau %g: %d blocks differ from the scalar reference\n", kind, t1, bad);
            free(seen);
            bsr_ilu_destroy(F);
        }
    free(Ad); free(L); free(U); free(pat); free(Lp); free(Up);
    bsr_matrix_destroy(A);
}

/* ---- b > 1 against a dense block reference ------------------------------------ */

/* The threshold row kernel of ilu_row.c in its plain form on dense block
 * arrays, from F's scaled matrix (natural order): each candidate's
 * product and norm formed, classified by the norm alone.  The kernel
 * classifies most blocks by norm bounds instead; they must give the same
 * classes, hence the same bits.  ILU(0) (F->mode 0): A's blocks all first
 * order, no fill (ilu_row0.c).  Fills L, U (U's diagonal: the inverted
 * pivot) with presence flags Lp, Up. */
static void block_ref(const bsr_ilu *F, double *L, char *Lp, double *U, char *Up)
{
    const int n = F->n, b = F->b, bb = b * b, ilu0 = F->mode == 0;
    double *W = calloc((size_t)n * n * bb, sizeof(double)), *w = calloc((size_t)n * bb, sizeof(double));
    char *Wp = calloc((size_t)n * n, 1), *pr = malloc(n), *ina = malloc(n);
    double l[100], t[100], lu[100];
    int piv[10];
    memset(Lp, 0, (size_t)n * n); memset(Up, 0, (size_t)n * n);
    for (int k = 0; k < n; k++) {
        memset(pr, 0, n); memset(ina, 0, n);
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            memcpy(w + (size_t)F->ac[p] * bb, F->aval + (size_t)p * bb, sizeof(double) * bb);
            pr[F->ac[p]] = 1;
            ina[F->ac[p]] = (char)(F->opt.keep_pattern || ilu0);
        }
        if (!pr[k]) { memset(w + (size_t)k * bb, 0, sizeof(double) * bb); pr[k] = 1; }
        for (int i = 0; i < k; i++) {
            if (!pr[i]) continue;
            bsr_blk_mul(b, l, w + (size_t)i * bb, U + ((size_t)i * n + i) * bb);
            double nrm = bsr_blk_fnorm(b, l);
            int first = nrm >= F->t1 || ina[i];
            if (!first && nrm < F->t2) continue;
            if (first) { memcpy(L + ((size_t)k * n + i) * bb, l, sizeof(double) * bb); Lp[k * n + i] = 1; }
            for (int j = i + 1; j < n; j++) {
                int u = Up[i * n + j];
                if (!u && !(first && Wp[i * n + j])) continue;
                if (!pr[j] && ilu0) continue;   /* no fill */
                if (!pr[j]) { memset(w + (size_t)j * bb, 0, sizeof(double) * bb); pr[j] = 1; }
                bsr_blk_mulsub(b, w + (size_t)j * bb, l, (u ? U : W) + ((size_t)i * n + j) * bb);
            }
        }
        memcpy(lu, w + (size_t)k * bb, sizeof(double) * bb);
        bsr_blk_lu(b, lu, piv, F->pivot_rel * F->rowref[k]);
        double *dinv = U + ((size_t)k * n + k) * bb;
        bsr_blk_lu_inv(b, lu, piv, dinv);
        Up[k * n + k] = 1;
        for (int j = k + 1; j < n; j++) {
            if (!pr[j]) continue;
            bsr_blk_mul(b, t, dinv, w + (size_t)j * bb);
            double nrm = bsr_blk_fnorm(b, t);
            if (nrm >= F->t1 || ina[j]) {
                memcpy(U + ((size_t)k * n + j) * bb, w + (size_t)j * bb, sizeof(double) * bb);
                Up[k * n + j] = 1;
            } else if (nrm >= F->t2) {
                memcpy(W + ((size_t)k * n + j) * bb, w + (size_t)j * bb, sizeof(double) * bb);
                Wp[k * n + j] = 1;
            }
        }
    }
    free(W); free(w); free(Wp); free(pr); free(ina);
}

/* Blocks of F's factors that differ from block_ref's (in value, or present
 * on one side only), over nb block rows; L, Lp, U, Up: block_ref's arrays. */
static int ref_mismatch(const bsr_ilu *F, int nb, double *L, char *Lp, double *U, char *Up)
{
    block_ref(F, L, Lp, U, Up);
    bsr_ilu_factors f;
    bsr_ilu_get_factors(F, &f);
    const int bb = F->b * F->b;
    int bad = 0, nref = 0;
    for (int e = 0; e < nb * nb; e++) nref += Lp[e] + Up[e];
    for (int i = 0; i < nb; i++)
        for (int up = 0; up < 2; up++) {
            const bsr_matrix *M = up ? f.U : f.L;
            const char *pat = up ? Up : Lp;
            const double *ref = up ? U : L;
            for (int p = M->rowptr[i]; p < M->rowptr[i + 1]; p++) {
                const int j = M->colind[p];
                bad += !pat[i * nb + j] ||
                       memcmp((const double *)M->val + (size_t)p * bb, ref + ((size_t)i * nb + j) * bb, sizeof(double) * bb);
            }
        }
    return bad + (f.L->nnzb + f.U->nnzb != nref);
}


/* Block matrix whose blocks span 1e-4..1e4 in size, with near-singular and
 * ill-conditioned diagonal blocks in some rows: every bound of the kernel
 * meets blocks near the thresholds and pivots it cannot bound. */
static bsr_matrix *mk_rough(int nb, int b)
{
    int *rp = malloc(sizeof(int) * (nb + 1)), *ci = malloc(sizeof(int) * nb * nb), nz = 0;
    double *v = malloc(sizeof(double) * (size_t)nb * nb * b * b);
    rp[0] = 0;
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            if (!(abs(i - j) <= 2 || (i * 7 + j * 3) % 11 == 0)) continue;
            double *blk = v + (size_t)nz * b * b, sc = pow(10.0, 4.0 * bsr_test_unif_pm(&rs));
            for (int e = 0; e < b * b; e++) blk[e] = sc * bsr_test_unif_pm(&rs);
            if (i == j) {
                for (int r = 0; r < b; r++) blk[r * b + r] += 2.0 * sc;
                if (i % 5 == 1)   /* two rows nearly equal: nearly singular */
                    for (int c = 0; c < b; c++) blk[b + c] = blk[c] * (1.0 + 1e-9 * bsr_test_unif_pm(&rs));
                if (i % 5 == 3) for (int c = 0; c < b; c++) blk[c] *= 1e6;   /* badly scaled */
            }
            ci[nz++] = j;
        }
        rp[i + 1] = nz;
    }
    bsr_matrix *A = NULL;
    bsr_matrix_create(&A, nb, nb, b, rp, ci, v, BSR_DOUBLE, 0);
    free(rp); free(ci); free(v);
    return A;
}

/* Test: ILUT/ILU2 for b = 2..5 equal the dense block reference bit for bit. */
static void test_blocks_equal_reference(void)
{
    const int nb = 48;
    const double taus[4] = {0.3, 0.05, 0.01, 1e-3};
    for (int b = 2; b <= 5; b++) {
        bsr_matrix *A = mk_rough(nb, b);
        const int bb = b * b;
        double *L = calloc((size_t)nb * nb * bb, sizeof(double)), *U = calloc((size_t)nb * nb * bb, sizeof(double));
        char *Lp = malloc((size_t)nb * nb), *Up = malloc((size_t)nb * nb);
        for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++)
            for (int keep = 0; keep <= 1; keep++)
                for (int t = 0; t < 4; t++) {
                    bsr_ilu_options o = opts(kind, taus[t]);
                    o.keep_pattern = keep;
                    bsr_ilu *F = NULL;
                    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
                    const int bad = ref_mismatch(F, nb, L, Lp, U, Up);
                    CU_ASSERT_EQUAL(bad, 0);
                    if (bad) printf("\n  b %d kind %d keep %d tau %g: %d blocks differ from the reference\n",
                                    b, kind, keep, taus[t], bad);
                    bsr_ilu_destroy(F);
                }
        free(L); free(U); free(Lp); free(Up);
        bsr_matrix_destroy(A);
    }
}

/* ---- ILU(0) and the scaling: b fixed at compile time = b a variable --------- */

/* Block matrix for the scaling's paths: mk_rough's blocks, and rows whose
 * diagonal block is singular or (harsh) missing or zero (the scalar
 * fallback), and (harsh) rows whose blocks are huge or tiny (norms past
 * bsr_blk_fnorm's plain sum), in A's precision prec (float: milder
 * extremes).  Not harsh: the matching finds a transversal. */
static bsr_matrix *mk_scaling(int nb, int b, bsr_precision prec, int harsh)
{
    const double big = prec == BSR_DOUBLE ? 1e155 : 1e15, small = prec == BSR_DOUBLE ? 1e-160 : 1e-15;
    int *rp = malloc(sizeof(int) * (nb + 1)), *ci = malloc(sizeof(int) * nb * nb), nz = 0;
    double *v = malloc(sizeof(double) * (size_t)nb * nb * b * b);
    rp[0] = 0;
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            if (!(abs(i - j) <= 2 || (i * 7 + j * 3) % 11 == 0) || (harsh && i == j && i % 9 == 2)) continue;
            double *blk = v + (size_t)nz * b * b, sc = pow(10.0, 3.0 * bsr_test_unif_pm(&rs));
            for (int e = 0; e < b * b; e++) blk[e] = sc * bsr_test_unif_pm(&rs);
            if (i == j) {
                for (int r = 0; r < b; r++) blk[r * b + r] += 2.0 * sc;
                if (harsh && i % 9 == 4) for (int e = 0; e < b * b; e++) blk[e] = 0.0;
                if (i % 9 == 5 && b > 1) for (int c = 0; c < b; c++) blk[b + c] = 2.0 * blk[c];
            }
            if (harsh && i % 9 == 7) for (int e = 0; e < b * b; e++) blk[e] *= big;
            if (harsh && i % 9 == 8) for (int e = 0; e < b * b; e++) blk[e] *= i == j ? 1.0 : small;
            if (harsh && i % 9 == 1 && j != i) for (int e = 0; e < b * b; e++) blk[e] *= small;
            ci[nz++] = j;
        }
        rp[i + 1] = nz;
    }
    bsr_matrix *A = NULL;
    if (prec == BSR_DOUBLE) BSR_ASSERT_OK(bsr_matrix_create(&A, nb, nb, b, rp, ci, v, prec, 0));
    else {
        float *f = malloc(sizeof(float) * ((size_t)nz * b * b + 1));
        for (size_t e = 0; e < (size_t)nz * b * b; e++) f[e] = (float)v[e];
        BSR_ASSERT_OK(bsr_matrix_create(&A, nb, nb, b, rp, ci, f, prec, 0));
        free(f);
    }
    free(rp); free(ci); free(v);
    return A;
}

/* The scaling of ilu_scale.c in its plain form: every block's norm by
 * bsr_blk_fnorm (the kernel takes one square root per row), the products by
 * bsr_blk_mul; F->aval, dl, rowref's values into aval, dl, rowref (F's map
 * and matching).  0 when a row fails. */
static int ref_scale(const bsr_ilu *F, const bsr_matrix *A, double *aval, double *dl, double *rowref)
{
    const int b = F->b, bb = b * b;
    for (int k = 0; k < F->n; k++) {
        int r = ilu_src_row(F, k), diag = -1, piv[10], singular = 1;
        double *ds = dl + (size_t)k * bb, smax = 0.0, rowmax = 0.0, rmax = 0.0, lu[100], blk[100];
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            size_t src = (size_t)F->asrc[p] * bb;
            for (int e = 0; e < bb; e++) {
                double v = A->prec == BSR_DOUBLE ? ((const double *)A->val)[src + e] : ((const float *)A->val)[src + e];
                if (F->dr) v *= F->dr[r] * F->dc[A->colind[F->asrc[p]]];
                aval[(size_t)p * bb + e] = v;
            }
            double nr = bsr_blk_fnorm(b, aval + (size_t)p * bb);
            if (nr > smax) smax = nr;
            rowmax = fmax(rowmax, bsr_blk_maxabs(b, aval + (size_t)p * bb));
            if (F->ac[p] == k) diag = p;
        }
        if (smax == 0.0 || rowmax < DBL_MIN) return 0;
        if (diag >= 0) {
            double amax = bsr_blk_maxabs(b, aval + (size_t)diag * bb);
            memcpy(lu, aval + (size_t)diag * bb, sizeof(double) * bb);
            bsr_blk_lu(b, lu, piv, 0.0);
            singular = amax == 0.0;
            for (int i = 0; i < b; i++) if (fabs(lu[i * b + i]) <= 1e-14 * amax) singular = 1;
            if (!singular) bsr_blk_lu_inv(b, lu, piv, ds);
            if (!singular && !bsr_blk_finite(b, ds)) singular = 1;
        }
        if (singular) {
            bsr_blk_identity(b, ds);
            for (int e = 0; e < bb; e++) ds[e] *= sqrt((double)b) / smax;
        }
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            double *a = aval + (size_t)p * bb;
            memcpy(blk, a, sizeof(double) * bb);
            if (p == diag && !singular) bsr_blk_identity(b, a);
            else bsr_blk_mul(b, a, ds, blk);
            double nr = bsr_blk_fnorm(b, a);
            if (nr > rmax) rmax = nr;
        }
        if (!isfinite(rmax)) return 0;
        rowref[k] = rmax / sqrt((double)b);
        if (F->dr) for (int e = 0; e < bb; e++) ds[e] *= F->dr[r];
    }
    return 1;
}

/* Nonzero when the n doubles at a and c differ in a bit. */
static int bits_differ(const void *a, const void *c, size_t n) { return n && memcmp(a, c, sizeof(double) * n); }

/* Nonzero when the BSR factors X and Y differ in pattern or in a bit. */
static int factor_differs(const bsr_matrix *X, const bsr_matrix *Y)
{
    if (!X || !Y) return X != Y;
    const size_t bb = (size_t)X->b * X->b, es = bsr_precision_size(X->prec);
    return X->nbrows != Y->nbrows || X->nnzb != Y->nnzb || memcmp(X->rowptr, Y->rowptr, sizeof(int) * ((size_t)X->nbrows + 1)) ||
           memcmp(X->colind, Y->colind, sizeof(int) * (size_t)X->nnzb) || memcmp(X->val, Y->val, es * bb * X->nnzb);
}

/* Nonzero when the frozen patterns X and Y (classes included) differ. */
static int frozen_differs(const ilu_pattern *X, const ilu_pattern *Y)
{
    if (!X || !Y) return X != Y;
    const size_t n1 = sizeof(int) * ((size_t)X->n + 1);
    return X->n != Y->n || X->nlo != Y->nlo || X->nup != Y->nup || X->nsec != Y->nsec || memcmp(X->lp, Y->lp, n1) ||
           memcmp(X->up, Y->up, n1) || memcmp(X->lc, Y->lc, sizeof(int) * X->nlo) ||
           memcmp(X->uc, Y->uc, sizeof(int) * X->nup) || memcmp(X->lk, Y->lk, X->nlo) || memcmp(X->uk, Y->uk, X->nup);
}

/* Step 0: set up A with the kernels of b fixed into F[0] and of b a
 * variable into F[1]; later steps: refactor both with A. */
static void setup_both_kernels(const bsr_matrix *A, const bsr_ilu_options *o, int step, bsr_ilu *F[2])
{
    for (int g = 0; g < 2; g++) {   /* g = 1: b a variable */
        bsr_ilu_test_generic_kernels(g);
        if (step == 0) BSR_ASSERT_OK(bsr_ilu_setup(A, o, &F[g]));
        else BSR_ASSERT_OK(bsr_ilu_refactor(F[g], A));
    }
    bsr_ilu_test_generic_kernels(0);
}

/* Test: the threshold rows (ILUT, ILU2) with b fixed at compile time (b <=
 * 5) keep the pattern, classes and factors of the instances with b a
 * variable, bit for bit, with and without the per-row cap (a small cap and
 * a small tau1: rows whose cap chooses among many blocks), in natural and
 * RCM order, and so does the frozen refactor of new values. */
static void test_threshold_fixed_b(void)
{
    for (int b = 1; b <= 6; b++)
        for (int c = 0; c < 8; c++) {
            rs = 777 + 8 * b + c;
            bsr_matrix *A = mk_convdiff(12, 80, b);
            const size_t ne = (size_t)A->nnzb * b * b;
            for (size_t e = 0; e < ne; e++) ((double *)A->val)[e] *= 1.0 + 0.2 * bsr_test_unif_pm(&rs);
            bsr_ilu_options o = opts(c & 1 ? BSR_ILU2 : BSR_ILUT, c & 2 ? 1e-3 : 0.02);
            o.cap = c & 2 ? 2 : -1;
            o.keep_pattern = !(c & 4);
            o.order.kind = c & 4 ? BSR_ORDER_RCM : BSR_ORDER_NATURAL;
            bsr_ilu *F[2] = {NULL, NULL};
            for (int step = 0; step < 2; step++) {
                setup_both_kernels(A, &o, step, F);
                const bsr_ilu *X = F[0], *Y = F[1];
                if (!X || !Y) break;
                int bad = factor_differs(X->L, Y->L) + factor_differs(X->U, Y->U) + frozen_differs(X->fz, Y->fz) +
                          bits_differ(X->piv, Y->piv, (size_t)X->n * b * b) + (X->st.dropped != Y->st.dropped) +
                          (X->st.second_order_total != Y->st.second_order_total) +
                          (X->st.second_order_peak != Y->st.second_order_peak);
                CU_ASSERT_EQUAL(bad, 0);
                CU_ASSERT(step || X->st.dropped > 0);
                if (bad) printf("\n  b %d case %d step %d: %d parts differ\n", b, c, step, bad);
                for (size_t e = 0; e < ne; e++) ((double *)A->val)[e] *= 1.0 + 0.1 * bsr_test_unif_pm(&rs);   /* the refactor's */
            }
            bsr_ilu_destroy(F[0]); bsr_ilu_destroy(F[1]);
            bsr_matrix_destroy(A);
        }
}

/* ilu_cap_select's rule counted out: keep[t] when fewer than p candidates
 * have a larger key or an equal key and a smaller column. */
static int cap_select_ref(int m, const double *key, const int *col, int p, unsigned char *keep)
{
    int kept = 0;
    for (int t = 0; t < m; t++) {
        int rank = 0;
        for (int u = 0; u < m; u++) rank += key[u] > key[t] || (key[u] == key[t] && col[u] < col[t]);
        keep[t] = rank < p;
        kept += keep[t];
    }
    return kept;
}

/* Test: the cap's choice keeps the candidates the rule names, for m up to
 * 80 (beyond its running list's size too), p from 0 to past m, keys with
 * many ties, zeros, infinities and not-a-numbers. */
static void test_cap_select(void)
{
    double key[80];
    int col[80], bad = 0, cases = 0;
    unsigned char k1[80], k2[80];
    rs = 4242;
    for (int m = 1; m <= 80; m++)
        for (int rep = 0; rep < 6; rep++)
            for (int p = 0; p <= m + 1; p += 1 + m / 9) {
                for (int t = 0; t < m; t++) {
                    col[t] = 7 * t + (int)(6.99 * fabs(bsr_test_unif_pm(&rs)));   /* distinct, not sorted */
                    double u = bsr_test_unif_pm(&rs);
                    key[t] = rep < 2 ? u * u : floor(4 * fabs(u));   /* reps 2..5: ties */
                    if (rep >= 4 && t % 7 == 3) key[t] = rep == 4 ? INFINITY : NAN;
                }
                for (int t = m - 1; t > 0; t--) {   /* the columns in any order */
                    int s = (int)((t + 1) * (0.5 + 0.5 * bsr_test_unif_pm(&rs))) % (t + 1), x = col[t];
                    col[t] = col[s]; col[s] = x;
                }
                int n1 = ilu_cap_select(m, key, col, p, k1), n2 = cap_select_ref(m, key, col, p, k2);
                if (n1 != n2 || memcmp(k1, k2, (size_t)m)) {
                    if (!bad) printf("\n  m %d p %d rep %d: %d kept, the rule %d\n", m, p, rep, n1, n2);
                    bad++;
                }
                cases++;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(cases > 1000);
}

/* A banded 24-row matrix of b x b blocks (seed rs0) made to fail at block
 * row 17 in way bad: 0 a NaN, 1 a zero row, 2 a row of subnormal values, 3 a
 * tiny diagonal block against large off-diagonal ones, 4 and 5 an overflow
 * of L(17,16) and of U(17,18), 6 a small pivot at row 9. */
static bsr_matrix *mk_failing(int b, int bad, unsigned rs0)
{
    rs = rs0;
    bsr_matrix *A = mk_banded(24, b, 2, 4.0);
    double *v = A->val;
    const int bb = b * b;
    for (int i = 0; i < 24; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            double f = 1.0;
            if (bad == 0 && i == 17 && j == 16) f = NAN;
            if (bad == 1 && i == 17) f = 0.0;
            if (bad == 2 && i == 17) f = 1e-310;
            if (bad == 3 && i == 17) f = j == i ? 1e-300 : 1e10;
            if ((bad == 4 || bad == 5) && i == 17 && j < 17) f = 1e305;   /* L(17,16) overflows */
            if (bad == 4 && (i == 15 || i == 16) && j > i) f = 1e10;
            if (bad == 5 && i == 16 && j == 18) f = 1e10;                 /* U(17,18) overflows */
            if (bad == 6 && i == 9 && j != i) f = 1e3;                    /* a small pivot */
            for (int e = 0; e < bb; e++) v[(size_t)p * bb + e] *= f;
        }
    return A;
}

/* mk_failing(b, bad, seed) set up with o under the two settings mode[0]
 * and mode[1] of a test switch (left at mode[0]): both fail, with the same
 * status and message. */
static void same_failure(int b, int bad, unsigned seed, const bsr_ilu_options *o, void (*sw)(int), const int mode[2])
{
    char msg[2][256];
    bsr_status st[2];
    for (int g = 0; g < 2; g++) {
        bsr_matrix *A = mk_failing(b, bad, seed);
        bsr_ilu *F = NULL;
        sw(mode[g]);
        st[g] = bsr_ilu_setup(A, o, &F);
        sw(mode[0]);
        snprintf(msg[g], sizeof msg[g], "%s", st[g] ? bsr_last_error() : "");
        bsr_ilu_destroy(F);
        bsr_matrix_destroy(A);
    }
    CU_ASSERT(st[0] != BSR_OK);
    CU_ASSERT_EQUAL(st[0], st[1]);
    CU_ASSERT_STRING_EQUAL(msg[0], msg[1]);
    if (strcmp(msg[0], msg[1]) || !st[0]) printf("\n  b %d failure %d: '%s' / '%s'\n", b, bad, msg[0], msg[1]);
}

/* Test: the scaling and ILU(0)'s rows with b fixed at compile time (b <=
 * 5) give the bits of the instances with b a variable, and the scaling
 * those of its plain form, for b = 1..10, A in double and in float, with and
 * without a matching; the refactor of new values too.  Also the errors. */
static void test_kernels_fixed_b(void)
{
    const int nb = 45;
    for (int b = 1; b <= 10; b++)
        for (int c = 0; c < 4; c++) {
            const bsr_precision prec = c & 1 ? BSR_FLOAT : BSR_DOUBLE;
            bsr_matrix *A = mk_scaling(nb, b, prec, !(c & 2));
            const size_t bb = (size_t)b * b, ne = (size_t)A->nnzb * bb;
            bsr_ilu_options o = opts(BSR_ILU0, 0.01);
            o.match = c & 2 ? BSR_MATCH_MPT : BSR_MATCH_NONE;
            o.order.kind = c & 2 ? BSR_ORDER_RCM : BSR_ORDER_NATURAL;
            bsr_ilu *F[2] = {NULL, NULL};
            for (int step = 0; step < 2; step++) {
                setup_both_kernels(A, &o, step, F);
                const bsr_ilu *X = F[0], *Y = F[1];
                const size_t n = (size_t)X->n, es = bsr_precision_size(X->prec);
                CU_ASSERT(X->st.scaling_fallbacks > 0 || (c & 2));   /* harsh: fallbacks */
                int bad = bits_differ(X->aval, Y->aval, ne) + bits_differ(X->dl, Y->dl, n * bb) +
                          bits_differ(X->rowref, Y->rowref, n) + bits_differ(X->piv, Y->piv, n * bb) +
                          (memcmp(X->scale_left, Y->scale_left, es * n * bb) != 0) +
                          (memcmp(X->L->val, Y->L->val, es * bb * X->L->nnzb) != 0) +
                          (memcmp(X->U->val, Y->U->val, es * bb * X->U->nnzb) != 0) +
                          (X->st.scaling_fallbacks != Y->st.scaling_fallbacks) +
                          (X->st.pivots_regularized != Y->st.pivots_regularized);
                double *aval = malloc(sizeof(double) * ne), *dl = malloc(sizeof(double) * n * bb),
                       *rowref = malloc(sizeof(double) * n);
                int ref = ref_scale(X, A, aval, dl, rowref);
                CU_ASSERT(ref);
                if (ref)
                    bad += 10 * (bits_differ(X->aval, aval, ne) + bits_differ(X->dl, dl, n * bb) +
                                 bits_differ(X->rowref, rowref, n));
                CU_ASSERT_EQUAL(bad, 0);
                if (bad) printf("\n  b %d case %d step %d: %d arrays differ\n", b, c, step, bad);
                free(aval); free(dl); free(rowref);
                for (size_t e = 0; e < ne; e++) {   /* new values for the refactor */
                    if (prec == BSR_DOUBLE) ((double *)A->val)[e] *= 1.0 + 0.1 * bsr_test_unif_pm(&rs);
                    else ((float *)A->val)[e] *= (float)(1.0 + 0.1 * bsr_test_unif_pm(&rs));
                }
            }
            bsr_ilu_destroy(F[0]); bsr_ilu_destroy(F[1]);
            bsr_matrix_destroy(A);
        }
    /* failures: the same status and message from either instance */
    for (int b = 1; b <= 6; b++)
        for (int bad = 0; bad < 6; bad++) {
            const bsr_ilu_options o = opts(BSR_ILU0, 0.01);
            const int mode[2] = {0, 1};   /* b fixed, then b a variable */
            same_failure(b, bad, 99 + b, &o, bsr_ilu_test_generic_kernels, mode);
        }
}

/* Test: ILU(0) at b = 1 on one thread in a single pass (ilu_scaled0.c) gives
 * the two passes' bits (the scaled A, the scalings, rowref, the pivots, L,
 * U, the counts), double and float factors, natural order and RCM, rows with
 * fallbacks and regularized pivots, setup and refactor; and every failure
 * the same status and message. */
static void test_single_pass(void)
{
    const int nb = 60;
    for (int c = 0; c < 4; c++) {
        bsr_matrix *A = mk_scaling(nb, 1, BSR_DOUBLE, 1);
        const size_t ne = (size_t)A->nnzb, n = (size_t)nb;
        bsr_ilu_options o = opts(BSR_ILU0, 0.01);
        o.prec = c & 1 ? BSR_FLOAT : BSR_DOUBLE;
        o.order.kind = c & 2 ? BSR_ORDER_RCM : BSR_ORDER_NATURAL;
        o.pivot_rel = 0.3;   /* some pivots regularized */
        bsr_ilu *F[2] = {NULL, NULL};
        for (int step = 0; step < 2; step++) {
            for (int g = 0; g < 2; g++) {   /* g = 1: the two passes */
                bsr_ilu_test_single_pass(!g);
                if (step == 0) BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F[g]));
                else BSR_ASSERT_OK(bsr_ilu_refactor(F[g], A));
                bsr_ilu_test_single_pass(1);
            }
            const bsr_ilu *X = F[0], *Y = F[1];
            const size_t es = bsr_precision_size(X->prec);
            CU_ASSERT(X->xrow != NULL && Y->xrow == NULL);   /* each took its path */
            CU_ASSERT(X->st.scaling_fallbacks > 0 && X->st.pivots_regularized > 0);
            int bad = bits_differ(X->aval, Y->aval, ne) + bits_differ(X->dl, Y->dl, n) +
                      bits_differ(X->rowref, Y->rowref, n) + bits_differ(X->piv, Y->piv, n) +
                      (memcmp(X->scale_left, Y->scale_left, es * n) != 0) +
                      (memcmp(X->L->val, Y->L->val, es * X->L->nnzb) != 0) +
                      (memcmp(X->U->val, Y->U->val, es * X->U->nnzb) != 0) +
                      (X->st.scaling_fallbacks != Y->st.scaling_fallbacks) +
                      (X->st.pivots_regularized != Y->st.pivots_regularized);
            CU_ASSERT_EQUAL(bad, 0);
            if (bad) printf("\n  case %d step %d: %d arrays differ\n", c, step, bad);
            for (size_t e = 0; e < ne; e++) ((double *)A->val)[e] *= 1.0 + 0.1 * bsr_test_unif_pm(&rs);   /* for the refactor */
        }
        bsr_ilu_destroy(F[0]); bsr_ilu_destroy(F[1]);
        bsr_matrix_destroy(A);
    }
    /* failures: the scaling's kinds, non-finite L and U blocks, a strict pivot */
    for (int bad = 0; bad < 7; bad++) {
        bsr_ilu_options o = opts(BSR_ILU0, 0.01);
        o.strict_pivots = bad == 6;
        o.pivot_rel = bad == 6 ? 0.5 : 1e-8;
        const int mode[2] = {1, 0};   /* one pass, then two */
        same_failure(1, bad, 77, &o, bsr_ilu_test_single_pass, mode);
    }
}

/* Test: ILU(0) for b = 1..10 equals the dense block reference bit for bit
 * (rows with regularized pivots included). */
static void test_ilu0_equals_reference(void)
{
    const int nb = 40;
    for (int b = 1; b <= 10; b++) {
        bsr_matrix *A = mk_rough(nb, b);
        const int bb = b * b;
        double *L = calloc((size_t)nb * nb * bb, sizeof(double)), *U = calloc((size_t)nb * nb * bb, sizeof(double));
        char *Lp = malloc((size_t)nb * nb), *Up = malloc((size_t)nb * nb);
        bsr_ilu_options o = opts(BSR_ILU0, 0.01);
        o.pivot_rel = 0.3;   /* some pivots regularized */
        bsr_ilu *F = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        const int bad = ref_mismatch(F, nb, L, Lp, U, Up);
        CU_ASSERT(F->st.pivots_regularized > 0);
        CU_ASSERT_EQUAL(bad, 0);
        if (bad) printf("\n  b %d: %d ILU(0) blocks differ from the reference\n", b, bad);
        bsr_ilu_destroy(F);
        free(L); free(U); free(Lp); free(Up);
        bsr_matrix_destroy(A);
    }
}

/* ---- behaviour in tau on convection-diffusion -------------------------------- */

static void test_tau_monotone_and_ilu2_vs_ilut(void)
{
    const double pes[3] = {1.0, 100.0, 1000.0};
    const double taus[6] = {0.3, 0.1, 0.03, 0.01, 0.003, 0.001};
    for (int b = 1; b <= 3; b += 2)
        for (int ip = 0; ip < 3; ip++) {
            bsr_matrix *A = mk_convdiff(24, pes[ip], b);
            double prev[2] = {INFINITY, INFINITY};
            for (int t = 0; t < 6; t++) {
                double e[2], q[2];
                int64_t fill[2];
                for (int kk = 0; kk < 2; kk++) {
                    bsr_ilu_options o = opts(kk ? BSR_ILU2 : BSR_ILUT, taus[t]);
                    bsr_ilu *F = NULL;
                    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
                    bsr_ilu_stats st;
                    bsr_ilu_get_stats(F, &st);
                    e[kk] = err_norm(F);
                    q[kk] = precond_quality(A, F);
                    fill[kk] = st.nnzb_L + st.nnzb_U;
                    /* decreasing tau1 never increases the error beyond rounding */
                    CU_ASSERT(e[kk] <= prev[kk] * (1 + 1e-9) + 1e-15);
                    if (!(e[kk] <= prev[kk] * (1 + 1e-9) + 1e-15))
                        printf("\n  b=%d Pe=%g %s tau %g: error %.4g > %.4g at the larger tau\n", b, pes[ip],
                               kk ? "ILU2" : "ILUT", taus[t], e[kk], prev[kk]);
                    prev[kk] = e[kk];
                    bsr_ilu_destroy(F);
                }
                /* ILU2(tau1) is the better preconditioner than ILUT(tau1) at the
                 * same tau1, with at most 1.35x its stored blocks:
                 * ||(I - A M^{-1}) B||_F / ||B||_F over 4 random vectors.  (Not
                 * ||A - LU||_F: there A - LU = LW + RU + E keeps the second-order
                 * products that ILUT throws away; with ILUT's tau lowered to
                 * match ILU2's fill, ILUT has the smaller or equal ||A - LU||_F
                 * in every case of this family, while ILU2 keeps the smaller q in
                 * 26 of 36: bench/RESULTS.md, "ILU2 vs ILUT at equal stored
                 * fill".) */
                if (taus[t] <= 0.1) {
                    CU_ASSERT(q[1] <= q[0]);
                    CU_ASSERT(fill[1] <= 1.35 * fill[0]);
                    if (q[1] > q[0] || fill[1] > 1.35 * fill[0])
                        printf("\n  b=%d Pe=%g tau %g: ILUT quality %.4g fill %lld, ILU2 %.4g fill %lld\n", b,
                               pes[ip], taus[t], q[0], (long long)fill[0], q[1], (long long)fill[1]);
                }
            }
            bsr_matrix_destroy(A);
        }
}

/* ---- statuses ---------------------------------------------------------------- */

static void test_statuses(void)
{
    bsr_ilu *F = NULL;
    bsr_ilu_options o = opts(BSR_ILU0, 0.1);
    /* zero pivot: [[0 1],[1 0]] scalar: scaling falls back, the pivot is
     * regularized and counted; strict mode turns it into BSR_ERR_SINGULAR */
    int rp[] = {0, 2, 4}, ci[] = {0, 1, 0, 1};
    double v[] = {0, 1, 1, 0};
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp, ci, v, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_stats st;
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT(st.pivots_regularized >= 1);
    CU_ASSERT_EQUAL(st.scaling_fallbacks, 2);
    bsr_ilu_destroy(F);
    o.strict_pivots = 1;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NULL(F);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0"));
    o.strict_pivots = 0;
    bsr_matrix_destroy(A);
    /* singular pivot block inside a block matrix (b = 2): rank-1 diagonal */
    double v2[] = {1, 2, 2, 4, 1, 0, 0, 1, 1, 0, 0, 1, 3, 0, 0, 3};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 2, rp, ci, v2, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT_EQUAL(st.scaling_fallbacks, 1);
    CU_ASSERT(st.pivots_regularized >= 1);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    /* NaN in A (accepted by create only on request) */
    double v3[] = {2, 1, NAN, 2};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp, ci, v3, BSR_DOUBLE, BSR_ALLOW_NONFINITE));
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "(1,0)"));
    bsr_matrix_destroy(A);
    /* structurally singular: an empty row, an empty column, a zero row */
    int rp4[] = {0, 2, 2}, ci4[] = {0, 1};
    double v4[] = {1, 1};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp4, ci4, v4, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "row 1"));
    bsr_matrix_destroy(A);
    int rp5[] = {0, 1, 2}, ci5[] = {0, 0};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp5, ci5, v4, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "column 1"));
    bsr_matrix_destroy(A);
    double v6[] = {1, 1, 0, 0};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp, ci, v6, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "row 1"));
    bsr_matrix_destroy(A);
    /* a factorization that overflows: non-finite -> BSR_ERR_SINGULAR naming the row */
    double v7[] = {1, 1e305, 1e305, 1};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 1, rp, ci, v7, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 1"));
    bsr_matrix_destroy(A);
    /* a regularization level so small that 1/pivot overflows: Schur
     * complement of row 1 is exactly 0 */
    int rp8[] = {0, 2, 5, 7}, ci8[] = {0, 1, 0, 1, 2, 1, 2};
    double v8[] = {1, 1, 1, 1, 1, 1, 1};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rp8, ci8, v8, BSR_DOUBLE, 0));
    o.pivot_rel = 1e-310;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 1"));
    o.pivot_rel = 0;   /* default 1e-8: regularized and counted */
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT_EQUAL(st.pivots_regularized, 1);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    /* bad arguments */
    A = mk_banded(5, 2, 1, 2.0);
    o.tau1 = -1;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_ARG);
    o = opts(BSR_ILU2, 0.01);
    o.tau2 = 0.1;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ilu_setup(NULL, &o, &F), BSR_ERR_ARG);
    o = opts(BSR_ILU0, 0.01);
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_matrix *B = mk_banded(5, 2, 2, 2.0);
    CU_ASSERT_EQUAL(bsr_ilu_refactor(F, B), BSR_ERR_ARG);
    bsr_multivec *X, *Y;
    bsr_multivec_create(&X, 10, 1, BSR_DOUBLE);
    bsr_multivec_create(&Y, 12, 1, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_ilu_apply(F, X, Y), BSR_ERR_SIZE);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A); bsr_matrix_destroy(B);
}

/* ---- refactor, precision, parallel ----------------------------------------- */

/* Refactor keeps the setup's pattern (frozen, the default): the same arrays
 * and pattern id, a decent preconditioner of the new values, and the setup's
 * values back give the setup's factors bit for bit.  pattern = refresh drops
 * again: refactor = a fresh setup bit for bit.  ILU(0): both are the same. */
static void test_refactor_frozen_and_refresh(void)
{
    bsr_matrix *A1 = mk_convdiff(16, 30, 3), *A2 = mk_convdiff(16, 300, 3);
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++)
        for (int refresh = 0; refresh < 2; refresh++) {
            bsr_ilu_options o = opts(kind, 0.02);
            o.pattern = refresh ? BSR_PATTERN_REFRESH : BSR_PATTERN_FROZEN;
            bsr_ilu *F = NULL, *G = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(A1, &o, &F));
            bsr_ilu_stats s0, s1, s2;
            bsr_ilu_factors f0, f1;
            bsr_ilu_get_stats(F, &s0);
            CU_ASSERT_EQUAL(s0.pattern_id, 1);
            bsr_ilu_get_factors(F, &f0);
            int64_t nL0 = f0.L->nnzb, nU0 = f0.U->nnzb;
            BSR_ASSERT_OK(bsr_ilu_refactor(F, A2));
            BSR_ASSERT_OK(bsr_ilu_setup(A2, &o, &G));
            bsr_ilu_get_stats(F, &s1);
            bsr_ilu_get_stats(G, &s2);
            bsr_ilu_get_factors(F, &f1);
            if (refresh || kind == BSR_ILU0) {
                CU_ASSERT(same_factors(F, G));
                CU_ASSERT_EQUAL(s1.dropped, s2.dropped);
                CU_ASSERT_EQUAL(s1.nnzb_L, s2.nnzb_L);
                if (kind != BSR_ILU0) CU_ASSERT(s1.pattern_id > s0.pattern_id);   /* Pe 30 -> 300 changes the drops */
            } else {
                CU_ASSERT_EQUAL(s1.pattern_id, s0.pattern_id);
                CU_ASSERT(f1.L == f0.L && f1.U == f0.U && f1.lvL == f0.lvL);
                CU_ASSERT(f1.L->nnzb == nL0 && f1.U->nnzb == nU0);
                CU_ASSERT(s2.nnzb_L != nL0 || s2.nnzb_U != nU0);   /* a fresh setup would have chosen another */
                CU_ASSERT(one_step_resid(A2, F, 2) < 0.5);
            }
            if (s1.pattern_id == s0.pattern_id) CU_ASSERT(f1.L == f0.L && f1.U == f0.U);
            /* and back */
            BSR_ASSERT_OK(bsr_ilu_refactor(F, A1));
            bsr_ilu_destroy(G);
            BSR_ASSERT_OK(bsr_ilu_setup(A1, &o, &G));
            CU_ASSERT(same_factors(F, G));
            bsr_ilu_destroy(F); bsr_ilu_destroy(G);
        }
    bsr_matrix_destroy(A1); bsr_matrix_destroy(A2);
}

/* ILUT refactored into its frozen pattern is the exact incomplete LU of the
 * new values on that pattern: (L U)_kj = Ahat_kj for every block (k,j) of
 * L + U (Ahat the scaled A, 0 where A has no block), fill included. */
static void test_frozen_ilut_identity(void)
{
    bsr_matrix *A1 = mk_convdiff(10, 30, 1), *A2 = mk_convdiff(10, 300, 1);
    bsr_ilu_options o = opts(BSR_ILUT, 0.01);
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A1, &o, &F));
    BSR_ASSERT_OK(bsr_ilu_refactor(F, A2));
    const int n = F->n;
    double *Ah = calloc((size_t)n * n, sizeof(double)), *Lf = calloc((size_t)n * n, sizeof(double));
    double *Uf = calloc((size_t)n * n, sizeof(double));
    char *inA = calloc((size_t)n * n, 1);
    for (int k = 0; k < n; k++)
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) { Ah[k * n + F->ac[p]] = F->aval[p]; inA[k * n + F->ac[p]] = 1; }
    const double *lv = F->L->val, *uv = F->U->val;
    for (int k = 0; k < n; k++) {
        Lf[k * n + k] = 1.0;
        for (int p = F->L->rowptr[k]; p < F->L->rowptr[k + 1]; p++) Lf[k * n + F->L->colind[p]] = lv[p];
        for (int p = F->U->rowptr[k]; p < F->U->rowptr[k + 1]; p++)
            Uf[k * n + F->U->colind[p]] = F->U->colind[p] == k ? F->piv[k] : uv[p];
    }
    double worst = 0;
    int fill = 0;
    for (int k = 0; k < n; k++)
        for (int upper = 0; upper < 2; upper++) {
            const bsr_matrix *M = upper ? F->U : F->L;
            for (int p = M->rowptr[k]; p < M->rowptr[k + 1]; p++) {
                int j = M->colind[p];
                double sum = 0;
                for (int i = 0; i <= (k < j ? k : j); i++) sum += Lf[k * n + i] * Uf[i * n + j];
                double d = fabs(sum - Ah[k * n + j]);
                if (d > worst) worst = d;
                fill += !inA[k * n + j];
            }
        }
    CU_ASSERT(worst < 1e-12);
    CU_ASSERT(fill > 0);
    free(Ah); free(Lf); free(Uf); free(inA);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A1); bsr_matrix_destroy(A2);
}

/* Fill blocks (columns absent from A's row k, natural order) of row k of
 * M in [lo, hi) of its columns. */
static int fill_blocks(const bsr_matrix *A, const bsr_matrix *M, int k, int lo, int hi)
{
    int c = 0;
    for (int p = M->rowptr[k]; p < M->rowptr[k + 1]; p++) {
        int j = M->colind[p];
        if (j < lo || j >= hi) continue;
        int inA = 0;
        for (int q = A->rowptr[k]; q < A->rowptr[k + 1]; q++) inA |= A->colind[q] == j;
        c += !inA && j != k;
    }
    return c;
}

/* The per-row cap: row k of L and of U holds at most P fill blocks; fill = F
 * bounds the stored fill in one pass (tau1 as given, the cap from F); a
 * frozen refactor of the setup's values equals the setup bit for bit (the
 * capped-out L blocks, class 2 of the pattern, update as in the setup);
 * bad values refused. */
static void test_cap_and_fill(void)
{
    bsr_matrix *A = mk_convdiff(20, 80, 3);
    const int n = bsr_matrix_nbrows(A);
    for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++) {
        for (int P = 1; P <= 3; P += 2) {
            bsr_ilu_options o = opts(kind, 1e-4);
            o.cap = P;
            bsr_ilu *F = NULL, *G = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
            bsr_ilu_factors f;
            BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
            int worst = 0;
            for (int k = 0; k < n; k++) {
                int cl = fill_blocks(A, f.L, k, 0, k), cu = fill_blocks(A, f.U, k, k + 1, n);
                if (cl > worst) worst = cl;
                if (cu > worst) worst = cu;
            }
            CU_ASSERT_EQUAL(worst, P);   /* reached (tau1 = 1e-4 keeps much more), never passed */
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &G));
            BSR_ASSERT_OK(bsr_ilu_refactor(G, A));   /* frozen, the same values */
            CU_ASSERT(same_factors(F, G));
            bsr_ilu_destroy(F); bsr_ilu_destroy(G);
        }
        double fill[2];
        const double want[2] = {1.6, 3.0};
        for (int t = 0; t < 2; t++) {
            bsr_ilu_options o = opts(kind, 1e-4);
            o.fill = want[t];
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
            bsr_ilu_stats st;
            BSR_ASSERT_OK(bsr_ilu_get_stats(F, &st));
            fill[t] = st.fill;
            CU_ASSERT(st.fill <= want[t]);
            CU_ASSERT(st.fill >= want[t] * 0.7);
            CU_ASSERT_EQUAL(st.tau1, 1e-4);
            bsr_ilu_destroy(F);
        }
        CU_ASSERT(fill[1] > fill[0]);
    }
    bsr_ilu_options o = opts(BSR_ILU2, 0.01);
    bsr_ilu *F = NULL;
    o.fill = -1;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_ARG);
    o.fill = 0;
    o.cap = -2;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_ARG);
    bsr_matrix_destroy(A);
}

/* ILUT/ILU2 set up symbolic_only (the solver's CUDA backend: values computed
 * on the device): the thresholds choose the same L and U patterns as a full
 * setup, and the host factors, which hold no values, refuse to be used. */
static void test_symbolic_only_threshold(void)
{
    bsr_matrix *A = mk_convdiff(12, 40, 3);
    for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++) {
        bsr_ilu_options o = opts(kind, 0.02);
        bsr_ilu *F = NULL, *S = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        o.symbolic_only = 1;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &S));
        bsr_ilu_factors ff, fs;
        bsr_ilu_stats sf, ss;
        BSR_ASSERT_OK(bsr_ilu_get_factors(F, &ff));
        BSR_ASSERT_OK(bsr_ilu_get_factors(S, &fs));
        BSR_ASSERT_OK(bsr_ilu_get_stats(F, &sf));
        BSR_ASSERT_OK(bsr_ilu_get_stats(S, &ss));
        CU_ASSERT(sf.dropped > 0);
        CU_ASSERT_EQUAL(ss.dropped, sf.dropped);
        for (int t = 0; t < 2; t++) {
            const bsr_matrix *M = t ? ff.U : ff.L, *N = t ? fs.U : fs.L;
            const int n = bsr_matrix_nbrows(M), nz = bsr_matrix_nnzb(M);
            CU_ASSERT_EQUAL_FATAL(bsr_matrix_nnzb(N), nz);
            CU_ASSERT(!memcmp(bsr_matrix_rowptr(M), bsr_matrix_rowptr(N), sizeof(int) * ((size_t)n + 1)));
            CU_ASSERT(!memcmp(bsr_matrix_colind(M), bsr_matrix_colind(N), sizeof(int) * (size_t)nz));
        }
        bsr_multivec *X = NULL, *Y = NULL;
        const int64_t rows = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
        BSR_ASSERT_OK(bsr_multivec_create(&X, rows, 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&Y, rows, 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_fill(X, 1.0));
        CU_ASSERT_EQUAL(bsr_ilu_apply(S, X, Y), BSR_ERR_ARG);
        CU_ASSERT_EQUAL(bsr_ilu_refactor(S, A), BSR_ERR_ARG);
        double rel = 0;
        CU_ASSERT_EQUAL(bsr_ilu_error_norm(S, &rel), BSR_ERR_ARG);
        BSR_ASSERT_OK(bsr_ilu_apply(F, X, Y));   /* the full setup's factors do apply */
        bsr_multivec_destroy(X);
        bsr_multivec_destroy(Y);
        bsr_ilu_destroy(F);
        bsr_ilu_destroy(S);
    }
    bsr_matrix_destroy(A);
}

/* The symbolic value (ilu_sym_build) is finished before any numbers: no
 * numeric array, no values to hand out or apply; the host numeric value made
 * from it equals bsr_ilu_setup's factors bit for bit (every kind, natural and
 * ND order, double and float factors) and leaves the symbolic part as it was
 * (map of A, ordering, ILU(0)'s patterns); a threshold kind's pattern comes
 * only with the first factorization.  The public symbolic_only setup keeps
 * its behaviour: no host values, match=mpt refused, auto = none. */
static void test_symbolic_value(void)
{
    bsr_matrix *A = mk_convdiff(14, 30, 2);
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++)
        for (int v = 0; v < 4; v++) {
            bsr_ilu_options o = opts(kind, 0.02);
            if (v & 1) bsr_order_options_default(&o.order, BSR_ORDER_ND);
            if (v & 2) o.prec = BSR_FLOAT;
            bsr_ilu *S = NULL, *F = NULL;
            BSR_ASSERT_OK(ilu_sym_build(A, &o, NULL, NULL, &S));
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
            if (!S || !F) { bsr_ilu_destroy(S); bsr_ilu_destroy(F); continue; }
            CU_ASSERT(!S->aval && !S->rowref && !S->dl && !S->piv && !S->scale_left && !S->rows && !S->pool);
            CU_ASSERT(!S->valid && !S->pattern_only && !S->dsym);
            CU_ASSERT(kind == BSR_ILU0 ? S->L && S->U && S->lvL && S->lvU : !S->L && !S->U && !S->fz);
            bsr_ilu_factors f;
            CU_ASSERT_EQUAL(bsr_ilu_get_factors(S, &f), BSR_ERR_ARG);   /* no values yet */
            const int n = S->n, z = S->nnzbA;
            int *snap = malloc(sizeof(int) * (3 * (size_t)z + 2 * (size_t)n + 1));
            memcpy(snap, S->ap, sizeof(int) * ((size_t)n + 1));
            memcpy(snap + n + 1, S->ac, sizeof(int) * (size_t)z);
            memcpy(snap + n + 1 + z, S->asrc, sizeof(int) * (size_t)z);
            const bsr_matrix *L0 = S->L, *U0 = S->U;
            const bsr_levels *lv0 = S->lvL;
            BSR_ASSERT_OK(ilu_num_host(S, A));
            CU_ASSERT(S->valid && S->aval && S->scale_left);
            CU_ASSERT(same_factors(S, F));
            CU_ASSERT(bsr_test_same_ints(snap, S->ap, (size_t)n + 1) && bsr_test_same_ints(snap + n + 1, S->ac, (size_t)z) &&
                      bsr_test_same_ints(snap + n + 1 + z, S->asrc, (size_t)z));
            CU_ASSERT(!S->ord == !F->ord);
            if (S->ord && F->ord) { CU_ASSERT(bsr_test_same_ints(S->ord->perm, F->ord->perm, (size_t)n)); }
            if (kind == BSR_ILU0) { CU_ASSERT(S->L == L0 && S->U == U0 && S->lvL == lv0); }   /* the same patterns */
            else { CU_ASSERT(S->fz != NULL); }
            free(snap);
            bsr_ilu_destroy(S);
            bsr_ilu_destroy(F);
        }
    /* symbolic_only (deprecated): patterns only, the matching's rules kept */
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind += 2) {
        bsr_ilu_options o = opts(kind, 0.02);
        o.symbolic_only = 1;
        o.match = BSR_MATCH_MPT;
        bsr_ilu *S = NULL;
        CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &S), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NULL(S);
        o.match = BSR_MATCH_AUTO;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &S));
        if (!S) continue;
        bsr_ilu_stats st;
        BSR_ASSERT_OK(bsr_ilu_get_stats(S, &st));
        CU_ASSERT(!st.match_used && !strcmp(st.match_note, "values factored on the device"));
        CU_ASSERT(S->pattern_only && !S->valid);
        bsr_ilu_factors f;
        BSR_ASSERT_OK(bsr_ilu_get_factors(S, &f));   /* the patterns */
        CU_ASSERT(f.L && f.U && bsr_matrix_nnzb(f.L) == st.nnzb_L);
        CU_ASSERT_EQUAL(ilu_num_host(S, A), BSR_ERR_ARG);   /* pattern only: never host values */
        CU_ASSERT(!S->valid);
        bsr_clear_error();
        bsr_ilu_destroy(S);
    }
    bsr_matrix_destroy(A);
}

/* A refactor that fails (zero pivot in strict mode, block row 1) leaves F
 * unusable until the next good refactor, which equals a fresh setup. */
static void test_refactor_after_failure(void)
{
    int rp[] = {0, 2, 5, 7}, ci[] = {0, 1, 0, 1, 2, 1, 2};
    double good[] = {4, 1, 1, 4, 1, 1, 4}, bad[] = {1, 1, 1, 1, 1, 1, 1};
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++) {
        bsr_matrix *A = NULL;
        BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rp, ci, good, BSR_DOUBLE, 0));
        bsr_ilu_options o = opts(kind, 0.0);
        o.strict_pivots = 1;
        bsr_ilu *F = NULL, *G = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &G));
        BSR_ASSERT_OK(bsr_matrix_set_values(A, bad, 0));
        CU_ASSERT_EQUAL(bsr_ilu_refactor(F, A), BSR_ERR_SINGULAR);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 1"));
        bsr_ilu_factors f;
        CU_ASSERT_EQUAL(bsr_ilu_get_factors(F, &f), BSR_ERR_ARG);
        bsr_multivec *X;
        bsr_multivec_create(&X, 3, 1, BSR_DOUBLE);
        CU_ASSERT_EQUAL(bsr_ilu_apply(F, X, X), BSR_ERR_ARG);
        bsr_multivec_destroy(X);
        BSR_ASSERT_OK(bsr_matrix_set_values(A, good, 0));
        BSR_ASSERT_OK(bsr_ilu_refactor(F, A));
        CU_ASSERT(same_factors(F, G));
        CU_ASSERT(one_step_resid(A, F, 1) < 1e-14);
        bsr_ilu_destroy(F); bsr_ilu_destroy(G);
        bsr_matrix_destroy(A);
    }
}

/* ILU2 with tau2 = tau1 is ILUT(tau1); tiny matrices (1 block row) work. */
static void test_ilu2_limits(void)
{
    bsr_matrix *A = mk_convdiff(12, 60, 2);
    bsr_ilu_options o = opts(BSR_ILU2, 0.03), t = opts(BSR_ILUT, 0.03);
    o.tau2 = 0.03;
    bsr_ilu *F = NULL, *G = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    BSR_ASSERT_OK(bsr_ilu_setup(A, &t, &G));
    CU_ASSERT(same_factors(F, G));
    bsr_ilu_stats st;
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT_EQUAL(st.second_order_peak, 0);
    bsr_ilu_destroy(F); bsr_ilu_destroy(G);
    /* tau2 default = tau1^2 keeps second-order blocks */
    o.tau2 = 0;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT(st.second_order_peak > 0);
    CU_ASSERT(st.second_order_total >= st.second_order_peak);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    char m1 = 1;
    for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++)
        for (int ord = 0; ord < 3; ord++) {
            A = mk_pattern(1, 3, &m1, 2.0, BSR_DOUBLE);
            bsr_ilu_options_default(&o, kind);
            bsr_order_options_default(&o.order, ord == 0 ? BSR_ORDER_NATURAL : ord == 1 ? BSR_ORDER_RCM : BSR_ORDER_ND);
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
            CU_ASSERT(one_step_resid(A, F, 2) < 1e-14);
            bsr_ilu_destroy(F);
            bsr_matrix_destroy(A);
        }
}

/* Float factors (from a double A) and float A both apply to rounding of float. */
static void test_float_factors(void)
{
    bsr_matrix *A = mk_banded(20, 3, 1, 3.0), *Af = NULL;
    bsr_ilu_options o = opts(BSR_ILU0, 0.0);
    o.prec = BSR_FLOAT;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_factors f;
    bsr_ilu_get_factors(F, &f);
    CU_ASSERT_EQUAL(bsr_matrix_precision(f.L), BSR_FLOAT);
    double r = one_step_resid(A, F, 2);
    CU_ASSERT(r < 1e-4 && r > 0);
    if (!(r < 1e-4 && r > 0)) printf("\n  float factors: one-step residual %g\n", r);
    bsr_ilu_destroy(F);
    bsr_matrix_copy(A, BSR_FLOAT, &Af);
    o.prec = -1;
    BSR_ASSERT_OK(bsr_ilu_setup(Af, &o, &F));
    bsr_ilu_get_factors(F, &f);
    CU_ASSERT_EQUAL(bsr_matrix_precision(f.U), BSR_FLOAT);
    int64_t n = 60;
    bsr_multivec *X, *Y;
    bsr_multivec_create(&X, n, 1, BSR_FLOAT);
    bsr_multivec_create(&Y, n, 1, BSR_FLOAT);
    bsr_multivec_random(X, 3);
    BSR_ASSERT_OK(bsr_ilu_apply(F, X, Y));
    const float *y = bsr_multivec_cdata(Y);
    for (int i = 0; i < n; i++) CU_ASSERT(isfinite(y[i]));
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A); bsr_matrix_destroy(Af);
}

/* Serial and ND-tree parallel factorizations are identical bit for bit (4
 * threads, several depths, b = 1 and 3, every kind), and so are their
 * failures (the same row is reported). */
static void test_serial_equals_parallel(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    omp_set_num_threads(4);
    for (int b = 1; b <= 3; b += 2) {
        bsr_matrix *A = mk_convdiff(40, 100, b);
        for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind++)
            for (int depth = 1; depth <= 5; depth += 2) {
                bsr_ilu_options o = serial_nd(kind, depth);
                bsr_ilu *F = NULL, *G = NULL;
                BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
                o.parallel = 1;
                BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &G));
                bsr_ilu_stats sf, sg;
                bsr_ilu_get_stats(F, &sf);
                bsr_ilu_get_stats(G, &sg);
                CU_ASSERT_EQUAL(sf.tree_parallel, 0);
                CU_ASSERT_EQUAL(sg.tree_parallel, 1);
                CU_ASSERT(same_factors(F, G));
                CU_ASSERT_EQUAL(sf.dropped, sg.dropped);
                CU_ASSERT_EQUAL(sf.second_order_peak, sg.second_order_peak);
                CU_ASSERT(one_step_resid(A, G, 1) < 0.5);
                /* parallel refactor too */
                BSR_ASSERT_OK(bsr_ilu_refactor(G, A));
                CU_ASSERT(same_factors(F, G));
                bsr_ilu_destroy(F); bsr_ilu_destroy(G);
                /* a failure (strict pivots at an absurd level): same status, same row */
                o.strict_pivots = 1;
                o.pivot_rel = 0.9;
                o.parallel = 0;
                CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
                char msg[256];
                snprintf(msg, sizeof msg, "%s", bsr_last_error());
                o.parallel = 1;
                CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &G), BSR_ERR_SINGULAR);
                CU_ASSERT_STRING_EQUAL(msg, bsr_last_error());
            }
        bsr_matrix_destroy(A);
    }
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

/* The work bound: the rows' work (stats.work, block multiply-adds; with
 * grow=1 both factorizations) is the same on 1, 2 and 4 threads; a bound
 * equal to it keeps the factors of the unbounded setup bit for bit, a bound
 * one block product below it fails the setup (BSR_ERR_UNSUPPORTED, the
 * message naming the bound) on every thread count; ILU(0) is not counted. */
/* A setup of o on A under the work bound max_work is refused, naming it. */
static void refused_under(const bsr_matrix *A, bsr_ilu_options o, double max_work)
{
    bsr_ilu *G = NULL;
    o.max_work = max_work;
    CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &G), BSR_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(G);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "work bound"));
    bsr_ilu_destroy(G);
}

static void test_work_bound(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at this small size */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("coupled3d:12,5,couple=0.45", BSR_DOUBLE, &P));
    const double b3 = 125.0;
    for (int grow = 0; grow <= 1; grow++) {
        bsr_ilu_options o = serial_nd(BSR_ILU2, 3);
        o.grow = grow;
        bsr_ilu *F = NULL;
        omp_set_num_threads(1);
        BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
        bsr_ilu_stats sf;
        bsr_ilu_get_stats(F, &sf);
        CU_ASSERT(sf.work > 0 && fmod(sf.work, b3) == 0);
        if (grow) CU_ASSERT_EQUAL(sf.grow_passes, 1);   /* the refactorization's rows count too */
        o.parallel = 1;
        for (int t = 1; t <= 4; t *= 2) {
            omp_set_num_threads(t);
            o.max_work = sf.work;
            bsr_ilu *G = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &G));
            bsr_ilu_stats sg;
            bsr_ilu_get_stats(G, &sg);
            CU_ASSERT_EQUAL(sg.work, sf.work);
            CU_ASSERT(same_factors(F, G));
            /* a frozen refactor is not counted: it passes under the same bound */
            BSR_ASSERT_OK(bsr_ilu_refactor(G, P.A));
            CU_ASSERT(same_factors(F, G));
            bsr_ilu_destroy(G);
            G = NULL;
            refused_under(P.A, o, sf.work - b3);
        }
        if (grow) {   /* the grow=0 count is the first factorization's alone */
            bsr_ilu_options o0 = serial_nd(BSR_ILU2, 3);
            bsr_ilu *F0 = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o0, &F0));
            bsr_ilu_stats s0;
            bsr_ilu_get_stats(F0, &s0);
            CU_ASSERT(s0.work < sf.work);
            bsr_ilu_destroy(F0);
        }
        bsr_ilu_destroy(F);
    }
    bsr_ilu_options o = serial_nd(BSR_ILU0, 3);
    o.max_work = 1;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
    bsr_ilu_destroy(F);
    o.max_work = -1;
    CU_ASSERT_EQUAL(bsr_ilu_setup(P.A, &o, &F), BSR_ERR_ARG);
    bsr_problem_free(&P);
    omp_set_num_threads(nt);
    bsr_team_force(0);
}

/* tau1 = 0 without a cap keeps every block: the pattern then comes from the
 * elimination tree (ilu_complete.c) instead of the rows' merges.  It must be
 * the pattern the rows choose, with the same factors bit for bit, the same
 * work count and the same work bound, serial and over the ND tree, in
 * nested dissection and natural order (there also on 3 threads: rows of
 * ILU_HEAVY_ROW values pipelined one a ticket); a refactor keeps it; with a
 * threshold, a cap or an unsymmetric pattern the rows choose as before. */
static void test_complete_pattern(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    int heavy_seen = 0;
    const char *gens[] = {"coupled3d:8,5,couple=0.45", "stencil3d:9:3", "rotconv3d:8,4"};
    for (int g = 0; g < 3; g++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(gens[g], BSR_DOUBLE, &P));
        const double b3 = pow(bsr_matrix_block(P.A), 3);
        for (int c = 0; c < 8; c++) {
            bsr_ilu_options o = serial_nd(c & 1 ? BSR_ILU2 : BSR_ILUT, 3);
            o.tau1 = 0;
            if (c >= 4) o.order.kind = BSR_ORDER_NATURAL;
            o.parallel = (c >= 2 && c < 4) || c >= 6;
            omp_set_num_threads(o.parallel ? 3 : 1);
            bsr_ilu *F = NULL, *G = NULL;
            bsr_ilu_test_complete_off(1);
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
            CU_ASSERT(!ilu_complete_ok(F));
            bsr_ilu_test_complete_off(0);
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &G));
            CU_ASSERT(ilu_complete_ok(G));
            bsr_ilu_stats sf, sg;
            bsr_ilu_get_stats(F, &sf);
            bsr_ilu_get_stats(G, &sg);
            CU_ASSERT(same_factors(F, G));
            CU_ASSERT(sg.work > 0 && sg.work == sf.work);
            CU_ASSERT(sg.dropped == 0 && sf.dropped == 0);
            CU_ASSERT(sg.fill > 1.5);
            CU_ASSERT(sg.pattern_id != 0);
            if (c >= 6) {   /* natural order on 3 threads: heavy rows pipelined, else serial */
                const int64_t vals = (G->L->nnzb + G->U->nnzb) * (int64_t)G->b * G->b;
                CU_ASSERT_EQUAL(sg.tree_parallel, vals >= (int64_t)ILU_HEAVY_ROW * G->n ? 2 : 0);
                heavy_seen += vals >= (int64_t)ILU_HEAVY_ROW * G->n;
            }
            BSR_ASSERT_OK(bsr_ilu_refactor(G, P.A));
            CU_ASSERT(same_factors(F, G));
            bsr_ilu_destroy(G);
            G = NULL;
            o.max_work = sf.work;   /* the bound: passes at the count, fails one product under it */
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &G));
            bsr_ilu_destroy(G);
            refused_under(P.A, o, sf.work - b3);
            bsr_ilu_destroy(F);
        }
        omp_set_num_threads(nt);
        /* a threshold or a cap: the rows choose */
        for (int c = 0; c < 2; c++) {
            bsr_ilu_options o = serial_nd(BSR_ILU2, 3);
            o.tau1 = c ? 0 : 1e-3;
            o.cap = c ? 4 : BSR_ILU_CAP_NONE;
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
            CU_ASSERT(!ilu_complete_ok(F));
            bsr_ilu_destroy(F);
        }
        bsr_problem_free(&P);
    }
    CU_ASSERT(heavy_seen > 0);   /* the pipelined rows did run */
    /* an unsymmetric pattern: the rows choose, and still keep every block */
    const int nb = 12;
    char m[12 * 12];
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) m[i * nb + j] = i == j || j == i + 1 || (j + 3) % nb == i;
    bsr_matrix *A = mk_pattern(nb, 2, m, 4.0, BSR_DOUBLE);
    bsr_ilu_options o = serial_nd(BSR_ILUT, 0);
    o.tau1 = 0;
    o.order.kind = BSR_ORDER_NATURAL;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    CU_ASSERT(!ilu_complete_ok(F));
    CU_ASSERT(one_step_resid(A, F, 1) < 1e-12);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    bsr_team_force(0);
}

/* The threshold kinds over an ND tree whose separators are large enough to
 * be factored by several tasks at once (>= 64 rows, one row a ticket:
 * rotconv3d:18,3 has a top separator of 324 rows): identical bit for bit to the serial run, with
 * 2, 4 and 7 threads (7 > cores: rows wait on rows whose thread is
 * descheduled), the frozen refactor with new values too (its separators'
 * rows run concurrently as well), and a failure reports the serial run's
 * row. */
static void test_separators_concurrent(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("rotconv3d:18,3", BSR_DOUBLE, &P));
    bsr_matrix *A2 = bsr_test_offdiag_scaled(P.A, 0.7, BSR_DOUBLE);
    for (int kind = BSR_ILUT; kind <= BSR_ILU2; kind++)
        for (int depth = 1; depth <= 3; depth += 2) {
            bsr_ilu_options o = serial_nd(kind, depth);
            bsr_ilu *F = NULL, *F2 = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
            BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F2));
            BSR_ASSERT_OK(bsr_ilu_refactor(F2, A2));   /* the serial frozen refactor */
            bsr_ilu_stats sf;
            bsr_ilu_get_stats(F, &sf);
            o.parallel = 1;
            for (int t = 2; t <= 7; t += t < 4 ? 2 : 3) {
                omp_set_num_threads(t);
                bsr_ilu *G = NULL;
                BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &G));
                bsr_ilu_stats sg;
                bsr_ilu_get_stats(G, &sg);
                CU_ASSERT_EQUAL(sg.tree_parallel, 1);
                CU_ASSERT(same_factors(F, G));
                CU_ASSERT_EQUAL(sf.dropped, sg.dropped);
                BSR_ASSERT_OK(bsr_ilu_refactor(G, A2));
                CU_ASSERT_EQUAL(G->st.tree_parallel, 1);
                CU_ASSERT(same_factors(F2, G));
                CU_ASSERT(!same_factors(F, G));   /* the new values were factored */
                bsr_ilu_destroy(G);
            }
            bsr_ilu_destroy(F);
            bsr_ilu_destroy(F2);
            o.strict_pivots = 1;
            o.pivot_rel = 0.9;
            o.parallel = 0;
            omp_set_num_threads(1);
            CU_ASSERT_EQUAL(bsr_ilu_setup(P.A, &o, &F), BSR_ERR_SINGULAR);
            char msg[256];
            snprintf(msg, sizeof msg, "%s", bsr_last_error());
            o.parallel = 1;
            omp_set_num_threads(4);
            CU_ASSERT_EQUAL(bsr_ilu_setup(P.A, &o, &F), BSR_ERR_SINGULAR);
            CU_ASSERT_STRING_EQUAL(msg, bsr_last_error());
        }
    bsr_matrix_destroy(A2);
    bsr_problem_free(&P);
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

/* Every kind without a tree (natural, RCM) factored by concurrent rows with
 * 4 threads is identical bit for bit to the serial run, refactor (frozen
 * pattern) included, float factors included, and fails at the same row with
 * the same message. */
static void test_serial_equals_levels(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    omp_set_num_threads(4);
    static const char *const specs[] = {"poisson3d:16", "stencil3d:16:3", "cfd3d:20,4,10"};
    static const char *const ords[] = {"natural", "rcm"};
    int nfail = 0;
    for (int m = 0; m < 3; m++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[m], BSR_DOUBLE, &P));
        if (!P.A) continue;
        for (int kind = BSR_ILU0; kind <= (m < 2 ? BSR_ILU2 : BSR_ILU0); kind++)   /* the thresholds: the small ones */
        for (int r = 0; r < 2; r++)
            for (int fp = 0; fp < 2 - (kind != BSR_ILU0); fp++) {
                bsr_ilu_options o;
                bsr_ilu_options_default(&o, (bsr_ilu_kind)kind);
                o.tau1 = 0.02;
                BSR_ASSERT_OK(bsr_order_parse(ords[r], &o.order));
                o.prec = fp ? BSR_FLOAT : BSR_DOUBLE;
                o.parallel = 0;
                bsr_ilu *F = NULL, *G = NULL;
                BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
                o.parallel = 1;
                BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &G));
                if (!F || !G) { bsr_ilu_destroy(F); bsr_ilu_destroy(G); continue; }
                bsr_ilu_stats sf, sg;
                bsr_ilu_get_stats(F, &sf);
                bsr_ilu_get_stats(G, &sg);
                CU_ASSERT_EQUAL(sf.tree_parallel, 0);
                CU_ASSERT_EQUAL(sg.tree_parallel, 2);   /* the level-parallel path did run */
                if (sg.tree_parallel != 2) printf("\n  %s %s: n %d, %d levels\n", specs[m], ords[r], P.A->nbrows, sg.nlevels_L);
                CU_ASSERT(same_factors(F, G));
                CU_ASSERT_EQUAL(sf.pivots_regularized, sg.pivots_regularized);
                CU_ASSERT_EQUAL(sf.dropped, sg.dropped);
                BSR_ASSERT_OK(bsr_ilu_refactor(G, P.A));
                CU_ASSERT(same_factors(F, G));
                bsr_ilu_destroy(F); bsr_ilu_destroy(G);
                F = G = NULL;
                /* failures (strict pivots at absurd levels): the same status and
                 * row as the serial run, whichever row the level run meets first */
                o.strict_pivots = 1;
                for (int e = 0; e < 4; e++) {
                    o.pivot_rel = 1.0 - pow(10.0, -e - 0.5);
                    o.parallel = 0;
                    bsr_status s0 = bsr_ilu_setup(P.A, &o, &F);
                    char msg[256];
                    snprintf(msg, sizeof msg, "%s", s0 ? bsr_last_error() : "");
                    nfail += s0 == BSR_ERR_SINGULAR;
                    o.parallel = 1;
                    CU_ASSERT_EQUAL(bsr_ilu_setup(P.A, &o, &G), s0);
                    if (s0) CU_ASSERT_STRING_EQUAL(msg, bsr_last_error());
                    bsr_ilu_destroy(F); bsr_ilu_destroy(G);
                    F = G = NULL;
                }
            }
        bsr_problem_free(&P);
    }
    CU_ASSERT(nfail > 0);   /* the failure comparison did compare failures */
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

/* ---- triangular solves --------------------------------------------------------- */

/* Simple level schedule of a triangle (test-side, independent of reorder/). */
static bsr_levels *test_levels(const bsr_matrix *T, int upper)
{
    int n = T->nbrows;
    bsr_levels *lv = calloc(1, sizeof *lv);
    lv->n = n;
    lv->level_of = malloc(sizeof(int) * (n + 1));
    lv->rows = malloc(sizeof(int) * (n + 1));
    int nl = 0;
    for (int t = 0; t < n; t++) {
        int i = upper ? n - 1 - t : t, l = 0;
        for (int p = T->rowptr[i]; p < T->rowptr[i + 1]; p++) {
            int j = T->colind[p];
            if ((upper && j > i) || (!upper && j < i)) if (lv->level_of[j] + 1 > l) l = lv->level_of[j] + 1;
        }
        lv->level_of[i] = l;
        if (l + 1 > nl) nl = l + 1;
    }
    lv->nlevels = nl;
    lv->level_ptr = calloc(nl + 2, sizeof(int));
    for (int i = 0; i < n; i++) lv->level_ptr[lv->level_of[i] + 1]++;
    for (int l = 0; l < nl; l++) lv->level_ptr[l + 1] += lv->level_ptr[l];
    int *at = malloc(sizeof(int) * (nl + 1));
    memcpy(at, lv->level_ptr, sizeof(int) * (nl + 1));
    for (int i = 0; i < n; i++) lv->rows[at[lv->level_of[i]]++] = i;
    free(at);
    return lv;
}

/* Free a level schedule built by the test itself. */
static void free_test_levels(bsr_levels *lv)
{
    free(lv->level_of); free(lv->rows); free(lv->level_ptr); free(lv);
}

/* Dense forward/backward substitution reference in double. */
static void dense_trsv(const bsr_matrix *T, int upper, const double *x, double *y, int k)
{
    int n = T->nbrows, b = T->b, N = n * b;
    double *D = calloc((size_t)N * N, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int p = T->rowptr[i]; p < T->rowptr[i + 1]; p++)
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) {
                    double v = T->prec == BSR_DOUBLE ? ((double *)T->val)[(size_t)p * b * b + r * b + c]
                                                     : ((float *)T->val)[(size_t)p * b * b + r * b + c];
                    D[(size_t)(i * b + r) * N + T->colind[p] * b + c] = v;
                }
    for (int j = 0; j < k; j++) {
        for (int t = 0; t < n; t++) {
            int i = upper ? n - 1 - t : t;
            double acc[BSR_MAX_BLOCK];
            for (int r = 0; r < b; r++) {
                double s = x[(size_t)(i * b + r) * k + j];
                for (int c = 0; c < N; c++) {
                    int jc = c / b;
                    if ((upper && jc > i) || (!upper && jc < i)) s -= D[(size_t)(i * b + r) * N + c] * y[(size_t)c * k + j];
                }
                acc[r] = s;
            }
            for (int r = 0; r < b; r++) {
                if (!upper) { y[(size_t)(i * b + r) * k + j] = acc[r]; continue; }
                double s = 0;
                for (int c = 0; c < b; c++) s += D[(size_t)(i * b + r) * N + i * b + c] * acc[c];
                y[(size_t)(i * b + r) * k + j] = s;
            }
        }
    }
    free(D);
}

/* Test: triangular solves S2 vs levels vs dense. */
static void test_trsv(void)
{
    int ks[3] = {1, 5, 17};
    for (int b = 1; b <= 4; b += 3)
        for (int prec = 0; prec < 2; prec++) {
            bsr_matrix *A = mk_convdiff(12, 40, b), *Ap = A;
            if (prec) bsr_matrix_copy(A, BSR_FLOAT, &Ap);
            bsr_ilu_options o = opts(BSR_ILUT, 0.01);
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(Ap, &o, &F));
            bsr_ilu_factors f;
            bsr_ilu_get_factors(F, &f);
            bsr_levels *lvs[2] = {test_levels(f.L, 0), test_levels(f.U, 1)};
            const bsr_matrix *T[2] = {f.L, f.U};
            int64_t N = (int64_t)A->nbrows * b;
            for (int ik = 0; ik < 3; ik++)
                for (int up = 0; up < 2; up++) {
                    int k = ks[ik];
                    bsr_precision p = prec ? BSR_FLOAT : BSR_DOUBLE;
                    bsr_multivec *X, *Y1, *Y2, *Xd;
                    bsr_multivec_create(&X, N, k, p);
                    bsr_multivec_create(&Y1, N, k, p);
                    bsr_multivec_create(&Y2, N, k, p);
                    bsr_multivec_create(&Xd, N, k, BSR_DOUBLE);
                    bsr_multivec_random(X, 11 + k);
                    bsr_multivec_fill(Y1, NAN);
                    bsr_multivec_fill(Y2, NAN);
                    bsr_status (*fn)(const bsr_matrix *, const bsr_levels *, const bsr_multivec *, bsr_multivec *) =
                        up ? bsr_trsv_upper : bsr_trsv_lower;
                    BSR_ASSERT_OK(fn(T[up], NULL, X, Y1));
                    BSR_ASSERT_OK(fn(T[up], lvs[up], X, Y2));
                    CU_ASSERT(!memcmp(bsr_multivec_cdata(Y1), bsr_multivec_cdata(Y2),
                                      bsr_precision_size(p) * N * k));
                    /* in place gives the same */
                    BSR_ASSERT_OK(fn(T[up], lvs[up], X, X));
                    CU_ASSERT(!memcmp(bsr_multivec_cdata(Y1), bsr_multivec_cdata(X), bsr_precision_size(p) * N * k));
                    /* against dense substitution */
                    bsr_multivec_random(Xd, 11 + k);
                    bsr_multivec *Xr;
                    bsr_multivec_create(&Xr, N, k, BSR_DOUBLE);
                    bsr_multivec_copy(Xr, Y1);
                    double *ref = malloc(sizeof(double) * N * k);
                    bsr_multivec_copy(X, Xd); /* X in p, as solved */
                    bsr_multivec *Xp; bsr_multivec_create(&Xp, N, k, BSR_DOUBLE);
                    bsr_multivec_copy(Xp, X);
                    dense_trsv(T[up], up, bsr_multivec_cdata(Xp), ref, k);
                    const double *y = bsr_multivec_cdata(Xr);
                    double err = 0, nrm = 0;
                    for (int64_t e = 0; e < N * k; e++) {
                        if (fabs(y[e] - ref[e]) > err) err = fabs(y[e] - ref[e]);
                        if (fabs(ref[e]) > nrm) nrm = fabs(ref[e]);
                    }
                    CU_ASSERT(err <= (prec ? 1e-4 : 1e-12) * nrm);
                    free(ref);
                    bsr_multivec_destroy(X); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
                    bsr_multivec_destroy(Xd); bsr_multivec_destroy(Xr); bsr_multivec_destroy(Xp);
                }
            /* bad inputs: wrong triangle, wrong sizes */
            bsr_multivec *X, *Y;
            bsr_multivec_create(&X, N, 1, prec ? BSR_FLOAT : BSR_DOUBLE);
            bsr_multivec_create(&Y, N + 1, 1, prec ? BSR_FLOAT : BSR_DOUBLE);
            CU_ASSERT_EQUAL(bsr_trsv_lower(f.U, NULL, X, X), BSR_ERR_STRUCTURE);
            CU_ASSERT_EQUAL(bsr_trsv_upper(f.L, NULL, X, X), BSR_ERR_STRUCTURE);
            CU_ASSERT_EQUAL(bsr_trsv_lower(f.L, NULL, X, Y), BSR_ERR_SIZE);
            bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
            free_test_levels(lvs[0]); free_test_levels(lvs[1]);
            bsr_ilu_destroy(F);
            if (Ap != A) bsr_matrix_destroy(Ap);
            bsr_matrix_destroy(A);
        }
}

/* The library's own level schedules (when built) give the same solves. */
static void test_apply_levels(void)
{
    bsr_ilu_factors f;
    /* 64 x 64 grid, ILU(0): anti-diagonal levels 1..64 wide, so both the
     * parallel (>= 32 rows) and the single-thread runs of levels are used */
    bsr_matrix *A = mk_convdiff(64, 10, 2);
    bsr_ilu *F = factored(A, opts(BSR_ILU0, 0.0), &f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.lvL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.lvU);
    CU_ASSERT_EQUAL(f.lvL->n, A->nbrows);
    CU_ASSERT_EQUAL(f.lvU->n, A->nbrows);
    CU_ASSERT(f.lvL->max_width >= 40 && f.lvL->nlevels > 40);
    CU_ASSERT(one_step_resid(A, F, 9) < 0.5);
    /* level-scheduled solves with the factors' own schedules = S2, bit for bit */
    int64_t N = (int64_t)A->nbrows * A->b;
    bsr_multivec *X, *Y1, *Y2;
    bsr_multivec_create(&X, N, 3, BSR_DOUBLE);
    bsr_multivec_create(&Y1, N, 3, BSR_DOUBLE);
    bsr_multivec_create(&Y2, N, 3, BSR_DOUBLE);
    bsr_multivec_random(X, 5);
    BSR_ASSERT_OK(bsr_trsv_lower(f.L, NULL, X, Y1));
    BSR_ASSERT_OK(bsr_trsv_upper(f.U, NULL, Y1, Y1));
    BSR_ASSERT_OK(bsr_trsv_lower(f.L, f.lvL, X, Y2));
    BSR_ASSERT_OK(bsr_trsv_upper(f.U, f.lvU, Y2, Y2));
    CU_ASSERT(!memcmp(bsr_multivec_cdata(Y1), bsr_multivec_cdata(Y2), sizeof(double) * N * 3));
    /* the level path itself (the entry points above take it only from 4 threads on) */
    BSR_ASSERT_OK(bsr_trsv_cpu(f.L, f.lvL, 0, BSR_TRSV_CPU_LEVELS, X, Y2));
    BSR_ASSERT_OK(bsr_trsv_cpu(f.U, f.lvU, 1, BSR_TRSV_CPU_LEVELS, Y2, Y2));
    CU_ASSERT(!memcmp(bsr_multivec_cdata(Y1), bsr_multivec_cdata(Y2), sizeof(double) * N * 3));
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

/* With a team, the apply of factors in nested-dissection order goes over
 * the tree (its nodes of a level concurrently): one vector (the fused
 * sweeps) and two (the separate solves), double and float factors, the bits
 * of one thread at 2, 3 and 7 threads, for ILU(0) and ILU2, b = 1, 4, 5,
 * METIS's leaves or not. */
static void test_apply_tree(void)
{
    static const int bs[] = {1, 4, 5};
    const int nt0 = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these sizes */
    for (int bi = 0; bi < 3; bi++)
        for (int kind = 0; kind < 2; kind++)
            for (int fl = 0; fl < 2; fl++) {
                bsr_matrix *A = mk_convdiff(30, 10, bs[bi]);
                bsr_ilu_options o = opts(kind ? BSR_ILU2 : BSR_ILU0, 1e-2);
                bsr_order_options_default(&o.order, BSR_ORDER_ND);
                o.order.depth = 3;
                o.order.leafnd = kind;
                o.prec = fl ? BSR_FLOAT : BSR_DOUBLE;
                bsr_ilu *F = NULL;
                BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
                CU_ASSERT(F->tree_ok);
                const int64_t N = (int64_t)A->nbrows * A->b;
                bsr_multivec *X, *Y1, *Y, *X2, *Y2, *Z2;
                bsr_multivec_create(&X, N, 1, BSR_DOUBLE);
                bsr_multivec_create(&Y1, N, 1, BSR_DOUBLE);
                bsr_multivec_create(&Y, N, 1, BSR_DOUBLE);
                bsr_multivec_create(&X2, N, 2, BSR_DOUBLE);
                bsr_multivec_create(&Y2, N, 2, BSR_DOUBLE);
                bsr_multivec_create(&Z2, N, 2, BSR_DOUBLE);
                bsr_multivec_random(X, 23 + bi);
                bsr_multivec_random(X2, 29 + bi);
                const double *y1 = bsr_multivec_cdata(Y1), *y = bsr_multivec_cdata(Y);
                omp_set_num_threads(1);
                const int before = bsr_trsv_tree_sweeps;
                BSR_ASSERT_OK(bsr_ilu_apply(F, X, Y1));
                BSR_ASSERT_OK(bsr_ilu_apply(F, X2, Y2));
                CU_ASSERT_EQUAL(bsr_trsv_tree_sweeps, before);   /* one thread: the natural sweeps */
                int same = 1;
                static const int nts[] = {2, 3, 7};
                for (int t = 0; t < 3; t++) {
                    omp_set_num_threads(nts[t]);
                    const int runs = bsr_trsv_tree_sweeps;
                    BSR_ASSERT_OK(bsr_ilu_apply(F, X, Y));
                    BSR_ASSERT_OK(bsr_ilu_apply(F, X2, Z2));
                    CU_ASSERT_EQUAL(bsr_trsv_tree_sweeps, runs + 2);
                    same &= !memcmp(y, y1, sizeof(double) * (size_t)N) && bsr_test_same_bits(Z2, Y2);
                }
                if (!same) printf("\n  b = %d, %s, %s: the tree sweep differs", bs[bi], kind ? "ILU2" : "ILU(0)",
                                  fl ? "float" : "double");
                CU_ASSERT(same);
                bsr_multivec_destroy(X); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y);
                bsr_multivec_destroy(X2); bsr_multivec_destroy(Y2); bsr_multivec_destroy(Z2);
                bsr_ilu_destroy(F);
                bsr_matrix_destroy(A);
            }
    bsr_team_force(0);
    omp_set_num_threads(nt0);
}

/* The apply of one double vector fuses the gather and the scatter into the
 * natural-order solves: its result equals, bit for bit, each column of a
 * two-column apply (the separate gather, solves and scatter), in place too,
 * under natural and RCM orders, with and without matching (row and column
 * scalings, the gather's rsrc), for ILU(0) and ILU2 and b = 1, 3, 4. */
static void test_apply_fused(void)
{
    static const int bs[] = {1, 3, 4, 5};   /* 5: with AVX, its own row kernel */
    int cases = 0;
    for (int bi = 0; bi < 4; bi++)
        for (int kind = 0; kind < 2; kind++)
            for (int ord = 0; ord < 2; ord++)
                for (int match = 0; match < 2; match++) {
                    bsr_matrix *A = mk_convdiff(24, 10, bs[bi]);
                    /* rows and columns of uneven weights: the matching's scalings are not 1 */
                    const int bb = A->b * A->b;
                    for (int i = 0; i < A->nbrows; i++)
                        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                            for (int e = 0; e < bb; e++)
                                ((double *)A->val)[(size_t)p * bb + e] *= (1.0 + i % 7) * (1.0 + 0.3 * (A->colind[p] % 5));
                    bsr_ilu_options o = opts(kind ? BSR_ILU2 : BSR_ILU0, 1e-2);
                    o.order.kind = ord ? BSR_ORDER_RCM : BSR_ORDER_NATURAL;
                    o.match = match ? BSR_MATCH_MPT : BSR_MATCH_NONE;
                    bsr_ilu *F = NULL;
                    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
                    const int64_t N = (int64_t)A->nbrows * A->b;
                    bsr_multivec *X, *Y, *X2, *Y2;
                    bsr_multivec_create(&X, N, 1, BSR_DOUBLE);
                    bsr_multivec_create(&Y, N, 1, BSR_DOUBLE);
                    bsr_multivec_create(&X2, N, 2, BSR_DOUBLE);
                    bsr_multivec_create(&Y2, N, 2, BSR_DOUBLE);
                    bsr_multivec_random(X, 17 + cases);
                    const double *x = bsr_multivec_cdata(X);
                    double *x2 = bsr_multivec_data(X2);
                    for (int64_t e = 0; e < N; e++) x2[2 * e] = x2[2 * e + 1] = x[e];
                    BSR_ASSERT_OK(bsr_ilu_apply(F, X, Y));
                    BSR_ASSERT_OK(bsr_ilu_apply(F, X2, Y2));
                    const double *y = bsr_multivec_cdata(Y), *y2 = bsr_multivec_cdata(Y2);
                    int same = 1;
                    for (int64_t e = 0; e < N; e++)
                        same &= !memcmp(&y[e], &y2[2 * e], sizeof(double)) && !memcmp(&y[e], &y2[2 * e + 1], sizeof(double));
                    BSR_ASSERT_OK(bsr_ilu_apply(F, X, X));   /* in place */
                    same &= !memcmp(x, y, sizeof(double) * N);
                    if (!same) printf("\n  b = %d, %s, %s, match %d: fused apply differs", bs[bi], kind ? "ILU2" : "ILU(0)",
                                      ord ? "rcm" : "natural", match);
                    CU_ASSERT(same);
                    /* the case is not trivial: M^{-1} x differs from x */
                    CU_ASSERT(memcmp(y, x2, sizeof(double)) != 0 || memcmp(y + N - 1, x2 + 2 * (N - 1), sizeof(double)) != 0);
                    cases++;
                    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
                    bsr_multivec_destroy(X2); bsr_multivec_destroy(Y2);
                    bsr_ilu_destroy(F);
                    bsr_matrix_destroy(A);
                }
    CU_ASSERT_EQUAL(cases, 32);
}

/* Real matrices ($BSR_REAL_DIR, square, up to 3e5 unknowns): ILU(0) and
 * ILU2(1e-2) under ND either factor or fail with a status and a message;
 * serial = parallel bit for bit; refactor = setup; apply is finite. */
static void test_real_matrices(void)
{
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20);
    for (int fi = 0; fi < nf; fi++) {
        const char *name = strrchr(files[fi], '/') + 1;
        bsr_matrix *A = NULL;
        if (bsr_mm_read(files[fi], 0, BSR_DOUBLE, &A, NULL) != BSR_OK) continue;   /* rhs files, non-square */
        if (A->nbrows != A->nbcols || (int64_t)A->nbrows * A->b > 300000) { bsr_matrix_destroy(A); continue; }
        for (int kind = BSR_ILU0; kind <= BSR_ILU2; kind += 2) {
            bsr_ilu_options o;
            bsr_ilu_options_default(&o, kind);
            o.parallel = 0;
            bsr_ilu *F = NULL, *G = NULL;
            bsr_status s = bsr_ilu_setup(A, &o, &F);
            if (s) {
                printf("\n  %s %s: %s: %s", name, kind ? "ILU2" : "ILU(0)", bsr_status_string(s), bsr_last_error());
                CU_ASSERT(s == BSR_ERR_SINGULAR && bsr_last_error()[0]);
                continue;
            }
            o.parallel = 1;
            BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &G));
            CU_ASSERT(same_factors(F, G));
            BSR_ASSERT_OK(bsr_ilu_refactor(G, A));
            CU_ASSERT(same_factors(F, G));
            bsr_ilu_stats st;
            bsr_ilu_get_stats(F, &st);
            double q = precond_quality(A, F);
            CU_ASSERT(isfinite(q));
            printf("\n  %s %s: fill %.2f, reg %d, q %.3g", name, kind ? "ILU2" : "ILU(0)", st.fill,
                   st.pivots_regularized, q);
            bsr_ilu_destroy(F); bsr_ilu_destroy(G);
        }
        bsr_matrix_destroy(A);
    }
    bsr_test_free_list(files, nf);
    bsr_team_force(0);
}

/* ---- setup arrays independent of the thread count (setup2) ---------------- */

/* Schedules equal in every array and figure. */
static int same_levels(const bsr_levels *a, const bsr_levels *b)
{
    return a->n == b->n && a->nlevels == b->nlevels && a->max_width == b->max_width &&
           a->mean_width == b->mean_width && bsr_test_same_ints(a->level_ptr, b->level_ptr, (size_t)a->nlevels + 1) &&
           bsr_test_same_ints(a->rows, b->rows, (size_t)a->n) && bsr_test_same_ints(a->level_of, b->level_of, (size_t)a->n);
}

/* lv is M's schedule by definition: level(i) = 1 + the largest level of the
 * rows it reads, rows sorted by (level, row), level_ptr and max_width. */
static int levels_exact(const bsr_matrix *M, int upper, const bsr_levels *lv)
{
    const int n = M->nbrows;
    int ok = lv->n == n && lv->level_ptr[0] == 0 && lv->level_ptr[lv->nlevels] == n, width = 0;
    for (int i = 0; ok && i < n; i++) {
        int l = 0;
        for (int p = M->rowptr[i]; p < M->rowptr[i + 1]; p++) {
            int j = M->colind[p];
            if ((upper ? j > i : j < i) && lv->level_of[j] + 1 > l) l = lv->level_of[j] + 1;
        }
        ok = lv->level_of[i] == l;
    }
    for (int l = 0; ok && l < lv->nlevels; l++) {
        int w = lv->level_ptr[l + 1] - lv->level_ptr[l];
        if (w > width) width = w;
        for (int p = lv->level_ptr[l]; ok && p < lv->level_ptr[l + 1]; p++)
            ok = lv->level_of[lv->rows[p]] == l && (p == lv->level_ptr[l] || lv->rows[p - 1] < lv->rows[p]);
    }
    return ok && width == lv->max_width;
}

/* Map of A, L/U patterns, rows and schedules of two symbolic setups equal. */
static int same_symbolic(const bsr_ilu *F, const bsr_ilu *G)
{
    const int n = F->n;
    int ok = G->n == n && F->nnzbA == G->nnzbA && F->L->nnzb == G->L->nnzb && F->U->nnzb == G->U->nnzb;
    ok = ok && bsr_test_same_ints(F->ap, G->ap, (size_t)n + 1) && bsr_test_same_ints(F->ac, G->ac, (size_t)F->nnzbA) &&
         bsr_test_same_ints(F->asrc, G->asrc, (size_t)F->nnzbA);
    ok = ok && bsr_test_same_ints(F->L->rowptr, G->L->rowptr, (size_t)n + 1) && bsr_test_same_ints(F->U->rowptr, G->U->rowptr, (size_t)n + 1) &&
         bsr_test_same_ints(F->L->colind, G->L->colind, (size_t)F->L->nnzb) && bsr_test_same_ints(F->U->colind, G->U->colind, (size_t)F->U->nnzb);
    ok = ok && !F->rows == !G->rows;
    for (int k = 0; ok && F->rows && k < n; k++) {
        const ilu_row_t *a = &F->rows[k], *b = &G->rows[k];
        ok = a->nl == b->nl && a->nu == b->nu && a->lcol - F->L->colind == b->lcol - G->L->colind &&
             a->ucol - F->U->colind == b->ucol - G->U->colind && a->lcol == F->L->colind + F->L->rowptr[k] &&
             a->ucol == F->U->colind + F->U->rowptr[k] && a->ucol[0] == k;
    }
    return ok && same_levels(F->lvL, G->lvL) && same_levels(F->lvU, G->lvU);
}

/* ILU(0) setup of A under ordering kind with nt threads, symbolic only or not. */
static bsr_ilu *symbolic_setup(const bsr_matrix *A, bsr_order_kind kind, int nt, int full)
{
    omp_set_num_threads(nt);
    if (!full) return bsr_test_ilu0_symbolic(A, kind);
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    bsr_order_options_default(&o.order, kind);
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    return F;
}

/* build_map, ilu_symbolic0 and bsr_levels_build give the same arrays with 1
 * and several threads (their parallel paths forced at these sizes: bsr_team_force),
 * on a stencil (few levels: the level sort runs by chunks), an irregular
 * random pattern, and ND / RCM orderings, symbolic only and (stencil) with
 * the factors; the schedules are the exact ones. */
static void test_symbolic_threads(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:20:3", BSR_DOUBLE, &P));
    bsr_matrix *R = bsr_test_irregular_matrix(9000, 2, 7);
    const bsr_matrix *mats[] = {P.A, R};
    const bsr_order_kind kinds[] = {BSR_ORDER_NATURAL, BSR_ORDER_ND, BSR_ORDER_RCM};
    for (int m = 0; m < 3; m++) {   /* symbolic only: stencil, random; full setup: stencil */
        const bsr_matrix *A = mats[m & 1];
        const int full = m == 2;
        CU_ASSERT_FATAL(A && A->nbrows >= 2 * BSR_PAR_ROWS);
        for (int o = 0; o < 3; o++) {
            bsr_ilu *F = symbolic_setup(A, kinds[o], 1, full);
            for (int t = 2; t <= 5; t += 3) {
                bsr_ilu *G = symbolic_setup(A, kinds[o], t, full);
                CU_ASSERT(F && G && same_symbolic(F, G));
                if (full) { CU_ASSERT(same_factors(F, G)); }
                bsr_ilu_destroy(G);
            }
            if (!F) continue;
            CU_ASSERT(levels_exact(F->L, 0, F->lvL));
            CU_ASSERT(levels_exact(F->U, 1, F->lvU));
            bsr_levels *sl = NULL, *su = NULL;   /* the pair equals two single builds */
            BSR_ASSERT_OK(bsr_levels_build(F->L, 0, &sl));
            BSR_ASSERT_OK(bsr_levels_build(F->U, 1, &su));
            CU_ASSERT(same_levels(sl, F->lvL) && same_levels(su, F->lvU));
            bsr_levels_free(sl); bsr_levels_free(su);
            if (m == 0 && o == 0) { CU_ASSERT(F->n >= (int64_t)64 * (F->lvL->nlevels + 1)); }  /* chunked sort ran */
            if (full) { CU_ASSERT(F->rows && F->aval && F->piv && F->dl && F->scale_left); }
            else { CU_ASSERT(!F->rows && !F->aval && !F->piv && !F->dl && !F->scale_left); }   /* symbolic only: no numbers */
            bsr_ilu_destroy(F);
        }
    }
    /* a chain (one row per level): the level sort's serial path */
    const int nc = 3 * BSR_PAR_ROWS;
    int *rp = malloc(sizeof(int) * (nc + 1)), *ci = malloc(sizeof(int) * 2 * nc);
    double *v = calloc((size_t)2 * nc, sizeof(double));
    rp[0] = 0;
    for (int i = 0; i < nc; i++) {
        int p = rp[i];
        if (i) ci[p++] = i - 1;
        v[p] = 1.0;
        ci[p++] = i;
        rp[i + 1] = p;
    }
    bsr_matrix *C = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&C, nc, nc, 1, rp, ci, v, BSR_DOUBLE, 0));
    bsr_levels *l1 = NULL, *l4 = NULL;
    omp_set_num_threads(1);
    BSR_ASSERT_OK(bsr_levels_build(C, 0, &l1));
    omp_set_num_threads(4);
    BSR_ASSERT_OK(bsr_levels_build(C, 0, &l4));
    CU_ASSERT(l1 && l4 && l1->nlevels == nc && same_levels(l1, l4) && levels_exact(C, 0, l4));
    bsr_levels_free(l1); bsr_levels_free(l4);
    bsr_matrix_destroy(C);
    free(rp); free(ci); free(v);
    bsr_matrix_destroy(R);
    bsr_problem_free(&P);
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

/* Diagonal pattern of n rows where row i holds column col[i] (-1: empty row). */
static bsr_matrix *mk_cols(int n, const int *col)
{
    int *rp = malloc(sizeof(int) * (n + 1)), *ci = malloc(sizeof(int) * (n + 1));
    double *v = malloc(sizeof(double) * (n + 1));
    rp[0] = 0;
    for (int i = 0; i < n; i++) {
        if (col[i] >= 0) { ci[rp[i]] = col[i]; v[rp[i]] = 1.0; }
        rp[i + 1] = rp[i] + (col[i] >= 0);
    }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, 1, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    return A;
}

/* The parallel map names the smallest empty row, then the smallest empty
 * column, as the serial sweep did, whatever the thread count. */
static void test_map_errors_threads(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* the parallel paths at these small sizes */
    const int n = 4 * BSR_PAR_ROWS;
    int *col = malloc(sizeof(int) * n);
    for (int e = 0; e < 2; e++) {
        for (int i = 0; i < n; i++) col[i] = i;
        if (e == 0) { col[n - 7] = col[n / 2 + 1] = -1; col[n - 3] = n / 2 + 1; }   /* rows n/2+1, n-7 empty */
        else { col[n / 3] = n / 3 + 1; col[n - 5] = n - 4; }                       /* columns n/3, n-5 empty */
        bsr_matrix *A = mk_cols(n, col);
        char want[128];
        snprintf(want, sizeof want, e ? "block column %d of A is empty" : "block row %d of A is empty", e ? n / 3 : n / 2 + 1);
        for (int t = 1; t <= 4; t += 3) {
            bsr_ilu_options o;
            bsr_ilu_options_default(&o, BSR_ILU0);
            bsr_order_options_default(&o.order, BSR_ORDER_NATURAL);
            omp_set_num_threads(t);
            bsr_ilu *F = NULL;
            CU_ASSERT_EQUAL(bsr_ilu_setup(A, &o, &F), BSR_ERR_SINGULAR);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
            CU_ASSERT_PTR_NULL(F);
        }
        bsr_matrix_destroy(A);
    }
    free(col);
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

/* Row r of A gets another column in place of one of its off-diagonal ones
 * (columns kept ascending; the values are left as they are). */
static void move_column(bsr_matrix *A, int r)
{
    const int p0 = A->rowptr[r], p1 = A->rowptr[r + 1];
    for (int c = 0; c < A->nbcols; c++) {
        int there = 0;
        for (int p = p0; p < p1; p++) there |= A->colind[p] == c;
        if (there) continue;
        int p = p0;
        while (A->colind[p] == r) p++;   /* an off-diagonal block (rows hold >= 2) */
        A->colind[p] = c;
        for (int q = p0 + 1; q < p1; q++)   /* insertion sort */
            for (int t = q; t > p0 && A->colind[t - 1] > A->colind[t]; t--) {
                int x = A->colind[t]; A->colind[t] = A->colind[t - 1]; A->colind[t - 1] = x;
            }
        return;
    }
}

/* A refactor on another pattern (the same block count) is refused, naming
 * the first block row in factor order that differs, at any thread count
 * (one chunk of the check, and two: 4913 rows, the rows in different ones). */
static void refactor_pattern_threads(const char *spec)
{
    const int nt = omp_get_max_threads();
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &P));
    bsr_matrix *A = P.A;
    const int n = A->nbrows;
    for (int ord = 0; ord < 2; ord++) {
        bsr_ilu_options o = opts(BSR_ILU0, 0.01);
        o.order.kind = ord ? BSR_ORDER_RCM : BSR_ORDER_NATURAL;
        bsr_ilu *F = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
        BSR_ASSERT_OK(bsr_ilu_refactor(F, A));   /* the same pattern passes */
        bsr_matrix *A2 = NULL;
        BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &A2));
        const int r1 = n / 5, r2 = n - 9;
        move_column(A2, r1);
        move_column(A2, r2);
        /* the first in factor order */
        const int k1 = F->ord ? F->ord->iperm[r1] : r1, k2 = F->ord ? F->ord->iperm[r2] : r2;
        char want[96];
        snprintf(want, sizeof want, "block row %d differs", k1 < k2 ? r1 : r2);
        for (int t = 1; t <= 4; t += 3) {
            omp_set_num_threads(t);
            CU_ASSERT_EQUAL(bsr_ilu_refactor(F, A2), BSR_ERR_STRUCTURE);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
        }
        omp_set_num_threads(nt);
        bsr_matrix_destroy(A2);
        bsr_ilu_destroy(F);
    }
    bsr_problem_free(&P);
}

static void test_refactor_pattern_threads(void)
{
    bsr_team_force(1);   /* the parallel check at these sizes */
    refactor_pattern_threads("stencil3d:12:2");
    refactor_pattern_threads("stencil3d:17:1");
    bsr_team_force(0);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"exact limit tau1=0 (dense, banded)", test_exact_limit},
        {"ILU(0) exact when LU has no fill", test_ilu0_no_fill_exact},
        {"factor layout", test_factor_layout},
        {"b=1 equals scalar reference", test_b1_equals_scalar},
        {"b=2..5 ILUT/ILU2 equal a dense block reference", test_blocks_equal_reference},
        {"b=1..10 ILU(0) equals a dense block reference", test_ilu0_equals_reference},
        {"scaling and ILU(0) rows: b fixed = b variable = plain scaling, bit for bit", test_kernels_fixed_b},
        {"ILUT/ILU2 rows: b fixed = b variable, bit for bit (cap, refactor)", test_threshold_fixed_b},
        {"the cap's choice = its rule counted out (ties, infinities, NaN)", test_cap_select},
        {"ILU(0) b = 1 in one pass = the two passes, bit for bit, failures too", test_single_pass},
        {"error monotone in tau1, ILU2 beats ILUT", test_tau_monotone_and_ilu2_vs_ilut},
        {"statuses", test_statuses},
        {"refactor: frozen pattern, refresh = setup", test_refactor_frozen_and_refresh},
        {"frozen ILUT: LU = A on its pattern", test_frozen_ilut_identity},
        {"per-row cap, fill bound in one pass", test_cap_and_fill},
        {"ILUT/ILU2 symbolic_only: the same pattern, host factors refused", test_symbolic_only_threshold},
        {"symbolic value finished before any numbers; host numeric = setup", test_symbolic_value},
        {"ILU2 limits (tau2 = tau1, one row)", test_ilu2_limits},
        {"keep_pattern keeps A's blocks (ILUT: = ILU(0))", test_keep_pattern},
        {"refactor after a failed refactor", test_refactor_after_failure},
        {"float factors", test_float_factors},
        {"serial equals parallel (ND tree)", test_serial_equals_parallel},
        {"ND separators factored concurrently = serial", test_separators_concurrent},
        {"work bound (max_work): the same count and outcome on any thread count", test_work_bound},
        {"tau1 = 0 without a cap: the elimination tree's pattern = the rows', bit for bit", test_complete_pattern},
        {"serial equals parallel (no tree: concurrent rows, every kind)", test_serial_equals_levels},
        {"triangular solves S2 vs levels vs dense", test_trsv},
        {"apply with library levels", test_apply_levels},
        {"one-vector apply (gather, scatter fused) = the separate passes bit for bit", test_apply_fused},
        {"apply over the ND tree with a team (1 and 2 vectors, double and float) = one thread bit for bit",
         test_apply_tree},
        {"symbolic setup and levels: 1 thread = several", test_symbolic_threads},
        {"map errors name the smallest row/column at any thread count", test_map_errors_threads},
        {"refactor on another pattern: the first differing row at any thread count", test_refactor_pattern_threads},
        {"real matrices", test_real_matrices},
        {NULL, NULL}};
    return bsr_test_main("ilu", tests, argc, argv);
}
