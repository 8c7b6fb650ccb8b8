/* SPDX-License-Identifier: BSD-3-Clause */
/* Host analysis of the GPU triangular solves (issue 6, src/trsv/trsv_plan.c), no
 * GPU needed: the device layout of ILU factors (schedule order, block ranges,
 * block map, renumbering) and the schedule checks that keep the sync-free
 * kernel from waiting forever on a row that comes later. */
#include "harness.h"
#include "internal.h"
#include "../kernels/trsv/trsv.h"
#include <omp.h>
#include <string.h>

/* ILU(0) factors of a small stencil under ordering kind. */
static bsr_ilu *factors(const char *spec, bsr_order_kind kind, bsr_problem *P, bsr_ilu_factors *f)
{
    bsr_ilu_options io;
    bsr_ilu *F = NULL;
    CU_ASSERT_EQUAL_FATAL(bsr_generate(spec, BSR_DOUBLE, P), BSR_OK);
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_order_options_default(&io.order, kind);
    if (kind == BSR_ORDER_ND) io.order.depth = 2;
    BSR_ASSERT_OK(bsr_ilu_setup(P->A, &io, &F));
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, f));
    return F;
}

/* The layout describes M exactly: every row's blocks, in schedule order when
 * renumbered, columns mapped through qpos. */
static void check_layout(const bsr_matrix *M, const bsr_levels *lv, int renumber, const int *qpos,
                         const bsr_trsv_plan *pl)
{
    const int n = M->nbrows;
    int *seen = calloc((size_t)n, sizeof(int));
    for (int p = 0; p < n; p++) {
        int old = lv->rows[p], i = qpos ? qpos[old] : old;
        CU_ASSERT_EQUAL(pl->rows[p], i);
        CU_ASSERT(i >= 0 && i < n && !seen[i]);
        if (i >= 0 && i < n) seen[i] = 1;
        CU_ASSERT_EQUAL(pl->pend[p] - pl->pbeg[p], M->rowptr[old + 1] - M->rowptr[old]);
        CU_ASSERT_EQUAL(pl->rstart[i], pl->pbeg[p]);
        CU_ASSERT_EQUAL(pl->rend[i], pl->pend[p]);
        if (renumber && p > 0) { CU_ASSERT_EQUAL(pl->pbeg[p], pl->pend[p - 1]); } /* contiguous, in order */
        for (int q = pl->pbeg[p]; q < pl->pend[p]; q++) {
            int src = pl->map ? pl->map[q] : q;
            CU_ASSERT(src >= M->rowptr[old] && src < M->rowptr[old + 1]);
            int c = M->colind[src];
            CU_ASSERT_EQUAL(pl->colind[q], qpos ? qpos[c] : c);
        }
    }
    free(seen);
}

static void test_layouts(void)
{
    const bsr_order_kind kinds[] = {BSR_ORDER_NATURAL, BSR_ORDER_RCM, BSR_ORDER_ND};
    for (int o = 0; o < 3; o++) {
        bsr_problem P;
        bsr_ilu_factors f;
        bsr_ilu *F = factors("stencil3d:7:3", kinds[o], &P, &f);
        const int n = f.L->nbrows;
        int *qpos = malloc(sizeof(int) * n);
        for (int q = 0; q < n; q++) qpos[f.lvL->rows[q]] = q;
        for (int w = 0; w < 2; w++) {
            const bsr_matrix *M = w ? f.U : f.L;
            const bsr_levels *lv = w ? f.lvU : f.lvL;
            for (int mode = 0; mode < 3; mode++) {
                bsr_trsv_plan pl;
                BSR_ASSERT_OK(bsr_trsv_plan_build(M, lv, w, mode > 0, mode == 2 ? qpos : NULL, 1, &pl));
                check_layout(M, lv, mode > 0, mode == 2 ? qpos : NULL, &pl);
                if (mode == 2 && !w) {
                    for (int p = 0; p < n; p++) CU_ASSERT_EQUAL(pl.rows[p], p); /* L's levels are ranges */
                }
                bsr_trsv_plan_free(&pl);
            }
            /* tree: ND factors have independent nodes, the others one root */
            int ntl = 0, *tl = NULL, *rg = NULL, nrg = 0, ok = 0;
            BSR_ASSERT_OK(bsr_trsv_tree_plan(M, w, f.ord, &ntl, &tl, &rg, &nrg, &ok));
            CU_ASSERT_EQUAL(ok, 1);
            CU_ASSERT_EQUAL(tl[ntl], nrg);
            if (kinds[o] != BSR_ORDER_ND) {
                CU_ASSERT(nrg == 1 && rg[0] == 0 && rg[1] == n);
            } else {
                CU_ASSERT(ntl == 3 && nrg == 7);
            }
            free(tl);
            free(rg);
        }
        CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.L, f.lvL, 0, 0, qpos, 1, &(bsr_trsv_plan){0}), BSR_ERR_ARG);
        free(qpos);
        bsr_ilu_destroy(F);
        bsr_problem_free(&P);
    }
}

/* Schedules that would let a row run before a row it reads are refused. */
static void test_bad_schedules(void)
{
    bsr_problem P;
    bsr_ilu_factors f;
    bsr_ilu *F = factors("stencil3d:6:2", BSR_ORDER_NATURAL, &P, &f);
    const bsr_levels *lv = f.lvL;
    const int n = lv->n;
    bsr_levels bad = *lv;
    bad.rows = malloc(sizeof(int) * n);
    bad.level_ptr = malloc(sizeof(int) * (lv->nlevels + 1));
    memcpy(bad.level_ptr, lv->level_ptr, sizeof(int) * (lv->nlevels + 1));
    bsr_trsv_plan pl;
    /* last level's first row swapped with the first level's row */
    memcpy(bad.rows, lv->rows, sizeof(int) * n);
    int a = lv->level_ptr[0], z = lv->level_ptr[lv->nlevels - 1];
    int t = bad.rows[a]; bad.rows[a] = bad.rows[z]; bad.rows[z] = t;
    CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.L, &bad, 0, 1, NULL, 1, &pl), BSR_ERR_STRUCTURE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "needs row"));
    /* a row listed twice (another missing) */
    memcpy(bad.rows, lv->rows, sizeof(int) * n);
    bad.rows[n - 1] = bad.rows[0];
    CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.L, &bad, 0, 1, NULL, 1, &pl), BSR_ERR_STRUCTURE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "repeated"));
    /* L's schedule for U: U's pivots and dependencies are elsewhere */
    CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.U, lv, 1, 1, NULL, 1, &pl), BSR_ERR_STRUCTURE);
    /* U given as a lower triangle */
    CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.U, f.lvU, 0, 0, NULL, 1, &pl), BSR_ERR_STRUCTURE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "wrong side"));
    /* wrong size */
    bad.n = n - 1;
    CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.L, &bad, 0, 1, NULL, 1, &pl), BSR_ERR_SIZE);
    free(bad.rows);
    free(bad.level_ptr);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

/* ---- plans independent of the thread count (setup2) ---------------------- */

/* Two plans equal in every array. */
static int same_plan(const bsr_trsv_plan *a, const bsr_trsv_plan *b)
{
    size_t n = (size_t)a->n, z = (size_t)a->nnzb;
    return a->n == b->n && a->nnzb == b->nnzb && a->max_width == b->max_width && bsr_test_same_ints(a->rows, b->rows, n) &&
           bsr_test_same_ints(a->rstart, b->rstart, n) && bsr_test_same_ints(a->rend, b->rend, n) && bsr_test_same_ints(a->pbeg, b->pbeg, n) &&
           bsr_test_same_ints(a->pend, b->pend, n) && bsr_test_same_ints(a->colind, b->colind, z) && !a->map == !b->map &&
           (!a->map || bsr_test_same_ints(a->map, b->map, z));
}

/* Plan and tree plan of triangle w of f in mode (0 as stored, 1 schedule
 * order, 2 renumbered) with nt threads; also checks the layout. */
typedef struct { bsr_trsv_plan pl; int ntl, *tl, *rg, nrg, ok; } plans;
static void make_plans(const bsr_ilu_factors *f, int w, int mode, const int *qpos, int nt, plans *p)
{
    const bsr_matrix *M = w ? f->U : f->L;
    const bsr_levels *lv = w ? f->lvU : f->lvL;
    omp_set_num_threads(nt);
    BSR_ASSERT_OK(bsr_trsv_plan_build(M, lv, w, mode > 0, mode == 2 ? qpos : NULL, 1, &p->pl));
    BSR_ASSERT_OK(bsr_trsv_tree_plan(M, w, f->ord, &p->ntl, &p->tl, &p->rg, &p->nrg, &p->ok));
    check_layout(M, lv, mode > 0, mode == 2 ? qpos : NULL, &p->pl);
    /* without the checks (trusted schedules): the same layout */
    bsr_trsv_plan u;
    BSR_ASSERT_OK(bsr_trsv_plan_build(M, lv, w, mode > 0, mode == 2 ? qpos : NULL, 0, &u));
    CU_ASSERT(same_plan(&p->pl, &u));
    bsr_trsv_plan_free(&u);
}

/* bsr_trsv_plan_build and bsr_trsv_tree_plan give the same arrays with 1 and
 * several threads (the parallel paths forced at these sizes) on a stencil (natural,
 * ND) and an irregular random pattern, and refuse a bad schedule with the
 * same message. */
static void test_plans_threads(void)
{
    int nt = omp_get_max_threads();
    bsr_team_force(1);   /* 4 threads at these sizes */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:20:3", BSR_DOUBLE, &P));
    bsr_matrix *R = bsr_test_irregular_matrix(9000, 2, 11);
    const bsr_matrix *mats[] = {P.A, P.A, R};
    const bsr_order_kind kinds[] = {BSR_ORDER_NATURAL, BSR_ORDER_ND, BSR_ORDER_NATURAL};
    for (int m = 0; m < 3; m++) {
        bsr_ilu *F = bsr_test_ilu0_symbolic(mats[m], kinds[m]);
        bsr_ilu_factors f;
        BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
        const int n = f.L->nbrows;
        CU_ASSERT_FATAL(n >= 2 * BSR_PAR_ROWS);
        int *qpos = malloc(sizeof(int) * n);
        for (int q = 0; q < n; q++) qpos[f.lvL->rows[q]] = q;
        for (int w = 0; w < 2; w++)
            for (int mode = 0; mode < 3; mode++) {
                plans a, b;
                make_plans(&f, w, mode, qpos, 1, &a);
                make_plans(&f, w, mode, qpos, 4, &b);
                CU_ASSERT(same_plan(&a.pl, &b.pl));
                CU_ASSERT(a.ntl == b.ntl && a.nrg == b.nrg && a.ok == b.ok && bsr_test_same_ints(a.tl, b.tl, (size_t)a.ntl + 1) &&
                          bsr_test_same_ints(a.rg, b.rg, 2 * (size_t)a.nrg));
                if (kinds[m] == BSR_ORDER_ND) { CU_ASSERT(a.nrg > 1 && a.ok); }
                bsr_trsv_plan_free(&a.pl); bsr_trsv_plan_free(&b.pl);
                free(a.tl); free(a.rg); free(b.tl); free(b.rg);
            }
        /* a row moved to the first level: the same (first) offending row either way */
        bsr_levels bad = *f.lvL;
        bad.rows = malloc(sizeof(int) * n);
        memcpy(bad.rows, f.lvL->rows, sizeof(int) * n);
        int a0 = bad.level_ptr[0], z = bad.level_ptr[bad.nlevels - 1], t = bad.rows[a0];
        bad.rows[a0] = bad.rows[z]; bad.rows[z] = t;
        char msg[2][256];
        for (int r = 0; r < 2; r++) {
            bsr_trsv_plan pl;
            omp_set_num_threads(r ? 4 : 1);
            CU_ASSERT_EQUAL(bsr_trsv_plan_build(f.L, &bad, 0, 1, NULL, 1, &pl), BSR_ERR_STRUCTURE);
            snprintf(msg[r], sizeof msg[r], "%s", bsr_last_error());
        }
        CU_ASSERT_STRING_EQUAL(msg[0], msg[1]);
        free(bad.rows);
        free(qpos);
        bsr_ilu_destroy(F);
    }
    bsr_matrix_destroy(R);
    bsr_problem_free(&P);
    bsr_team_force(0);
    omp_set_num_threads(nt);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"device layouts of ILU factors (natural, RCM, ND; renumber 0/1/2; tree)", test_layouts},
        {"bad schedules refused", test_bad_schedules},
        {"plans: 1 thread = several", test_plans_threads},
        {NULL, NULL}};
    return bsr_test_main("trsv_plan", tests, argc, argv);
}
