/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection (issue 24): every host allocation, device allocation,
 * checked CUDA call and Matrix Market read that setup, refactor, solve and
 * the reader reach is made to fail in turn (the hook of src/core/fault.c).  For
 * each failure: the call reports the right status with a message; nothing
 * leaks (ASan's leak check in `make asan`; the device allocator's own count
 * of live allocations on the GPU); and the objects stay usable -- with the
 * hook disarmed the same setup/refactor/solve succeed and give the
 * undisturbed run's answer bit for bit -- and are never stale: a solve right
 * after a failed refactor either refuses with a status or uses the new
 * factors (the undisturbed answer), never the old ones.  A site whose
 * failure the library absorbs (a parallel schedule falling back to a serial
 * one) must still give the undisturbed answer.  The GPU walk skips without a
 * device. */
#include "harness.h"
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char tmpdir[512];

/* One configuration under test: the solver options, the backend, and the
 * undisturbed answers it gives after setup(A1) and after refactor(A2). */
typedef struct {
    bsr_context *ctx;            /* NULL: CPU */
    const char *cfg;
    bsr_matrix *A1, *A2;         /* same pattern, different values */
    bsr_multivec *B, *X;         /* 2 right-hand sides; X host, double */
    double *x1, *x2;             /* X after setup(A1)+solve, after refactor(A2)+solve */
    size_t bytes;
    long live;                   /* device allocations live between walk steps */
} fx;

enum { PH_SETUP, PH_REFACTOR, PH_SOLVE, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {"setup", "refactor", "solve"};
static const char *const kind_name[BSR_FAULT_KINDS] = {"host allocation", "device allocation", "CUDA call",
                                                       "file read"};

/* Sites covered, summed over the configurations of one test, per phase. */
typedef struct { long sites[PH_COUNT], absorbed, unreached, refused, failures; } tally;

/* The status a failure of kind is reported with. */
static int status_fits(bsr_fault_kind kind, bsr_status e)
{
    switch (kind) {
    case BSR_FAULT_HOST_ALLOC: case BSR_FAULT_DEV_ALLOC: return e == BSR_ERR_NOMEM;
    case BSR_FAULT_CUDA_CALL: return e == BSR_ERR_CUDA || e == BSR_ERR_NOMEM;
    case BSR_FAULT_FILE_READ: return e == BSR_ERR_IO;
    default: return 0;
    }
}

/* X = 0, then solve B; the status (stats freed). */
static bsr_status solve0(fx *F, bsr_solver *s)
{
    bsr_status e = bsr_multivec_fill(F->X, 0.0);
    if (e) return e;
    bsr_solver_stats st;
    e = bsr_solver_solve(s, F->B, F->X, &st);
    bsr_solver_stats_free(&st);
    return e;
}

/* Nonzero when X holds ref bit for bit. */
static int same(const fx *F, const double *ref) { return !memcmp(bsr_multivec_data(F->X), ref, F->bytes); }

/* A fresh solver brought to the state before phase ph (undisturbed). */
static bsr_solver *prepare(fx *F, int ph)
{
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, F->ctx, F->cfg));
    if (ph >= PH_REFACTOR) {
        BSR_ASSERT_OK(bsr_solver_setup(s, F->A1));
        BSR_ASSERT_OK(solve0(F, s));
    }
    if (ph == PH_SOLVE) BSR_ASSERT_OK(bsr_solver_refactor(s, F->A2));
    return s;
}

/* The call phase ph makes. */
static bsr_status phase_call(fx *F, bsr_solver *s, int ph)
{
    switch (ph) {
    case PH_SETUP: return bsr_solver_setup(s, F->A1);
    case PH_REFACTOR: return bsr_solver_refactor(s, F->A2);
    default: return solve0(F, s);
    }
}

/* The answer a solve gives once phase ph has succeeded. */
static const double *phase_answer(const fx *F, int ph) { return ph == PH_SETUP ? F->x1 : F->x2; }

/* Record a failed check with its circumstances (CUnit's line alone does not say which site). */
#define FCHECK(cond, F, ph, kind, n, what)                                                                  \
    do {                                                                                                    \
        int _ok = (cond);                                                                                   \
        CU_ASSERT(_ok);                                                                                     \
        if (!_ok) {                                                                                         \
            T->failures++;                                                                                  \
            printf("\n  FAIL %s [%s] %s, %s #%ld: %s (last error: %s)", (F)->ctx ? "cuda" : "cpu", (F)->cfg, \
                   phase_name[ph], kind_name[kind], (long)(n), what, bsr_last_error());                     \
        }                                                                                                   \
    } while (0)

/* Destroy s; on the device, check that this returned every device
 * allocation the step made. */
static void destroy_checked(fx *F, bsr_solver *s, tally *T, int ph, bsr_fault_kind kind, long n)
{
    bsr_solver_destroy(s);
    if (F->ctx) FCHECK(bsr_fault_dev_live() <= F->live, F, ph, kind, n, "device allocations leaked");
}

/* Fail the n-th event of kind in phase ph, then check status, message,
 * staleness, recovery and leaks; returns the events the call made. */
static long walk_one(fx *F, int ph, bsr_fault_kind kind, long n, tally *T)
{
    bsr_solver *s = prepare(F, ph);
    if (!s) return 0;
    bsr_clear_error();
    bsr_fault_arm(kind, n);
    bsr_status e = phase_call(F, s, ph);
    const long events = bsr_fault_count(kind);
    const int reached = events >= n;
    bsr_fault_arm(kind, 0);
    const double *want = phase_answer(F, ph);
    if (e == BSR_OK && !reached) {
        /* fewer events this time: per-thread workspaces grow with the rows
         * each thread happened to take */
        T->unreached++;
        FCHECK(ph == PH_SOLVE || solve0(F, s) == BSR_OK, F, ph, kind, n, "solve after an unreached site");
        FCHECK(same(F, want), F, ph, kind, n, "answer changed");
    } else if (e == BSR_OK) {
        /* absorbed (a fallback): the result must still be the undisturbed one */
        T->absorbed++;
        if (getenv("BSR_FAULT_VERBOSE"))
            printf("\n  absorbed: %s [%s] %s, %s #%ld (%s)", F->ctx ? "cuda" : "cpu", F->cfg, phase_name[ph],
                   kind_name[kind], n, bsr_last_error());
        if (ph != PH_SOLVE) FCHECK(solve0(F, s) == BSR_OK, F, ph, kind, n, "solve after an absorbed failure");
        FCHECK(same(F, want), F, ph, kind, n, "absorbed failure changed the answer");
    } else {
        FCHECK(status_fits(kind, e), F, ph, kind, n, bsr_status_string(e));
        FCHECK(bsr_last_error()[0] != 0, F, ph, kind, n, "empty message");
        if (e == BSR_ERR_NOMEM) FCHECK(strstr(bsr_last_error(), "memory") != NULL, F, ph, kind, n, "message");
        if (ph != PH_SOLVE) {
            /* never stale: a solve now refuses, or gives the new values' answer */
            bsr_status e2 = solve0(F, s);
            if (e2) T->refused++;
            else FCHECK(ph == PH_REFACTOR && same(F, want), F, ph, kind, n, "solve after the failure used stale state");
        }
    }
    /* usable again: the same call, then a solve, give the undisturbed answer */
    if (ph != PH_SOLVE) FCHECK(phase_call(F, s, ph) == BSR_OK, F, ph, kind, n, "the call again, disarmed");
    FCHECK(solve0(F, s) == BSR_OK, F, ph, kind, n, "solve after recovery");
    FCHECK(same(F, want), F, ph, kind, n, "answer after recovery differs from the undisturbed one");
    destroy_checked(F, s, T, ph, kind, n);
    return events;
}

/* Events of kind that phase ph reaches, undisturbed. */
static long count_sites(fx *F, int ph, bsr_fault_kind kind)
{
    bsr_solver *s = prepare(F, ph);
    if (!s) return 0;
    bsr_fault_arm(kind, 0);
    bsr_status e = phase_call(F, s, ph);
    long c = bsr_fault_count(kind);
    CU_ASSERT_EQUAL(e, BSR_OK);
    bsr_solver_destroy(s);
    return c;
}

/* The undisturbed answers of F (x1, x2), computed once. */
static void reference(fx *F)
{
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, F->ctx, F->cfg));
    BSR_ASSERT_OK(bsr_solver_setup(s, F->A1));
    BSR_ASSERT_OK(solve0(F, s));
    memcpy(F->x1, bsr_multivec_data(F->X), F->bytes);
    BSR_ASSERT_OK(bsr_solver_refactor(s, F->A2));
    BSR_ASSERT_OK(solve0(F, s));
    memcpy(F->x2, bsr_multivec_data(F->X), F->bytes);
    bsr_solver_destroy(s);
}

/* The problem shared by every configuration: stencil3d:6:3 (216 block rows,
 * b = 3), A2 = A1 with 1 added to its diagonal, 2 right-hand sides. */
static void fx_init(fx *F, bsr_context *ctx)
{
    memset(F, 0, sizeof *F);
    F->ctx = ctx;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:6:3", BSR_DOUBLE, &P));
    F->A1 = P.A;
    P.A = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(F->A1, BSR_DOUBLE, &F->A2));
    bsr_matrix *A2 = F->A2;
    for (int i = 0; i < A2->nbrows; i++) {
        double *d = (double *)A2->val + (size_t)bsr_matrix_find(A2, i, i) * A2->b * A2->b;
        for (int r = 0; r < A2->b; r++) d[r * A2->b + r] += 1.0;
    }
    int64_t n = bsr_multivec_rows(P.rhs);
    bsr_multivec *Xs;
    BSR_ASSERT_OK(bsr_multivec_create(&Xs, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(Xs, 7));
    BSR_ASSERT_OK(bsr_multivec_create(&F->B, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_spmm(1.0, F->A1, Xs, 0.0, F->B));
    BSR_ASSERT_OK(bsr_multivec_create(&F->X, n, 2, BSR_DOUBLE));
    bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
    F->bytes = sizeof(double) * (size_t)n * 2;
    F->x1 = malloc(F->bytes);
    F->x2 = malloc(F->bytes);
}

/* Free what fx_init made. */
static void fx_free(fx *F)
{
    bsr_matrix_destroy(F->A1); bsr_matrix_destroy(F->A2);
    bsr_multivec_destroy(F->B); bsr_multivec_destroy(F->X);
    free(F->x1); free(F->x2);
}

/* Walk every site of kind in every phase of configuration cfg. */
static void walk_config(fx *F, const char *cfg, bsr_fault_kind kind, tally *T)
{
    const double t0 = bsr_now();
    F->cfg = cfg;
    reference(F);
    F->live = bsr_fault_dev_live();
    long per[PH_COUNT];
    for (int ph = 0; ph < PH_COUNT; ph++) {
        /* a call that makes more events than counted (threads taking other
         * rows grow their workspaces more) extends the walk */
        long N = count_sites(F, ph, kind);
        for (long n = 1; n <= N; n++) {
            long c = walk_one(F, ph, kind, n, T);
            if (c > N) N = c;
        }
        T->sites[ph] += per[ph] = N;
        /* one past the last site: nothing fails (unless this run made more events) */
        bsr_solver *s = prepare(F, ph);
        bsr_fault_arm(kind, N + 1);
        bsr_status e = phase_call(F, s, ph);
        CU_ASSERT(e == BSR_OK || bsr_fault_count(kind) > N);
        bsr_fault_arm(kind, 0);
        bsr_solver_destroy(s);
    }
    printf("\n    %-4s %-48s %s sites: setup %ld, refactor %ld, solve %ld (%.1f s)", F->ctx ? "cuda" : "cpu", cfg,
           kind_name[kind], per[0], per[1], per[2], bsr_now() - t0);
    fflush(stdout);
}

/* The configurations every backend walks: ILU(0), ILUT, ILU2 and Jacobi
 * under BiCGStab and GMRES, and the mixed-precision path (float iteration
 * and factors of a double matrix: the solver's working copy of A); IDR and
 * GMRES-DR under Jacobi (GMRES-DR with the error control: its deflation
 * space kept for the estimates' solves). */
static const char *const configs[] = {
    "precond=ilu0,method=bicgstab", "precond=ilu0,method=gmres", "precond=ilut,method=bicgstab",
    "precond=ilut,method=gmres",    "precond=ilu2,method=bicgstab", "precond=ilu2,method=gmres",
    "precond=jacobi,method=bicgstab", "precond=jacobi,method=gmres",
    "precond=ilu0,method=bicgstab,precision=float,precond_precision=float", "precond=jacobi,method=idr",
    "precond=jacobi,method=gmres,restart=6,deflate=2,etol=1e-9", "precond=ilu0,method=bicgstab,coarse=2",
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* Print the totals of T for kind on a backend. */
static void report(const char *backend, bsr_fault_kind kind, const tally *T)
{
    printf("\n    %s %s: %ld sites (setup %ld, refactor %ld, solve %ld), %ld absorbed, %ld not reached again, "
           "%ld refusals after a failed setup/refactor, %ld failures\n  ", backend, kind_name[kind],
           T->sites[0] + T->sites[1] + T->sites[2], T->sites[0], T->sites[1], T->sites[2], T->absorbed, T->unreached,
           T->refused, T->failures);
}

/* CPU backend: every host allocation of setup, refactor and solve. */
static void test_cpu_host_alloc(void)
{
    fx F;
    fx_init(&F, NULL);
    tally T = {{0}, 0, 0, 0, 0};
    for (size_t c = 0; c < NCONFIGS; c++) walk_config(&F, configs[c], BSR_FAULT_HOST_ALLOC, &T);
    report("cpu", BSR_FAULT_HOST_ALLOC, &T);
    fx_free(&F);
    bsr_fault_reset();
}

/* The reader: every file read and host allocation of bsr_mm_read on a small
 * file fails in turn with BSR_ERR_IO / BSR_ERR_NOMEM, *A stays NULL, and the
 * next read gives the same matrix. */
static void test_mm_read(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:3:2", BSR_DOUBLE, &P));
    char path[600];
    snprintf(path, sizeof path, "%s/fault.mtx", tmpdir);
    BSR_ASSERT_OK(bsr_mm_write(path, P.A));
    bsr_matrix *R = NULL;
    BSR_ASSERT_OK(bsr_mm_read(path, 2, BSR_DOUBLE, &R, NULL));
    static const bsr_fault_kind kinds[] = {BSR_FAULT_FILE_READ, BSR_FAULT_HOST_ALLOC};
    for (int q = 0; q < 2; q++) {
        bsr_fault_kind kind = kinds[q];
        bsr_matrix *A = NULL;
        bsr_fault_arm(kind, 0);
        BSR_ASSERT_OK(bsr_mm_read(path, 2, BSR_DOUBLE, &A, NULL));
        long N = bsr_fault_count(kind);
        bsr_matrix_destroy(A);
        CU_ASSERT(N > 0);
        long bad = 0;
        for (long n = 1; n <= N; n++) {
            A = NULL;
            bsr_clear_error();
            bsr_fault_arm(kind, n);
            bsr_status e = bsr_mm_read(path, 2, BSR_DOUBLE, &A, NULL);
            bsr_fault_arm(kind, 0);
            /* a read error names the file; an allocation, what it was for */
            const char *msg = bsr_last_error();
            int ok = status_fits(kind, e) && !A && (kind == BSR_FAULT_FILE_READ ? strstr(msg, "fault.mtx") != NULL
                                                                                : strstr(msg, "out of memory") != NULL);
            if (!ok) {
                bad++;
                printf("\n  FAIL read %s #%ld: %s, A %p: %s", kind_name[kind], n, bsr_status_string(e), (void *)A,
                       bsr_last_error());
            }
            bsr_matrix_destroy(A);
            A = NULL;
            BSR_ASSERT_OK(bsr_mm_read(path, 2, BSR_DOUBLE, &A, NULL));
            CU_ASSERT(A->nnzb == R->nnzb && !memcmp(A->colind, R->colind, sizeof(int) * (size_t)R->nnzb) &&
                      !memcmp(A->val, R->val, sizeof(double) * (size_t)R->nnzb * 4));
            bsr_matrix_destroy(A);
        }
        CU_ASSERT_EQUAL(bad, 0);
        printf("\n    bsr_mm_read %s sites: %ld, failures %ld", kind_name[kind], N, bad);
    }
    printf("\n  ");
    bsr_matrix_destroy(R);
    bsr_problem_free(&P);
    bsr_fault_reset();
}

/* CUDA backend: every event of kind in setup, refactor and solve; the device
 * allocations live after each step never exceed those before it, and
 * destroying everything returns the count to its value before the context
 * existed. */
static void walk_cuda(bsr_fault_kind kind)
{
    if (!bsr_test_have_gpu()) { BSR_TEST_SKIP("skipped: no CUDA device"); return; }
    long live0 = bsr_fault_dev_live();
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    fx F;
    fx_init(&F, ctx);
    /* the device paths: ILU(0) factored on the device, ILU2's frozen pattern
     * refactored there, Jacobi, float iteration and factors of a double matrix */
    static const char *const gcfg[] = {
        "precond=ilu0,method=bicgstab", "precond=ilu2,method=gmres", "precond=jacobi,method=bicgstab",
        "precond=ilu0,method=bicgstab,precision=float,precond_precision=float", "precond=jacobi,method=idr",
        "precond=jacobi,method=gmres,restart=6,deflate=2,etol=1e-9", "precond=ilu2,method=gmres,coarse=2",
    };
    tally T = {{0}, 0, 0, 0, 0};
    for (size_t c = 0; c < sizeof gcfg / sizeof gcfg[0]; c++) walk_config(&F, gcfg[c], kind, &T);
    report("cuda", kind, &T);
    fx_free(&F);
    bsr_context_destroy(ctx);
    CU_ASSERT_EQUAL(bsr_fault_dev_live(), live0);
    printf("\n    device allocations live: %ld before the context, %ld after everything is destroyed\n  ", live0,
           bsr_fault_dev_live());
    bsr_fault_reset();
}

static void test_cuda_dev_alloc(void) { walk_cuda(BSR_FAULT_DEV_ALLOC); }
static void test_cuda_call(void) { walk_cuda(BSR_FAULT_CUDA_CALL); }
static void test_cuda_host_alloc(void) { walk_cuda(BSR_FAULT_HOST_ALLOC); }

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"CPU: every host allocation of setup, refactor, solve", test_cpu_host_alloc},
        {"Matrix Market read: every file read and host allocation", test_mm_read},
        {"CUDA: every device allocation of setup, refactor, solve", test_cuda_dev_alloc},
        {"CUDA: every checked CUDA call of setup, refactor, solve", test_cuda_call},
        {"CUDA: every host allocation of setup, refactor, solve", test_cuda_host_alloc},
        {NULL, NULL},
    };
    return bsr_test_main_tmpdir("fault", tests, argc, argv, tmpdir, sizeof tmpdir);
}
