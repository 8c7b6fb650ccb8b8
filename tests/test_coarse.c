/* SPDX-License-Identifier: BSD-3-Clause */
/* Two levels around an ILU (precond_coarse.c, option coarse=M): the option
 * parses, prints back and is refused where it cannot run; where the coarse
 * space is the whole space the preconditioner is A^{-1} (one iteration); on
 * the indefinite coupled3d class it cuts the ILU's iterations; results are
 * deterministic on any number of threads; refactor on the same values gives
 * the setup's bits and follows new values; bad values fail with a status;
 * on the device it does the same against the device ILU2 and the host. */
#include "harness.h"
#include "internal.h"
#include "precond_impl.h"
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* coarse: default 0 (not printed), printed with an ILU kind and round-trips;
 * refused out of 0..BSR_COARSE_MAX and with a preconditioner other than an ILU,
 * where it is not printed and does not bring the ILU keys into the string. */
static void test_options(void)
{
    bsr_solver_options o, p;
    char buf[1024];
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.coarse, 0);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu2"));
    CU_ASSERT_PTR_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "coarse"));
    bsr_test_options_round_trip("precond=ilu2,tau2=0.0001,keep_pattern=1,cap=auto,coarse=8", &o, &p, buf, sizeof buf);
    CU_ASSERT_EQUAL(p.coarse, 8);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, ",coarse=8"));
    bsr_test_options_round_trip("precond=ilu0,coarse=10", &o, &p, buf, sizeof buf);
    CU_ASSERT_EQUAL(p.coarse, BSR_COARSE_MAX);
    static const char *const bad[] = {"coarse=-1", "coarse=11", "coarse=x", "coarse="};
    for (int i = 0; i < 4; i++) {
        bsr_solver_options_default(&o);
        CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, bad[i]), BSR_ERR_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "coarse"));
    }
    /* refused, and printed without coarse or the ILU pattern keys (the
     * printed string then parses back to itself) */
    static const char *const wrong[] = {"precond=jacobi,coarse=4", "precond=ic0,method=cg,coarse=4",
                                        "precond=none,coarse=1", "precond=ilu2,pattern=auto,precond=ssor,coarse=5"};
    for (int i = 0; i < 4; i++) {
        bsr_solver_options_default(&o);
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, wrong[i]));
        CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "coarse"));
        char again[1024];
        bsr_solver_options_string(&o, buf, sizeof buf);
        CU_ASSERT_PTR_NULL(strstr(buf, "coarse"));
        CU_ASSERT_PTR_NULL(strstr(buf, "pattern="));
        bsr_solver_options_default(&p);
        BSR_ASSERT_OK(bsr_solver_options_parse(&p, buf));
        CU_ASSERT_STRING_EQUAL(bsr_solver_options_string(&p, again, sizeof again), buf);
    }
}

/* Pairwise aggregation (bsr_aggregate_pairs) of stencil3d's 16^3 grid, 64
 * rows wanted: every part non-empty and numbered by its first row, at most
 * 80 rows (5/4 of 64) and connected in the block graph, on average at least
 * 32; the same parts a second time; a matrix without off-diagonal blocks
 * keeps each row alone. */
static void test_aggregates(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_test_problem_k("stencil3d:16:1", 1, 3, &P, &B, &Xs);
    const int n = bsr_matrix_nbrows(P.A);
    int *part = malloc(sizeof(int) * (size_t)n * 4), *again = part + n, *seen = part + 2 * n, *queue = part + 3 * n;
    int np = 0, np2 = 0;
    BSR_ASSERT_OK(bsr_aggregate_pairs(P.A, 64, part, &np));
    BSR_ASSERT_OK(bsr_aggregate_pairs(P.A, 64, again, &np2));
    CU_ASSERT_EQUAL(np, np2);
    CU_ASSERT(memcmp(part, again, sizeof(int) * (size_t)n) == 0);
    CU_ASSERT(np >= 1 && 32 * np <= n);
    int next = 0, bad = 0;
    for (int i = 0; i < n; i++) {   /* numbered by first row */
        if (part[i] < 0 || part[i] > next) bad++;
        if (part[i] == next) next++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(next, np);
    const int *rp = bsr_matrix_rowptr(P.A), *ci = bsr_matrix_colind(P.A);
    for (int i = 0; i < n; i++) seen[i] = 0;
    int too_big = 0, split = 0;
    for (int i = 0; i < n; i++) {   /* a search from each part's first row stays inside and reaches all */
        if (seen[i]) continue;
        int h = 0, t = 0, size = 0;
        for (int j = 0; j < n; j++) size += part[j] == part[i];
        queue[t++] = i;
        seen[i] = 1;
        while (h < t) {
            const int v = queue[h++];
            for (int p = rp[v]; p < rp[v + 1]; p++)
                if (part[ci[p]] == part[i] && !seen[ci[p]]) { seen[ci[p]] = 1; queue[t++] = ci[p]; }
        }
        too_big += size > 80;
        split += t != size;
    }
    CU_ASSERT_EQUAL(too_big, 0);
    CU_ASSERT_EQUAL(split, 0);
    int rpd[4] = {0, 1, 2, 3}, cid[3] = {0, 1, 2};
    double vd[3] = {1, 2, 3};
    bsr_matrix *D = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&D, 3, 3, 1, rpd, cid, vd, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_aggregate_pairs(D, 64, part, &np));
    CU_ASSERT_EQUAL(np, 3);
    CU_ASSERT(part[0] == 0 && part[1] == 1 && part[2] == 2);
    bsr_matrix_destroy(D);
    free(part);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* 8 block rows of b = 1, one aggregate, coarse=8: the test vectors span
 * every unknown, so P is square and orthonormal and
 * z = S r + P Ac^{-1} P^T (r - A S r) = A^{-1} r: BiCGStab stops after one
 * iteration at the rounding level, where the ILU(0) alone takes two. */
static void test_whole_space(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X;
    bsr_test_problem_k("stencil3d:2:1", 1, 5, &P, &B, &Xs);
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 1, BSR_DOUBLE));
    bsr_solver_stats st;
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, "precond=ilu0,coarse=8,rtol=1e-13", P.A, B, X, &st), BSR_OK);
    CU_ASSERT_EQUAL(st.col[0].iterations, 1);
    CU_ASSERT(bsr_test_rel_err(X, Xs) < 1e-12);
    bsr_solver_stats_free(&st);
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, "precond=ilu0,rtol=1e-13", P.A, B, X, &st), BSR_OK);
    CU_ASSERT(st.col[0].iterations > 1);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X); bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* coupled3d at couple 0.3 (8,000 block rows, b = 5, about 37 aggregates): the
 * capped ILU2 with the coarse level converges to x* in at most half the
 * iterations of the ILU2 alone, in double, two right-hand sides. */
static void test_fewer_iterations(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X;
    bsr_test_problem_k("coupled3d:20,5,couple=0.3", 2, 7, &P, &B, &Xs);
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 2, BSR_DOUBLE));
    bsr_solver_stats st1, st2;
    const char *alone = "precond=ilu2,cap=auto,reorder=rcm,fallback=off,rtol=1e-9";
    const char *two = "precond=ilu2,cap=auto,reorder=rcm,fallback=off,rtol=1e-9,coarse=8";
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, alone, P.A, B, X, &st1), BSR_OK);
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, two, P.A, B, X, &st2), BSR_OK);
    for (int j = 0; j < 2; j++) {
        CU_ASSERT(2 * st2.col[j].iterations <= st1.col[j].iterations);
        CU_ASSERT(st2.col[j].relres <= 1e-9);
    }
    CU_ASSERT(bsr_test_rel_err(X, Xs) < 1e-6);
    bsr_solver_stats_free(&st1);
    bsr_solver_stats_free(&st2);
    bsr_multivec_destroy(X); bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* The same bits on 1 and 2 threads and run to run; a refactor on the same
 * values gives the setup's bits; new values (A scaled by 3) give x* / 3's
 * solution, to the tolerance. */
static void test_deterministic_refactor(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X[3];
    bsr_test_problem_k("coupled3d:12,4,couple=0.3", 1, 3, &P, &B, &Xs);
    const int64_t n = bsr_multivec_rows(B);
    for (int i = 0; i < 3; i++) BSR_ASSERT_OK(bsr_multivec_create(&X[i], n, 1, BSR_DOUBLE));
    const char *cfg = "precond=ilu0,coarse=6,rtol=1e-10";
    const int threads = omp_get_max_threads();
    bsr_solver_stats st;
    omp_set_num_threads(1);
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, cfg, P.A, B, X[0], &st), BSR_OK);
    bsr_solver_stats_free(&st);
    omp_set_num_threads(2);
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, cfg, P.A, B, X[1], &st), BSR_OK);
    bsr_solver_stats_free(&st);
    omp_set_num_threads(threads);
    CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
    bsr_solver *s = bsr_test_solver(NULL, cfg, P.A);
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    BSR_ASSERT_OK(bsr_multivec_fill(X[2], 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X[2], &st));
    bsr_solver_stats_free(&st);
    CU_ASSERT(bsr_test_same_bits(X[0], X[2]));
    /* A <- 3 A: the solution of the same B is x* / 3 */
    double *v = (double *)bsr_matrix_values(P.A);
    for (int64_t e = 0; e < (int64_t)bsr_matrix_nnzb(P.A) * 16; e++) v[e] *= 3;
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    BSR_ASSERT_OK(bsr_multivec_fill(X[2], 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X[2], &st));
    CU_ASSERT(bsr_reason_converged(st.col[0].reason));
    bsr_solver_stats_free(&st);
    double *x = bsr_multivec_data(X[2]);
    for (int64_t e = 0; e < n; e++) x[e] *= 3;
    CU_ASSERT(bsr_test_rel_err(X[2], Xs) < 1e-7);
    bsr_solver_destroy(s);
    for (int i = 0; i < 3; i++) bsr_multivec_destroy(X[i]);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* coupled3d:8,4 at couple 0.3 (B its right-hand side, Xs its solution) and
 * the options of cfg. */
static void small_coupled(const char *cfg, bsr_problem *P, bsr_multivec **B, bsr_multivec **Xs,
                          bsr_solver_options *o)
{
    bsr_test_problem_k("coupled3d:8,4,couple=0.3", 1, 3, P, B, Xs);
    bsr_solver_options_default(o);
    BSR_ASSERT_OK(bsr_solver_options_parse(o, cfg));
}

/* Y = pc's apply of B, into a new multivector. */
static bsr_multivec *pc_apply(bsr_pc *pc, const bsr_multivec *B)
{
    bsr_multivec *Y = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&Y, bsr_multivec_rows(B), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(pc->apply(pc, B, Y));
    return Y;
}

/* Two levels sharing a smoother already set up on A (the solver's fallback
 * shares its first factor so): the apply's bits of two levels that make
 * their own, before and after a refactor on the same values; the smoother
 * outlives whichever holder lets it go first (a use after free or a leak
 * fails the ASan run); a smoother given without a coarse level is refused. */
static void test_shared_smoother(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_solver_options o;
    small_coupled("precond=ilu2,coarse=4", &P, &B, &Xs, &o);
    BSR_ASSERT_OK(bsr_pc_options_resolve(&o, 0, P.A));
    bsr_solver_options io = o;
    io.coarse = 0;
    bsr_pc *own = NULL, *S = NULL, *two = NULL, *bad = NULL;
    BSR_ASSERT_OK(bsr_pc_create(P.A, &o, NULL, NULL, NULL, &own));
    bsr_multivec *Y0 = pc_apply(own, B);
    for (int first = 0; first < 2; first++) {   /* 0: the smoother let go first; 1: the two levels */
        BSR_ASSERT_OK(bsr_pc_create(P.A, &io, NULL, NULL, NULL, &S));
        bsr_multivec *Ys = pc_apply(S, B);
        BSR_ASSERT_OK(bsr_pc_create(P.A, &o, NULL, NULL, S, &two));
        CU_ASSERT_EQUAL(S->holders, 1);
        bsr_multivec *Y1 = pc_apply(two, B);
        CU_ASSERT(bsr_test_same_bits(Y0, Y1));
        if (first == 0) {
            bsr_pc_destroy(S);   /* the two levels hold it now */
            CU_ASSERT_EQUAL(S->holders, 0);
            BSR_ASSERT_OK(two->refactor(two, P.A));
            bsr_multivec *Y2 = pc_apply(two, B);
            CU_ASSERT(bsr_test_same_bits(Y0, Y2));
            bsr_multivec_destroy(Y2);
            bsr_pc_destroy(two);
        } else {
            bsr_pc_destroy(two);   /* the smoother stays, as it was */
            CU_ASSERT_EQUAL(S->holders, 0);
            bsr_multivec *Y2 = pc_apply(S, B);
            CU_ASSERT(bsr_test_same_bits(Ys, Y2));
            bsr_multivec_destroy(Y2);
            bsr_pc_destroy(S);
        }
        bsr_multivec_destroy(Y1);
        bsr_multivec_destroy(Ys);
    }
    BSR_ASSERT_OK(bsr_pc_create(P.A, &io, NULL, NULL, NULL, &S));
    CU_ASSERT_EQUAL(bsr_pc_create(P.A, &io, NULL, NULL, S, &bad), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(bad);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "without a coarse level"));
    CU_ASSERT_EQUAL(S->holders, 0);
    bsr_pc_destroy(S);
    bsr_pc_destroy(own);
    bsr_multivec_destroy(Y0);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* Refactor keeps the coarse space as the ILU keeps its pattern: on another
 * system of the same pattern it converges, with bits a new setup's do not
 * share; pattern=refresh makes the space anew: a new setup's bits. */
static void test_refresh(void)
{
    bsr_problem P, Q;
    bsr_multivec *B, *Xs, *Bq, *Xq, *X[3];
    bsr_test_problem_k("coupled3d:12,4,couple=0.3", 1, 3, &P, &B, &Xs);
    bsr_test_problem_k("coupled3d:12,4,couple=0.4,seed=5", 1, 4, &Q, &Bq, &Xq);
    const int64_t n = bsr_multivec_rows(B);
    for (int i = 0; i < 3; i++) BSR_ASSERT_OK(bsr_multivec_create(&X[i], n, 1, BSR_DOUBLE));
    const char *cfg[2] = {"precond=ilu0,coarse=6,rtol=1e-10", "precond=ilu0,coarse=6,rtol=1e-10,pattern=refresh"};
    bsr_solver_stats st;
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, cfg[0], Q.A, Bq, X[0], &st), BSR_OK);
    bsr_solver_stats_free(&st);
    for (int c = 0; c < 2; c++) {
        bsr_solver *s = bsr_test_solver(NULL, cfg[c], P.A);
        BSR_ASSERT_OK(bsr_solver_refactor(s, Q.A));
        BSR_ASSERT_OK(bsr_multivec_fill(X[1 + c], 0));
        BSR_ASSERT_OK(bsr_solver_solve(s, Bq, X[1 + c], &st));
        CU_ASSERT(bsr_reason_converged(st.col[0].reason));
        bsr_solver_stats_free(&st);
        CU_ASSERT(bsr_test_rel_err(X[1 + c], Xq) < 1e-7);
        bsr_solver_destroy(s);
    }
    CU_ASSERT(!bsr_test_same_bits(X[0], X[1]));   /* the setup's space, not Q's */
    CU_ASSERT(bsr_test_same_bits(X[0], X[2]));
    for (int i = 0; i < 3; i++) bsr_multivec_destroy(X[i]);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_multivec_destroy(Bq); bsr_multivec_destroy(Xq);
    bsr_problem_free(&P);
    bsr_problem_free(&Q);
}

/* A NaN in A: the setup fails with a status and a message; float vectors are
 * refused at setup (naming coarse). */
static void test_bad_input(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_solver_options o;
    small_coupled("precond=ilu2,coarse=4,precision=float,precond_precision=float", &P, &B, &Xs, &o);
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create(&s, NULL, &o));
    CU_ASSERT_NOT_EQUAL(bsr_solver_setup(s, P.A), BSR_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "coarse"));
    bsr_solver_destroy(s);
    double *v = (double *)bsr_matrix_values(P.A);
    v[37] = NAN;
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precision=double,precond_precision=double"));
    BSR_ASSERT_OK(bsr_solver_create(&s, NULL, &o));
    const bsr_status st = bsr_solver_setup(s, P.A);
    CU_ASSERT_NOT_EQUAL(st, BSR_OK);
    CU_ASSERT(strlen(bsr_last_error()) > 0);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

/* On the device (where one is usable), coupled3d at couple 0.3 as above: the
 * device's capped ILU2 with the coarse level converges to x* in at most half
 * the iterations of the device ILU2 alone, and within a quarter of the host
 * two levels' count (the same method; the factors, hence the test vectors,
 * equal to rounding); two device solves give the same bits; after a refactor
 * on new values (A scaled by 3) the solution is x* / 3. */
static void test_device(void)
{
    if (!bsr_test_have_gpu()) {
        BSR_TEST_SKIP("no usable CUDA device: the device's two levels not checked");
        return;
    }
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    bsr_problem P;
    bsr_multivec *B, *Xs, *X[2];
    bsr_test_problem_k("coupled3d:20,5,couple=0.3", 1, 7, &P, &B, &Xs);
    for (int i = 0; i < 2; i++) BSR_ASSERT_OK(bsr_multivec_create(&X[i], bsr_multivec_rows(B), 1, BSR_DOUBLE));
    const char *alone = "precond=ilu2,cap=auto,reorder=rcm,fallback=off,rtol=1e-9";
    const char *two = "precond=ilu2,cap=auto,reorder=rcm,fallback=off,rtol=1e-9,coarse=8";
    bsr_solver_stats sa, sh, sd;
    CU_ASSERT_EQUAL(bsr_test_solve(ctx, alone, P.A, B, X[0], &sa), BSR_OK);
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, two, P.A, B, X[0], &sh), BSR_OK);
    CU_ASSERT_EQUAL(bsr_test_solve(ctx, two, P.A, B, X[0], &sd), BSR_OK);
    const int ia = sa.col[0].iterations, ih = sh.col[0].iterations, id = sd.col[0].iterations;
    CU_ASSERT(bsr_reason_converged(sd.col[0].reason));
    CU_ASSERT(2 * id <= ia);
    CU_ASSERT(4 * abs(id - ih) <= ih);
    CU_ASSERT(bsr_test_rel_err(X[0], Xs) < 1e-6);
    printf("\n    device: ILU2 alone %d iterations, two levels %d (host two levels %d) ", ia, id, ih);
    bsr_solver_stats_free(&sa);
    bsr_solver_stats_free(&sh);
    bsr_solver_stats_free(&sd);
    bsr_solver *s = bsr_test_solver(ctx, two, P.A);
    BSR_ASSERT_OK(bsr_multivec_fill(X[1], 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X[1], &sd));
    bsr_solver_stats_free(&sd);
    CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
    /* new values through bsr_matrix_set_values: its device mirror goes stale */
    const int64_t nv = (int64_t)bsr_matrix_nnzb(P.A) * 25;
    double *v = malloc(sizeof(double) * (size_t)nv);
    memcpy(v, bsr_matrix_values(P.A), sizeof(double) * (size_t)nv);
    for (int64_t e = 0; e < nv; e++) v[e] *= 3;
    BSR_ASSERT_OK(bsr_matrix_set_values(P.A, v, BSR_STORED_ORDER));
    free(v);
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    BSR_ASSERT_OK(bsr_multivec_fill(X[1], 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X[1], &sd));
    CU_ASSERT(bsr_reason_converged(sd.col[0].reason));
    bsr_solver_stats_free(&sd);
    double *x = bsr_multivec_data(X[1]);
    for (int64_t e = 0; e < bsr_multivec_rows(X[1]); e++) x[e] *= 3;
    const double e0 = bsr_test_rel_err(X[0], Xs), e1 = bsr_test_rel_err(X[1], Xs);
    printf("errors %.1e, after the refactor %.1e ", e0, e1);
    CU_ASSERT(e1 < 1e-6);
    bsr_solver_destroy(s);
    for (int i = 0; i < 2; i++) bsr_multivec_destroy(X[i]);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
    bsr_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"coarse: default, range, ILU kinds only, round trip", test_options},
        {"aggregates by pairwise matching: numbered, bounded, connected, deterministic", test_aggregates},
        {"the whole space as the coarse space: A^{-1}, one iteration", test_whole_space},
        {"coupled3d: at most half the ILU2's iterations, converged to x*", test_fewer_iterations},
        {"the same bits on 1 and 2 threads; refactor: the setup's bits, then new values", test_deterministic_refactor},
        {"refactor keeps the coarse space; pattern=refresh makes it anew", test_refresh},
        {"a shared smoother: the same bits; it outlives either holder; refused without a coarse level", test_shared_smoother},
        {"NaN in A and float vectors: a status and a message", test_bad_input},
        {"on the device: half the device ILU2's iterations, the host's count, the same bits, refactor", test_device},
        {NULL, NULL},
    };
    return bsr_test_main("coarse", tests, argc, argv);
}
