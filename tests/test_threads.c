/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads that never oversubscribe: work too small to pay for a team runs
 * on the calling thread (bsr_par_worth), a larger setup loop takes the one
 * setup team (bsr_team), the default team stays within the cgroup CPU quota
 * (bsr_threads_default_rule), and the ranks of a distributed run share their
 * node's cores (bsr_threads_per_rank).
 *
 * "A small solve opens no team" is checked on the parallel regions
 * themselves: this program defines GNU OpenMP's GOMP_parallel and
 * GOMP_parallel_sections (the library is linked into it statically, so its
 * regions call these), counts the regions that ask for more than one thread
 * (GCC passes num_threads = 1 for a region whose if clause is false) and
 * forwards to libgomp.  Under another OpenMP runtime the hook is never
 * reached and that test skips. */
#define _GNU_SOURCE
#include "harness.h"
#include "internal.h"
#include "ilu_impl.h"
#include <dlfcn.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the hook ---------------------------------------------------------------- */
#define MAX_SITES 64
static atomic_long regions, teams;          /* regions opened; those asking for > 1 thread */
static atomic_long widest;                  /* the largest team asked for (0: the default, counted as such) */
static void *sites[MAX_SITES];              /* callers of the regions asking for a team */
static int nsites;

static void record(unsigned num_threads, void *caller)
{
    atomic_fetch_add(&regions, 1);
    long w = num_threads ? (long)num_threads : (long)omp_get_max_threads();
    for (long m = atomic_load(&widest); w > m && !atomic_compare_exchange_weak(&widest, &m, w);) {}
    if (num_threads == 1) return;
    atomic_fetch_add(&teams, 1);
    for (int i = 0; i < nsites; i++)
        if (sites[i] == caller) return;
    if (nsites < MAX_SITES) sites[nsites++] = caller;
}

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    static void (*real)(void (*)(void *), void *, unsigned, unsigned);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "GOMP_parallel");
    record(num_threads, __builtin_return_address(0));
    real(fn, data, num_threads, flags);
}

void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count, unsigned flags);
void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count, unsigned flags)
{
    static void (*real)(void (*)(void *), void *, unsigned, unsigned, unsigned);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "GOMP_parallel_sections");
    record(num_threads, __builtin_return_address(0));
    real(fn, data, num_threads, count, flags);
}

/* Team requests since the last reset; on > 0 and what given, the functions
 * that asked are named (addr2line on this executable). */
static long teams_since(const char *what)
{
    long t = atomic_load(&teams);
    if (t > 0 && what) {
        printf("\n  %s: %ld parallel region(s) asked for a team, opened in:\n", what, t);
        fflush(stdout);
        for (int i = 0; i < nsites; i++) {
            Dl_info di;
            if (!dladdr(sites[i], &di)) continue;
            char cmd[256];
            snprintf(cmd, sizeof cmd, "addr2line -f -s -e /proc/%ld/exe %p 2>/dev/null | paste -sd ' ' | sed 's/^/    /'",
                     (long)getpid(), (void *)((char *)sites[i] - (char *)di.dli_fbase));
            if (system(cmd) != 0) printf("    %p\n", sites[i]);
        }
    }
    atomic_store(&teams, 0);
    atomic_store(&regions, 0);
    atomic_store(&widest, 0);
    nsites = 0;
    return t;
}

/* ---- the threshold ------------------------------------------------------------ */
static void test_threshold(void)
{
    CU_ASSERT_FALSE(bsr_par_worth(0));
    CU_ASSERT_FALSE(bsr_par_worth(BSR_PAR_WORK - 1));
    CU_ASSERT_TRUE(bsr_par_worth(BSR_PAR_WORK));
    CU_ASSERT_TRUE(bsr_par_worth((int64_t)1 << 40));
    /* a poisson2d:40 vector (1444 rows) is far below, a 100^3 grid far above */
    CU_ASSERT_FALSE(bsr_par_worth(1444));
    CU_ASSERT_TRUE(bsr_par_worth(1000000));
}

/* ---- the rule for the ranks of a node ----------------------------------------- */
static void test_rank_rule(void)
{
    /* node cores, ranks on the node, CPUs the process may run on, OMP_NUM_THREADS set: the team */
    static const struct { int cores, ranks, bound, omp_set, want; } rule[] = {
        /* OMP_NUM_THREADS set: left alone (0) */
        {64, 4, 64, 1, 0},
        {2, 1, 2, 1, 0},
        /* not set: the node's cores shared by its ranks */
        {64, 4, 64, 0, 16},
        {64, 1, 64, 0, 64},
        {64, 3, 64, 0, 21},
        {2, 2, 2, 0, 1},
        /* oversubscribed: never 0 */
        {2, 4, 2, 0, 1},
        {16, 64, 16, 0, 1},
        /* no more than the process may run on (mpiexec bound it to a socket or a core) */
        {64, 4, 32, 0, 16},
        {64, 2, 16, 0, 16},
        {64, 4, 1, 0, 1},
        /* unknown node size or rank count */
        {0, 4, 8, 0, 2},
        {8, 0, 8, 0, 8},
        {0, 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; i++) {
        int t = bsr_threads_per_rank(rule[i].cores, rule[i].ranks, rule[i].bound, rule[i].omp_set);
        CU_ASSERT_EQUAL(t, rule[i].want);
        if (t != rule[i].want)
            printf("\n  bsr_threads_per_rank(%d, %d, %d, %d) = %d, want %d", rule[i].cores, rule[i].ranks,
                   rule[i].bound, rule[i].omp_set, t, rule[i].want);
    }
    /* the environment test */
    const char *e = getenv("OMP_NUM_THREADS");
    char *saved = e ? strdup(e) : NULL;
    setenv("OMP_NUM_THREADS", "3", 1);
    CU_ASSERT_TRUE(bsr_omp_threads_user_set());
    setenv("OMP_NUM_THREADS", "", 1);
    CU_ASSERT_FALSE(bsr_omp_threads_user_set());
    unsetenv("OMP_NUM_THREADS");
    CU_ASSERT_FALSE(bsr_omp_threads_user_set());
    if (saved) setenv("OMP_NUM_THREADS", saved, 1);
    free(saved);
}

/* ---- the default team: affinity mask and cgroup quota ------------------------- */
static void test_default_rule(void)
{
    /* OMP_NUM_THREADS set: left alone (0), whatever the quota */
    CU_ASSERT_EQUAL(bsr_threads_default_rule(64, 8, 1), 0);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(64, 0, 1), 0);
    /* no quota: the affinity mask's CPUs */
    CU_ASSERT_EQUAL(bsr_threads_default_rule(64, 0, 0), 64);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(2, 0, 0), 2);
    /* a quota below the mask lowers the team, one above does not raise it */
    CU_ASSERT_EQUAL(bsr_threads_default_rule(64, 8, 0), 8);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(4, 16, 0), 4);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(16, 16, 0), 16);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(64, 1, 0), 1);
    /* unknown mask: one thread */
    CU_ASSERT_EQUAL(bsr_threads_default_rule(0, 0, 0), 1);
    CU_ASSERT_EQUAL(bsr_threads_default_rule(-1, 4, 0), 1);

    /* quota / period in whole CPUs, rounded down, at least 1; none: 0 */
    CU_ASSERT_EQUAL(bsr_quota_cpus(800000, 100000), 8);
    CU_ASSERT_EQUAL(bsr_quota_cpus(150000, 100000), 1);
    CU_ASSERT_EQUAL(bsr_quota_cpus(50000, 100000), 1);
    CU_ASSERT_EQUAL(bsr_quota_cpus(-1, 100000), 0);      /* cgroup v1: no quota */
    CU_ASSERT_EQUAL(bsr_quota_cpus(100000, 0), 0);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse("max 100000\n"), 0);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse("1600000 100000\n"), 16);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse("250000 100000"), 2);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse("garbage"), 0);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse(""), 0);
    CU_ASSERT_EQUAL(bsr_cpu_max_parse(NULL), 0);

    /* this machine: never more than the affinity mask, never 0 */
    const int avail = bsr_cpus_available();
    CU_ASSERT(avail >= 1 && avail <= omp_get_num_procs());
    CU_ASSERT(bsr_cgroup_cpus() >= 0);
}

/* ---- a setup loop's team: serial, or the one setup team ------------------------ */
static void test_team(void)
{
    /* the rule: serial below two grains, else the one team size */
    CU_ASSERT_EQUAL(bsr_team_rule(0, 1024, 16), 1);
    CU_ASSERT_EQUAL(bsr_team_rule(2047, 1024, 16), 1);
    CU_ASSERT_EQUAL(bsr_team_rule(2048, 1024, 16), 16);   /* no team sized by its work */
    CU_ASSERT_EQUAL(bsr_team_rule((int64_t)1 << 40, 1, 16), 16);   /* no overflow */
    CU_ASSERT_EQUAL(bsr_team_rule(5, 0, 16), 16);   /* grain < 1 counts as 1 */
    CU_ASSERT_EQUAL(bsr_team_rule(1, 0, 16), 1);
    CU_ASSERT_EQUAL(bsr_team_rule(1000000, 1024, 1), 1);
    for (int64_t w = 2; w < ((int64_t)1 << 40); w *= 3)   /* every loop with a team: the same size */
        CU_ASSERT_EQUAL(bsr_team_rule(w, 1, 7), 7);
    /* the cap: BSR_TEAM_MAX unless the environment names 1..4096 */
    CU_ASSERT_EQUAL(bsr_team_cap(NULL), BSR_TEAM_MAX);
    CU_ASSERT_EQUAL(bsr_team_cap(""), BSR_TEAM_MAX);
    CU_ASSERT_EQUAL(bsr_team_cap("32"), 32);
    CU_ASSERT_EQUAL(bsr_team_cap("1"), 1);
    CU_ASSERT_EQUAL(bsr_team_cap("0"), BSR_TEAM_MAX);
    CU_ASSERT_EQUAL(bsr_team_cap("-4"), BSR_TEAM_MAX);
    CU_ASSERT_EQUAL(bsr_team_cap("8x"), BSR_TEAM_MAX);
    CU_ASSERT_EQUAL(bsr_team_cap("5000"), BSR_TEAM_MAX);
    /* the process's threads: the team is min(threads, cap); a setup loop
     * over rows is serial below two grains (poisson2d:64's 3844 rows) */
    const int nt0 = omp_get_max_threads(), cap = bsr_team_cap(getenv("BSR_TEAM_MAX"));
    omp_set_num_threads(cap + 48);
    CU_ASSERT_EQUAL(bsr_team_size(), cap);
    CU_ASSERT_EQUAL(bsr_team(3844, BSR_ROW_GRAIN), 1);
    CU_ASSERT_EQUAL(bsr_team(2 * BSR_ROW_GRAIN - 1, BSR_ROW_GRAIN), 1);
    CU_ASSERT_EQUAL(bsr_team(2 * BSR_ROW_GRAIN, BSR_ROW_GRAIN), cap);
    CU_ASSERT_EQUAL(bsr_team(1000000000, BSR_ROW_GRAIN), cap);
    omp_set_num_threads(3);
    CU_ASSERT_EQUAL(bsr_team_size(), cap < 3 ? cap : 3);
    CU_ASSERT_EQUAL(bsr_team(1000000, 1024), cap < 3 ? cap : 3);
    omp_set_num_threads(nt0);
}

/* ---- a small solve opens no team ---------------------------------------------- */
static void test_small_solve(void)
{
    const int nt0 = omp_get_max_threads();
    omp_set_num_threads(4);   /* a team would be asked for even on a 1-core machine */
    /* the hook works: a large fill opens a team */
    bsr_multivec *big;
    BSR_ASSERT_OK(bsr_multivec_create(&big, 1 << 20, 1, BSR_DOUBLE));
    teams_since(NULL);
    BSR_ASSERT_OK(bsr_multivec_fill(big, 1.0));
    long r = atomic_load(&regions), t = atomic_load(&teams);
    teams_since(NULL);
    bsr_multivec_destroy(big);
    if (r == 0) {
        BSR_TEST_SKIP("the parallel regions do not go through GOMP_parallel (not GNU OpenMP)");
        omp_set_num_threads(nt0);
        return;
    }
    CU_ASSERT(t >= 1);

    bsr_problem P;
    /* small: every kernel below BSR_PAR_WORK (the products of stencil3d:4:4
     * with k = 4: 20k multiply-adds), and below the 512 rows from which the
     * ILU scaling (ilu_setup.c) takes two threads */
    BSR_ASSERT_OK(bsr_generate("poisson2d:16", BSR_DOUBLE, &P));   /* 196 rows */
    CU_ASSERT_EQUAL(teams_since("poisson2d:16 generated"), 0);
    bsr_problem Q;
    BSR_ASSERT_OK(bsr_generate("stencil3d:4:4", BSR_DOUBLE, &Q));  /* 64 block rows of 4 x 4 */
    CU_ASSERT_EQUAL(teams_since("stencil3d:4:4 generated"), 0);
    /* every setup is serial at this size, in every order: the ND tree's
     * factorization too (one thread per 512 rows, src/ilu/ilu_factor.c) */
    static const char *const cases[] = {
        "method=bicgstab,precond=none",
        "method=cg,precond=jacobi",
        "method=gmres,precond=ssor",
        "method=bicgstab,precond=ilu0,reorder=natural",
        "method=gmres,precond=ilu0,reorder=natural,restart=8",
        "method=bicgstab,precond=ilut,reorder=natural",
        "method=gmres,precond=ilu2,reorder=natural",
        "method=bicgstab,precond=ilu0",
        "method=gmres,precond=ilu2",
        "method=bicgstab,precond=ilu0,reorder=center",
        "method=bicgstab,precond=ilu0,reorder=rcm",
        "method=bicgstab,precond=ilu0,precision=float,precond_precision=float,reorder=natural",
        "method=idr,precond=ilu0,reorder=natural",
    };
    for (int p = 0; p < 2; p++) {
        const bsr_problem *pb = p ? &Q : &P;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int k = 1; k <= 4; k += 3) {
                bsr_precision prec = strstr(cases[c], "precision=float") ? BSR_FLOAT : BSR_DOUBLE;
                bsr_matrix *A = pb->A, *Af = NULL;
                if (prec == BSR_FLOAT) {
                    BSR_ASSERT_OK(bsr_matrix_copy(pb->A, BSR_FLOAT, &Af));
                    A = Af;
                }
                char what[256];
                snprintf(what, sizeof what, "%s, %s, k = %d", pb->name, cases[c], k);
                bsr_solver *s;
                BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cases[c]));
                bsr_multivec *B, *X;
                int64_t n = bsr_multivec_rows(pb->rhs);
                BSR_ASSERT_OK(bsr_multivec_create(&B, n, k, prec));
                BSR_ASSERT_OK(bsr_multivec_create(&X, n, k, prec));
                BSR_ASSERT_OK(bsr_multivec_random(B, 7));
                teams_since(NULL);
                BSR_ASSERT_OK(bsr_solver_setup(s, A));
                char sw[300];
                snprintf(sw, sizeof sw, "setup of %s", what);
                CU_ASSERT_EQUAL(teams_since(sw), 0);
                bsr_solver_stats st;
                bsr_status ss = bsr_solver_solve(s, B, X, &st);
                CU_ASSERT(ss == BSR_OK || ss == BSR_ERR_NOCONV || ss == BSR_ERR_BREAKDOWN);
                snprintf(sw, sizeof sw, "solve of %s (%d iterations)", what, st.col[0].iterations);
                CU_ASSERT_EQUAL(teams_since(sw), 0);
                CU_ASSERT(st.col[0].iterations > 0);
                bsr_solver_stats_free(&st);
                /* a refactor and a second solve likewise */
                BSR_ASSERT_OK(bsr_solver_refactor(s, A));
                snprintf(sw, sizeof sw, "refactor of %s", what);
                CU_ASSERT_EQUAL(teams_since(sw), 0);
                BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
                ss = bsr_solver_solve(s, B, X, &st);
                CU_ASSERT(ss == BSR_OK || ss == BSR_ERR_NOCONV || ss == BSR_ERR_BREAKDOWN);
                bsr_solver_stats_free(&st);
                snprintf(sw, sizeof sw, "second solve of %s", what);
                CU_ASSERT_EQUAL(teams_since(sw), 0);
                bsr_multivec_destroy(B);
                bsr_multivec_destroy(X);
                bsr_solver_destroy(s);
                bsr_matrix_destroy(Af);
            }
    }
    bsr_problem_free(&P);
    bsr_problem_free(&Q);
    omp_set_num_threads(nt0);
}

/* A setup of a few thousand rows on a team of 64: no region asks for more
 * than the one team size (bsr_team_size: min(threads, BSR_TEAM_MAX)), never
 * the whole team, and some do ask for several (those with two grains of
 * work: ILU's scaling and factorization among them). */
static void test_medium_setup(void)
{
    const int nt0 = omp_get_max_threads();
    omp_set_num_threads(64);
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:16:4", BSR_DOUBLE, &P));   /* 4096 block rows */
    static const char *const cases[] = {
        "precond=ilu0,reorder=natural", "precond=ilu0,reorder=center", "precond=ilu0",
        "precond=ilu2,reorder=natural", "precond=ilu2", "precond=ilu0,reorder=rcm",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bsr_solver *s;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cases[c]));
        teams_since(NULL);
        BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
        long r = atomic_load(&regions), t = atomic_load(&teams), w = atomic_load(&widest);
        teams_since(NULL);
        if (r) {   /* 0 regions: not GNU OpenMP (the small solve skips) */
            CU_ASSERT(t > 0);
            CU_ASSERT(w <= bsr_team_size() && w < 64);
            if (w > bsr_team_size()) printf("\n  setup of stencil3d:16:4, %s: a region asked for %ld threads\n", cases[c], w);
        }
        bsr_solver_destroy(s);
    }
    bsr_problem_free(&P);
    omp_set_num_threads(nt0);
}

/* The runs concurrent ILU rows take by ticket (ilu_cut_runs): in natural
 * order of a 40^3 grid, its 40 planes for 16 threads and for 64 alike (64
 * threads once cut it into lines, a slower schedule), 20 threads of them at
 * 64; in centre order, runs of 32 rows at least (they were one row each). */
static void test_cut_runs(void)
{
    const int g = 40;
    bsr_problem P;
    char spec[64];
    snprintf(spec, sizeof spec, "stencil3d:%d:1", g);
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &P));
    const bsr_matrix *A = P.A;
    const int n = A->nbrows;
    int *run = malloc(sizeof(int) * ((size_t)n + 2)), team = 0;
    for (int nt = 16; nt <= 64; nt *= 4) {
        const int nr = ilu_cut_runs(A->rowptr, A->colind, 0, n, nt, run, &team);
        CU_ASSERT_EQUAL(nr, g);                       /* one run a plane */
        CU_ASSERT_EQUAL(team, nt < g / 2 ? nt : g / 2);
        for (int r = 0; r < nr; r++) CU_ASSERT_EQUAL(run[r], r * g * g);
        CU_ASSERT_EQUAL(run[nr], n);
    }
    CU_ASSERT_EQUAL(ilu_cut_runs(A->rowptr, A->colind, 0, n, 1, run, &team), g);   /* one thread: planes too */
    CU_ASSERT_EQUAL(team, 1);
    bsr_order_options oo;
    BSR_ASSERT_OK(bsr_order_parse("center", &oo));
    bsr_ordering *o;
    BSR_ASSERT_OK(bsr_order(A, &oo, &o));
    bsr_matrix *B;
    BSR_ASSERT_OK(bsr_permute(A, o, &B));
    const int nr = ilu_cut_runs(B->rowptr, B->colind, 0, n, 64, run, &team);
    CU_ASSERT(nr >= 2 && nr <= n / 32);
    CU_ASSERT_EQUAL(team, nr / 2 < 64 ? nr / 2 : 64);
    int shortest = n;
    for (int r = 0; r + 1 < nr; r++)   /* the last run may be shorter */
        if (run[r + 1] - run[r] < shortest) shortest = run[r + 1] - run[r];
    CU_ASSERT(shortest >= 32);
    CU_ASSERT(run[0] == 0 && run[nr] == n);
    bsr_matrix_destroy(B);
    bsr_ordering_free(o);
    free(run);
    bsr_problem_free(&P);
}

/* In RCM order of an 80^3 grid the levels near the corners are narrower
 * than the widest cut's distance (4096 rows): no run there may hold more
 * than its share of the rows (n / 32 for 16 threads), or the next run waits
 * for nearly all of it (the rows ran about serially). */
static void test_cut_runs_rcm(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:80:1", BSR_DOUBLE, &P));
    const int n = P.A->nbrows;
    bsr_order_options oo;
    BSR_ASSERT_OK(bsr_order_parse("rcm", &oo));
    bsr_ordering *o;
    BSR_ASSERT_OK(bsr_order(P.A, &oo, &o));
    bsr_matrix *B;
    BSR_ASSERT_OK(bsr_permute(P.A, o, &B));
    int *run = malloc(sizeof(int) * ((size_t)n + 2)), team = 0;
    const int nr = ilu_cut_runs(B->rowptr, B->colind, 0, n, 16, run, &team);
    int longest = 0;
    for (int r = 0; r < nr; r++)
        if (run[r + 1] - run[r] > longest) longest = run[r + 1] - run[r];
    CU_ASSERT(longest <= n / 32);
    if (longest > n / 32) printf("\n  RCM 80^3: a run of %d rows (share %d)\n", longest, n / 32);
    CU_ASSERT_EQUAL(team, 16);
    CU_ASSERT(run[0] == 0 && run[nr] == n);
    free(run);
    bsr_matrix_destroy(B);
    bsr_ordering_free(o);
    bsr_problem_free(&P);
}

/* A large solve still uses the team (the threshold is not "never"). */
static void test_large_solve(void)
{
    const int nt0 = omp_get_max_threads();
    omp_set_num_threads(4);
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:24:4", BSR_DOUBLE, &P));   /* 13824 block rows of 4 x 4 */
    bsr_solver *s;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "method=bicgstab,precond=ilu0,maxit=3"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    teams_since(NULL);
    bsr_solver_stats st;
    bsr_status ss = bsr_solver_solve(s, P.rhs, X, &st);
    CU_ASSERT(ss == BSR_OK || ss == BSR_ERR_NOCONV || ss == BSR_ERR_BREAKDOWN);
    bsr_solver_stats_free(&st);
    long r = atomic_load(&regions), t = atomic_load(&teams);
    teams_since(NULL);
    if (r) CU_ASSERT(t > 0);   /* 0 regions: not GNU OpenMP (the small solve skips) */
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
    omp_set_num_threads(nt0);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"the threshold of a team", test_threshold},
        {"threads per rank of a node", test_rank_rule},
        {"the default team: affinity and cgroup quota", test_default_rule},
        {"one team size: serial or min(threads, cap)", test_team},
        {"a small solve opens no team", test_small_solve},
        {"a large solve does", test_large_solve},
        {"a medium setup's teams: the one team size, not the whole team", test_medium_setup},
        {"ILU's concurrent rows: plane runs at 64 threads, none of one row", test_cut_runs},
        {"ILU's concurrent rows in RCM order: no run above its share", test_cut_runs_rcm},
        {NULL, NULL},
    };
    return bsr_test_main("threads", tests, argc, argv);
}
