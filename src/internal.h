/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal definitions shared by the library's modules (not installed). */
#ifndef BSR_INTERNAL_H
#define BSR_INTERNAL_H

#include "bsrsolve.h"
#include "gpu_ilu.h"
#include <stdio.h>
#include <stdlib.h>

/* X(1) ... X(BSR_MAX_BLOCK): the block sizes, one expansion each: the one
 * list every block-size dispatch is written from (unrolled host kernels,
 * their tables and switches; the device's per-b modules and bsr_with_b,
 * kernels/cuda_internal.h). */
#define BSR_FOR_EACH_B(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10)

/* qsort comparison of ints, ascending (csr.c). */
int bsr_cmp_int(const void *a, const void *b);

/* Host/device residency bits of a matrix or multivector. */
enum { BSR_ON_HOST = 1, BSR_ON_DEVICE = 2 };

struct bsr_matrix {
    int nbrows, nbcols, b, nnzb;
    bsr_precision prec;
    int *rowptr;      /* [nbrows+1] */
    int *colind;      /* [nnzb], sorted, unique per row */
    void *val;        /* [nnzb*b*b], row-major blocks */
    void *dev;        /* device mirror, owned by the CUDA backend (NULL if none) */
    int dev_stale;    /* host values changed since the last upload */
    int *given;       /* [ngiven]: block q of the creator's arrays is stored block given[q]
                       * (NULL when stored in the order given: no row sorted or summed) */
    int ngiven;
};

struct bsr_multivec {
    int64_t n;
    int k;
    bsr_precision prec;
    void *data;       /* host, row-interleaved; NULL if device-only */
    void *dev;        /* device copy, owned by the CUDA backend (NULL if none) */
    int where;        /* BSR_ON_HOST | BSR_ON_DEVICE: which copies are current */
};

/* Device copy of a bsr_multivec (X->dev), made and freed by the CUDA backend. */
typedef struct bsr_dev_multivec {
    bsr_context *ctx;       /* owner: plain bsr_multivec_* calls run there */
    int device;
    void *data;             /* n*k values, row-interleaved */
} bsr_dev_multivec;

/* Rows [row0, row0+nrows) of X as a multivector of its own (host and device
 * copies, whichever X has), sharing X's storage: never destroyed, valid while
 * X is and its device copy is not reallocated (multivec.c). */
typedef struct { bsr_multivec mv; bsr_dev_multivec dm; } bsr_mv_view;
bsr_multivec *bsr_multivec_view(const bsr_multivec *X, int64_t row0, int64_t nrows, bsr_mv_view *V);

/* Set this thread's last error and return s.  fmt is printf-like. */
bsr_status bsr_error(bsr_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* malloc/calloc/realloc that record BSR_ERR_NOMEM with what was asked for
 * (each a host-allocation event of the fault hook below).  bsr_realloc
 * leaves p allocated when it fails, as realloc does. */
void *bsr_malloc(size_t bytes, const char *what);
void *bsr_calloc(size_t count, size_t size, const char *what);
void *bsr_realloc(void *p, size_t bytes, const char *what);
/* Advise transparent huge pages on the 2 MB-aligned inside of [p, p + bytes)
 * when bytes >= BSR_HUGE_MIN (core/hugepages.c); the allocators above call it. */
#define BSR_HUGE_MIN ((size_t)8 << 20)
void bsr_mem_advise(void *p, size_t bytes);

/* ---- fault injection (fault.c) ----------------------------------------------
 * A test hook, not part of the public API: bsr_fault_arm(kind, n) makes the
 * n-th event of that kind from now on fail as the real failure would (one
 * event only; n <= 0 disarms), bsr_fault_count(kind) says how many events
 * happened since the last arm, so a test counts the sites a call reaches and
 * then walks n = 1..count.  Events: host allocations (bsr_malloc & co.),
 * device allocations (bsr_cu_malloc & co., kernels/cuda_alloc.h), checked
 * CUDA / cuSPARSE calls (CU_TRY, CU_LAUNCHED, CUSP_TRY) and Matrix Market
 * reads (opening and each chunk read, mmio.c).  Thread-safe: events happen
 * inside OpenMP regions. */
typedef enum {
    BSR_FAULT_HOST_ALLOC = 0, BSR_FAULT_DEV_ALLOC, BSR_FAULT_CUDA_CALL, BSR_FAULT_FILE_READ, BSR_FAULT_KINDS
} bsr_fault_kind;
void bsr_fault_arm(bsr_fault_kind kind, long n);
/* Disarm every kind and zero the counts. */
void bsr_fault_reset(void);
long bsr_fault_count(bsr_fault_kind kind);
/* Count one event of kind; nonzero when it is the one armed to fail. */
int bsr_fault_hit(bsr_fault_kind kind);
/* The device allocator's own count of live allocations (device and pinned
 * host memory): bsr_fault_dev_note(+1) per allocation made, (-1) per free. */
void bsr_fault_dev_note(long delta);
long bsr_fault_dev_live(void);

/* Internal matrix helpers (matrix.c). */
bsr_status bsr_matrix_alloc(bsr_matrix **A, int nbrows, int nbcols, int b, int nnzb,
                            bsr_precision prec);
int bsr_matrix_find(const bsr_matrix *A, int i, int j);
/* Nonzero when the square pattern (ap, ac) of n rows, columns ascending in
 * each row, is structurally symmetric: (j, i) found by bisection for every
 * (i, j), rows in parallel (matrix.c). */
int bsr_pattern_symmetric(int n, const int *ap, const int *ac);
/* dst = src as a row-major block of precision pd (src column-major when colmajor). */
void bsr_block_copy(void *dst, bsr_precision pd, const void *src, bsr_precision ps, int b, int colmajor);
/* dst += src, both row-major blocks of precision p. */
void bsr_block_add(void *dst, const void *src, bsr_precision p, int b);
/* Index of the first non-finite value in val[0..count), or -1. */
int64_t bsr_first_nonfinite(const void *val, bsr_precision p, int64_t count);

/* Shape/precision checks shared by CPU and GPU SpMM (spmm.c). */
bsr_status bsr_spmm_check(const char *fn, const bsr_matrix *A, const bsr_multivec *X,
                          const bsr_multivec *Y);

/* Generators (generate.c): rhs = A*xexact, and the --help listing. */
bsr_status bsr_problem_make_rhs(bsr_problem *P);
void bsr_generate_usage(FILE *f);

/* Phase timer (prof.c): with BSR_PROFILE=1 (or bsr_prof_enable(1)) each mark
 * prints the seconds since the previous one to stderr.  Progress: with
 * BSR_PROGRESS=S (or bsr_progress_enable(S), S > 0 seconds; 0 turns it off)
 * a mark ending a phase of at least S seconds prints "bsrsolve: WHAT T s". */
int bsr_prof_on(void);
void bsr_prof_enable(int on);
void bsr_prof_mark(const char *what);
/* used() = device memory in use in bytes, printed with each profile mark. */
void bsr_prof_set_memory(double (*used)(void));
double bsr_progress_min(void);
void bsr_progress_enable(double min_s);
/* Within a long phase (progress on): "bsrsolve: WHAT: DONE of TOTAL UNIT (P%)
 * after T s" when the threshold has passed since the phase began or since the
 * last such line.  Any thread may call it (one reports at a time, the others
 * return at once). */
void bsr_progress_tick(const char *what, int64_t done, int64_t total, const char *unit);
double bsr_median(double *v, int n);   /* median of timings (sorts v) */
/* Monotonic wall-clock seconds (prof.c): every timing of the library. */
double bsr_now(void);
/* The second-order drop tolerance in force (ilu_setup.c): for ILU2, tau2 when
 * given (> 0), else tau1^2; for the other kinds tau1 (no second class). */
double bsr_ilu_tau2(bsr_ilu_kind kind, double tau1, double tau2);

/* memcpy split over the OpenMP threads (memcpy_par.c). */
void bsr_memcpy_par(void *dst, const void *src, size_t bytes);

/* ---- parallel setup helpers (setup2) ---------------------------------------
 * Setup loops over rows run on one thread per BSR_ROW_GRAIN rows (bsr_team;
 * below two grains on the calling thread: the threads would cost more than
 * they give; BSR_PAR_ROWS: the level sort's chunking threshold),
 * two-pass where they build CSR-like
 * arrays: count per row, bsr_scan_par, fill per row; results do not depend on
 * the number of threads.  a[i] = a[0] + ... + a[i] for i < n, in place, by
 * chunks fixed independently of the thread count; returns the total (in 64
 * bits: callers check it against INT_MAX before using the entries). */
#define BSR_PAR_ROWS 2048
/* ---- when a loop is worth a team of threads ------------------------------------
 * Opening a parallel region costs a few microseconds on an idle machine, and
 * a scheduler time slice or more on a loaded one (a thread of the team that
 * was descheduled holds every other at the barrier: small solves ran 10-20x
 * slower with 2 threads than with 1 on a busy 2-core machine).  The kernels
 * of a solve (BLAS-1 on multivectors, SpMM, triangular solves, scalings) run
 * on the calling thread below BSR_PAR_WORK scalar operations (elements
 * touched, or multiply-adds: nnzb*b*b*k for a product): their
 * `#pragma omp parallel ... if (bsr_par_worth(work))`.  Which thread computes
 * what never changes the bits (reductions are chunked independently of the
 * team), so the threshold changes times only. */
#define BSR_PAR_WORK 32768
static inline int bsr_par_worth(int64_t work) { return work >= BSR_PAR_WORK; }
/* OpenMP threads for a rank of a distributed run (threads.c): 0 (leave the
 * OpenMP setting alone) when the user chose (user_set: OMP_NUM_THREADS is
 * set), else max(1, min(node_cores / local_ranks, avail)): the node's cores
 * shared by the ranks on it, no more than the cores this process may run on
 * (avail: omp_get_num_procs(), its affinity mask).  node_cores <= 0: unknown
 * (avail is used); local_ranks <= 0 counts as 1. */
int bsr_threads_per_rank(int node_cores, int local_ranks, int avail, int user_set);
/* Nonzero when OMP_NUM_THREADS is set (to anything but the empty string). */
int bsr_omp_threads_user_set(void);
/* The default team (threads.c): 0 (leave OpenMP's setting alone) when the
 * user chose (user_set), else max(1, avail) lowered to quota_cpus when that is
 * positive and smaller (avail: the CPUs of the affinity mask; quota_cpus: the
 * cgroup CPU quota in whole CPUs, 0 when none). */
int bsr_threads_default_rule(int avail, int quota_cpus, int user_set);
/* Whole CPUs of a CFS quota of quota_us per period_us, rounded down, at least
 * 1; 0 when there is no quota (quota_us <= 0, cgroup v1's -1) or no period. */
int bsr_quota_cpus(long long quota_us, long long period_us);
/* The same from a cgroup v2 cpu.max line ("max 100000": 0; "800000 100000": 8). */
int bsr_cpu_max_parse(const char *text);
/* The CPU quota of this process's cgroups (v2 cpu.max of its cgroup and its
 * ancestors, v1 cpu.cfs_quota_us), the smallest, in whole CPUs; 0: none. */
int bsr_cgroup_cpus(void);
/* CPUs this process may use: the affinity mask's (omp_get_num_procs), no
 * more than the cgroup quota's. */
int bsr_cpus_available(void);
/* Once per process: unless OMP_NUM_THREADS is set, lower the calling thread's
 * default team to the cgroup CPU quota (bsr_threads_default_rule).  Called by
 * bsr_context_create, bsr_solver_create and bsr_generate. */
void bsr_threads_default(void);
/* Threads of a setup loop of `work` units (grain: the units worth a thread):
 * 1 for less than two grains, else bsr_team_size().  One size for every
 * loop: GNU OpenMP ends the pool threads a smaller team leaves out and
 * creates them again for the next larger team, so teams sized by each loop's
 * work created threads level after level of the orderings' searches; and
 * 64-thread teams ran level-synchronous loops (RCM's searches, level walks,
 * the CPU triangular solves) and reductions slower than 16 on a 64-core host
 * (bench/RESULTS.md, one team size).  For num_threads clauses: which thread
 * computes what never changes the results. */
#define BSR_TEAM_MAX 16
int bsr_team(int64_t work, int64_t grain);
/* bsr_team's rule, the team size given (tested as is). */
int bsr_team_rule(int64_t work, int64_t grain, int team);
/* The cap on the team: the environment's BSR_TEAM_MAX when it is an integer
 * in 1..4096, else BSR_TEAM_MAX. */
int bsr_team_cap(const char *env);
/* The library's one team size, min(omp_get_max_threads(), bsr_team_cap): the
 * num_threads of every parallel region (setup loops through bsr_team; the
 * solve's kernels, whose if clauses choose between it and one thread). */
int bsr_team_size(void);
/* Tests: with on != 0, every grain counts as 1 (the parallel paths run on
 * problems of a few rows, to be compared with the serial ones). */
void bsr_team_force(int on);
/* Block rows a thread of the setup's loops over rows (their team:
 * bsr_team(n, BSR_ROW_GRAIN): 2 threads from 8192 rows on).  Their rows cost
 * 50-200 ns each (a map row, a pattern row, a permuted row): a thread gets
 * 0.2 ms of work at least, more than the few microseconds opening a team
 * costs on an idle machine.  On a loaded one a team costs a time slice
 * whenever one of its threads is descheduled: poisson2d:64's (3844 rows) map
 * of A took 30-90 ms on 2 threads of a loaded 2-core machine against 0.2 ms
 * on one with a grain of 1024. */
#define BSR_ROW_GRAIN 4096
int64_t bsr_scan_par(int *a, int n);
/* Row order and kernel of the CPU triangular solves (trsv.c): AUTO picks
 * NATURAL or LEVELS by the rule in trsv.c; NATURAL runs rows in index order
 * (U: reverse) on the calling thread; LEVELS runs the schedule lv (a team
 * when some level is wide and the solve large); REFERENCE is the generic,
 * not unrolled row kernel in lv's order (natural without lv) on one thread.
 * All give the same bits. */
typedef enum { BSR_TRSV_CPU_AUTO, BSR_TRSV_CPU_NATURAL, BSR_TRSV_CPU_LEVELS, BSR_TRSV_CPU_REFERENCE } bsr_trsv_cpu_path;
/* Y = T^{-1} X (upper: U with inverted pivots first; else unit lower L) along path. */
bsr_status bsr_trsv_cpu(const bsr_matrix *T, const bsr_levels *lv, int upper, bsr_trsv_cpu_path path,
                        const bsr_multivec *X, bsr_multivec *Y);
/* A nested-dissection tree's nodes by level, the schedule of the ILU
 * apply's tree sweeps (trsv.c): byl[lp[l] .. lp[l+1]) are the nodes of level
 * l (root 0) of nodes, top the deepest level; nodes NULL: no tree. */
typedef struct {
    const bsr_tree_node *nodes;
    int *lp, *byl;
    int top;
} bsr_tree_levels;
/* t for o's tree (t->nodes NULL when o has fewer than two nodes). */
bsr_status bsr_tree_levels_build(const bsr_ordering *o, bsr_tree_levels *t);
void bsr_tree_levels_free(bsr_tree_levels *t);
/* The ILU apply on the natural path in one sweep each way (trsv.c): t =
 * L^{-1} (Ds_i x_{src[i]})_i, then t = U^{-1} t with y_{dst[i]} = dc[dst[i]]
 * t_i written as each row is solved (src, dst, dc NULL: identity, 1); the
 * bits of the gather, bsr_trsv_cpu on each and the scatter in turn.  L and
 * U are the ILU's own factors (their structure is not checked again).
 * tree (may be NULL): the levels of the nested-dissection tree the factors
 * follow, p-bordered (bsr_ilu.tree_ok): with a team of two or more the
 * sweeps go over that tree, its nodes of a level concurrently (the same bits).
 * Returns 0, doing nothing, unless both are double with b in 1..BSR_MAX_BLOCK
 * and both solves would take the natural path. */
int bsr_trsv_ilu_fused(const bsr_matrix *L, const bsr_levels *lvL, const bsr_matrix *U, const bsr_levels *lvU,
                       const bsr_tree_levels *tree, const double *ds, const int *src, const int *dst, const double *dc,
                       const double *x, double *t, double *y);
/* The ILU's two solves on t in place (k columns, the factors' precision)
 * over the nested-dissection tree (as bsr_trsv_ilu_fused's tree sweeps; the
 * same bits as bsr_trsv_lower then bsr_trsv_upper).  Returns 0, doing
 * nothing, where no team is worth it or either solve would take the level
 * path. */
int bsr_trsv_ilu_tree(const bsr_matrix *L, const bsr_levels *lvL, const bsr_matrix *U, const bsr_levels *lvU,
                      const bsr_tree_levels *tree, void *t, int k);
/* Test hook: the ILU applies that went over the tree, counted (trsv.c). */
extern int bsr_trsv_tree_sweeps;
/* Level schedules of L's lower and U's upper triangle, as two
 * bsr_levels_build calls but with the two sequential walks run concurrently
 * (reorder/levels.c). */
bsr_status bsr_levels_build_pair(const bsr_matrix *L, const bsr_matrix *U, bsr_levels **lvL, bsr_levels **lvU);
/* Schedules of count triangles (M[i]'s lower part when upper[i] == 0, else
 * its upper part) into out[i], the sequential walks at the same time. */
bsr_status bsr_levels_build_many(int count, const bsr_matrix *const *M, const int *upper, bsr_levels **out);
/* The number of levels of a breadth-first search of A's block graph (the
 * pattern of A + A^T) from block row start: on a mesh about the levels of
 * RCM's order, whose triangular solves walk that many levels; -1 when out
 * of memory (reorder/center.c, its search). */
int bsr_bfs_depth(const bsr_matrix *A, int start);
/* Partitions of A's block rows (reorder/partition.c).  part[i] = r for the
 * r-th of p equal consecutive ranges of n rows (the first n % p one longer). */
void bsr_partition_ranges(int n, int p, int *part);
/* part[i] = METIS_PartGraphKway's part (of p) of block row i in the block
 * graph of A + A^T (METIS's defaults, seed 0); equal ranges where there is
 * nothing to cut (one part, fewer rows than parts, a graph without edges,
 * which METIS refuses). */
bsr_status bsr_partition_kway(const bsr_matrix *A, int p, int *part);
/* Aggregates of A's block rows by rounds of heavy-edge matching of its block
 * graph, contracted after each round, until they average `rows` block rows
 * or no pair fits within 5/4 of it (on a 3D grid and 216, boxes of 256):
 * part[i] in [0, *nparts), numbered in the order of their first row;
 * deterministic (reorder/aggregate.c). */
bsr_status bsr_aggregate_pairs(const bsr_matrix *A, int rows, int *part, int *nparts);

/* Hooks implemented by the CUDA backend (kernels/) or, in CPU-only builds, by
 * the stand-ins kernels/entry_points.def lists. */
void bsr_cuda_matrix_release(bsr_matrix *A);
/* on: A's device values held in one layout only (kernels/cuda_internal.h,
 * one_layout): once its products read the sliced copy, the BSR values are
 * released and made again only for a kernel that reads them.  The solver
 * sets it on its operator.  No-op without a device mirror. */
void bsr_cuda_matrix_one_layout(bsr_matrix *A, int on);
/* Which copies of A's values its device mirror holds: 1 the BSR values, 2
 * the current sliced copy, 3 both; 0 without a mirror (tests). */
int bsr_cuda_matrix_layouts(const bsr_matrix *A);
void bsr_cuda_multivec_release(bsr_multivec *X);
int bsr_cuda_device_count(void); /* usable CUDA devices (0 without CUDA) */

/* ---- context and CUDA backend -----------------------------------------------
 * struct bsr_context is shared by host code; its CUDA half (bsr_cuda_ctx) and
 * the device mirrors behind bsr_matrix.dev / bsr_multivec.dev are defined in
 * kernels/cuda_internal.h, with accessors for other CUDA modules.  The
 * bsr_cuda_* functions below are implemented in kernels/ (*.cu), and by the
 * stand-ins of kernels/entry_points.def (BSR_ERR_NODEVICE) in CPU-only builds. */
struct bsr_cuda_ctx;
struct bsr_context {
    bsr_backend backend;
    int device;
    struct bsr_cuda_ctx *cuda; /* NULL on the CPU backend */
    char desc[192];
};
bsr_status bsr_cuda_context_init(bsr_context *ctx, int device, void *stream);
void bsr_cuda_context_fini(bsr_context *ctx);
bsr_status bsr_cuda_sync(bsr_context *ctx);
/* Device bytes the library holds on ctx's device (*live) and the most since
 * the last reset (*peak), from its allocator's own count
 * (kernels/cuda_alloc.cu; process-wide per device); reset_peak restarts the
 * peak from now.  0 and 0 for a host context or without CUDA. */
void bsr_cuda_mem_bytes(const bsr_context *ctx, size_t *live, size_t *peak, int reset_peak);
bsr_status bsr_cuda_matrix_upload(bsr_context *ctx, bsr_matrix *A);
/* Device copy of X allocated (not filled) if absent. */
bsr_status bsr_cuda_multivec_alloc(bsr_context *ctx, bsr_multivec *X);
bsr_status bsr_cuda_multivec_upload(bsr_context *ctx, bsr_multivec *X);
bsr_status bsr_cuda_multivec_download(bsr_context *ctx, bsr_multivec *X);
/* out[p][j] = (X[p](:,j), Y[p](:,j)) for p < np (1..3) in one sweep and one
 * synchronization, each the bits of a lone dot (blas_multivec.cu). */
bsr_status bsr_cuda_mv_dotp(bsr_context *ctx, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                            double *const *out);
/* perf7: host buffer h <-> X's device buffer (to_dev 1: upload), synchronous. */
bsr_status bsr_cuda_multivec_xfer(bsr_context *ctx, bsr_multivec *X, void *h, int to_dev);
/* Sums of squares outside [BSR_NORM_LO, inf) lost digits to underflow or
 * overflowed (a double's squares; float columns summed in double never do). */
#define BSR_NORM_LO 0x1p-800
/* sc[j] = the power of 2 that brings column j into range when its sum of
 * squares ss[j] overflowed (2^-600) or underflowed (2^600; 0 too: subnormal
 * entries square to 0), else 1; returns the number of columns to sum again
 * scaled (multivec.c). */
int bsr_norm_scales(const double *ss, int k, double *sc);
/* out[j] = ||X(:,j)||_2 of X current on the device (ctx NULL: X's owner),
 * columns out of range summed again scaled, as on the host (context.c). */
bsr_status bsr_cuda_norm2(bsr_context *ctx, const bsr_multivec *X, double *out);
/* The context that owns X's device copy (NULL if none). */
bsr_context *bsr_cuda_multivec_context(const bsr_multivec *X);
/* GPU SpMM variants of bsr_kernel (values 3..8, between BSR_KERNEL_OMP and
 * BSR_KERNEL_CUSPARSE) for the benchmark driver and the tests; users pass
 * BSR_KERNEL_AUTO.  Casts, so that C++ (kernels/) takes them as bsr_kernel. */
#define BSR_KERNEL_P11 ((bsr_kernel)3)  /* one thread per block row */
#define BSR_KERNEL_P12 ((bsr_kernel)4)  /* one CUDA block per block row, n*k*r threads; refuses
                                         * rows with n*k*r > 1024 (BSR_ERR_UNSUPPORTED) */
#define BSR_KERNEL_P13 ((bsr_kernel)5)  /* P12 looping over the row's blocks in chunks */
#define BSR_KERNEL_P14 ((bsr_kernel)6)  /* several block rows per CUDA block, thread per output */
#define BSR_KERNEL_WARP ((bsr_kernel)7) /* (sub-)warp per block row, coalesced block loads, one
                                         * thread per block entry carrying all k vectors */
#define BSR_KERNEL_ROWJ ((bsr_kernel)8) /* one thread per scalar row and group of J vectors,
                                         * several block rows per CUDA block; the fastest on
                                         * the H100 (bench/RESULTS.md), what AUTO runs */
/* Y = alpha*A*X + beta*Y, all operands current on the device. */
bsr_status bsr_cuda_spmm(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                         const bsr_multivec *X, double beta, bsr_multivec *Y);
bsr_kernel bsr_cuda_kernel_auto(const bsr_matrix *A, int k);
/* bsr_cuda_spmm with the ROWJ kernel of J code `code` (1..5, 11..15, 21..25,
 * 31..35: kernels/spmm/spmm_rowj.cuh) and about `threads` threads a CUDA block
 * (0: the default): the candidates AUTO times, one at a time (tests). */
bsr_status bsr_cuda_spmm_rowj(bsr_context *ctx, int code, int threads, double alpha, const bsr_matrix *A,
                              const bsr_multivec *X, double beta, bsr_multivec *Y);
/* AUTO's pick for A and a chunk of kk <= 16 columns (0, 0 before its trial). */
void bsr_cuda_spmm_auto_pick(const bsr_matrix *A, int kk, int *code, int *threads);
/* 1 when A's sliced device copy (kernels/spmm/spmm_sell.cuh) is built and current,
 * -1 when it is not kept for A, 0 otherwise. */
int bsr_cuda_matrix_sliced(const bsr_matrix *A);
/* Device multivector ops (operands current on the device, same shape; ctx
 * NULL: the output's owner).  Semantics as the bsr_ctx_* calls. */
bsr_status bsr_cuda_mv_fill(bsr_context *ctx, bsr_multivec *X, double value);
bsr_status bsr_cuda_mv_copy(bsr_context *ctx, bsr_multivec *Y, const bsr_multivec *X);
bsr_status bsr_cuda_mv_scale(bsr_context *ctx, bsr_multivec *X, const double *a);
bsr_status bsr_cuda_mv_axpbypcz(bsr_context *ctx, const double *a, const bsr_multivec *X,
                                const double *b, const bsr_multivec *Y, const double *c,
                                bsr_multivec *Z, const int *done);
bsr_status bsr_cuda_mv_dot(bsr_context *ctx, const bsr_multivec *X, const bsr_multivec *Y,
                           double *out);
/* Halo staging for distributed products (kernels/mpi/halo.cu): pinned host and
 * device buffers; dst (device) row t = X's row idx[t] (idx: n device ints,
 * rows of rowlen = X's b*k values counted by the caller), queued on ctx's
 * stream; a copy of bytes between any two of host, pinned and device memory
 * queued on ctx's stream. */
bsr_status bsr_cuda_pinned(size_t bytes, void **p);
void bsr_cuda_pinned_free(void *p);
bsr_status bsr_cuda_buffer(bsr_context *ctx, size_t bytes, void **p);
void bsr_cuda_buffer_free(void *p);
bsr_status bsr_cuda_gather_rows(bsr_context *ctx, const bsr_multivec *X, const int *idx, int n,
                                size_t rowlen, void *dst);
bsr_status bsr_cuda_copy_async(bsr_context *ctx, void *dst, const void *src, size_t bytes);
/* CUDA IPC of the distributed halo (kernels/mpi/halo_ipc.cu; CPU-only builds:
 * BSR_ERR_UNSUPPORTED).  busid: the PCI bus id of ctx's GPU; peer_ok: the
 * GPU of bus id busid is visible here and ctx's GPU can access it (BSR_OK),
 * else why says what is missing; alloc: a device buffer of its own
 * allocation (cudaMalloc) and its IPC handle; open/close: another process's
 * buffer mapped here; event_*: a host-waitable event on ctx's stream. */
#define BSR_CUDA_IPC_HANDLE_BYTES 64
#define BSR_CUDA_BUSID_BYTES 32
bsr_status bsr_cuda_ipc_busid(bsr_context *ctx, char *buf, int len);
bsr_status bsr_cuda_ipc_peer_ok(bsr_context *ctx, const char *busid, char *why, size_t wlen);
bsr_status bsr_cuda_ipc_alloc(bsr_context *ctx, size_t bytes, void **p, unsigned char *handle);
void bsr_cuda_ipc_free(bsr_context *ctx, void *p);
bsr_status bsr_cuda_ipc_open(bsr_context *ctx, const unsigned char *handle, void **p);
void bsr_cuda_ipc_close(bsr_context *ctx, void *p);
bsr_status bsr_cuda_event_new(bsr_context *ctx, void **ev);
bsr_status bsr_cuda_event_record(bsr_context *ctx, void *ev);
bsr_status bsr_cuda_event_wait(void *ev);
void bsr_cuda_event_free(void *ev);
/* NCCL of the distributed halo (kernels/mpi/halo_nccl.cu; loaded at run
 * time, never required).  load: BSR_OK when NCCL was found (once a
 * process), else BSR_ERR_UNSUPPORTED and why says what is missing; id: a
 * new communicator's id (BSR_CUDA_NCCL_ID_BYTES, made on one rank and sent
 * to the others); new: *h, a handle on ctx's GPU with its stream and events
 * (local: every rank agrees on its success before init); init: this rank's
 * part of communicator id in h (collective: every rank calls it); post: rows [send_off[q],
 * send_off[q+1]) of sbuf to rank send_rank[q] and rows of recv_off into
 * rbuf from recv_rank[q] (row bytes each, device buffers), after the work
 * queued on ctx's stream and on a stream of h's own; wait: ctx's stream
 * waits for the last post (a failure NCCL reported is returned); free: h
 * gone (aborted when a failure is pending). */
#define BSR_CUDA_NCCL_ID_BYTES 128
bsr_status bsr_cuda_nccl_load(char *why, size_t wlen);
bsr_status bsr_cuda_nccl_id(unsigned char *id);
bsr_status bsr_cuda_nccl_new(bsr_context *ctx, void **h);
bsr_status bsr_cuda_nccl_init(bsr_context *ctx, void *h, const unsigned char *id, int nranks, int rank);
bsr_status bsr_cuda_nccl_post(bsr_context *ctx, void *h, int nsend, const int *send_rank, const int *send_off,
                              const void *sbuf, int nrecv, const int *recv_rank, const int *recv_off, void *rbuf,
                              size_t row);
bsr_status bsr_cuda_nccl_wait(bsr_context *ctx, void *h);
void bsr_cuda_nccl_free(bsr_context *ctx, void *h);
/* Benchmark support (bench/bench_spmm.c).  Time fn(arg) reps times with CUDA
 * events on ctx's stream after warm calls; ms[rep] gets each time. */
bsr_status bsr_cuda_time(bsr_context *ctx, bsr_status (*fn)(void *), void *arg, int warm,
                         int reps, double *ms);
/* Device-to-device copy bandwidth (bytes read + written per second, median of
 * reps copies of `bytes`) in GB/s. */
bsr_status bsr_cuda_copy_gbs(bsr_context *ctx, size_t bytes, int reps, double *gbs);
/* Fused Krylov vector updates + inner products on the device
 * (kernels/blas_multivec.cu; the solver's kops upd_dot, src/solver_impl.h):
 * Z[u] = a[u] X[u] + b[u] Y[u] + c[u] Z[u] for u < nu (done[j]: column j
 * frozen), then out1 = (D, W1 or D), out2 = (D, W2), D = Z[nu-1]. */
bsr_status bsr_cuda_mv_upd_dot(bsr_context *ctx, int nu, bsr_multivec *const *Z, const double *const *a,
                               const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                               const double *const *c, const int *done, const bsr_multivec *W1, double *out1,
                               const bsr_multivec *W2, double *out2);
/* Y = b Y + sum_{l<m} c[l*k + j] V[l] per column (m >= 1; done[j]: column j
 * frozen), LC_MAX vectors a launch: the bits of the m axpby calls
 * (kernels/blas_multivec.cu; the solver's kops lincomb). */
bsr_status bsr_cuda_mv_lincomb(bsr_context *ctx, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                               const double *c, const int *done);
/* Rows a partial sum of bsr_ctx_gram takes: fixed, so that its sums' order
 * is the same on every backend and team. */
#define BSR_GRAM_CHUNK 4096
/* G = X^T X (X: n x K double, K <= 2 BSR_COARSE_MAX; G on the host, K x K
 * row-major, its upper triangle; the lower zero): each entry summed over the
 * rows of each chunk of BSR_GRAM_CHUNK in order from +0, the chunks' sums
 * then added in order from +0, one rounding a product and one a sum (no
 * fused multiply-add), where ctx computes: the same bits on both backends
 * (the two-level preconditioner's orthonormalization). */
bsr_status bsr_ctx_gram(bsr_context *ctx, const bsr_multivec *X, double *G);
/* X <- X R^{-1} row by row (R: K x K upper triangular on the host,
 * row-major): x_q = (x_q - sum_{p<q} x_p R_pq) / R_qq for q ascending, the
 * sum's terms in order, with bsr_ctx_gram's roundings, where ctx computes. */
bsr_status bsr_ctx_rsolve(bsr_context *ctx, bsr_multivec *X, const double *R);
bsr_status bsr_cuda_mv_gram(bsr_context *ctx, const bsr_multivec *X, double *G);
bsr_status bsr_cuda_mv_rsolve(bsr_context *ctx, bsr_multivec *X, const double *R);
/* Benchmark and test hook (bsrsolve's BSR_KRYLOV_UNFUSED=1): 1 makes the
 * Krylov methods use separate update and dot calls, 0 (default) the fused
 * ones where the backend has them. */
void bsr_kops_set_unfused(int on);
/* An ordering made ahead on a second host thread (reorder/order_ahead.h). */
typedef struct bsr_order_ahead bsr_order_ahead;
/* An estimate from below of the block products of A's complete LU in a
 * dissection order (reorder/sep_estimate.c), in *products, its count
 * stopped once past limit (> 0; 0: none); *sep (may be NULL) the estimated
 * top separator's block rows. */
bsr_status bsr_sep_products(const bsr_matrix *A, double limit, double *products, int *sep);
/* A complete factor is refused unordered only where that estimate passes
 * its bound this many times over: it came within 1.2-2.8x of the products
 * of METIS's complete LU on the tests' grids, from below. */
#define BSR_SEP_SLACK 2.0
/* Nonzero when ILU options o keep every block: a threshold kind with tau1 =
 * tau2 = 0, no cap, no fill bound (the complete LU; src/ilu/ilu_complete.c). */
int bsr_ilu_keeps_all(const bsr_ilu_options *o);
/* The block products past which the estimate (bsr_sep_products) refuses
 * the complete factor of o at block size b before its ordering:
 * BSR_SEP_SLACK times o's work bound where o keeps every block under one,
 * else 0 (no refusal; src/ilu/ilu_complete.c). */
double bsr_ilu_complete_line(const bsr_ilu_options *o, int b);
/* Event timing of operations on ctx's stream (kernels/prof_events.cu, the
 * solver's profile=1): begin records an event and returns a pair handle (-1
 * when none could be recorded: that operation is not counted), end records
 * the closing one for class cls (0..3); finish waits, adds each class's
 * seconds into s[4] and frees L.  Nothing synchronizes before finish. */
typedef struct bsr_cuda_evlog bsr_cuda_evlog;
bsr_status bsr_cuda_evlog_create(bsr_context *ctx, bsr_cuda_evlog **L);
int bsr_cuda_evlog_begin(bsr_cuda_evlog *L);
void bsr_cuda_evlog_end(bsr_cuda_evlog *L, int pair, int cls);
bsr_status bsr_cuda_evlog_finish(bsr_cuda_evlog *L, double *s);

/* Checks shared by every entry point. */
#define BSR_CHECK_ARG(cond, ...) \
    do { if (!(cond)) return bsr_error(BSR_ERR_ARG, __VA_ARGS__); } while (0)
#define BSR_TRY(expr) \
    do { bsr_status _s = (expr); if (_s != BSR_OK) return _s; } while (0)

/* Deterministic hashes (hash.c; added by the audit): splitmix64 stream, and
 * a value in [0,1) from two integers. */
uint64_t bsr_splitmix64(uint64_t *s);
double bsr_hash01(uint64_t a, uint64_t b);

/* Dispatch a function on precision: BSR_DISPATCH(p, f, args) calls f_d or f_f. */
#define BSR_DISPATCH(p, f, ...) ((p) == BSR_DOUBLE ? f##_d(__VA_ARGS__) : f##_f(__VA_ARGS__))

#endif
