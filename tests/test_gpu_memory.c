/* SPDX-License-Identifier: BSD-3-Clause */
/* Device memory of a device ILU(0) solve: the bytes the library holds on the
 * GPU after the solver's setup (its allocator's own count, reported in
 * bsr_solver_stats and by the CLI) stay near what the method needs: A once
 * (and the SpMM kernel's sliced copy of it, where kept), L and U values
 * once, the left scaling, the indices, a few vectors.  Before the factors
 * were computed in place the device factorization held a second copy of L
 * and U in double and of the scaling (stencil3d b = 4: about 4.4 kB a block
 * row after setup), 3.4 kB with them once; with A's values once too (the
 * sliced copy the products read, not also the BSR values) about 2.5 kB.
 * The device symbolic phase's patterns that only the creation of the
 * preconditioner read are released after it.  The count agrees with the device's
 * own (cudaMemGetInfo) to within what the CUDA runtime itself takes; a
 * setup and a solve leave nothing behind once the solver is destroyed.
 * Needs a GPU (skipped without one). */
#include "harness.h"
#include "internal.h"
#include "solver_impl.h"
#include "gpu_ilu.h"
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

/* Library bytes on ctx's device now. */
static double live_bytes(void)
{
    size_t live = 0;
    bsr_cuda_mem_bytes(ctx, &live, NULL, 0);
    return (double)live;
}

/* ILU(0) factored on the device, b = 4 double: held after setup and peak
 * during it, a block row, below bounds the duplicated factors exceeded. */
static void test_ilu0_setup_bytes(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:40:4", BSR_DOUBLE, &P));
    const double nb = bsr_matrix_nbrows(P.A), blocks = bsr_matrix_nnzb(P.A);
    const double before = live_bytes();
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu0,factor=gpu,maxit=3"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    bsr_status r = bsr_solver_solve(s, P.rhs, X, &st);
    CU_ASSERT(r == BSR_OK || r == BSR_ERR_NOCONV);
    const double held = st.dev_bytes / nb, peak = st.dev_peak_bytes / nb;
    const double aval = blocks * 16 * 8 / nb;   /* A's values a block row */
    printf("\n  %.0f block rows: held after setup %.0f B a block row (%.2f x A's values), peak %.0f; "
           "library bytes before the setup %.0f ... ", nb, held, held / aval, peak, before);
    CU_ASSERT(st.device == 1);
    CU_ASSERT(held > aval);       /* A at least: the count sees the allocations */
    /* 4.4 kB with the factorization's own copy of L, U and the scaling and A
     * in both layouts; about 2.5 kB with each once */
    CU_ASSERT(held <= 2800.0);
    CU_ASSERT(peak >= held);
    CU_ASSERT(peak <= 4300.0);
    /* the plan's device patterns that only the creation read are released:
     * nothing more can be made from them */
    const bsr_ilu *F = bsr_solver_host_ilu(s);
    CU_ASSERT_PTR_NOT_NULL(F);
    bsr_gpu_ilu0 *D = NULL;
    if (F) CU_ASSERT_EQUAL(bsr_gpu_ilu0_create(ctx, F, &D), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(D);
    bsr_clear_error();
    /* refactor: the same bytes (nothing allocated a factorization) */
    const double live0 = live_bytes();
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    CU_ASSERT(live_bytes() == live0);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_cuda_matrix_release(P.A);
    /* everything the solver made is given back, but the context's scratch
     * (kept for the next product's kernel trial: a vector's values) */
    CU_ASSERT(live_bytes() <= before + 64.0 * nb);
    bsr_problem_free(&P);
}

/* A copy of A's values with every value multiplied by 1 + eps * hash(e). */
static double *perturbed_values(const bsr_matrix *A, double eps)
{
    const size_t m = (size_t)bsr_matrix_nnzb(A) * bsr_matrix_block(A) * bsr_matrix_block(A);
    double *v = malloc(sizeof(double) * (m ? m : 1));
    memcpy(v, bsr_matrix_values(A), sizeof(double) * m);
    for (size_t e = 0; e < m; e++) v[e] *= 1.0 + eps * (double)((e * 2654435761u) % 1000) / 1000.0;
    return v;
}

/* ILU(0) solve of B into x (fresh solver on ctx): its iterations. */
static int solve_fresh(bsr_matrix *A, const bsr_multivec *B, double *x)
{
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu0,factor=gpu,rtol=1e-10"));
    BSR_ASSERT_OK(bsr_solver_setup(s, A));
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 1, BSR_DOUBLE));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    memcpy(x, bsr_multivec_cdata(X), sizeof(double) * (size_t)bsr_multivec_rows(B));
    const int it = st.col ? st.col[0].iterations : -1;
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    return it;
}

/* The solver's operator held once: after the first product on the sliced
 * copy only that copy holds A's values; a refactor with new values uploads
 * into it and the device factorization reads it (the same bits as a fresh
 * setup from BSR values); a kernel that reads BSR values gets them back
 * (the same product), and the next product on the sliced copy releases
 * them again. */
static void test_operator_once(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:16:4", BSR_DOUBLE, &P));
    const int64_t m = bsr_multivec_rows(P.rhs);
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu0,factor=gpu,rtol=1e-10"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    const int lay = bsr_cuda_matrix_layouts(P.A);
    printf("\n  layouts after setup: %d (1 BSR, 2 sliced) ... ", lay);
    CU_ASSERT(lay == 2 || lay == 1);   /* 1: no sliced copy kept (padding or memory) */
    /* new values, same pattern: refactor, then the same solve as a fresh setup's */
    double *v = perturbed_values(P.A, 0.2);
    bsr_matrix *A2 = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(P.A, BSR_DOUBLE, &A2));
    BSR_ASSERT_OK(bsr_matrix_set_values(A2, v, 0));
    BSR_ASSERT_OK(bsr_matrix_set_values(P.A, v, 0));
    free(v);
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    CU_ASSERT_EQUAL(bsr_cuda_matrix_layouts(P.A), lay);   /* uploaded into the one copy */
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, m, 1, BSR_DOUBLE));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st));
    double *x2 = malloc(sizeof(double) * (size_t)m);
    const int it2 = solve_fresh(A2, P.rhs, x2);
    CU_ASSERT_EQUAL(st.col[0].iterations, it2);
    CU_ASSERT(memcmp(bsr_multivec_cdata(X), x2, sizeof(double) * (size_t)m) == 0);
    bsr_solver_stats_free(&st);
    /* P11 reads BSR values: made again from the sliced copy; the same product */
    bsr_multivec *Xd = NULL, *Y1 = NULL, *Y2 = NULL;
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Xd, m, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Y1, m, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Y2, m, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_ctx_fill(ctx, Xd, 1.0));
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_P11, 1.0, P.A, Xd, 0.0, Y1));
    CU_ASSERT_EQUAL(bsr_cuda_matrix_layouts(P.A), lay == 2 ? 3 : 1);
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 1.0, P.A, Xd, 0.0, Y2));
    CU_ASSERT_EQUAL(bsr_cuda_matrix_layouts(P.A), lay);
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y1));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y2));
    CU_ASSERT(bsr_test_max_rel_err(Y1, Y2) <= 1e-13);
    bsr_multivec_destroy(Xd); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
    free(x2);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_matrix_destroy(A2);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"device ILU(0) setup: bytes held and peak a block row", test_ilu0_setup_bytes},
        {"the solver's operator held once: refactor, BSR readers", test_operator_once},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_memory", tests, argc, argv, &ctx);
}
