/* SPDX-License-Identifier: BSD-3-Clause */
/* The preconditioner table: one row per (kind, backend), and the factory that
 * makes the one preconditioner object of (A, context) from it.  The solver,
 * its CUDA backend and the distributed overlap preconditioner all create
 * theirs here; the Krylov loops know the object only through apply.  In a
 * CPU-only build the CUDA rows are not registered. */
#include "precond_impl.h"

static const bsr_pc_row rows[] = {
    {BSR_PC_NONE, BSR_BACKEND_CPU, &bsr_pc_none_ops},
    {BSR_PC_JACOBI, BSR_BACKEND_CPU, &bsr_pc_jacobi_cpu_ops},
    {BSR_PC_SSOR, BSR_BACKEND_CPU, &bsr_pc_ssor_cpu_ops},
    {BSR_PC_ILU0, BSR_BACKEND_CPU, &bsr_pc_ilu_cpu_ops},
    {BSR_PC_ILUT, BSR_BACKEND_CPU, &bsr_pc_ilu_cpu_ops},
    {BSR_PC_ILU2, BSR_BACKEND_CPU, &bsr_pc_ilu_cpu_ops},
    {BSR_PC_IC0, BSR_BACKEND_CPU, &bsr_pc_ic0_cpu_ops},
    {BSR_PC_IC2, BSR_BACKEND_CPU, &bsr_pc_ic2_cpu_ops},
#ifdef BSR_HAVE_CUDA
    {BSR_PC_NONE, BSR_BACKEND_CUDA, &bsr_pc_none_ops},
    {BSR_PC_JACOBI, BSR_BACKEND_CUDA, &bsr_pc_jacobi_cuda_ops},
    {BSR_PC_ILU0, BSR_BACKEND_CUDA, &bsr_pc_ilu_cuda_ops},
    {BSR_PC_ILUT, BSR_BACKEND_CUDA, &bsr_pc_ilu_cuda_ops},
    {BSR_PC_ILU2, BSR_BACKEND_CUDA, &bsr_pc_ilu_cuda_ops},
    {BSR_PC_IC0, BSR_BACKEND_CUDA, &bsr_pc_ic0_cuda_ops},
#endif
};

/* The table's rows and their number. */
const bsr_pc_row *bsr_pc_rows(int *n)
{
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

/* The backend's name in messages. */
static const char *backend_name(bsr_backend be)
{
    return be == BSR_BACKEND_CPU ? "cpu" : be == BSR_BACKEND_CUDA ? "cuda" : "unknown";
}

/* What to use instead of a missing row (the messages the device kinds gave). */
static const char *missing_hint(bsr_pc_kind kind, bsr_backend be)
{
    if (be != BSR_BACKEND_CUDA) return "";
    if (kind == BSR_PC_SSOR) return " (use jacobi or an ILU on the CUDA backend, or --backend cpu)";
    if (kind == BSR_PC_IC2) return " (use precond=ic0 or jacobi with method=cg on the CUDA backend, or --backend cpu)";
#ifndef BSR_HAVE_CUDA
    return " (this build has no CUDA backend)";
#else
    return "";
#endif
}

bsr_status bsr_pc_row_find(bsr_pc_kind kind, bsr_backend be, const bsr_pc_row **row)
{
    *row = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].kind == kind && rows[i].backend == be) {
            *row = &rows[i];
            return BSR_OK;
        }
    if (kind < BSR_PC_NONE || kind > BSR_PC_IC2)
        return bsr_error(BSR_ERR_ARG, "bsr_pc_create: unknown preconditioner %d", (int)kind);
    return bsr_error(BSR_ERR_UNSUPPORTED, "no preconditioner for (kind %s, backend %s)%s", bsr_pc_name(kind),
                     backend_name(be), missing_hint(kind, be));
}

bsr_status bsr_pc_create(const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx,
                         const bsr_order_ahead *ahead, bsr_pc *smoother, bsr_pc **out)
{
    *out = NULL;
    const bsr_backend be = bsr_solver_ctx_is_device(ctx) ? BSR_BACKEND_CUDA : BSR_BACKEND_CPU;
    const bsr_pc_row *row;
    BSR_TRY(bsr_pc_row_find(o->precond, be, &row));
    /* two levels (option coarse=M) around the ILU kind's row, on either backend */
    const bsr_pc_ops *ops = o->coarse > 0 && BSR_PC_IS_ILU(o->precond) ? &bsr_pc_coarse_ops : row->ops;
    if (smoother && ops != &bsr_pc_coarse_ops)
        return bsr_error(BSR_ERR_ARG, "bsr_pc_create: a smoother given to %s without a coarse level",
                         bsr_pc_name(o->precond));
    bsr_pc *pc = bsr_calloc(1, sizeof *pc, "preconditioner");
    if (!pc) return BSR_ERR_NOMEM;
    pc->name = bsr_pc_name(o->precond);
    pc->refactor = ops->refactor;
    pc->apply = ops->apply;
    pc->destroy = ops->destroy;
    pc->ahead = ahead;
    pc->given = smoother;
    bsr_status s = ops->setup(pc, A, o, be == BSR_BACKEND_CUDA ? ctx : NULL);
    pc->ahead = NULL;
    pc->given = NULL;
    if (s) { bsr_pc_destroy(pc); return s; }
    *out = pc;
    return BSR_OK;
}
