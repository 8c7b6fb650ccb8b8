/* SPDX-License-Identifier: BSD-3-Clause */
/* The halo paths of distributed solves under mpiexec (ctest: 2 and 4
 * ranks): on any machine, the per-rank profile (profile=1) and the halo
 * option on the CPU; with at least 2 GPUs visible, the GPU to GPU halo
 * (halo=ipc, CUDA IPC; halo=nccl, NCCL's sends and receives) against the
 * pinned host one (halo=host): the same iterations and the same solution
 * bits (the reductions are deterministic, the ghosts the same values), with
 * several right-hand sides, overlap and a failure on one rank mid-solve;
 * halo=nccl where NCCL is not found (BSR_NCCL_LIBRARY naming no file): the
 * host path, saying why.  Without 2 GPUs the GPU checks skip, saying so
 * (the NCCL ones too without NCCL). */
#include "harness_mpi.h"
#include "bsrsolve_mpi.h"
#include "dist_impl.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nranks;

/* One solve of a generated problem (rows in place: slabs) with opts and k
 * right-hand sides (the generator's first column repeated, scaled by j+1):
 * *X this rank's solution, *st its stats, *pr its profile; returns the status. */
static bsr_status solve(bsr_context *ctx, const char *spec, const char *opts, int k, bsr_multivec **X,
                        bsr_solver_stats *st, bsr_dsolver_profile *pr)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, ctx));
    bsr_problem_rows R;
    bsr_dmatrix *A;
    BSR_ASSERT_OK(bsr_dmatrix_generate(&A, d, spec, BSR_DOUBLE, &R));
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
    int64_t n = bsr_multivec_rows(R.rhs);
    bsr_multivec *B;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, k, BSR_DOUBLE));
    double *b = bsr_multivec_data(B);
    const double *r = bsr_multivec_cdata(R.rhs);
    int kr = bsr_multivec_cols(R.rhs);
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++) b[i * k + j] = (j + 1) * r[i * kr];
    BSR_ASSERT_OK(bsr_multivec_create(X, n, k, BSR_DOUBLE));
    bsr_multivec_fill(*X, 0);
    bsr_dsolver *s;
    BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
    BSR_ASSERT_OK(bsr_dsolver_setup(s, A));
    bsr_status ss = bsr_dsolver_solve(s, B, *X, st);
    bsr_dsolver_get_profile(s, pr);
    bsr_multivec_destroy(B);
    bsr_dsolver_destroy(s);
    bsr_dmatrix_destroy(A);
    bsr_problem_rows_free(&R);
    bsr_dist_destroy(d);
    return ss;
}

/* One solve of stencil3d:16:4 (ILU(0)) on ctx with halo=H: the path that
 * ran is path and its note holds note (printed by rank 0); returns this
 * rank's solution (the caller's). */
static bsr_multivec *noted_path(bsr_context *ctx, const char *h, int path, const char *note)
{
    char opts[64];
    snprintf(opts, sizeof opts, "precond=ilu0,rtol=1e-9,halo=%s", h);
    bsr_multivec *X;
    bsr_solver_stats st;
    bsr_dsolver_profile pr;
    BSR_ASSERT_OK(solve(ctx, "stencil3d:16:4", opts, 1, &X, &st, &pr));
    CU_ASSERT_EQUAL(pr.halo_path, path);
    CU_ASSERT_PTR_NOT_NULL(strstr(pr.halo_note, note));
    if (rank == 0 && note[0]) printf("\n  halo=%s, %d ranks: %s ", h, nranks, pr.halo_note);
    bsr_solver_stats_free(&st);
    return X;
}

/* profile=1 on the CPU: the parts measured, none negative, the product's
 * and the reductions' nonzero on several ranks, the idle time known (one
 * host); halo=ipc on the CPU is the host-vector path, said in the note;
 * the solution the same bits as without the profile. */
static void test_profile_cpu(void)
{
    bsr_multivec *X0, *X1;
    bsr_solver_stats s0, s1;
    bsr_dsolver_profile p0, p1;
    BSR_ASSERT_OK(solve(NULL, "stencil3d:12:4", "precond=ilu0,rtol=1e-9", 1, &X0, &s0, &p0));
    BSR_ASSERT_OK(solve(NULL, "stencil3d:12:4", "precond=ilu0,rtol=1e-9,profile=1,halo=ipc", 1, &X1, &s1, &p1));
    CU_ASSERT_EQUAL(p0.profiled, 0);
    CU_ASSERT_EQUAL(p0.spmm_interior_s, 0);
    CU_ASSERT_EQUAL(p1.profiled, 1);
    CU_ASSERT_EQUAL(p1.halo_path, BSR_DHALO_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(p1.halo_note, "CUDA backend"));
    bsr_multivec_destroy(noted_path(NULL, "nccl", BSR_DHALO_CPU, "halo=nccl applies to the CUDA backend"));
    CU_ASSERT_STRING_EQUAL(bsr_dhalo_path_name(p1.halo_path), "cpu");
    const double parts[] = {p1.spmm_interior_s, p1.spmm_interface_s, p1.halo_pack_s, p1.halo_post_s,
                            p1.halo_wait_s, p1.halo_unpack_s, p1.precond_s, p1.reduce_s};
    int ok = 1;
    for (int q = 0; q < 8; q++) ok &= parts[q] >= 0;
    ok &= p1.spmm_interior_s > 0 && p1.precond_s > 0 && p1.reduce_s > 0;
    ok &= p1.reduce_idle_s >= 0 && p1.reduce_idle_s <= p1.reduce_s * 1.0001 + 1e-6;
    if (nranks > 1) ok &= p1.spmm_interface_s > 0;
    ok &= p1.halo_calls > 0 && p1.reduce_calls > 0 && p1.precond_calls > 0;
    CU_ASSERT_TRUE(bsr_test_all_ranks(ok));
    if (rank == 0)
        printf("\n  rank 0: interior %.4f s, interface %.4f s, halo pack %.4f post %.4f wait %.4f unpack %.4f, "
               "preconditioner %.4f s, reductions %.4f s (idle %.4f s) ", p1.spmm_interior_s, p1.spmm_interface_s,
               p1.halo_pack_s, p1.halo_post_s, p1.halo_wait_s, p1.halo_unpack_s, p1.precond_s, p1.reduce_s,
               p1.reduce_idle_s);
    CU_ASSERT_EQUAL(s0.col[0].iterations, s1.col[0].iterations);
    size_t bytes = (size_t)bsr_multivec_rows(X0) * sizeof(double);
    CU_ASSERT_TRUE(bsr_test_all_ranks(memcmp(bsr_multivec_cdata(X0), bsr_multivec_cdata(X1), bytes) == 0));
    bsr_solver_stats_free(&s0); bsr_solver_stats_free(&s1);
    bsr_multivec_destroy(X0); bsr_multivec_destroy(X1);
}

/* The GPUs this process sees, 0 when some rank sees none. */
static int gpus(void)
{
    int n = bsr_device_count(), least = 0;
    MPI_Allreduce(&n, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return least;
}

/* This rank's CUDA context: device (rank on its host) % devices. */
static bsr_context *rank_context(int ndev)
{
    MPI_Comm node;
    int local = rank;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, local % ndev, NULL));
    return ctx;
}

/* halo=PATH (ipc or nccl) against halo=host on the GPUs for one case: that
 * path ran (or its note says why not, which fails the test), the iterations
 * and the solution bits equal. */
static void path_case(bsr_context *ctx, const char *spec, const char *opts, int k, const char *path)
{
    char oh[256], oi[256];
    snprintf(oh, sizeof oh, "%s,halo=host", opts);
    snprintf(oi, sizeof oi, "%s,halo=%s,profile=1", opts, path);
    bsr_multivec *Xh, *Xi;
    bsr_solver_stats sh, si;
    bsr_dsolver_profile ph, pi;
    bsr_status a = solve(ctx, spec, oh, k, &Xh, &sh, &ph), b = solve(ctx, spec, oi, k, &Xi, &si, &pi);
    CU_ASSERT_EQUAL(a, BSR_OK);
    CU_ASSERT_EQUAL(b, BSR_OK);
    CU_ASSERT_EQUAL(ph.halo_path, ctx ? BSR_DHALO_HOST : BSR_DHALO_CPU);
    CU_ASSERT_STRING_EQUAL(bsr_dhalo_path_name(pi.halo_path), path);
    if (rank == 0 && strcmp(bsr_dhalo_path_name(pi.halo_path), path))
        printf("\n  halo=%s did not run: %s ", path, pi.halo_note);
    int same_it = 1;
    for (int j = 0; j < k && !a && !b; j++) same_it &= sh.col[j].iterations == si.col[j].iterations;
    size_t bytes = (size_t)bsr_multivec_rows(Xh) * (size_t)k * sizeof(double);
    int same = !a && !b && memcmp(bsr_multivec_cdata(Xh), bsr_multivec_cdata(Xi), bytes) == 0;
    CU_ASSERT_TRUE(bsr_test_all_ranks(same_it));
    CU_ASSERT_TRUE(bsr_test_all_ranks(same));
    if (rank == 0)
        printf("\n  %s %s, k = %d, %d ranks: host %d iterations, %s %d, solution bits %s; %s halo: pack %.4f s, "
               "post %.4f s, wait %.4f s, unpack %.4f s (rank 0) ", spec, opts, k, nranks,
               a ? -1 : sh.col[0].iterations, path, b ? -1 : si.col[0].iterations, same ? "equal" : "DIFFER", path,
               pi.halo_pack_s, pi.halo_post_s, pi.halo_wait_s, pi.halo_unpack_s);
    bsr_solver_stats_free(&sh); bsr_solver_stats_free(&si);
    bsr_multivec_destroy(Xh); bsr_multivec_destroy(Xi);
}

static void ipc_case(bsr_context *ctx, const char *spec, const char *opts, int k)
{
    path_case(ctx, spec, opts, k, "ipc");
}

static void test_ipc_equals_host(void)
{
    int ndev = gpus();
    if (ndev < 2) {
        char why[128];
        snprintf(why, sizeof why, "%d GPU%s visible (2 needed): the IPC halo test skipped", ndev, ndev == 1 ? "" : "s");
        BSR_TEST_SKIP(why);
        return;
    }
    bsr_context *ctx = rank_context(ndev);
    ipc_case(ctx, "stencil3d:24:4", "precond=ilu0,rtol=1e-9", 1);
    ipc_case(ctx, "stencil3d:20:4", "precond=ilu0,rtol=1e-9", 3);          /* buffers grown for 3 columns */
    ipc_case(ctx, "stencil3d:20:5", "precond=ilu0,overlap=1,rtol=1e-9", 1); /* the Schwarz halo too */
    ipc_case(ctx, "rotconv3d:16,4", "precond=ilu2,tau1=0.05,method=gmres,rtol=1e-8", 1);
    bsr_context_destroy(ctx);
}

/* halo=PATH (ipc or nccl): a failure on the last rank at many points of the
 * solve stops every rank (no hang in the IPC messages or NCCL's sends), and
 * the next solve on the same objects succeeds with the solution of a fresh
 * one. */
static void failure_case(bsr_context *ctx, const char *path)
{
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, ctx));
    bsr_problem_rows R;
    bsr_dmatrix *A;
    BSR_ASSERT_OK(bsr_dmatrix_generate(&A, d, "stencil3d:12:2", BSR_DOUBLE, &R));
    for (int ov = 0; ov < 2; ov++) {
        bsr_solver_options o;
        bsr_solver_options_default(&o);
        char opts[128];
        snprintf(opts, sizeof opts, "%s,halo=%s", ov ? "precond=ilu0,overlap=1,method=gmres,orth=cgs2" : "precond=ilu0",
                 path);
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, opts));
        bsr_dsolver *s;
        BSR_ASSERT_OK(bsr_dsolver_create(&s, d, &o));
        BSR_ASSERT_OK(bsr_dsolver_setup(s, A));
        bsr_multivec *X, *X0;
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(R.rhs), 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&X0, bsr_multivec_rows(R.rhs), 1, BSR_DOUBLE));
        bsr_multivec_fill(X0, 0);
        BSR_ASSERT_OK(bsr_dsolver_solve(s, R.rhs, X0, NULL));
        bsr_dsolver_profile p;
        bsr_dsolver_get_profile(s, &p);
        CU_ASSERT_STRING_EQUAL(bsr_dhalo_path_name(p.halo_path), path);
        int fired = 0;
        int agreed = bsr_test_injected_failures(s, R.rhs, X, X0, NULL, &bsr_dist_fail_at, &fired);
        CU_ASSERT_TRUE(bsr_test_all_ranks(agreed));
        CU_ASSERT(fired >= 5);
        bsr_multivec_destroy(X); bsr_multivec_destroy(X0);
        bsr_dsolver_destroy(s);
    }
    bsr_dmatrix_destroy(A);
    bsr_problem_rows_free(&R);
    bsr_dist_destroy(d);
}

static void test_ipc_failure(void)
{
    int ndev = gpus();
    if (ndev < 2) { BSR_TEST_SKIP("fewer than 2 GPUs visible: the IPC failure test skipped"); return; }
    bsr_context *ctx = rank_context(ndev);
    failure_case(ctx, "ipc");
    bsr_context_destroy(ctx);
}

/* Whether this machine's NCCL is to be used: 1 when found, 0 (skipped,
 * saying why) when not found without being told to look elsewhere; -1 when
 * BSR_NCCL_LIBRARY names a file that is missing (the fallback is tested). */
static int nccl_expected(void)
{
    const char *f = getenv("BSR_NCCL_LIBRARY");
    if (f && *f && access(f, F_OK) != 0) return -1;
    char why[256];
    int ok = bsr_cuda_nccl_load(why, sizeof why) == BSR_OK, all = 0;
    bsr_clear_error();
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        char msg[320];
        snprintf(msg, sizeof msg, "NCCL not found on some rank (%s): the NCCL halo tests skipped", why);
        BSR_TEST_SKIP(msg);
    }
    return all;
}

/* halo=nccl against halo=host (as halo=ipc above), a failure mid-solve;
 * with BSR_NCCL_LIBRARY naming no file, or more ranks than GPUs on the host:
 * the host path, its note saying why (and with no NCCL, the same bits). */
static void test_nccl(void)
{
    int ndev = gpus();
    if (ndev < 2) { BSR_TEST_SKIP("fewer than 2 GPUs visible: the NCCL halo tests skipped"); return; }
    const int want = nccl_expected();
    if (!want) return;
    bsr_context *ctx = rank_context(ndev);
    if (want > 0 && nranks > ndev) {   /* ranks share a GPU (one host): the host path, saying so */
        bsr_multivec_destroy(noted_path(ctx, "nccl", BSR_DHALO_HOST, "NCCL takes one GPU a rank"));
    } else if (want < 0) {
        bsr_multivec *Xh = noted_path(ctx, "host", BSR_DHALO_HOST, ""),
                     *Xn = noted_path(ctx, "nccl", BSR_DHALO_HOST, "NCCL not found");
        size_t bytes = (size_t)bsr_multivec_rows(Xh) * sizeof(double);
        CU_ASSERT_TRUE(bsr_test_all_ranks(memcmp(bsr_multivec_cdata(Xh), bsr_multivec_cdata(Xn), bytes) == 0));
        bsr_multivec_destroy(Xh); bsr_multivec_destroy(Xn);
    } else {
        path_case(ctx, "stencil3d:24:4", "precond=ilu0,rtol=1e-9", 1, "nccl");
        path_case(ctx, "stencil3d:20:4", "precond=ilu0,rtol=1e-9", 3, "nccl");
        path_case(ctx, "stencil3d:20:5", "precond=ilu0,overlap=1,rtol=1e-9", 1, "nccl");
        path_case(ctx, "rotconv3d:16,4", "precond=ilu2,tau1=0.05,method=gmres,rtol=1e-8", 1, "nccl");
        failure_case(ctx, "nccl");
    }
    bsr_context_destroy(ctx);
}

/* The IPC protocol on host vectors (the test hook bsr_dipc_host: buffers in
 * an MPI shared-memory window, memcpy for the device copies): every
 * message of the GPU path runs on any machine, with the same checks. */
static void test_ipc_host_emulation(void)
{
    bsr_dipc_host = 1;
    ipc_case(NULL, "stencil3d:16:4", "precond=ilu0,rtol=1e-9", 1);
    ipc_case(NULL, "stencil3d:12:4", "precond=ilu0,rtol=1e-9", 3);
    ipc_case(NULL, "stencil3d:12:5", "precond=ilu0,overlap=1,rtol=1e-9", 1);
    ipc_case(NULL, "rotconv3d:12,4", "precond=ilu2,tau1=0.05,method=gmres,rtol=1e-8", 1);
    failure_case(NULL, "ipc");
    bsr_dipc_host = 0;
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"profile=1 on the CPU: the parts, the host path", test_profile_cpu},
        {"IPC protocol on the host (test hook): halo=host's iterations and bits, failures",
         test_ipc_host_emulation},
        {"GPU: halo=ipc gives halo=host's iterations and bits", test_ipc_equals_host},
        {"GPU: halo=nccl gives halo=host's iterations and bits; a failure mid-solve; no NCCL", test_nccl},
        {"GPU: halo=ipc, a failure on one rank mid-solve", test_ipc_failure},
        {NULL, NULL},
    };
    return bsr_test_mpi_main("dist_ipc", tests, argc, argv, &rank, &nranks);
}
