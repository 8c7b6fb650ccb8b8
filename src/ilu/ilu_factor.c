/* SPDX-License-Identifier: BSD-3-Clause */
/* Numeric block ILU(0) / ILUT(tau) / ILU2(tau1,tau2) factorization.
 *
 * Row (IKJ) form of the Crout recurrences of the design note: row k of the
 * scaled, permuted A is loaded into a sparse accumulator; its lower columns i
 * are eliminated in ascending order (a min-heap, since fill creates new ones):
 * the block x_ki becomes the multiplier x_ki d_i^{-1}, is classified as L
 * (first order), R (second order) or dropped, and then updates the row by
 *     L: x -= l_ki (u_i + w_i)        R: x -= r_ki u_i   (never r_ki w_i),
 * exactly the sums of the note's steps 1-2 (the same products, the same
 * order of accumulation for every target block: ascending i).  The pivot d_k
 * is the accumulated diagonal block; the upper blocks z_kj are classified on
 * ||d_k^{-1} z_kj||_F and kept as U (the stored U diagonal is d_k^{-1}) or W.
 * R blocks of row k are needed only while row k is eliminated, so only W
 * outlives its row; both are freed at the end.
 * ILU(0): the same recurrences with the pattern fixed to A's (+ diagonal) and
 * no dropping (its own row kernel, ilu_row0.c); ILUT(tau): tau2 = tau1 (no
 * second-order class).
 *
 * Parallelism: with a nested-dissection ordering (p-bordered form, checked in
 * setup) a row reaches only rows of its own tree node's subtree, so the
 * subtrees are factored as OpenMP tasks, each node's separator rows after
 * both children.  Every row is computed by the same code from the same
 * finished rows, hence serial and parallel factors are identical bit for bit.
 * Without a tree (natural, RCM, ...): row k reads only earlier rows (those of
 * its lower pattern, known up front for ILU(0) and a frozen pattern, found
 * while eliminating for the thresholds), so rows run concurrently, each
 * waiting for the rows it reads (run_levels; same row code, same inputs:
 * again bit-identical to the serial run). */
#include "ilu_impl.h"
#include <limits.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Shared state of one factorization run. */
typedef struct {
    bsr_ilu *F;
    ilu_work *work;     /* one per thread */
    int err_row;        /* smallest failing row (INT_MAX: none) */
    bsr_status err;
    char msg[256];
    _Atomic int *flag;  /* threshold kinds over a tree with threads: row completion flags
                         * (0 pending, 1 done, 2 failed/skipped), so that a separator's rows
                         * can run concurrently (run_sep); NULL otherwise */
    int nt;             /* threads of the run */
    int progress;       /* report rows done during the run (bsr_progress_tick) */
    _Atomic int64_t ndone;
    int batch;          /* rows a thread factors between two additions to ndone */
} run_t;

/* The most rows a thread factors between two looks at the shared progress
 * count (fewer in small factorizations: n / 256, at least 1). */
#define PROGRESS_ROWS 1024

/* One more row done by the thread of workspace w: with progress on, say now
 * and then how many (a long threshold setup is not silent until it ends).
 * Counted per thread and added to the shared count every R->batch rows:
 * an atomic on one counter and the reporter's flag for every row were two
 * contended cache lines a row for all the threads. */
static inline void row_done(run_t *R, ilu_work *w)
{
    if (!R->progress || ++w->progress_rows < R->batch) return;
    const int64_t d = atomic_fetch_add_explicit(&R->ndone, w->progress_rows, memory_order_relaxed) + w->progress_rows;
    w->progress_rows = 0;
    bsr_progress_tick("ilu factor", d, R->F->n, "rows");
}

/* Record a failure of row k; the smallest row wins, which is the row the
 * serial factorization stops at (see the file comment). */
static void run_fail(run_t *R, int k, bsr_status s, const char *msg)
{
    #pragma omp critical(bsr_ilu_err)
    if (k < R->err_row) {
        R->err_row = k;
        R->err = s;
        snprintf(R->msg, sizeof R->msg, "%s", msg);
    }
}

/* Factor rows [r0, r1) in order with workspace w; 0 when one failed. */
static int run_rows(run_t *R, ilu_work *w, int r0, int r1)
{
    for (int k = r0; k < r1; k++) {
        bsr_status s = ilu_row(R->F, w, k);
        if (R->flag) atomic_store_explicit(&R->flag[k], s ? 2 : 1, memory_order_release);
        if (s) { run_fail(R, k, s, w->msg); return 0; }
        row_done(R, w);
    }
    return 1;
}

/* Distance from row k to the nearest earlier row it reads in the pattern
 * (dp, dc) (k + 1 when it reads none). */
static int near_dist(const int *dp, const int *dc, int k)
{
    int d = k + 1;
    for (int q = dp[k]; q < dp[k + 1]; q++)
        if (dc[q] < k && k - dc[q] < d) d = k - dc[q];
    return d;
}

/* Cut rows [r0, r1) of the pattern (dp, dc) into runs of consecutive rows
 * for up to nt threads: run r = rows [run[r], run[r+1]); returns the number
 * of runs and sets *team, the threads worth running them.  A run starts at a
 * row that reads none of the D rows before it (or after cap rows), and holds
 * RUN_MIN rows at least, with the largest D of D[] that still gives 2 runs a
 * thread of min(nt, RUN_TEAM) threads, else at every row that does not read
 * its predecessor (cap LV_RUN); *team = min(nt, runs / 2), at least 1.
 * In natural 3D order that makes a run one plane (one line where planes are
 * too few): the next plane reads this one a few lines behind, so the runs
 * advance together, and a thread reads the previous line from its own cache.
 * Runs of one line each read the line another thread is writing a few rows
 * ahead: 0.61 s against 0.74-1.06 s for the rows of stencil3d:100:4's ILU2
 * on 16 threads, 0.9 against 1.6 s for poisson2d:1001 (lines of 1001 rows;
 * bench/RESULTS.md).  So more threads than RUN_TEAM do not refine the cut
 * further: they take the plane runs there are (50 threads for 100 planes),
 * never a finer, slower schedule than 16 threads get.
 * Level orders first: where the rows' levels in A's lower pattern come in
 * index order (RCM, centre: BFS levels), a run is a level.  The next level
 * reads this one in the same order, so the levels advance together as the
 * planes of natural order do, while the fill couples the rows inside a level
 * (a level's rows share their parents): runs of RUN_MIN rows inside a level
 * waited for each other, and the threshold rows of stencil3d:100:4 in RCM
 * order took 10.2 s on 16 threads (152 of 163 thread-seconds waiting)
 * against 5.7 s on one.  Any cut is refused when its runs longer than twice
 * the distance at which the next run's first row reads hold more than an
 * eighth of the rows: that run waits for most of the one before (natural
 * order's level cut; the D cuts in RCM order, whose narrow corner levels
 * made runs of RUN_CAP rows).
 * RUN_MIN: in centre or RCM order most rows read no row near them (a level's
 * rows read the level before), which made runs of one row: a ticket (an
 * atomic on one shared counter) and a flag sharing its cache line with other
 * threads' for every row, 62610 runs for 64000 rows. */
#define LV_RUN 256
#define RUN_CAP 65536
#define RUN_MIN 32
#define RUN_TEAM 16
/* The level cut of rows [r0, r1) of the pattern (dp, dc): lv(k) = 1 + the
 * largest lv of the rows of [r0, k) that k reads (0 when none); a run starts
 * where the running maximum of lv grows, RUN_MIN rows after the last start.
 * Writes the starts to run[] and returns their count, and in *late the rows
 * of runs longer than twice the distance at which the next run's first row
 * reads (dist[k - r0]: near_dist); -1 without memory. */
static int level_cut(const int *dp, const int *dc, int r0, int r1, const int *dist, int *run, int64_t *late)
{
    int *lv = bsr_malloc(sizeof(int) * ((size_t)(r1 - r0) + 1), "ILU level runs");
    if (!lv) { bsr_clear_error(); return -1; }
    int nr = 0, top = -1;
    *late = 0;
    for (int k = r0; k < r1; k++) {
        int l = 0;
        for (int q = dp[k]; q < dp[k + 1]; q++)
            if (dc[q] >= r0 && dc[q] < k && lv[dc[q] - r0] + 1 > l) l = lv[dc[q] - r0] + 1;
        lv[k - r0] = l;
        if (k == r0 || (l > top && k - run[nr - 1] >= RUN_MIN)) {
            if (nr && k - run[nr - 1] > 2 * (int64_t)dist[k - r0]) *late += k - run[nr - 1];
            run[nr++] = k;
        }
        if (l > top) top = l;
    }
    free(lv);
    return nr;
}

int ilu_cut_runs(const int *dp, const int *dc, int r0, int r1, int nt, int *run, int *team)
{
    static const int D[4] = {4096, 256, 16, 2}, cap[4] = {RUN_CAP, RUN_CAP, RUN_CAP, LV_RUN};
    const int want = 2 * (nt < RUN_TEAM ? nt : RUN_TEAM);
    /* the rows' distances: in their own array (the level cut writes run[]
     * while it reads them), else in run[], which the D cut's second pass
     * overwrites with run starts that never pass the row being read */
    int *dist = bsr_malloc(sizeof(int) * ((size_t)(r1 - r0) + 1), "ILU row distances"), nr = 0;
    if (!dist) bsr_clear_error();
    int *d = dist ? dist : run;
    for (int k = r0; k < r1; k++) d[k - r0] = near_dist(dp, dc, k);
    if (dist) {   /* a run a level, where the levels pass */
        int64_t lvlate = 0;
        nr = level_cut(dp, dc, r0, r1, dist, run, &lvlate);
        if (nr < want || lvlate > (r1 - r0) / 8) nr = 0;
    }
    if (nr <= 0) {
        int cnt[4] = {0, 0, 0, 0}, start[4] = {r0, r0, r0, r0}, t = 0;
        int64_t late[4] = {0, 0, 0, 0};
        for (int k = r0; k < r1; k++)
            for (int c = 0; c < 4; c++)
                if (k == r0 || (k - start[c] >= RUN_MIN && (d[k - r0] >= D[c] || k - start[c] >= cap[c]))) {
                    if (k - start[c] > 2 * (int64_t)d[k - r0]) late[c] += k - start[c];
                    cnt[c]++;
                    start[c] = k;
                }
        while (t < 3 && (cnt[t] < want || late[t] > (r1 - r0) / 8)) t++;
        nr = 0;
        for (int k = r0; k < r1; k++)
            if (k == r0 || (k - run[nr - 1] >= RUN_MIN && (d[k - r0] >= D[t] || k - run[nr - 1] >= cap[t]))) run[nr++] = k;
    }
    free(dist);
    run[nr] = r1;
    *team = nr / 2 < nt ? (nr / 2 > 1 ? nr / 2 : 1) : nt;
    return nr;
}

/* Take the rows of [r0, r1) by ticket, one row a ticket in index order, and
 * factor them with the executing thread's workspace, each row waiting
 * (inside ilu_row) for the rows it reads and publishing its own flag; a
 * failed row's dependents are skipped. */
static void run_tickets(run_t *R, int r0, int r1, atomic_int *ticket)
{
    ilu_work *w = &R->work[omp_get_thread_num()];
    for (int t; (t = atomic_fetch_add_explicit(ticket, 1, memory_order_relaxed)) < r1 - r0;) {
        const int k = r0 + t;
        bsr_status s = ilu_row(R->F, w, k);
        if (s && !w->skipped) run_fail(R, k, s, w->msg);
        w->skipped = 0;
        atomic_store_explicit(&R->flag[k], s ? 2 : 1, memory_order_release);
        row_done(R, w);
    }
}

/* The separator rows [r0, r1) of a node whose subtree is factored: large
 * ones by several tasks at once (run_tickets), small ones in order.  A row
 * of a separator reads, after fill, most rows of the separator before it,
 * in ascending order and the nearest last; so the rows are handed out one
 * at a time and the rows in flight advance as a pipeline, each behind the
 * one before by its last eliminations.  (Runs of consecutive rows, the
 * stencil orders' cut, would serialize them: a run's first row waits for
 * the whole run before it.)  A ticket is taken only by a running
 * task, which runs its row to the end without a scheduling point, so every
 * awaited row is being computed: no deadlock.  0 when a row failed. */
#define SEP_TASK_ROWS 32
static int run_sep(run_t *R, int r0, int r1)
{
    int ntask = R->flag ? (r1 - r0) / SEP_TASK_ROWS : 0;
    if (ntask > R->nt) ntask = R->nt;
    if (ntask < 2) return run_rows(R, &R->work[omp_get_thread_num()], r0, r1);
    atomic_int ticket;
    atomic_init(&ticket, 0);
    for (int i = 0; i < ntask; i++) {
        #pragma omp task shared(ticket) firstprivate(r0, r1)
        run_tickets(R, r0, r1, &ticket);
    }
    #pragma omp taskwait
    int ok = 1;
    for (int k = r0; k < r1 && ok; k++) ok = atomic_load_explicit(&R->flag[k], memory_order_relaxed) == 1;
    return ok;
}

/* R->flag, every row pending, given to nt threads' workspaces (the rows
 * then wait in ilu_row for the rows they read); 0 when it cannot be
 * allocated (BSR_ERR_NOMEM's message set). */
static int flags_attach(run_t *R, int nt)
{
    const int n = R->F->n;
    R->flag = bsr_malloc(sizeof *R->flag * ((size_t)n + 1), "ILU row flags");
    if (!R->flag) return 0;
    for (int k = 0; k < n; k++) atomic_init(&R->flag[k], 0);
    for (int t = 0; t < nt; t++) R->work[t].flags = (const void *)R->flag;
    return 1;
}

/* flags_attach undone (nothing when it failed). */
static void flags_detach(run_t *R, int nt)
{
    for (int t = 0; t < nt; t++) R->work[t].flags = NULL;
    free((void *)R->flag);
    R->flag = NULL;
}

/* Every row by ticket in index order (run_tickets), on nt threads: a frozen
 * pattern of heavy rows without a tree, whose dense separators' rows then
 * pipeline as run_sep's do (runs of consecutive rows would serialize them). */
static bsr_status run_pipelined(run_t *R, int nt)
{
    const int n = R->F->n;
    if (!flags_attach(R, nt))
        return bsr_error(BSR_ERR_NOMEM, "ILU: out of memory for the parallel schedule of %d rows", n);
    atomic_int ticket;
    atomic_init(&ticket, 0);
    #pragma omp parallel num_threads(nt)
    {
        const double t0 = bsr_now();
        run_tickets(R, 0, n, &ticket);
        R->work[omp_get_thread_num()].run_s += bsr_now() - t0;
    }
    flags_detach(R, nt);
    return BSR_OK;
}

/* Factor the subtree of node t: children as tasks, then t's separator.
 * A separator is skipped when a row below it failed (it would read them). */
static int run_node(run_t *R, int t)
{
    const bsr_tree_node *nd = &R->F->ord->nodes[t];
    int ok0 = 1, ok1 = 1;
    if (nd->child[0] >= 0 || nd->child[1] >= 0) {
        if (nd->child[0] >= 0) {
            #pragma omp task shared(ok0) firstprivate(t)
            ok0 = run_node(R, R->F->ord->nodes[t].child[0]);
        }
        if (nd->child[1] >= 0) {
            #pragma omp task shared(ok1) firstprivate(t)
            ok1 = run_node(R, R->F->ord->nodes[t].child[1]);
        }
        #pragma omp taskwait
    }
    if (!ok0 || !ok1) return 0;
    /* tied tasks: the workspace of the executing thread is free between rows */
    return run_sep(R, nd->sep_first, nd->last);
}

/* Wait until row i's flag is set; 1 when the row is done, 0 when it failed.
 * Spins, then yields (shared cores: let the awaited thread run), then, after
 * about a millisecond of that, sleeps between looks: a thread that waits so
 * long waits for a descheduled one, and spinning on would only burn the CPU
 * time (a cgroup quota's, a hyperthread sibling's) that thread needs.  A
 * wait that does not find the row done is counted in w (the profile's idle
 * time of the concurrent rows). */
int ilu_wait_row(const void *flags, int i, ilu_work *w)
{
    const _Atomic int *f = (const _Atomic int *)flags + i;
    int v = atomic_load_explicit(f, memory_order_acquire), spins = 0, yields = 0;
    if (v) return v == 1;
    const double t0 = bsr_now();
    while ((v = atomic_load_explicit(f, memory_order_acquire)) == 0) {
        if (++spins < 256) continue;
        spins = 0;
        if (yields < 2048) { yields++; sched_yield(); }
        else nanosleep(&(struct timespec){0, 20000}, NULL);
    }
    w->waits++;
    w->wait_s += bsr_now() - t0;
    return v == 1;
}


/* A fixed pattern without a tree (ILU(0)'s, a frozen one), or a threshold
 * factorization in an order without a tree (natural, RCM), in parallel and
 * without barriers.  The rows are cut into runs of consecutive rows
 * (ilu_cut_runs: natural 3D order, a plane or a line a run) and streamed in index order like
 * the serial loop (visiting rows level by level instead was measured 2x
 * slower on one thread: the hardware prefetch is lost).  Threads take runs by
 * ticket in index order and, row by row, wait only for the rows really read,
 * each published by a flag (release/acquire): neighbouring planes (lines)
 * advance as a pipelined wavefront.  A fixed pattern (dp, dc: its lower part) names
 * them up front; a threshold factorization finds them while it eliminates
 * (inside: ilu_row waits on each row before it reads it; dp, dc is A's
 * pattern, which only cuts the runs).  An awaited row has a smaller index, so
 * it belongs to a run handed out earlier to a thread that waits only on
 * smaller rows still: no deadlock.  A failed row's dependents are skipped
 * (they would read it); every row below the smallest failing row still runs
 * from sound inputs, so the row reported is the serial run's, and every row
 * is computed by the same code from the same rows as the serial run: the
 * factors are identical bit for bit. */
static bsr_status run_levels(run_t *R, int nt, const int *dp, const int *dc, int inside)
{
    const bsr_ilu *F = R->F;
    const int n = F->n;
    _Atomic int *flag = bsr_malloc(sizeof *flag * ((size_t)n + 1), "ILU row flags");   /* 0 pending, 1 done, 2 failed/skipped */
    int *run = bsr_malloc(sizeof(int) * ((size_t)n + 2), "ILU row runs"), nr = 0;     /* run r = rows [run[r], run[r+1]) */
    if (!flag || !run) {
        free((void *)flag); free(run);
        return bsr_error(BSR_ERR_NOMEM, "ILU: out of memory for the parallel schedule of %d rows", n);
    }
    for (int k = 0; k < n; k++) atomic_init(&flag[k], 0);
    nr = ilu_cut_runs(F->ap, F->ac, 0, n, nt, run, &nt);   /* cut on A's pattern: a frozen one's fill hides its levels */
    atomic_int ticket;
    atomic_init(&ticket, 0);
    #pragma omp parallel num_threads(nt)
    {
        ilu_work *w = &R->work[omp_get_thread_num()];
        w->flags = inside ? (const void *)flag : NULL;
        const double t0 = bsr_now();
        for (int t; (t = atomic_fetch_add_explicit(&ticket, 1, memory_order_relaxed)) < nr;) {
            for (int k = run[t], ok; k < run[t + 1]; k++) {
                ok = 1;
                for (int q = dp[k]; q < dp[k + 1] && ok && !inside; q++) ok = ilu_wait_row((const void *)flag, dc[q], w);
                if (ok) {
                    bsr_status s = ilu_row(R->F, w, k);
                    if (s && !w->skipped) run_fail(R, k, s, w->msg);
                    ok = !s;
                    w->skipped = 0;
                }
                atomic_store_explicit(&flag[k], ok ? 1 : 2, memory_order_release);
                row_done(R, w);
            }
        }
        w->flags = NULL;
        w->run_s += bsr_now() - t0;
    }
    free((void *)flag); free(run);
    return BSR_OK;
}

/* Free the per-row storage (all = 0 keeps ILU(0)'s fixed rows). */
void ilu_rows_free(bsr_ilu *F, int all)
{
    if (!F->rows) {   /* (rows not made: their column buffer may be, as when their allocation failed) */
        free(F->rowbuf);
        F->rowbuf = NULL;
        return;
    }
    if (F->mode == 0 && !all) return;   /* ILU(0) rows live in L/U or the pool */
    #pragma omp parallel for schedule(static) num_threads(bsr_team(F->n, BSR_ROW_GRAIN))
    for (int k = 0; k < F->n; k++)
        if (F->rows[k].own == 1) { free(F->rows[k].lcol); free(F->rows[k].lval); }
    for (int t = 0; t < F->nwork; t++) ilu_arena_free(&F->work[t]);   /* own == 2: the rows' chunks */
    free(F->rows);
    F->rows = NULL;
    free(F->rowbuf);   /* own == 0 of a threshold kind: the device's rows */
    F->rowbuf = NULL;
}

/* Blocks of permuted row k of A strictly below (*nl) and on or above (*nu,
 * counting the diagonal once, present in A or not) the diagonal: row k of the
 * ILU(0) patterns. */
static void row_split(const bsr_ilu *F, int k, int *nl, int *nu)
{
    int p = F->ap[k], e = F->ap[k + 1], q;
    while (p < e && F->ac[p] < k) p++;   /* columns ascending: L is a prefix */
    for (q = p; q < e && F->ac[q] == k; q++) {}
    *nl = p - F->ap[k];
    *nu = 1 + e - q;
}

/* Row k of L and U (rowptrs done): the diagonal first in U, A's columns split
 * at the diagonal. */
static void symbolic_row(bsr_ilu *F, int k)
{
    int pl = F->L->rowptr[k], pu = F->U->rowptr[k];
    F->U->colind[pu++] = k;
    for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
        if (F->ac[p] < k) F->L->colind[pl++] = F->ac[p];
        else if (F->ac[p] > k) F->U->colind[pu++] = F->ac[p];
    }
}

/* ILU(0) symbolic phase: L, U patterns (A's plus the diagonal) and their
 * level schedules.  Counts, prefix sums and rows in parallel (first touch of
 * the big arrays spread over the threads; the result does not depend on
 * them). */
bsr_status ilu_symbolic0(bsr_ilu *F)
{
    const int n = F->n;
    int64_t nl = 0, nu = 0;
    #pragma omp parallel for schedule(static) reduction(+ : nl, nu) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) {
        int cl, cu;
        row_split(F, k, &cl, &cu);
        nl += cl;
        nu += cu;
    }
    if (nl > INT_MAX || nu > INT_MAX) return bsr_error(BSR_ERR_UNSUPPORTED, "ILU(0): factor too large for int indices");
    BSR_TRY(bsr_matrix_alloc(&F->L, n, n, F->b, (int)nl, F->prec));
    BSR_TRY(bsr_matrix_alloc(&F->U, n, n, F->b, (int)nu, F->prec));
    F->L->rowptr[0] = F->U->rowptr[0] = 0;
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) row_split(F, k, &F->L->rowptr[k + 1], &F->U->rowptr[k + 1]);
    bsr_scan_par(F->L->rowptr + 1, n);
    bsr_scan_par(F->U->rowptr + 1, n);
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) symbolic_row(F, k);
    BSR_TRY(bsr_levels_build_pair(F->L, F->U, &F->lvL, &F->lvU));
    F->st.pattern_id = 1;
    return BSR_OK;
}

/* ILU(0)'s host rows: row k's L and U blocks at their places in L and U
 * (double factors: factored in place) or in a double pool laid out like them
 * (float factors).  Made by the first host factorization, not the symbolic
 * phase: a plan whose values are computed on the device never pays for them
 * (56 bytes a row and their page faults). */
bsr_status ilu_rows0(bsr_ilu *F)
{
    const int n = F->n;
    const size_t bb = (size_t)F->b * F->b, nl = (size_t)F->L->nnzb, nu = (size_t)F->U->nnzb;
    F->rows = bsr_calloc((size_t)n + 1, sizeof(ilu_row_t), "ILU rows");
    if (!F->rows) return BSR_ERR_NOMEM;
    double *lv = F->L->val, *uv = F->U->val;
    if (F->prec != BSR_DOUBLE) {
        F->pool = bsr_malloc(sizeof(double) * (nl + nu + 1) * bb, "ILU(0) double rows");
        if (!F->pool) return BSR_ERR_NOMEM;
        lv = F->pool;
        uv = F->pool + nl * bb;
    }
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int k = 0; k < n; k++) {
        const int l0 = F->L->rowptr[k], u0 = F->U->rowptr[k];
        ilu_row_t *r = &F->rows[k];
        r->lcol = F->L->colind + l0; r->lval = lv + (size_t)l0 * bb;
        r->ucol = F->U->colind + u0; r->uval = uv + (size_t)u0 * bb;
        r->nl = F->L->rowptr[k + 1] - l0;
        r->nu = F->U->rowptr[k + 1] - u0;
    }
    return BSR_OK;
}

/* Copy the double block src into the factors' storage (precision p). */
static void put_block(void *dst, bsr_precision p, size_t at, const double *src, int bb)
{
    if (p == BSR_DOUBLE) memcpy((double *)dst + at * bb, src, sizeof(double) * bb);
    else for (int i = 0; i < bb; i++) ((float *)dst)[at * bb + i] = (float)src[i];
}

/* Nonzero when M's pattern equals the rows' L (upper = 0) or U part. */
static int same_pattern(const bsr_matrix *M, const bsr_ilu *F, int upper)
{
    if (M->rowptr[0] != 0) return 0;
    int same = 1;
    /* row by row (equal counts from row 0 on make equal row pointers) */
    #pragma omp parallel for schedule(static) reduction(&& : same) num_threads(bsr_team(F->n, BSR_ROW_GRAIN))
    for (int k = 0; k < F->n; k++) {
        const ilu_row_t *r = &F->rows[k];
        const int cnt = upper ? r->nu : r->nl, p = M->rowptr[k];
        const int *col = upper ? r->ucol : r->lcol;
        int ok = M->rowptr[k + 1] - p == cnt;
        for (int q = 0; q < cnt && ok; q++) ok = M->colind[p + q] == col[q];
        same = same && ok;
    }
    return same;
}

/* Build L and U (BSR, factors' precision) from the rows; reuse the arrays and
 * level schedules when the pattern did not change (ILU(0) refactor always). */
static bsr_status assemble(bsr_ilu *F)
{
    const int n = F->n, bb = F->b * F->b;
    int rebuilt = 0;
    for (int upper = 0; upper < 2; upper++) {
        bsr_matrix **M = upper ? &F->U : &F->L;
        bsr_levels **lv = upper ? &F->lvU : &F->lvL;
        /* ILU(0)'s rows point into L and U's own arrays: the same pattern */
        if (!*M || (F->mode != 0 && !same_pattern(*M, F, upper))) {
            if (!rebuilt) F->st.pattern_id++;
            rebuilt = 1;
            bsr_matrix_destroy(*M); *M = NULL;
            if (*lv) bsr_levels_free(*lv);
            *lv = NULL;
            int64_t nz = 0;
            #pragma omp parallel for schedule(static) reduction(+ : nz) num_threads(bsr_team(n, BSR_ROW_GRAIN))
            for (int k = 0; k < n; k++) nz += upper ? F->rows[k].nu : F->rows[k].nl;
            if (nz > INT_MAX) return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: factor has %lld blocks (> INT_MAX)", (long long)nz);
            BSR_TRY(bsr_matrix_alloc(M, n, n, F->b, (int)nz, F->prec));
            int *rp = (*M)->rowptr, *ci = (*M)->colind;
            rp[0] = 0;
            #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
            for (int k = 0; k < n; k++) rp[k + 1] = upper ? F->rows[k].nu : F->rows[k].nl;
            bsr_scan_par(rp + 1, n);
            #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
            for (int k = 0; k < n; k++)
                memcpy(ci + rp[k], upper ? F->rows[k].ucol : F->rows[k].lcol, sizeof(int) * (size_t)(rp[k + 1] - rp[k]));
        }
        bsr_matrix *A = *M;
        A->dev_stale = 1;
        /* ILU(0) in double: factored in place; a pattern pass: the device
         * computes the values (a copy of 2 x 0.45 GB at 1M block rows, b = 4,
         * page faults included, saved) */
        if ((F->mode == 0 && F->prec == BSR_DOUBLE) || F->pattern_only) continue;
        #pragma omp parallel for schedule(static) num_threads(bsr_team((int64_t)A->nnzb * bb, ILU_TEAM_GRAIN))
        for (int k = 0; k < n; k++) {
            const ilu_row_t *r = &F->rows[k];
            int cnt = upper ? r->nu : r->nl;
            const double *v = upper ? r->uval : r->lval;
            for (int q = 0; q < cnt; q++)
                put_block(A->val, F->prec, (size_t)A->rowptr[k] + q, v + (size_t)q * bb, bb);
        }
    }
    return BSR_OK;
}

/* The level schedules missing after a factorization (L's, U's, the frozen
 * pattern's lower one), their sequential walks at the same time. */
static bsr_status schedules(bsr_ilu *F)
{
    const bsr_matrix *M[3];
    bsr_levels **dst[3], *out[3];
    int up[3], c = 0;
    bsr_matrix fzl;
    if (F->L && !F->lvL) { M[c] = F->L; up[c] = 0; dst[c++] = &F->lvL; }
    if (F->U && !F->lvU) { M[c] = F->U; up[c] = 1; dst[c++] = &F->lvU; }
    if (F->fz && !F->fz->lv) {
        fzl = ilu_pattern_lower(F->fz, F->b);
        M[c] = &fzl; up[c] = 0; dst[c++] = &F->fz->lv;
    }
    BSR_TRY(bsr_levels_build_many(c, M, up, out));
    for (int i = 0; i < c; i++) *dst[i] = out[i];
    return BSR_OK;
}

/* A threshold setup that keeps every block: its pattern from the
 * elimination tree (ilu_complete.c), the same one its rows would choose;
 * then, unless a pattern pass (the device computes the values), the values
 * factored into it as a frozen refactor does. */
static bsr_status factor_complete(bsr_ilu *F)
{
    bsr_status s = ilu_rows_complete(F);
    bsr_prof_mark("ilu factor: complete pattern");
    if (!s) s = ilu_pattern_build(F);
    if (!s && F->pattern_only) s = assemble(F);
    if (!s && F->pattern_only) s = schedules(F);
    ilu_rows_free(F, 0);
    F->st.pivots_regularized = 0;
    F->st.tree_parallel = 0;
    if (s || F->pattern_only) return s;
    F->use_fz = 1;
    s = ilu_factor(F);
    F->use_fz = 0;   /* the setup chose this pattern (numeric() names it anew) */
    return s;
}

/* Numeric factorization of F->aval into L and U: serial, over the ND tree, or
 * without a tree by concurrent rows that wait for the rows they read
 * (run_levels).  A threshold factorization then
 * records its pattern (F->fz) for the refactors. */
bsr_status ilu_factor(bsr_ilu *F)
{
    int tree = F->opt.parallel && F->tree_ok;
    const ilu_pattern *fz = F->mode == 1 && F->use_fz ? F->fz : NULL;
    const bsr_levels *dlv = F->mode == 0 ? F->lvL : fz ? fz->lv : NULL;
    const int *dp = F->mode == 0 && F->L ? F->L->rowptr : fz ? fz->lp : NULL;
    const int *dc = F->mode == 0 && F->L ? F->L->colind : fz ? fz->lc : NULL;
    /* concurrent rows: a fixed pattern with >= 64 rows per level on average;
     * a threshold factorization finds its dependencies as it goes */
    const int inside = F->mode == 1 && !fz;
    if (inside) { dp = F->ap; dc = F->ac; }
    if (inside && ilu_complete_ok(F)) return factor_complete(F);
    /* a team of one thread per ILU_TEAM_GRAIN entries of A: a small
     * factorization runs serially (the same rows, the same bits) */
    const int team = bsr_team((int64_t)F->nnzbA * F->b * F->b, ILU_TEAM_GRAIN);
    if (team < 2) tree = 0;
    /* a frozen pattern of heavy rows without a tree (a complete factor in
     * METIS's order): its rows pipelined whatever its levels' widths */
    const int heavy = !tree && F->opt.parallel && fz && team > 1 &&
                      (fz->nlo + fz->nup) * F->b * F->b >= (int64_t)ILU_HEAVY_ROW * F->n;
    int levels = !tree && !heavy && F->opt.parallel && dp && team > 1 &&
                 (inside || (dlv && F->n >= 64 * dlv->nlevels));
    int nt = tree || levels || heavy ? team : 1;
    run_t R = {F, NULL, INT_MAX, BSR_OK, "", NULL, nt, bsr_progress_min() > 0, 0,
               F->n / 256 < 1 ? 1 : F->n / 256 > PROGRESS_ROWS ? PROGRESS_ROWS : F->n / 256};
    bsr_status s = BSR_OK;
    /* a pattern pass for a device: its rows there (no host workspaces
     * then), unless the device cannot bound them (then here, as without one) */
    int on_dev = 0;
    ilu_dev_counts cnt = {0, 0, 0, 0, 0};
    if (inside && F->dev && F->pattern_only) {
        s = bsr_gpu_ilut_rows(F->dev, F, &cnt);
        if (s && s != BSR_ERR_UNSUPPORTED) return s;
        on_dev = !s;
        s = BSR_OK;
    }
    if (!on_dev && F->araw) {   /* the host rows (or the host's error message) need A scaled here */
        s = ilu_scale(F, F->araw);
        F->araw = NULL;
        if (s) return s;
    }
    if (!on_dev) {
        if ((s = ilu_get_work(F, nt))) return s;
        R.work = F->work;
        if (!F->rows) {
            F->rows = bsr_calloc((size_t)(F->n > 0 ? F->n : 1), sizeof(ilu_row_t), "ILU rows");
            if (!F->rows) return BSR_ERR_NOMEM;
        }
    }
    if (on_dev) {
        tree = levels = 0;
    } else if (tree) {
        /* threshold kinds, setup or frozen refactor: separators' rows may run
         * concurrently (run_sep), each waiting in ilu_row for the rows it
         * reads (ILU(0)'s rows do not wait: theirs run in order) */
        if (F->mode == 1 && nt > 1) flags_attach(&R, nt);   /* (without: separators in order) */
        #pragma omp parallel num_threads(nt)
        #pragma omp single
        run_node(&R, 0);
        flags_detach(&R, nt);
    } else if (levels) {
        s = run_levels(&R, nt, dp, dc, inside);
        if (s) return s;
    } else if (heavy) {
        s = run_pipelined(&R, nt);
        if (s) return s;
    } else if (F->aone && !ilu_rows0_scaled(F, F->aone, &F->work[0])) {
        /* a row failed the single pass: both passes from the start, which
         * report the failure (the first bad row of the scaling, else the
         * factorization's) as they always did */
        const bsr_matrix *A = F->aone;
        F->aone = NULL;
        F->work[0].nreg = 0;
        if ((s = ilu_scale(F, A))) return s;
        run_rows(&R, &F->work[0], 0, F->n);
    } else if (!F->aone) {
        run_rows(&R, &F->work[0], 0, F->n);
    }
    if (bsr_prof_on() && !on_dev && nt > 1) {   /* the concurrent rows' idle time */
        double ws = 0.0, rs = 0.0;
        int64_t nw = 0;
        for (int t = 0; t < nt; t++) {
            ilu_work *w = &R.work[t];
            ws += w->wait_s; nw += w->waits; rs += w->run_s;
            w->wait_s = w->run_s = 0.0;
            w->waits = 0;
        }
        if (rs > 0.0)
            fprintf(stderr, "prof: ilu factor: rows on %d threads: %.3f thread-s, %.3f of them waiting (%lld waits)\n",
                    nt, rs, ws, (long long)nw);
    }
    bsr_prof_mark("ilu factor: rows");
    if (R.err_row != INT_MAX) s = bsr_error(R.err, "%s", R.msg);
    int64_t dropped = cnt.dropped, sec = cnt.sec_used, wk = cnt.wkept;
    int rmax = cnt.rmax, nreg = cnt.nreg;
    int64_t np = 0;
    for (int t = 0; t < F->nwork && !on_dev; t++) {
        dropped += R.work[t].dropped; sec += R.work[t].sec_used; wk += R.work[t].wkept;
        nreg += R.work[t].nreg;
        if (R.work[t].rmax > rmax) rmax = R.work[t].rmax;
        np += R.work[t].nprod;
        R.work[t].nprod = 0;
    }
    if (!fz && F->mode == 1 && !on_dev) {   /* the bound's count: this factorization's rows */
        if (!F->nprod_max) F->nprod += np;   /* (bounded rows added theirs as they finished) */
        F->st.work = (double)F->nprod * F->b * F->b * F->b;
    }
    if (!fz) {   /* a frozen refactor drops nothing: the setup's counts stand */
        F->st.dropped = dropped;
        F->st.second_order_total = sec;
        F->st.second_order_peak = wk + rmax;
    }
    F->st.pivots_regularized = nreg;
    F->st.tree_parallel = on_dev ? 3 : tree ? 1 : levels || heavy ? 2 : 0;
    /* rows on the host, unless the device made the pattern from its rows
     * (F->dsym) and kept them there; with both, the two are compared */
    if (F->rows) {
        if (!s && F->mode == 1 && !fz) s = ilu_pattern_build(F);
        bsr_prof_mark("ilu factor: frozen pattern");
        if (!s) s = assemble(F);
        if (!s) s = schedules(F);
        bsr_prof_mark("ilu factor: L, U and their schedules");
        if (!s && on_dev && F->dsym) s = bsr_ilu_dsym_check(F);
    }
    ilu_rows_free(F, 0);
    return s;
}
