/* SPDX-License-Identifier: BSD-3-Clause */
/* The Krylov table: one row per method (name, solve, the preconditioners it
 * takes, its parameter, its traffic model).  Every backend runs the same row:
 * the solve is written against the vector-operations table (bsr_kops). */
#include "krylov_table.h"
#include <string.h>

/* CG's short recurrences need M symmetric: the ILU factors are not. */
#define PCS_SYMMETRIC ((1u << BSR_PC_NONE) | (1u << BSR_PC_JACOBI) | (1u << BSR_PC_SSOR) | (1u << BSR_PC_IC0) | (1u << BSR_PC_IC2))

static const bsr_krylov_row rows[] = {
    {BSR_BICGSTAB, "bicgstab", bsr_krylov_bicgstab, BSR_PCS_ALL, NULL, NULL, 0, 0, 0, 0, 0,
     &bsr_krylov_bicgstab_model, NULL},
    /* the orthogonalization grows with the cycle: traffic not modelled */
    {BSR_GMRES, "gmres", bsr_krylov_gmres, BSR_PCS_ALL, NULL, "restart", offsetof(bsr_solver_options, restart), 1,
     1000, 30, 1, NULL, NULL},
    {BSR_CG, "cg", bsr_krylov_cg, PCS_SYMMETRIC, "a symmetric preconditioner (precond=none, jacobi, ssor, ic0 or ic2)",
     NULL, 0, 0, 0, 0, 0, &bsr_krylov_cg_model, NULL},
    {BSR_IDR, "idr", bsr_krylov_idr, BSR_PCS_ALL, NULL, "idr_s", offsetof(bsr_solver_options, idr_s), 1, 16, 4, 0,
     NULL, bsr_krylov_idr_traffic},
};

const bsr_krylov_row *bsr_krylov_rows(int *n)
{
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

int bsr_krylov_traffic_of(const bsr_krylov_row *row, const bsr_solver_options *o, bsr_krylov_traffic *t)
{
    if (!row) return 0;
    if (row->model) { *t = *row->model; return 1; }
    return row->traffic && row->traffic(o, t);
}

const bsr_krylov_row *bsr_krylov_row_of(bsr_method m)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].method == m) return &rows[i];
    return NULL;
}

const bsr_krylov_row *bsr_krylov_row_named(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}

const bsr_krylov_row *bsr_krylov_row_param(const char *key)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].param && !strcmp(rows[i].param, key)) return &rows[i];
    return NULL;
}

int *bsr_krylov_param(bsr_solver_options *o, const bsr_krylov_row *row)
{
    return (int *)((char *)o + row->param_off);
}

int bsr_krylov_param_get(const bsr_solver_options *o, const bsr_krylov_row *row)
{
    return *(const int *)((const char *)o + row->param_off);
}
