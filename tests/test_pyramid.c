/* SPDX-License-Identifier: BSD-3-Clause */
/* Pyramid solver: CPU reference against an independent stencil and the
 * exact decay of a Fourier mode; out-of-core plans (trivial, pyramid, every
 * decomposition and height, odd sizes, tiny budgets) bitwise equal to the
 * in-core run on the CPU and the GPU; Jacobi counts; budget errors; the
 * model's formulas; the long-vector variant. */
#include "harness.h"
#include "pyramid_impl.h"
#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static bsr_grid *make(int dim, const int64_t *n, bsr_precision p, int rhs, uint64_t seed)
{
    bsr_grid *G = NULL;
    BSR_ASSERT_OK(bsr_grid_create(&G, dim, n, p, 1));
    BSR_ASSERT_OK(bsr_grid_fill_test(G, seed, rhs));
    return G;
}

/* The default options with the in-core algorithm and steps steps. */
static bsr_pyr_opts incore(int steps)
{
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.algo = BSR_PYR_INCORE;
    o.steps = steps;
    return o;
}

/* NaN-fill the ping-pong partner so points a run fails to write show up. */
static void poison_alt(bsr_grid *G)
{
    void *a = pyr_grid_alt(G);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int64_t np = bsr_grid_points(G);
    for (int64_t i = 0; i < np; i++) {
        if (G->prec == BSR_DOUBLE) ((double *)a)[i] = NAN;
        else ((float *)a)[i] = NAN;
    }
}

static int64_t ndiff_of(const bsr_grid *A, const bsr_grid *B, double *md)
{
    int64_t nd = -1;
    BSR_ASSERT_OK(bsr_grid_compare(A, B, md, &nd));
    return nd;
}

static const int64_t shapes[3][3] = {{101, 1, 1}, {37, 29, 1}, {9, 23, 31}};

static void test_cpu_reference(void)
{
    /* against an independent loop */
    int64_t n[3] = {23, 17, 1};
    bsr_grid *G = make(2, n, BSR_DOUBLE, 0, 5);
    double *u0 = malloc(sizeof(double) * 23 * 17);
    memcpy(u0, bsr_grid_data(G), sizeof(double) * 23 * 17);
    double *ref = malloc(sizeof(double) * 23 * 17);
    /* independent loop (not the library's code), 6 steps */
    double *w = malloc(sizeof(double) * 23 * 17);
    memcpy(w, u0, sizeof(double) * 23 * 17);
    {
        double *v = malloc(sizeof(double) * 23 * 17);
        memcpy(v, w, sizeof(double) * 23 * 17);
        for (int k = 0; k < 6; k++) {
            for (int64_t j = 1; j < 16; j++)
                for (int64_t i = 1; i < 22; i++) {
                    int64_t p = i + 23 * j;
                    v[p] = w[p] + 0.2 * ((w[p - 1] + w[p + 1]) + (w[p - 23] + w[p + 23]) - 4 * w[p]);
                }
            double *t = w; w = v; v = t;
        }
        memcpy(ref, w, sizeof(double) * 23 * 17);
        free(v);
    }
    free(w);
    bsr_pyr_opts o = incore(6);
    o.r = 0.2;
    BSR_ASSERT_OK(bsr_pyr_run_cpu(G, &o, NULL));
    const double *u = bsr_grid_data(G);
    double md = 0, moved = 0;
    for (int i = 0; i < 23 * 17; i++) {
        md = fmax(md, fabs(u[i] - ref[i]));
        moved = fmax(moved, fabs(u[i] - u0[i]));
    }
    CU_ASSERT(md <= 1e-14);
    CU_ASSERT(moved > 1e-3); /* the field did change */
    free(u0); free(ref);
    bsr_grid_destroy(G);

    /* exact decay of the lowest Fourier mode in 1D, 2D, 3D (zero boundary) */
    for (int dim = 1; dim <= 3; dim++) {
        int64_t m[3] = {1, 1, 1};
        for (int a = 0; a < dim; a++) m[a] = 9 + 2 * a;
        bsr_grid *H = NULL;
        BSR_ASSERT_OK(bsr_grid_create(&H, dim, m, BSR_DOUBLE, 0));
        double *x = bsr_grid_data(H), lam = 1;
        double r = 0.4 / dim;
        for (int a = 0; a < dim; a++) lam -= 4 * r * pow(sin(M_PI / (2.0 * (m[a] - 1))), 2);
        for (int64_t k = 0; k < m[2]; k++)
            for (int64_t j = 0; j < m[1]; j++)
                for (int64_t i = 0; i < m[0]; i++) {
                    double v = sin(M_PI * i / (m[0] - 1));
                    if (dim > 1) v *= sin(M_PI * j / (m[1] - 1));
                    if (dim > 2) v *= sin(M_PI * k / (m[2] - 1));
                    x[i + m[0] * (j + m[1] * k)] = v;
                }
        int64_t mid = m[0] / 2 + m[0] * (m[1] / 2 + m[1] * (m[2] / 2));
        double before = x[mid];
        bsr_pyr_opts o2;
        bsr_pyr_opts_default(&o2);
        o2.algo = BSR_PYR_INCORE;
        o2.r = r;
        o2.steps = 10;
        BSR_ASSERT_OK(bsr_pyr_run_cpu(H, &o2, NULL));
        x = bsr_grid_data(H);
        CU_ASSERT_DOUBLE_EQUAL(x[mid] / before, pow(lam, 10), 1e-12);
        bsr_grid_destroy(H);
    }
}

/* Every out-of-core plan on the CPU executor equals the in-core sweep bit for bit. */
static void test_cpu_plans_bitwise(void)
{
    const int heights[] = {1, 2, 3, 5, 7};
    int runs = 0, maxsub = 0;
    for (int dim = 1; dim <= 3; dim++)
        for (int pi = 0; pi < 2; pi++) {
            bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
            bsr_grid *ref = make(dim, shapes[dim - 1], p, 0, 11 + dim);
            bsr_grid *G = make(dim, shapes[dim - 1], p, 0, 11 + dim);
            bsr_grid *init = make(dim, shapes[dim - 1], p, 0, 11 + dim);
            bsr_pyr_opts o = incore(11);
            o.r = 0.9 / (2 * dim);
            BSR_ASSERT_OK(bsr_pyr_run_cpu(ref, &o, NULL));
            double md;
            CU_ASSERT(ndiff_of(ref, init, &md) > 0);
            size_t vs = bsr_precision_size(p);
            for (int d = 0; d < (dim > 1 ? 2 : 1); d++)
                for (int hi = 0; hi < 5; hi++)
                    for (int alg = BSR_PYR_INCORE_BLOCKED; alg <= BSR_PYR_PYRAMID; alg++) {
                        if (alg == BSR_PYR_TRIVIAL && hi) continue;
                        int h = alg == BSR_PYR_TRIVIAL ? 1 : heights[hi];
                        /* budget: a few planes/rows per slot, forcing many subdomains */
                        int64_t row = dim == 1 ? 1 : shapes[dim - 1][0] * (dim == 3 ? shapes[2][1] : 1);
                        if (d == 1) row = dim == 2 ? 1 : shapes[2][0];
                        int64_t per = d == 0 ? row * (3 + 2 * h) : row * (7 + 2 * h) * (7 + 2 * h);
                        o.algo = (bsr_pyr_algo)alg;
                        o.decomp = (bsr_pyr_decomp)d;
                        o.height = h;
                        o.nslots = 1 + (hi % 3);
                        o.device_mem = (size_t)per * vs * 2 * o.nslots;
                        BSR_ASSERT_OK(bsr_grid_copy(G, init));
                        poison_alt(G);
                        bsr_pyr_info info;
                        BSR_ASSERT_OK(bsr_pyr_run_cpu(G, &o, &info));
                        if (info.nsub <= 1) printf("\n  dim %d decomp %d algo %d h %d: nsub %d\n", dim, d, alg, h, info.nsub);
                        CU_ASSERT(info.nsub > 1);
                        CU_ASSERT(info.iters == 11);
                        if (info.nsub > maxsub) maxsub = info.nsub;
                        int64_t nd = ndiff_of(G, ref, &md);
                        if (nd) printf("\n  dim %d %s decomp %d algo %d h %d: %lld points differ (max %g)\n",
                                       dim, pi ? "float" : "double", d, alg, h, (long long)nd, md);
                        CU_ASSERT_EQUAL(nd, 0);
                        runs++;
                    }
            bsr_grid_destroy(ref); bsr_grid_destroy(G); bsr_grid_destroy(init);
        }
    CU_ASSERT(runs > 40);
    CU_ASSERT(maxsub >= 8);
}

/* Options for Jacobi sweeps in core: at most steps sweeps, the difference
 * checked every check sweeps against eps. */
static bsr_pyr_opts jacobi_incore(int steps, int check, double eps)
{
    bsr_pyr_opts o = incore(steps);
    o.problem = BSR_PYR_JACOBI;
    o.check = check;
    o.eps = eps;
    return o;
}

/* Jacobi: pyramid plan (height = check) vs in-core sweeps, same count and bits;
 * converged solution satisfies the discrete equation. */
static void test_cpu_jacobi(void)
{
    int64_t n[3] = {15, 13, 21};
    for (int pi = 0; pi < 2; pi++) {
        bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
        bsr_grid *A = make(3, n, p, 1, 3), *B = make(3, n, p, 1, 3);
        bsr_pyr_opts o = jacobi_incore(5000, 3, pi ? 1e-5 : 1e-9);
        bsr_pyr_info ia, ib;
        BSR_ASSERT_OK(bsr_pyr_run_cpu(A, &o, &ia));
        CU_ASSERT(ia.iters < 5000 && ia.iters % 3 == 0);
        CU_ASSERT(ia.diff < o.eps);
        o.algo = BSR_PYR_PYRAMID;
        o.decomp = pi ? BSR_PYR_STRIPS : BSR_PYR_TILES;
        o.device_mem = (size_t)15 * 12 * 12 * bsr_precision_size(p) * 3 * 3;
        poison_alt(B);
        BSR_ASSERT_OK(bsr_pyr_run_cpu(B, &o, &ib));
        CU_ASSERT(ib.nsub > 1);
        CU_ASSERT_EQUAL(ib.iters, ia.iters);
        double md;
        CU_ASSERT_EQUAL(ndiff_of(A, B, &md), 0);
        if (!pi) { /* residual of -lap u = f (h = 1): 6u - sum = g */
            const double *u = bsr_grid_data(A), *g = bsr_grid_rhs(A);
            double res = 0;
            for (int64_t k = 1; k < 20; k++)
                for (int64_t j = 1; j < 12; j++)
                    for (int64_t i = 1; i < 14; i++) {
                        int64_t q = i + 15 * (j + 13 * k);
                        double s = u[q - 1] + u[q + 1] + u[q - 15] + u[q + 15] + u[q - 195] + u[q + 195];
                        res = fmax(res, fabs(6 * u[q] - s - g[q]));
                    }
            CU_ASSERT(res < 1e-7);
        }
        /* maximum sweeps not a multiple of check: the last sweep is checked too */
        o.steps = 10;
        o.eps = 0;
        o.algo = BSR_PYR_INCORE;
        BSR_ASSERT_OK(bsr_grid_fill_test(A, 4, 1));
        BSR_ASSERT_OK(bsr_grid_fill_test(B, 4, 1));
        BSR_ASSERT_OK(bsr_pyr_run_cpu(A, &o, &ia));
        o.algo = BSR_PYR_PYRAMID;
        BSR_ASSERT_OK(bsr_pyr_run_cpu(B, &o, &ib));
        CU_ASSERT(ia.iters == 10 && ib.iters == 10);
        CU_ASSERT(ia.diff > 0 && ia.diff == ib.diff);
        CU_ASSERT_EQUAL(ndiff_of(A, B, &md), 0);
        bsr_grid_destroy(A); bsr_grid_destroy(B);
    }
}

static void test_errors(void)
{
    int64_t n[3] = {40, 40, 1};
    bsr_grid *G = make(2, n, BSR_DOUBLE, 0, 1), *L = NULL;
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.height = 4;
    o.device_mem = 40 * 8 * 2 * 3 * 8; /* 8 rows per slot: < 1 + 2*4 */
    bsr_status s = bsr_pyr_run_cpu(G, &o, NULL);
    CU_ASSERT_EQUAL(s, BSR_ERR_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "too small"));
    o.split[1] = 2; /* explicit split that does not fit */
    CU_ASSERT_EQUAL(bsr_pyr_run_cpu(G, &o, NULL), BSR_ERR_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "too small"));
    o.split[1] = 0;
    o.device_mem = 0;
    o.r = NAN;
    CU_ASSERT_EQUAL(bsr_pyr_run_cpu(G, &o, NULL), BSR_ERR_VALUE);
    o.r = 0.2;
    o.problem = BSR_PYR_JACOBI;
    CU_ASSERT_EQUAL(bsr_pyr_run_cpu(G, &o, NULL), BSR_ERR_ARG); /* no rhs */
    int64_t m[1] = {50};
    BSR_ASSERT_OK(bsr_grid_create(&L, 1, m, BSR_FLOAT, 0));
    bsr_pyr_opts_default(&o);
    o.decomp = BSR_PYR_TILES;
    o.height = 2;
    CU_ASSERT_EQUAL(bsr_pyr_run_cpu(L, &o, NULL), BSR_ERR_UNSUPPORTED);
    int64_t bad[2] = {2, 10};
    bsr_grid *X = NULL;
    CU_ASSERT_EQUAL(bsr_grid_create(&X, 2, bad, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_grid_create(&X, 4, bad, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(X);
    bsr_grid_destroy(G); bsr_grid_destroy(L);
}

/* Model formulas, volumes and the height choice, on synthetic constants. */
static void test_model(void)
{
    /* original closed forms */
    double t = bsr_pyr_model_strips(100, 1001, 500, 40, 10, 2e-9, 1e-10);
    CU_ASSERT_DOUBLE_EQUAL(t, 100.0 * 1000 * 500 * (30.0 / 20.0) * (2 * 2e-9 / 10 + 1e-10), 1e-12);
    double tt = bsr_pyr_model_tiles(100, 1001, 1001, 40, 60, 10, 2e-9, 1e-10);
    CU_ASSERT_DOUBLE_EQUAL(tt, 100.0 * 1000 * 1000 * (30.0 * 50) / (20.0 * 40) * (4e-10 + 1e-10), 1e-12);
    CU_ASSERT(isinf(bsr_pyr_model_strips(1, 10, 10, 20, 10, 1, 1)));
    /* volumes on a hand-counted 1D case: 10 points, 2 pieces, height 2, K = 2 */
    int64_t n[3] = {10, 1, 1};
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.steps = 2;
    o.split[0] = 2;
    pyr_plan P;
    BSR_ASSERT_OK(pyr_plan_build(&P, 1, n, BSR_DOUBLE, &o, 2, (size_t)1 << 30));
    pyr_volume v;
    pyr_plan_volume(&P, &v);
    CU_ASSERT_DOUBLE_EQUAL(v.in, 14, 0);
    CU_ASSERT_DOUBLE_EQUAL(v.out, 10, 0);
    CU_ASSERT_DOUBLE_EQUAL(v.comp, 18, 0);
    CU_ASSERT_EQUAL(P.nbr_ptr[1] - P.nbr_ptr[0], 2);
    /* one slot, no launch or copy cost: the prediction is the serial sum */
    bsr_pyr_model M = {.tau_h2d = 3e-9, .tau_d2h = 4e-9, .tau_a = 1e-10, .dim = 1, .duplex = 2};
    P.nslots = 1;
    CU_ASSERT_DOUBLE_EQUAL(pyr_plan_predict(&P, &M, 1), 14 * 3e-9 + 10 * 4e-9 + 18 * 1e-10, 1e-20);
    /* many slots: bounded below by each stage's total */
    P.nslots = 3;
    double ov = pyr_plan_predict(&P, &M, 1);
    CU_ASSERT(ov >= 2 * 14 * 3e-9); /* overlapping directions share the link: duplex 2 */
    M.duplex = 1;
    double ov1 = pyr_plan_predict(&P, &M, 1);
    CU_ASSERT(ov1 <= 14 * 3e-9 + 10 * 4e-9 + 18 * 1e-10 + 1e-20 && ov1 >= 14 * 3e-9 && ov1 < ov);
    pyr_plan_free(&P);
    /* the volumes of a 2D strip plan agree with the closed formula's counts:
     * interior strips of R = r0 + 2n rows compute sum_t (R - 2t) rows */
    int64_t m[3] = {1002, 402, 1};
    bsr_grid *G = NULL;
    BSR_ASSERT_OK(bsr_grid_create(&G, 2, m, BSR_DOUBLE, 0));
    bsr_pyr_opts_default(&o);
    o.steps = 64;
    o.split[1] = 8;
    o.height = 8;
    BSR_ASSERT_OK(pyr_plan_build(&P, 2, m, BSR_DOUBLE, &o, 8, (size_t)1 << 40));
    pyr_box in, reg;
    pyr_in_box(&P, 3, 8, &in);
    double comp = 0;
    for (int s = 1; s <= 8; s++) { pyr_step_region(&P, &in, s, &reg); comp += (double)pyr_box_vol(&reg); }
    double R = (double)(in.hi[1] - in.lo[1]);
    CU_ASSERT_DOUBLE_EQUAL(comp, 1000.0 * (8 * R - 2 * (8 * 9 / 2)), 0);
    pyr_plan_free(&P);
    /* height choice: expensive transfers push n up, free transfers pull it to 1 */
    bsr_pyr_model slow = {.tau_h2d = 1e-8, .tau_d2h = 1e-8, .tau_a = 1e-11, .t_launch = 1e-6, .d2d_bw = 1e12, .dim = 2};
    bsr_pyr_model fast = {.tau_h2d = 1e-14, .tau_d2h = 1e-14, .tau_a = 1e-10, .d2d_bw = 1e15, .dim = 2};
    bsr_pyr_opts_default(&o);
    o.steps = 64;
    o.device_mem = (size_t)1002 * 60 * 8 * 2 * 3;
    bsr_pyr_opts a = o, b = o;
    double sa, sb;
    BSR_ASSERT_OK(bsr_pyr_choose(G, &a, &slow, 24, 1, &sa));
    BSR_ASSERT_OK(bsr_pyr_choose(G, &b, &fast, 24, 1, &sb));
    CU_ASSERT(a.height >= 4);
    CU_ASSERT_EQUAL(b.height, 1);
    /* strided transfers 10x dearer: tiles (narrow rows) lose to strips */
    bsr_pyr_model st = slow;
    st.tau_h2d_2d = st.tau_d2h_2d = 1e-7;
    bsr_pyr_opts c = o, e = o;
    c.decomp = e.decomp = BSR_PYR_TILES;
    double sc, se;
    BSR_ASSERT_OK(bsr_pyr_choose(G, &c, &slow, 24, 0, &sc));
    BSR_ASSERT_OK(bsr_pyr_choose(G, &e, &st, 24, 0, &se));
    CU_ASSERT(c.decomp == BSR_PYR_TILES && se > sc);
    double chk;
    BSR_ASSERT_OK(bsr_pyr_predict(G, &a, &slow, &chk));
    CU_ASSERT_DOUBLE_EQUAL(chk, sa, 1e-12 * sa);
    BSR_ASSERT_OK(pyr_plan_build(&P, 2, m, BSR_DOUBLE, &a, a.height, o.device_mem)); /* fits */
    pyr_plan_free(&P);
    o.device_mem = 100;
    CU_ASSERT_EQUAL(bsr_pyr_choose(G, &o, &slow, 24, 1, NULL), BSR_ERR_NOMEM);
    /* long-vector model: step-shaped in the number of waves */
    bsr_lv_model L = {5e-6, 1e-6, 1000, 7};
    CU_ASSERT_DOUBLE_EQUAL(bsr_lv_predict(&L, 31, 1), 7 * (5e-6 + 1e-6), 1e-15);   /* 961: 1 wave */
    CU_ASSERT_DOUBLE_EQUAL(bsr_lv_predict(&L, 32, 2), 14 * (5e-6 + 2e-6), 1e-15);  /* 1024: 2 waves */
    bsr_grid_destroy(G);
}

/* Long-vector CPU scheme equals the stencil scheme to rounding. */
static void test_longvec_cpu(void)
{
    int64_t n[3] = {21, 21, 1};
    bsr_grid *G = make(2, n, BSR_DOUBLE, 0, 9);
    double *u = malloc(sizeof(double) * 441);
    memcpy(u, bsr_grid_data(G), sizeof(double) * 441);
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.algo = BSR_PYR_INCORE;
    o.steps = 9;
    o.r = 0.2;
    BSR_ASSERT_OK(bsr_pyr_run_cpu(G, &o, NULL));
    BSR_ASSERT_OK(bsr_pyr_longvec_cpu(u, 21, 0.2, 9));
    const double *x = bsr_grid_data(G);
    double md = 0;
    for (int i = 0; i < 441; i++) md = fmax(md, fabs(x[i] - u[i]));
    CU_ASSERT(md < 1e-13);
    free(u);
    bsr_grid_destroy(G);
}

/* GPU: in-core = CPU reference bitwise; every plan = in-core bitwise. */
static void test_gpu_bitwise(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_pyr_model M;
    BSR_ASSERT_OK(bsr_pyr_calibrate(2, BSR_DOUBLE, 0, &M));
    CU_ASSERT(M.tau_h2d > 0 && M.tau_d2h > 0 && M.tau_a > 0 && M.t_launch > 0 && isfinite(M.tau_a));
    const int heights[] = {1, 2, 3, 6, 13};
    int runs = 0;
    for (int dim = 1; dim <= 3; dim++)
        for (int pi = 0; pi < 2; pi++) {
            bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
            const int64_t big[3][3] = {{20011, 1, 1}, {301, 203, 1}, {41, 67, 71}};
            bsr_grid *cpu = make(dim, big[dim - 1], p, 0, 21), *gin = make(dim, big[dim - 1], p, 0, 21);
            bsr_grid *init = make(dim, big[dim - 1], p, 0, 21), *G = make(dim, big[dim - 1], p, 0, 21);
            bsr_pyr_opts o = incore(27);
            o.r = 0.9 / (2 * dim);
            BSR_ASSERT_OK(bsr_pyr_run_cpu(cpu, &o, NULL));
            poison_alt(gin);
            BSR_ASSERT_OK(bsr_pyr_run_gpu(gin, &o, &M, NULL));
            double md;
            int64_t nd = ndiff_of(gin, cpu, &md);
            if (nd) printf("\n  GPU in-core dim %d %s: %lld differ from CPU (max %g)\n", dim, pi ? "f" : "d", (long long)nd, md);
            CU_ASSERT_EQUAL(nd, 0);
            CU_ASSERT(md <= 0);
            size_t vs = bsr_precision_size(p);
            int64_t plane = dim == 1 ? 1 : big[dim - 1][0] * (dim == 3 ? big[2][1] : 1);
            for (int d = 0; d < (dim > 1 ? 2 : 1); d++)
                for (int hi = 0; hi < 5; hi++)
                    for (int alg = BSR_PYR_INCORE_BLOCKED; alg <= BSR_PYR_PYRAMID; alg++) {
                        if (alg == BSR_PYR_TRIVIAL && hi) continue;
                        int h = alg == BSR_PYR_TRIVIAL ? 1 : heights[hi];
                        o.algo = (bsr_pyr_algo)alg;
                        o.decomp = (bsr_pyr_decomp)d;
                        o.height = h;
                        o.nslots = 1 + hi % 3;
                        /* slots for ~7 strips or ~3x3 tiles with their halos */
                        const int64_t *b = big[dim - 1];
                        int64_t per = d ? (dim == 3 ? b[0] : 1) * ((b[dim - 2] + 2) / 3 + 2 * h) * ((b[dim - 1] + 2) / 3 + 2 * h)
                                        : plane * ((b[dim - 1] + 6) / 7 + 2 * h);
                        o.device_mem = (size_t)per * vs * 2 * o.nslots;
                        if (alg == BSR_PYR_INCORE_BLOCKED) o.device_mem += 2 * vs * (size_t)bsr_grid_points(G) + 4096;
                        BSR_ASSERT_OK(bsr_grid_copy(G, init));
                        poison_alt(G);
                        bsr_pyr_info info;
                        BSR_ASSERT_OK(bsr_pyr_run_gpu(G, &o, &M, &info));
                        CU_ASSERT(info.nsub > 1);
                        nd = ndiff_of(G, gin, &md);
                        if (nd) printf("\n  GPU dim %d %s decomp %d algo %d h %d slots %d nsub %d: %lld differ (max %g)\n",
                                       dim, pi ? "f" : "d", d, alg, h, o.nslots, info.nsub, (long long)nd, md);
                        CU_ASSERT_EQUAL(nd, 0);
                        runs++;
                    }
            /* auto height within a budget of 1/5 of the grid */
            o.algo = BSR_PYR_PYRAMID;
            o.height = 0;
            o.nslots = 3;
            o.device_mem = 2 * vs * (size_t)bsr_grid_points(G) / 5;
            BSR_ASSERT_OK(bsr_grid_copy(G, init));
            bsr_pyr_info info;
            BSR_ASSERT_OK(bsr_pyr_run_gpu(G, &o, &M, &info));
            CU_ASSERT(info.height >= 1 && info.nsub > 1 && info.predicted > 0);
            CU_ASSERT_EQUAL(ndiff_of(G, gin, &md), 0);
            bsr_grid_destroy(cpu); bsr_grid_destroy(gin); bsr_grid_destroy(init); bsr_grid_destroy(G);
        }
    CU_ASSERT(runs > 40);
}

static void test_gpu_jacobi(void)
{
    if (!bsr_test_have_gpu()) return;
    int64_t n[3] = {45, 39, 31};
    for (int pi = 0; pi < 2; pi++) {
        bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
        bsr_grid *C = make(3, n, p, 1, 8), *A = make(3, n, p, 1, 8), *B = make(3, n, p, 1, 8);
        bsr_pyr_opts o = jacobi_incore(20000, 9, pi ? 1e-6 : 1e-10);
        bsr_pyr_info ic, ia, ib;
        BSR_ASSERT_OK(bsr_pyr_run_cpu(C, &o, &ic));
        BSR_ASSERT_OK(bsr_pyr_run_gpu(A, &o, NULL, &ia));
        CU_ASSERT_EQUAL(ia.iters, ic.iters);
        CU_ASSERT(ia.diff == ic.diff);
        double md;
        CU_ASSERT_EQUAL(ndiff_of(A, C, &md), 0);
        o.algo = BSR_PYR_PYRAMID;
        o.device_mem = (size_t)45 * 39 * 23 * bsr_precision_size(p) * 3 * 3; /* 7 strips, halo 9 */
        poison_alt(B);
        BSR_ASSERT_OK(bsr_pyr_run_gpu(B, &o, NULL, &ib));
        CU_ASSERT(ib.nsub > 1);
        CU_ASSERT_EQUAL(ib.iters, ic.iters);
        CU_ASSERT_EQUAL(ndiff_of(B, C, &md), 0);
        bsr_grid_destroy(A); bsr_grid_destroy(B); bsr_grid_destroy(C);
    }
}

static void test_gpu_errors_longvec(void)
{
    if (!bsr_test_have_gpu()) return;
    int64_t n[3] = {200, 200, 1};
    bsr_grid *G = make(2, n, BSR_DOUBLE, 0, 2);
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.height = 8;
    o.device_mem = 200 * 10 * 8 * 2 * 3;
    bsr_status s = bsr_pyr_run_gpu(G, &o, NULL, NULL);
    CU_ASSERT_EQUAL(s, BSR_ERR_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "too small"));
    o.algo = BSR_PYR_INCORE;
    o.device_mem = 1000;
    CU_ASSERT_EQUAL(bsr_pyr_run_gpu(G, &o, NULL, NULL), BSR_ERR_NOMEM);
    /* long vector on the GPU vs its CPU twin (cuBLAS may fuse a*x+y: rounding) */
    double *u = malloc(sizeof(double) * 40000), *w = malloc(sizeof(double) * 40000);
    memcpy(u, bsr_grid_data(G), sizeof(double) * 40000);
    memcpy(w, u, sizeof(double) * 40000);
    double sec;
    BSR_ASSERT_OK(bsr_pyr_longvec_gpu(u, 200, 0.2, 13, &sec));
    BSR_ASSERT_OK(bsr_pyr_longvec_cpu(w, 200, 0.2, 13));
    double md = 0;
    for (int i = 0; i < 40000; i++) md = fmax(md, fabs(u[i] - w[i]) + (u[i] != u[i]));
    CU_ASSERT(md < 1e-13);
    bsr_lv_model L;
    BSR_ASSERT_OK(bsr_lv_calibrate(&L));
    CU_ASSERT(L.resident > 0 && L.t_launch >= 0 && L.t_wave > 0);
    free(u); free(w);
    bsr_grid_destroy(G);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"CPU reference vs independent loop and Fourier decay", test_cpu_reference},
        {"CPU plans (trivial/pyramid/blocked, strips/tiles, h, slots) bitwise = in-core", test_cpu_plans_bitwise},
        {"CPU Jacobi: pyramid = in-core count and bits, residual", test_cpu_jacobi},
        {"argument and budget errors", test_errors},
        {"model formulas, volumes, height choice", test_model},
        {"long-vector CPU scheme = stencil scheme", test_longvec_cpu},
        {"GPU in-core = CPU bitwise; every plan = in-core bitwise", test_gpu_bitwise},
        {"GPU Jacobi = CPU Jacobi (count, bits)", test_gpu_jacobi},
        {"GPU budget errors, long-vector vs CPU", test_gpu_errors_longvec},
        {NULL, NULL}};
    return bsr_test_main("pyramid", tests, argc, argv);
}
