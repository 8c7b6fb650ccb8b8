/* SPDX-License-Identifier: BSD-3-Clause */
/* petsc_kernels: the library's CPU kernels against PETSc's on the same data,
 * in one process, on one thread (PETSc's sequential kernels):
 *   spmv      bsr_spmm (y = A x)            MatMult on the same MATSEQBAIJ
 *   axpy      bsr_multivec_axpy             VecAXPY
 *   dot       bsr_multivec_dot              VecDot
 *   norm2     bsr_multivec_norm2            VecNorm(NORM_2)
 *   ilu0      bsr_ilu_apply (M^{-1} x, natural order)     MatSolve of PETSc's
 *   ilu0_lu   bsr_trsv_lower + bsr_trsv_upper on the factors  ILU(0) (PCILU)
 *   ilu0_fac  bsr_ilu_refactor              MatLUFactorNumeric (ILU(0))
 *   ilu2      bsr_ilu_apply of ILU2 (natural order)       MatSolve of PETSc's ILU(2)
 * b = 1 runs PETSc on a MATSEQAIJ (its scalar kernels), b >= 2 on a
 * MATSEQBAIJ.  First a STREAM-like copy (c[i] = a[i] over arrays far larger
 * than the caches, 16 bytes an entry, on the library's -threads) gives the
 * machine's bandwidth in the same process; GB/s is a kernel's least traffic (its matrix or factors:
 * values, column indices, row pointers; one read of each vector it reads and
 * one write of each it writes) over the library's time, %copy that against
 * the copy's.  ilu2's factors are not PETSc's (thresholds against levels):
 * its line gives both fills, its diff is "-" and its ratio per factor block.
 * Each figure is the median of -reps runs (the two sides' runs alternate), milliseconds, the library's next
 * to PETSc's; diff is the largest relative difference of the two results
 * (a vector: max |a - b| / max |b|; a scalar: |a - b| / |b|).  ilu0_lu's
 * diff is against ilu0's (the same solves without scaling and permutation:
 * U^{-1} L^{-1} of the scaled matrix, so it is compared to the library's own
 * apply after the scaling, not to PETSc).  Exit status 1 when a diff passes
 * -tol (default 1e-10): the ctest petsc_kernels runs a tiny size for that.
 *
 * usage: petsc_kernels [-gen SPEC] [-reps N] [-tol T] [-threads N] [-cputime]
 *   SPEC  a bsrsolve generator (default stencil3d:100:4: 1M block rows of 4)
 *   N     the library's OpenMP threads (default 1, as PETSc's one)
 *   -cputime  time by the calling thread's CPU clock (one thread only) */
#include <petscksp.h>
#include <petsc/private/petscimpl.h> /* PetscObjectStateIncrease: VecNorm caches its result by state */
#include <bsrsolve.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXREPS 101

/* Median of t[0..n-1] (sorts t). */
static double median(double *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s;
        }
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* max |a - b| / max |b| over n entries. */
static double vec_diff(const double *a, const double *b, PetscInt n)
{
    double d = 0, m = 0;
    for (PetscInt i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (e > d || e != e) d = e;
        if (fabs(b[i]) > m) m = fabs(b[i]);
    }
    return m > 0 ? d / m : d;
}

/* The clock of the figures: wall time, or with -cputime the calling
 * thread's CPU time (one thread only: on a machine shared past its cores a
 * run's wall time is mostly other processes' time slices). */
static int use_cputime;
static double now(void)
{
    if (!use_cputime) return omp_get_wtime();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* tb and tp: the medians of reps runs of the library's statement A and
 * PETSc's P, run alternately (a loaded machine slows both alike). */
#define TIME2(A, P)                                                                                      \
    do {                                                                                                 \
        double ta_[MAXREPS], tp_[MAXREPS];                                                               \
        for (int r_ = 0; r_ < reps; r_++) {                                                              \
            double t0_ = now();                                                                \
            A;                                                                                           \
            ta_[r_] = now() - t0_;                                                             \
            t0_ = now();                                                                       \
            P;                                                                                           \
            tp_[r_] = now() - t0_;                                                             \
        }                                                                                                \
        tb = median(ta_, (int)reps);                                                                     \
        tp = median(tp_, (int)reps);                                                                     \
    } while (0)

/* |a - b| / |b|. */
static double scal_diff(double a, double b) { return b != 0 ? fabs(a - b) / fabs(b) : fabs(a - b); }

/* The library's status as a PETSc error naming what failed. */
#define BSR(what, call)                                                                                  \
    do {                                                                                                 \
        bsr_status s_ = (call);                                                                          \
        PetscCheck(!s_, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s: %s", what, bsr_status_string(s_),       \
                   bsr_last_error());                                                                    \
    } while (0)

/* The copy bandwidth, bytes a second, of the STREAM-like anchor (0: not measured). */
static double copy_bw;

/* A row of the table: name, the library's and PETSc's medians (seconds),
 * diff (< 0: not comparable, printed "-"), and the least bytes the kernel
 * moves (0: no bandwidth figure). */
static void row(const char *name, const char *petsc, double tb, double tp, double diff, double tol, int *bad,
                double bytes)
{
    int fail = diff >= 0 && !(diff <= tol);
    char d[16], bw[32] = "";
    *bad |= fail;
    if (diff >= 0) snprintf(d, sizeof d, "%10.2e", diff);
    else snprintf(d, sizeof d, "%10s", "-");
    if (bytes > 0 && tb > 0) snprintf(bw, sizeof bw, " %7.1f %6.0f%%", bytes / tb * 1e-9, copy_bw > 0 ? 100.0 * bytes / tb / copy_bw : 0.0);
    printf("%-9s %-20s %11.3f %11.3f %7.2f %s%s%s\n", name, petsc, 1e3 * tb, 1e3 * tp, tp > 0 ? tb / tp : 0.0, d, bw,
           fail ? "  FAIL" : "");
}

/* The least bytes a pass over M moves: values, column indices, row pointers. */
static double mat_bytes(const bsr_matrix *M)
{
    const double b = bsr_matrix_block(M);
    return (double)bsr_matrix_nnzb(M) * (b * b * sizeof(double) + sizeof(int)) +
           (bsr_matrix_nbrows(M) + 1.0) * sizeof(int);
}

/* c[i] = a[i], STREAM's copy loop (kept a loop: a memcpy call may take
 * non-temporal stores, which no kernel here does). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void copy_loop(double *restrict c, const double *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i++) c[i] = a[i];
}

/* copy_loop over threads (static contiguous shares, as STREAM's OpenMP loop;
 * one thread: the plain loop). */
static void copy_team(double *restrict c, const double *restrict a, size_t n, int threads)
{
    if (threads == 1) { copy_loop(c, a, n); return; }
    #pragma omp parallel num_threads(threads)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        copy_loop(c + n * t / nt, a + n * t / nt, n * (t + 1) / nt - n * t / nt);
    }
}

/* The copy bandwidth (bytes/s, 16 an entry as STREAM counts) of threads
 * (the library's team: STREAM's figure for the cores the kernels use) over
 * two arrays of 32M doubles (256 MB each: far past any cache here, touched
 * first by the threads that copy them), median of reps. */
static double copy_bandwidth(int reps, int threads)
{
    const size_t n = (size_t)32 << 20;
    double *a = malloc(n * sizeof *a), *c = malloc(n * sizeof *c), t[MAXREPS];
    if (!a || !c) { free(a); free(c); return 0.0; }
    #pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++) { a[i] = (double)i; c[i] = 0.0; }
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        copy_team(c, a, n, threads);
        t[r] = now() - t0;
    }
    double bw = c[n - 1] == a[n - 1] ? 16.0 * n / median(t, reps) : 0.0;
    free(a); free(c);
    return bw;
}

/* The library's matrix A as a PETSc MATSEQBAIJ with the same blocks
 * (b = 1: a MATSEQAIJ, PETSc's matrix for scalar problems). */
static PetscErrorCode to_petsc(const bsr_matrix *A, Mat *P)
{
    const int nb = bsr_matrix_nbrows(A), b = bsr_matrix_block(A);
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    PetscInt *ia, *ja;

    PetscFunctionBeginUser;
    PetscCheck(bsr_matrix_precision(A) == BSR_DOUBLE, PETSC_COMM_SELF, PETSC_ERR_SUP, "double matrices only");
    PetscCall(PetscMalloc2(nb + 1, &ia, rp[nb] > 0 ? rp[nb] : 1, &ja));
    for (int i = 0; i <= nb; i++) ia[i] = rp[i];
    for (int q = 0; q < rp[nb]; q++) ja[q] = ci[q];
    PetscCall(MatCreate(PETSC_COMM_SELF, P));
    PetscCall(MatSetSizes(*P, (PetscInt)nb * b, (PetscInt)nb * b, (PetscInt)nb * b, (PetscInt)nb * b));
    if (b == 1) {
        PetscCall(MatSetType(*P, MATSEQAIJ));
        PetscCall(MatSeqAIJSetPreallocationCSR(*P, ia, ja, (const PetscScalar *)bsr_matrix_values(A)));
    } else {
        PetscCall(MatSetType(*P, MATSEQBAIJ));
        /* row-oriented (PETSc's default): each b x b block row-major, as the library stores it */
        PetscCall(MatSeqBAIJSetPreallocationCSR(*P, b, ia, ja, (const PetscScalar *)bsr_matrix_values(A)));
    }
    PetscCall(PetscFree2(ia, ja));
    PetscFunctionReturn(0);
}

/* Both sides' factorizations in natural order: the library's kind of A
 * (*Fb, its factors *f) and PETSc's ILU(levels) of P (*pc, its factor *F). */
static PetscErrorCode ilu_pair(const bsr_matrix *A, Mat P, bsr_ilu_kind kind, int levels, bsr_ilu **Fb,
                               bsr_ilu_factors *f, PC *pc, Mat *F)
{
    bsr_ilu_options io;

    PetscFunctionBegin;
    bsr_ilu_options_default(&io, kind);
    io.order.kind = BSR_ORDER_NATURAL;
    BSR("ilu setup", bsr_ilu_setup(A, &io, Fb));
    BSR("ilu setup", bsr_ilu_get_factors(*Fb, f));
    PetscCall(PCCreate(PETSC_COMM_SELF, pc));
    PetscCall(PCSetType(*pc, PCILU));
    if (levels) PetscCall(PCFactorSetLevels(*pc, levels));
    PetscCall(PCSetOperators(*pc, P, P));
    PetscCall(PCSetUp(*pc));
    PetscCall(PCFactorGetMatrix(*pc, F));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    char spec[256] = "stencil3d:100:4";
    PetscInt reps = 11, threads = 1;
    PetscReal tol = 1e-10;
    PetscBool cputime = PETSC_FALSE;
    bsr_problem prob;
    Mat P, F;
    PC pc;
    Vec x, y, w;
    bsr_multivec *X, *Y, *W, *Z;
    double t[MAXREPS], tb, tp;
    int bad = 0;

    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscOptionsBegin(PETSC_COMM_SELF, NULL, "petsc_kernels options", NULL);
    PetscCall(PetscOptionsString("-gen", "bsrsolve generator", NULL, spec, spec, sizeof spec, NULL));
    PetscCall(PetscOptionsInt("-reps", "runs a figure (median)", NULL, reps, &reps, NULL));
    PetscCall(PetscOptionsInt("-threads", "the library's OpenMP threads", NULL, threads, &threads, NULL));
    PetscCall(PetscOptionsBool("-cputime", "the calling thread's CPU time (one thread)", NULL, cputime, &cputime, NULL));
    PetscCall(PetscOptionsReal("-tol", "largest relative difference allowed", NULL, tol, &tol, NULL));
    PetscOptionsEnd();
    PetscCheck(reps >= 1 && reps <= MAXREPS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "--reps: 1..%d", MAXREPS);
    PetscCheck(threads >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "--threads: 1 or more");
    PetscCheck(!cputime || threads == 1, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-cputime: one thread only");
    use_cputime = cputime == PETSC_TRUE;
    omp_set_num_threads((int)threads);

    BSR("generate", bsr_generate(spec, BSR_DOUBLE, &prob));
    const bsr_matrix *A = prob.A;
    const int nb = bsr_matrix_nbrows(A), b = bsr_matrix_block(A);
    const PetscInt n = (PetscInt)nb * b;
    PetscCheck(bsr_matrix_nbcols(A) == nb, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s: not square", spec);
    PetscCall(to_petsc(A, &P));
    printf("petsc_kernels: %s, %d block rows of %d x %d, %d blocks, n = %" PetscInt_FMT ", %d thread(s), median of %d, "
           "ms (%s)\n", prob.name, nb, b, b, bsr_matrix_nnzb(A), n, (int)threads, (int)reps,
           use_cputime ? "thread CPU time" : "wall time");
    copy_bw = copy_bandwidth((int)reps, (int)threads);
    printf("copy (STREAM-like, %d thread%s): %.1f GB/s\n", (int)threads, threads > 1 ? "s" : "", copy_bw * 1e-9);
    printf("%-9s %-20s %11s %11s %7s %10s %7s %7s\n", "kernel", "petsc", "bsrsolve", "petsc", "ratio", "diff", "GB/s",
           "%copy");

    /* the same x in both; y and w are results */
    BSR("vectors", bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR("vectors", bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    BSR("vectors", bsr_multivec_create(&W, n, 1, BSR_DOUBLE));
    BSR("vectors", bsr_multivec_create(&Z, n, 1, BSR_DOUBLE));
    BSR("vectors", bsr_multivec_random(X, 11));
    BSR("vectors", bsr_multivec_random(W, 12));
    double *xd = bsr_multivec_data(X), *yd = bsr_multivec_data(Y), *wd = bsr_multivec_data(W);
    PetscCall(MatCreateVecs(P, &x, &y));
    PetscCall(VecDuplicate(x, &w));
    {
        PetscScalar *a;
        PetscCall(VecGetArrayWrite(x, &a));
        memcpy(a, xd, sizeof(double) * n);
        PetscCall(VecRestoreArrayWrite(x, &a));
        PetscCall(VecGetArrayWrite(w, &a));
        memcpy(a, wd, sizeof(double) * n);
        PetscCall(VecRestoreArrayWrite(w, &a));
    }
    const PetscScalar *ya;

    /* spmv */
    TIME2(BSR("spmv", bsr_spmm(1.0, A, X, 0.0, Y)),
          PetscCall(MatMult(P, x, y)));
    PetscCall(VecGetArrayRead(y, &ya));
    row("spmv", "MatMult", tb, tp, vec_diff(yd, ya, n), tol, &bad, mat_bytes(A) + 2.0 * n * sizeof(double));
    PetscCall(VecRestoreArrayRead(y, &ya));

    /* axpy: y = w, then y += alpha x, reps times on both sides */
    {
        const double alpha = 0.375;
        BSR("axpy", bsr_multivec_copy(Y, W));
        PetscCall(VecCopy(w, y));
        TIME2(BSR("axpy", bsr_multivec_axpy(Y, &alpha, X)),
              PetscCall(VecAXPY(y, alpha, x)));
        PetscCall(VecGetArrayRead(y, &ya));
        row("axpy", "VecAXPY", tb, tp, vec_diff(yd, ya, n), tol, &bad, 3.0 * n * sizeof(double));
        PetscCall(VecRestoreArrayRead(y, &ya));
    }

    /* dot and norm2 */
    {
        double db = 0, nbv = 0;
        PetscScalar dp = 0;
        PetscReal np = 0;
        TIME2(BSR("dot", bsr_multivec_dot(X, W, &db)),
              PetscCall(VecDot(x, w, &dp)));
        row("dot", "VecDot", tb, tp, scal_diff(db, dp), tol, &bad, 2.0 * n * sizeof(double));
        /* PETSc caches a norm until the vector changes: bump the state */
        TIME2(BSR("norm2", bsr_multivec_norm2(X, &nbv)),
              PetscCall(PetscObjectStateIncrease((PetscObject)x)); PetscCall(VecNorm(x, NORM_2, &np)));
        row("norm2", "VecNorm", tb, tp, scal_diff(nbv, np), tol, &bad, 1.0 * n * sizeof(double));
    }

    /* ILU(0) in natural order on both sides: the same factorization (PETSc's
     * of A, the library's of its block-Jacobi-scaled A: M = L U either way) */
    {
        bsr_ilu *Fb;
        bsr_ilu_factors f;
        PetscCall(ilu_pair(A, P, BSR_ILU0, 0, &Fb, &f, &pc, &F));

        TIME2(BSR("ilu0 apply", bsr_ilu_apply(Fb, X, Y)),
              PetscCall(MatSolve(F, x, y)));
        PetscCall(VecGetArrayRead(y, &ya));
        const double lu_bytes = mat_bytes(f.L) + mat_bytes(f.U) + 2.0 * n * sizeof(double);
        row("ilu0", "MatSolve", tb, tp, vec_diff(yd, ya, n), tol, &bad, lu_bytes);
        PetscCall(VecRestoreArrayRead(y, &ya));

        /* the two triangular solves alone, on the scaled right-hand side
         * S x (S the left scaling, natural order: no permutation), against
         * the library's whole apply */
        const double *S = f.scale_left;
        double *zd = bsr_multivec_data(Z);
        int natural = 1;
        for (int i = 0; f.ord && i < nb; i++) natural &= f.ord->perm[i] == i;
        PetscCheck(!f.scale_right && !f.gather && natural, PETSC_COMM_SELF,
                   PETSC_ERR_PLIB, "ilu0_lu: the factors are not in natural order with a left scaling only");
        for (int i = 0; i < nb; i++)
            for (int r = 0; r < b; r++) {
                double s = 0;
                for (int c = 0; c < b; c++) s += (S ? S[((size_t)i * b + r) * b + c] : (r == c)) * xd[(size_t)i * b + c];
                zd[(size_t)i * b + r] = s;
            }
        BSR("vectors", bsr_multivec_copy(W, Z));
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            BSR("ilu0 L", bsr_trsv_lower(f.L, f.lvL, Z, W));
            BSR("ilu0 U", bsr_trsv_upper(f.U, f.lvU, W, W));
            t[r] = now() - t0;
        }
        tb = median(t, (int)reps);
        row("ilu0_lu", "MatSolve", tb, tp, vec_diff(bsr_multivec_data(W), yd, n), tol, &bad, lu_bytes);

        /* numeric refactorization of the same values */
        TIME2(BSR("ilu0 refactor", bsr_ilu_refactor(Fb, A)),
              PetscCall(MatLUFactorNumeric(F, P, NULL)));
        BSR("ilu0 apply", bsr_ilu_apply(Fb, X, Y));
        PetscCall(MatSolve(F, x, y));
        PetscCall(VecGetArrayRead(y, &ya));
        row("ilu0_fac", "MatLUFactorNumeric", tb, tp, vec_diff(yd, ya, n), tol, &bad, 0.0);
        PetscCall(VecRestoreArrayRead(y, &ya));
        bsr_ilu_destroy(Fb);
        PetscCall(PCDestroy(&pc));
    }

    /* ILU2 against PETSc's ILU(2), natural order both: not the same factors,
     * so the ratio is per factor block (time / blocks of L + U) */
    {
        bsr_ilu *Fb;
        bsr_ilu_factors f;
        MatInfo info;
        PetscCall(ilu_pair(A, P, BSR_ILU2, 2, &Fb, &f, &pc, &F));
        PetscCall(MatGetInfo(F, MAT_LOCAL, &info));
        TIME2(BSR("ilu2 apply", bsr_ilu_apply(Fb, X, Y)),
              PetscCall(MatSolve(F, x, y)));
        const double ob = (double)bsr_matrix_nnzb(f.L) + bsr_matrix_nnzb(f.U), pb = info.nz_used / ((double)b * b);
        printf("%-9s %-20s %11.3f %11.3f %7.2f %10s", "ilu2", "MatSolve ILU(2)", 1e3 * tb, 1e3 * tp,
               tp > 0 && ob > 0 ? (tb / ob) / (tp / pb) : 0.0, "-");
        if (copy_bw > 0) {
            const double by = mat_bytes(f.L) + mat_bytes(f.U) + 2.0 * n * sizeof(double);
            printf(" %7.1f %6.0f%%", by / tb * 1e-9, 100.0 * by / tb / copy_bw);
        }
        printf("\n          fill (L+U blocks / A's): ILU2 %.2f, PETSc ILU(2) %.2f; ratio per factor block\n",
               ob / bsr_matrix_nnzb(A), pb / bsr_matrix_nnzb(A));
        bsr_ilu_destroy(Fb);
        PetscCall(PCDestroy(&pc));
    }

    printf("%s (diff tolerance %.1e)\n", bad ? "FAIL" : "ok", (double)tol);
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y);
    bsr_multivec_destroy(W);
    bsr_multivec_destroy(Z);
    bsr_problem_free(&prob);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&w));
    PetscCall(MatDestroy(&P));
    PetscCall(PetscFinalize());
    return bad;
}
