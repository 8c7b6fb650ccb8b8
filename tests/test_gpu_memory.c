/* SPDX-License-Identifier: BSD-3-Clause */
/* Device memory of a device ILU(0) solve: the bytes the library holds on the
 * GPU after the solver's setup (its allocator's own count, reported in
 * bsr_solver_stats and by the CLI) stay near what the method needs: A once
 * (and the SpMM kernel's sliced copy of it, where kept), L and U values
 * once, the left scaling, the indices, a few vectors.  Before the factors
 * were computed in place the device factorization held a second copy of L
 * and U in double and of the scaling (stencil3d b = 4: about 4.4 kB a block
 * row after setup); now about 3.4 kB.  The device symbolic phase's patterns
 * that only the creation of the preconditioner read are released after it.  The count agrees with the device's
 * own (cudaMemGetInfo) to within what the CUDA runtime itself takes; a
 * setup and a solve leave nothing behind once the solver is destroyed.
 * Needs a GPU (skipped without one). */
#include "harness.h"
#include "internal.h"
#include "solver_impl.h"
#include "gpu_ilu.h"
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
    CU_ASSERT(held <= 4000.0);    /* 4.4 kB with the factorization's own copy of L, U and the scaling */
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

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"device ILU(0) setup: bytes held and peak a block row", test_ilu0_setup_bytes},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_memory", tests, argc, argv, &ctx);
}
