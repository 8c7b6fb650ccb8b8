/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU block triangular solves and the device ILU (issue 6) against the CPU S2
 * reference (bsr_trsv_lower/upper, bsr_ilu_apply): every kernel (level
 * sync-free on sentinels / graph / per-launch / sync-free on flags, P21-P24) on ILU factors of random, stencil
 * and real matrices, natural / RCM / ND orderings, k = 1, 5, 9, 16, double,
 * float and mixed (float factors, double vectors); outputs NaN-poisoned on the
 * device; determinism; refactor; errors.  Skips (exit 77) without a GPU.
 * BSR_TEST_QUICK (sanitizer runs): b = 1, 4, 10, natural double and ND mixed,
 * k = 1 and 9, the tree kernels on ND only, fewer tuning variants; every
 * kernel, schedule and lane layout still runs. */
#include "harness.h"
#include "gpu_ilu.h"
#include "../kernels/trsv/trsv.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

typedef struct { bsr_trsv_kernel kernel; bsr_trsv_sched sched; const char *name; } kcase;
static const kcase kcases[] = {
    {BSR_TRSV_LEVEL, BSR_TRSV_SYNCFREE, "level/syncfree"}, {BSR_TRSV_LEVEL, BSR_TRSV_GRAPH, "level/graph"},
    {BSR_TRSV_LEVEL, BSR_TRSV_LAUNCH, "level/launch"},     {BSR_TRSV_LEVEL, BSR_TRSV_SYNCFLAGS, "level/syncflags"},
    {BSR_TRSV_P21, BSR_TRSV_SYNCFREE, "P21"},
    {BSR_TRSV_P22, BSR_TRSV_SYNCFREE, "P22"},              {BSR_TRSV_P23, BSR_TRSV_SYNCFREE, "P23"},
    {BSR_TRSV_P24, BSR_TRSV_SYNCFREE, "P24"}};
#define NKC ((int)(sizeof kcases / sizeof kcases[0]))
static const int ks[] = {1, 5, 9, 16};
#define NK ((int)(sizeof ks / sizeof ks[0]))
enum { MODE_DOUBLE, MODE_FLOAT, MODE_MIXED };
static const char *mode_name[] = {"double", "float", "mixed"};
static const bsr_order_kind orders[] = {BSR_ORDER_NATURAL, BSR_ORDER_RCM, BSR_ORDER_ND};
static const char *order_name[] = {"natural", "rcm", "nd"};
static uint64_t seed_counter = 1000;

static double tol_of(int mode) { return mode == MODE_DOUBLE ? 1e-10 : 2e-3; }
static const char *what_name[] = {"L", "U", "apply"};

/* A copy of factor M with every value moved by a relative delta, random signs. */
static bsr_matrix *perturbed(const bsr_matrix *M, double delta)
{
    bsr_matrix *P = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(M, bsr_matrix_precision(M), &P));
    const size_t nv = (size_t)bsr_matrix_nnzb(M) * bsr_matrix_block(M) * bsr_matrix_block(M);
    const int dbl = bsr_matrix_precision(M) == BSR_DOUBLE;
    const void *v0 = bsr_matrix_values(M);
    void *v = malloc(nv * (dbl ? sizeof(double) : sizeof(float)));
    for (size_t e = 0; e < nv; e++) {
        const double sc = 1 + (((uint64_t)e * 0x9E3779B97F4A7C15ull) >> 63 ? delta : -delta);
        if (dbl) ((double *)v)[e] = ((const double *)v0)[e] * sc;
        else ((float *)v)[e] = (float)(((const float *)v0)[e] * sc);
    }
    BSR_ASSERT_OK(bsr_matrix_set_values(P, v, BSR_STORED_ORDER));
    free(v);
    return P;
}

/* L^-1 X (what 0), U^-1 X (1) or U^-1 L^-1 X (2) on the host with factors L, U. */
static void host_chain(const bsr_matrix *L, const bsr_matrix *U, int what, const bsr_multivec *X, bsr_multivec *R)
{
    if (what == 0) { BSR_ASSERT_OK(bsr_trsv_lower(L, NULL, X, R)); return; }
    if (what == 1) { BSR_ASSERT_OK(bsr_trsv_upper(U, NULL, X, R)); return; }
    bsr_multivec *T = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&T, bsr_multivec_rows(X), bsr_multivec_cols(X), bsr_multivec_precision(X)));
    BSR_ASSERT_OK(bsr_trsv_lower(L, NULL, X, T));
    BSR_ASSERT_OK(bsr_trsv_upper(U, NULL, T, R));
    bsr_multivec_destroy(T);
}

/* The host reference of `what` (0: L, 1: U, 2: the whole preconditioner) on X, into R. */
static void host_ref(const bsr_ilu *F, const bsr_ilu_factors *f, int what, const bsr_multivec *X, bsr_multivec *R)
{
    if (what == 2) BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
    else host_chain(f->L, f->U, what, X, R);
}

/* Tolerances of the comparisons with the host reference, tol[what] (0: L,
 * 1: U, 2: the whole preconditioner): tol_of(mode), or more where the factors
 * amplify rounding so much that no other summation order (nor float factors)
 * can agree with the reference that closely.  A triangular solve's rounding is
 * a relative perturbation of the factors' values of a few units of roundoff
 * (its backward error), so the amplification is measured as how far the host
 * solves move, per unit, when every factor value moves by a relative delta
 * with random signs; the comparison allows 100 x amplification x the factors'
 * unit roundoff.  (The nested-dissection ILU(0) factors of the FIDAP matrices
 * e05r0000 and fasp_e05r0500 amplify by 1e15 and more: there no digit of the
 * result is determined, and the check says only that it is finite, and prints
 * so.) */
static void tols_measured(const bsr_ilu_factors *f, int mode, int64_t n, const char *name, const char *order,
                          double tol[3])
{
    const bsr_precision p = mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE;
    const double delta = p == BSR_DOUBLE ? 1e-10 : 1e-4, u = mode == MODE_DOUBLE ? 0x1p-53 : 0x1p-24;
    bsr_matrix *Lp = perturbed(f->L, delta), *Up = perturbed(f->U, delta);
    for (int what = 0; what < 3; what++) {
        bsr_multivec *X = NULL, *R = NULL, *Rp = NULL;
        BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, p));
        BSR_ASSERT_OK(bsr_multivec_create(&R, n, 1, p));
        BSR_ASSERT_OK(bsr_multivec_create(&Rp, n, 1, p));
        BSR_ASSERT_OK(bsr_multivec_random(X, seed_counter++));
        host_chain(f->L, f->U, what, X, R);
        host_chain(Lp, Up, what, X, Rp);
        const double amp = bsr_test_max_rel_err(Rp, R) / delta, t = 100 * amp * u;
        bsr_multivec_destroy(X); bsr_multivec_destroy(R); bsr_multivec_destroy(Rp);
        tol[what] = tol_of(mode);
        if (!(t > tol_of(mode))) continue;
        if (t >= 1 || amp * delta > 1e-2) {   /* no digit determined (or beyond the linear response) */
            printf("\n  [note] %s %s %s %s: the host solves amplify rounding in the factors %.2g-fold: "
                   "the result is determined to no digit, checked finite only\n", name, order, mode_name[mode],
                   what_name[what], amp);
            tol[what] = INFINITY;
        } else {
            printf("\n  [note] %s %s %s %s: the host solves amplify rounding in the factors %.2g-fold: compared to "
                   "%.2g\n", name, order, mode_name[mode], what_name[what], amp, t);
            tol[what] = t;
        }
    }
    bsr_matrix_destroy(Lp);
    bsr_matrix_destroy(Up);
}

/* Every kernel and k on the ILU(0) of A under ordering `ord`, precision `mode`;
 * renumber = storage option.  Reports the worst error per kernel. */
static void check_factors(const char *name, const bsr_matrix *A0, int oi, int mode, int renumber, int all_k)
{
    bsr_matrix *A = NULL;
    if (mode == MODE_FLOAT) BSR_ASSERT_OK(bsr_matrix_copy(A0, BSR_FLOAT, &A));
    else BSR_ASSERT_OK(bsr_matrix_copy(A0, BSR_DOUBLE, &A));
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_order_options_default(&io.order, orders[oi]);
    if (orders[oi] == BSR_ORDER_ND) io.order.depth = 3;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &io, &F));
    bsr_ilu_factors f;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    go.factor_float = mode == MODE_MIXED;
    go.renumber = renumber;
    bsr_gpu_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
    const int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    const bsr_precision vp = mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE;
    double tol[3];
    tols_measured(&f, mode, n, name, order_name[oi], tol);
    for (int c = 0; c < NKC; c++) {
        /* quick: the tree kernels where there is a tree (elsewhere one sequential CUDA block) */
        if (bsr_test_quick() && kcases[c].kernel != BSR_TRSV_LEVEL && orders[oi] != BSR_ORDER_ND) continue;
        bsr_status s = bsr_gpu_ilu_set_kernel(G, kcases[c].kernel, kcases[c].sched);
        if (renumber == 2 && kcases[c].kernel != BSR_TRSV_LEVEL) {
            /* full renumbering scatters the tree's row ranges: refused */
            CU_ASSERT_EQUAL(s, BSR_ERR_UNSUPPORTED);
            continue;
        }
        if (s != BSR_OK) fprintf(stderr, "\n  %s %s: %s\n", name, kcases[c].name, bsr_last_error());
        CU_ASSERT_EQUAL_FATAL(s, BSR_OK);
        double worst = 0;
        for (int ki = 0; ki < NK; ki++) {
            const int k = ks[ki];
            if (!all_k && k != 1 && k != 9) continue;
            for (int upper = 0; upper < 2; upper++) {
                bsr_multivec *X = bsr_test_dev_random(ctx, n, k, vp, seed_counter++), *Y = bsr_test_dev_poisoned(ctx, n, k, vp), *R = NULL;
                BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, vp));
                BSR_ASSERT_OK(bsr_gpu_ilu_trsv(G, upper, X, Y));
                CU_ASSERT(bsr_multivec_on_device(Y));
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
                host_ref(F, &f, upper, X, R);
                double e = bsr_test_max_rel_err(Y, R);
                if (!(e <= worst)) worst = e;
                if (!(isfinite(e) && e <= tol[upper]))
                    fprintf(stderr, "\n  %s %s %s %s k=%d %s: error %.3g\n", name, order_name[oi], mode_name[mode],
                            kcases[c].name, k, what_name[upper], e);
                CU_ASSERT(isfinite(e) && e <= tol[upper]);
                bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
            }
            /* the whole preconditioner: scaling + permutation + L + U */
            bsr_multivec *X = bsr_test_dev_random(ctx, n, k, vp, seed_counter++), *Y = bsr_test_dev_poisoned(ctx, n, k, vp), *R = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, vp));
            BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
            host_ref(F, &f, 2, X, R);
            double e = bsr_test_max_rel_err(Y, R);
            if (!(isfinite(e) && e <= tol[2]))
                fprintf(stderr, "\n  %s %s %s %s k=%d apply: error %.3g\n", name, order_name[oi], mode_name[mode],
                        kcases[c].name, k, e);
            CU_ASSERT(isfinite(e) && e <= tol[2]);
            bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
        }
        (void)worst;
    }
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

static void check_matrix(const char *name, const bsr_matrix *A, int all_k)
{
    const int quick = bsr_test_quick();
    for (int oi = 0; oi < 3; oi++)
        for (int mode = 0; mode < 3; mode++) {
            if (quick && !(oi == 0 && mode == MODE_DOUBLE) && !(oi == 2 && mode == MODE_MIXED)) continue;
            check_factors(name, A, oi, mode, 1, all_k);
        }
    /* original row storage (no level renumbering) */
    if (!quick) {
        check_factors(name, A, 0, MODE_DOUBLE, 0, 0);
        check_factors(name, A, 2, MODE_DOUBLE, 0, 0);
    }
    /* full renumbering of the unknowns in L's level order */
    for (int oi = 0; oi < 3; oi++)
        if (!quick || oi == 0) check_factors(name, A, oi, oi == 1 ? MODE_MIXED : MODE_DOUBLE, 2, all_k);
    if (!quick) check_factors(name, A, 0, MODE_FLOAT, 2, 0);
}

static void test_random(void)
{
    if (!bsr_test_have_gpu()) return;
    const int quick = bsr_test_quick();
    for (int b = 1; b <= 10; b++) {
        if (quick && b != 1 && b != 4 && b != 10) continue;
        const int nb = quick ? (b <= 4 ? 120 : 60) : b <= 4 ? 400 : 150;
        bsr_matrix *R = bsr_test_random_matrix(nb, nb, b, 0, 8, BSR_DOUBLE, 31 + b);
        bsr_matrix *A = bsr_test_dominant(R, 2.0, 0.0);
        char name[64];
        snprintf(name, sizeof name, "random b=%d", b);
        check_matrix(name, A, !quick && (b == 1 || b == 4 || b == 7 || b == 10));
        bsr_matrix_destroy(R);
        bsr_matrix_destroy(A);
    }
}

static void test_stencil(void)
{
    if (!bsr_test_have_gpu()) return;
    const char *specs[] = {"stencil3d:10:1", "stencil3d:8:4", "stencil3d:6:5", "stencil3d:5:9", "stencil3d:16:4"};
    for (int s = 0; s < 5; s++) {
        if (bsr_test_quick() && s != 1) continue;
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[s], BSR_DOUBLE, &P));
        check_matrix(specs[s], P.A, !bsr_test_quick());
        bsr_problem_free(&P);
    }
}

static void test_real(void)
{
    if (!bsr_test_have_gpu()) return;
    if (bsr_test_quick()) { BSR_TEST_SKIP("BSR_TEST_QUICK: real matrices left out"); return; }
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    for (int fi = 0; fi < nf && done < 4; fi++) {
        const char *path = files[fi];
        bsr_matrix *A = NULL;
        if (bsr_mm_read(path, 0, BSR_DOUBLE, &A, NULL) != BSR_OK || bsr_matrix_nbrows(A) > 200000 ||
            bsr_matrix_nbrows(A) != bsr_matrix_nbcols(A)) {
            bsr_matrix_destroy(A);
            continue;
        }
        /* real matrices may not admit a stable ILU(0): skip those the CPU refuses */
        bsr_ilu_options io;
        bsr_ilu *F = NULL;
        bsr_ilu_options_default(&io, BSR_ILU0);
        if (bsr_ilu_setup(A, &io, &F) != BSR_OK) {
            printf("\n  [skip] %s: CPU ILU(0) fails: %s\n", path, bsr_last_error());
            bsr_matrix_destroy(A);
            continue;
        }
        bsr_ilu_destroy(F);
        printf("\n  real %s (%d block rows, b=%d)\n", path, bsr_matrix_nbrows(A), bsr_matrix_block(A));
        for (int oi = 0; oi < 3; oi++) check_factors(path, A, oi, MODE_DOUBLE, 1, 0);
        check_factors(path, A, 2, MODE_MIXED, 1, 0);
        bsr_matrix_destroy(A);
        done++;
    }
    bsr_test_free_list(files, nf);
}

/* Full apply twice on the same input: identical bits (sync-free and graph). */
static void test_determinism(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(bsr_test_quick() ? "stencil3d:10:4" : "stencil3d:24:4", BSR_DOUBLE, &P));
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &io, &F));
    bsr_gpu_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, NULL, &G));
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 4;
    for (int s = 0; s < 2; s++) {
        BSR_ASSERT_OK(bsr_gpu_ilu_set_kernel(G, BSR_TRSV_LEVEL, s ? BSR_TRSV_GRAPH : BSR_TRSV_SYNCFREE));
        bsr_multivec *X = bsr_test_dev_random(ctx, n, 9, BSR_DOUBLE, seed_counter++), *Y1 = bsr_test_dev_poisoned(ctx, n, 9, BSR_DOUBLE), *Y2 = bsr_test_dev_poisoned(ctx, n, 9, BSR_DOUBLE);
        for (int rep = 0; rep < 3; rep++) {
            BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, rep ? Y2 : Y1));
            if (rep) {
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y1));
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y2));
                CU_ASSERT(memcmp(bsr_multivec_data(Y1), bsr_multivec_data(Y2), (size_t)n * 9 * sizeof(double)) == 0);
            }
        }
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
    }
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

/* Y = T^{-1} X (T: G's lower or upper triangle) on the device under tuning
 * tu, downloaded and checked against the CPU's R within mode's tolerance
 * (what names the case in a failure); the caller frees Y. */
static bsr_multivec *tuned_solve(bsr_gpu_ilu *G, const bsr_trsv_tuning *tu, int upper, const bsr_multivec *X,
                                 const bsr_multivec *R, int64_t n, int k, int mode, const char *what)
{
    bsr_trsv_set_tuning(tu);
    bsr_multivec *Y = bsr_test_dev_poisoned(ctx, n, k, BSR_DOUBLE);
    BSR_ASSERT_OK(bsr_gpu_ilu_trsv(G, upper, X, Y));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
    const double e = bsr_test_max_rel_err(Y, R);
    if (!(e <= tol_of(mode))) fprintf(stderr, "\n  %s: error %.3g\n", what, e);
    CU_ASSERT(e <= tol_of(mode));
    return Y;
}

/* The first solution of a case kept in *Y0; each later one must have its
 * bits (one sum order a row whatever the schedule) and is freed. */
static void same_bits(bsr_multivec **Y0, bsr_multivec *Y, int64_t n, int k)
{
    if (!*Y0) { *Y0 = Y; return; }
    CU_ASSERT(memcmp(bsr_multivec_data(*Y0), bsr_multivec_data(Y), (size_t)n * k * sizeof(double)) == 0);
    bsr_multivec_destroy(Y);
}

/* The sync-free kernel's tuning variants (bsr_trsv_tuning: persist 0/1/2,
 * team, wide, grab, sleep, pipe, pair, rr; see kernels/trsv/trsv_level.cuh) against the CPU solves, on random b = 1, 4,
 * 5 and stencil factors, natural and ND, k = 1, 5, 9, 16, double and mixed,
 * renumber storage and full; the schedules of one lane layout (PERSIST) must
 * give identical bits, since each row is summed in the same order.  Quick:
 * random b = 4 in ND mixed and the stencil in natural double (full
 * renumbering), k = 1 with teams auto/8, k = 9 (random b = 4) with every
 * wide layout, every schedule. */
static void test_variants(void)
{
    if (!bsr_test_have_gpu()) return;
    static const char *const teams[] = {"", "4", "8", "32"}, *const wides[] = {"1", "2", "3", "4"};
    bsr_matrix *mats[4];
    for (int m = 0; m < 3; m++) {
        const int b = m == 0 ? 1 : m == 1 ? 4 : 5;
        bsr_matrix *R = bsr_test_random_matrix(300, 300, b, 0, 8, BSR_DOUBLE, 77 + b);
        mats[m] = bsr_test_dominant(R, 2.0, 0.0);
        bsr_matrix_destroy(R);
    }
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(bsr_test_quick() ? "stencil3d:8:4" : "stencil3d:14:4", BSR_DOUBLE, &P));
    mats[3] = P.A;
    const int quick = bsr_test_quick();
    for (int m = 0; m < 4; m++)
        for (int cfg = 0; cfg < 4; cfg++) {
            if (quick && !(m == 1 && cfg == 3) && !(m == 3 && cfg == 0)) continue;
            const int oi = cfg & 1 ? 2 : 0, mode = cfg & 2 ? MODE_MIXED : MODE_DOUBLE;
            bsr_ilu_options io;
            bsr_ilu_options_default(&io, BSR_ILU0);
            bsr_order_options_default(&io.order, orders[oi]);
            if (orders[oi] == BSR_ORDER_ND) io.order.depth = 3;
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(mats[m], &io, &F));
            bsr_ilu_factors f;
            BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
            bsr_gpu_ilu_options go;
            bsr_gpu_ilu_options_default(&go);
            go.factor_float = mode == MODE_MIXED;
            go.renumber = m == 3 && oi == 0 ? 2 : 1;
            bsr_gpu_ilu *G = NULL;
            BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
            BSR_ASSERT_OK(bsr_gpu_ilu_set_kernel(G, BSR_TRSV_LEVEL, BSR_TRSV_SYNCFREE));
            const int64_t n = (int64_t)bsr_matrix_nbrows(mats[m]) * bsr_matrix_block(mats[m]);
            for (int ki = 0; ki < NK; ki++)
                for (int upper = 0; upper < 2; upper++) {
                    const int k = ks[ki];
                    if (quick && k != 1 && (k != 9 || m != 1)) continue;   /* k = 9: random b = 4 */
                    bsr_multivec *X = bsr_test_dev_random(ctx, n, k, BSR_DOUBLE, seed_counter++), *R = NULL;
                    BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, BSR_DOUBLE));
                    if (upper) BSR_ASSERT_OK(bsr_trsv_upper(f.U, NULL, X, R));
                    else BSR_ASSERT_OK(bsr_trsv_lower(f.L, NULL, X, R));
                    for (int t = 0; t < 4; t++)
                        for (int w = 0; w < 4; w++) {
                            /* quick: k = 1 (b*k <= 32, no wide layout) teams auto and 8; k = 9
                             * (one team a warp) every wide layout */
                            if (quick && (k == 1 ? (t != 0 && t != 2) || w != 0 : t != 0)) continue;
                            bsr_multivec *Y0 = NULL;
                            /* 3: persistent by ticket, 4 chunks a ticket, no sleep; 4: persistent
                             * by ticket without the row pipeline; 5: pipelined, every team
                             * voting alone (by default the teams of a warp vote together within a level);
                             * 6, 7: pipelined with chunks by ticket / round robin (by default round
                             * robin, tickets only when the cooperative launch is refused) */
                            for (int ps = 0; ps < 8; ps++) {
                                /* the kernels' tuning (bsr_trsv_set_tuning: they read no
                                 * environment; -1 keeps a rule) */
                                const bsr_trsv_tuning tu = {.team = t ? atoi(teams[t]) : -1,
                                                            .persist = ps < 3 ? ps : 2,
                                                            .wide = atoi(wides[w]),
                                                            .grab = ps == 3 ? 4 : -1,
                                                            .sleep = ps == 3 ? 0 : -1,
                                                            .pipe = ps == 4 ? 0 : -1,
                                                            .pair = ps == 5 ? 0 : -1,
                                                            .rr = ps == 6 ? 0 : ps == 7 ? 1 : -1,
                                                            .tail = -1};
                                char what[160];
                                snprintf(what, sizeof what, "variants m=%d %s %s k=%d %s persist=%d team=%s wide=%s", m,
                                         order_name[oi], mode_name[mode], k, upper ? "U" : "L", ps, teams[t], wides[w]);
                                same_bits(&Y0, tuned_solve(G, &tu, upper, X, R, n, k, mode, what), n, k);
                            }
                            bsr_multivec_destroy(Y0);
                        }
                    bsr_multivec_destroy(X);
                    bsr_multivec_destroy(R);
                }
            bsr_trsv_set_tuning(NULL);
            bsr_gpu_ilu_destroy(G);
            bsr_ilu_destroy(F);
        }
    for (int m = 0; m < 3; m++) bsr_matrix_destroy(mats[m]);
    bsr_problem_free(&P);
}

/* The chain of long rows at the end of L's level order and the start of U's
 * (a nested-dissection factor's top separators) solved one CUDA block a row
 * (tail_kernel): against the CPU solve, with and without it (tuning tail 0),
 * and bit for bit under every sync-free schedule of the rows before it
 * (one CUDA block per chunk, persistent round robin, pipelined by ticket or
 * round robin); b = 1, 2, 5, double and mixed, k = 1 (and 5: no tail). */
static void test_tail(void)
{
    if (!bsr_test_have_gpu()) return;
    static const int bs[] = {1, 2, 5};
    for (int m = 0; m < 3; m++)
        for (int mode = MODE_DOUBLE; mode <= MODE_MIXED; mode += MODE_MIXED - MODE_DOUBLE) {
            bsr_matrix *A = bsr_test_chain_tail_matrix(900, 160, bs[m], 4242 + m);
            bsr_ilu *F = bsr_test_ilu0(A, BSR_ORDER_NATURAL);
            bsr_ilu_factors f;
            BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
            bsr_gpu_ilu_options go;
            bsr_gpu_ilu_options_default(&go);
            go.factor_float = mode == MODE_MIXED;
            bsr_gpu_ilu *G = NULL;
            BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
            BSR_ASSERT_OK(bsr_gpu_ilu_set_kernel(G, BSR_TRSV_LEVEL, BSR_TRSV_SYNCFREE));
            /* the case under test: L's tail after a wide level, U's from its start */
            const bsr_trsv_tri *TL = bsr_gpu_ilu_tri(G, 0), *TU = bsr_gpu_ilu_tri(G, 1);
            CU_ASSERT(TL->tail >= 100 && TL->tail < TL->n);
            CU_ASSERT(TU->tail >= 100);
            const int64_t n = (int64_t)bsr_matrix_nbrows(A) * bs[m];
            for (int k = 1; k <= 5; k += 4)
                for (int upper = 0; upper < 2; upper++) {
                    bsr_multivec *X = bsr_test_dev_random(ctx, n, k, BSR_DOUBLE, seed_counter++), *R = NULL, *Y0 = NULL;
                    BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, BSR_DOUBLE));
                    if (upper) BSR_ASSERT_OK(bsr_trsv_upper(f.U, NULL, X, R));
                    else BSR_ASSERT_OK(bsr_trsv_lower(f.L, NULL, X, R));
                    for (int tail = 0; tail < 2; tail++)
                        for (int ps = 0; ps < 4; ps++) {
                            const bsr_trsv_tuning tu = {.team = -1, .persist = ps < 3 ? ps : 2, .wide = -1, .grab = -1,
                                                        .sleep = -1, .pipe = -1, .pair = -1, .rr = ps == 3 ? 0 : -1,
                                                        .tail = tail ? -1 : 0};
                            char what[128];
                            snprintf(what, sizeof what, "tail b=%d %s k=%d %s tail=%d persist=%d", bs[m], mode_name[mode],
                                     k, upper ? "U" : "L", tail, ps);
                            bsr_multivec *Y = tuned_solve(G, &tu, upper, X, R, n, k, mode, what);
                            if (tail) same_bits(&Y0, Y, n, k);
                            else bsr_multivec_destroy(Y);   /* another sum order in the tail: the tolerance only */
                        }
                    bsr_multivec_destroy(Y0); bsr_multivec_destroy(X); bsr_multivec_destroy(R);
                }
            bsr_trsv_set_tuning(NULL);
            bsr_gpu_ilu_destroy(G);
            bsr_ilu_destroy(F);
            bsr_matrix_destroy(A);
        }
}

/* The gather inside the L solve: where the pipelined kernel solves L (b*k
 * <= 8, narrow levels) it permutes (an ordering) and scales each row's
 * right-hand side itself; every other path gathers S P x first (tuning pipe
 * = 0: the level kernel's gather; the graph schedule: the apply's).  The
 * sync-free paths must give the same bits (in place too), all the host's
 * apply within tolerance: natural and centre order, b = 1, 3 (random), 4, 5
 * (stencils), k = 1 and 5, double, float and mixed. */
static void test_scaled_apply(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_matrix *mats[4];
    bsr_problem P[3];
    static const char *const gens[] = {"stencil3d:9:1", "stencil3d:8:4", "stencil3d:7:5"};
    for (int g = 0; g < 3; g++) {
        BSR_ASSERT_OK(bsr_generate(gens[g], BSR_DOUBLE, &P[g]));
        mats[g] = P[g].A;
    }
    bsr_matrix *R3 = bsr_test_random_matrix(200, 200, 3, 0, 6, BSR_DOUBLE, 303);
    mats[3] = bsr_test_dominant(R3, 2.0, 0.0);
    bsr_matrix_destroy(R3);
    int fused_cases = 0;
    for (int om = 0; om < 8; om++) /* natural, then centre order; four matrices */
        for (int mode = 0; mode < 3; mode++) {
            const int ord = om / 4, m = om % 4;
            bsr_matrix *A = NULL;
            BSR_ASSERT_OK(bsr_matrix_copy(mats[m], mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE, &A));
            bsr_ilu *F = bsr_test_ilu0(A, ord ? BSR_ORDER_CENTER : BSR_ORDER_NATURAL);
            bsr_ilu_factors f;
            BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
            CU_ASSERT_PTR_NOT_NULL(f.scale_left); /* the case under test */
            bsr_gpu_ilu_options go;
            bsr_gpu_ilu_options_default(&go);
            go.factor_float = mode == MODE_MIXED;
            bsr_gpu_ilu *G = NULL;
            BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
            const int b = bsr_matrix_block(A);
            const int64_t n = (int64_t)bsr_matrix_nbrows(A) * b;
            const bsr_precision vp = mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE;
            const size_t vs = mode == MODE_FLOAT ? sizeof(float) : sizeof(double);
            for (int k = 1; k <= 5; k += 4) {
                fused_cases += b * k <= 8;
                const uint64_t sd = seed_counter++;
                bsr_multivec *X = bsr_test_dev_random(ctx, n, k, vp, sd), *R = NULL, *Y0 = NULL;
                BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, vp));
                BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
                /* 0: default (fused where the pipelined kernel runs), 1: the level
                 * kernel's gather, 2: the apply's gather (graph), 3: in place */
                for (int path = 0; path < 4; path++) {
                    const bsr_trsv_tuning tu = {.team = -1, .persist = -1, .wide = -1, .grab = -1, .sleep = -1,
                                                .pipe = path == 1 ? 0 : -1, .pair = -1, .rr = -1, .tail = -1};
                    bsr_trsv_set_tuning(&tu);
                    BSR_ASSERT_OK(bsr_gpu_ilu_set_kernel(G, BSR_TRSV_LEVEL, path == 2 ? BSR_TRSV_GRAPH : BSR_TRSV_SYNCFREE));
                    bsr_multivec *Y = NULL;
                    if (path == 3) {
                        Y = bsr_test_dev_random(ctx, n, k, vp, sd);
                        BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, Y, Y));
                    } else {
                        Y = bsr_test_dev_poisoned(ctx, n, k, vp);
                        BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
                    }
                    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
                    const double e = bsr_test_max_rel_err(Y, R);
                    if (!(e <= tol_of(mode)))
                        fprintf(stderr, "\n  scaled apply ord=%d m=%d %s k=%d path %d: error %.3g\n", ord, m, mode_name[mode], k, path, e);
                    CU_ASSERT(e <= tol_of(mode));
                    if (!Y0) { Y0 = Y; continue; }
                    /* the per-level launches may take other lanes per row than the
                     * sync-free kernels (b = 1), so another sum order: the
                     * tolerance above only */
                    if (path == 2) { bsr_multivec_destroy(Y); continue; }
                    const int same = memcmp(bsr_multivec_data(Y0), bsr_multivec_data(Y), (size_t)n * k * vs) == 0;
                    if (!same) fprintf(stderr, "\n  scaled apply ord=%d m=%d %s k=%d path %d: bits differ from path 0\n", ord, m, mode_name[mode], k, path);
                    CU_ASSERT(same);
                    bsr_multivec_destroy(Y);
                }
                bsr_trsv_set_tuning(NULL);
                bsr_multivec_destroy(Y0); bsr_multivec_destroy(X); bsr_multivec_destroy(R);
            }
            bsr_gpu_ilu_destroy(G);
            bsr_ilu_destroy(F);
            bsr_matrix_destroy(A);
        }
    CU_ASSERT(fused_cases > 0);
    bsr_matrix_destroy(mats[3]);
    for (int g = 0; g < 3; g++) bsr_problem_free(&P[g]);
}

/* refactor: new values, same pattern -> the device follows the CPU. */
static void test_refactor_and_host_path(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:12:3", BSR_DOUBLE, &P));
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_order_options_default(&io.order, BSR_ORDER_ND);
    io.order.depth = 2;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &io, &F));
    bsr_gpu_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, NULL, &G));
    int nnzb = bsr_matrix_nnzb(P.A), b = 3;
    double *v = malloc(sizeof(double) * (size_t)nnzb * b * b);
    memcpy(v, bsr_matrix_values(P.A), sizeof(double) * (size_t)nnzb * b * b);
    for (int p = 0; p < nnzb; p++)
        for (int e = 0; e < b * b; e++) v[(size_t)p * b * b + e] *= 1.0 + 0.3 * ((p * 7 + e) % 5) / 5.0;
    BSR_ASSERT_OK(bsr_matrix_set_values(P.A, v, 0));
    BSR_ASSERT_OK(bsr_ilu_refactor(F, P.A));
    BSR_ASSERT_OK(bsr_gpu_ilu_refactor(G, F));
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * b;
    /* host-only X and Y: the convenience path */
    bsr_multivec *X = NULL, *Y = NULL, *R = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 5, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 5, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&R, n, 5, BSR_DOUBLE));
    bsr_multivec_random(X, 4242);
    bsr_multivec_fill(Y, NAN);
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
    BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
    CU_ASSERT(bsr_test_max_rel_err(Y, R) <= 1e-10);
    /* in place: X == Y */
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, X));
    CU_ASSERT(bsr_test_max_rel_err(X, R) <= 1e-10);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
    free(v);
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

static void test_errors(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:6:2", BSR_DOUBLE, &P));
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &io, &F));
    bsr_context *cpu = NULL;
    BSR_ASSERT_OK(bsr_context_create(&cpu, BSR_BACKEND_CPU, 0, NULL));
    bsr_gpu_ilu *G = NULL;
    CU_ASSERT_EQUAL(bsr_gpu_ilu_create(cpu, F, NULL, &G), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(G);
    bsr_context_destroy(cpu);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_create(ctx, NULL, NULL, &G), BSR_ERR_ARG);
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, NULL, &G));
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 2;
    bsr_multivec *X = bsr_test_dev_random(ctx, n, 65, BSR_DOUBLE, seed_counter++), *Y = bsr_test_dev_poisoned(ctx, n, 65, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_apply(G, X, Y), BSR_ERR_ARG); /* k > 64 (more than 16: in chunks, test_gpu_jacobi) */
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    X = bsr_test_dev_random(ctx, n, 2, BSR_FLOAT, seed_counter++); Y = bsr_test_dev_poisoned(ctx, n, 2, BSR_FLOAT);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_apply(G, X, Y), BSR_ERR_UNSUPPORTED); /* float vectors, double factors */
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    X = bsr_test_dev_random(ctx, n + 2, 2, BSR_DOUBLE, seed_counter++); Y = bsr_test_dev_poisoned(ctx, n + 2, 2, BSR_DOUBLE);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_apply(G, X, Y), BSR_ERR_SIZE);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_set_kernel(G, (bsr_trsv_kernel)9, BSR_TRSV_SYNCFREE), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_gpu_ilu_apply_dev(G, NULL, NULL, 1, BSR_DOUBLE), BSR_ERR_ARG);
    /* still usable after the errors */
    X = bsr_test_dev_random(ctx, n, 2, BSR_DOUBLE, seed_counter++); Y = bsr_test_dev_poisoned(ctx, n, 2, BSR_DOUBLE);
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
    bsr_multivec *R = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&R, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
    BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
    CU_ASSERT(bsr_test_max_rel_err(Y, R) <= 1e-10);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"random factors b=1..10: all kernels, orderings, k, precisions", test_random},
        {"stencil factors: all kernels, orderings, k, precisions", test_stencil},
        {"real matrices", test_real},
        {"bitwise determinism (sync-free, graph)", test_determinism},
        {"sync-free variants (persistent, team size, wide layout)", test_variants},
        {"the chain of long rows one CUDA block a row (tail), bit for bit across schedules", test_tail},
        {"gather (ordering, left scaling) in the L solve = gather + solve, bit for bit", test_scaled_apply},
        {"refactor, host convenience path, in place", test_refactor_and_host_path},
        {"errors leave the object usable", test_errors},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_trsv", tests, argc, argv, &ctx);
}
