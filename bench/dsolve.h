/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed solve of the bsrsolve CLI (MPI builds): what rank 0
 * reports, shared by bench/cmd_dsolve.c (the run) and bench/dsolve_report.c
 * (text and JSON). */
#ifndef BSR_DSOLVE_H
#define BSR_DSOLVE_H

#include "bsrsolve.h"

/* One rank's figures, gathered on rank 0: partition, times, communication. */
enum {
    DR_ROWS, DR_INTERFACE, DR_GHOSTS, DR_SENT, DR_NEIGHBOURS, DR_NNZB, DR_PC_NNZB,
    DR_SETUP_S, DR_SOLVE_S, DR_HALO_S, DR_REDUCE_S, DR_THREADS,
    /* profile=1 (bsr_dsolver_profile): the product's parts, the halo's, the
     * preconditioner, the idle time in reductions (-1: unknown) */
    DR_P_INT, DR_P_IFC, DR_P_PACK, DR_P_POST, DR_P_WAIT, DR_P_UNPACK, DR_P_PRECOND, DR_P_IDLE,
    /* the serial solver's per-operation profile on this rank (stats.prof_s):
     * Krylov products (with their halo), preconditioner, updates, reductions */
    DR_K_SPMM, DR_K_PC, DR_K_UPD, DR_K_RED,
    DR_HALO_PATH,
    /* device bytes the library held on this rank's GPU after the setup, and
     * the most during it (0 on the CPU) */
    DR_DEV_BYTES, DR_DEV_PEAK, DR_FIGURES
};

/* Bytes of a rank's preconditioner words (bsr_solver_stats.precond_info). */
#define DR_INFO 512

typedef struct {
    const char *problem;        /* file name or generator spec */
    const char *partition;      /* how the rows were split */
    const char *config, *backend;
    int ranks, b;
    int64_t nglobal, nnzb;      /* block rows and blocks of the whole matrix */
    const double *rank;         /* [ranks][DR_FIGURES] */
    const bsr_solver_stats *st; /* global iterations and residuals; rank 0's preconditioner words */
    const char *pc_info;        /* [ranks][DR_INFO]: each rank's preconditioner words (NULL: rank 0's only) */
    const double *err;          /* [k] error vs the exact solution, NULL when none */
    bsr_status result;          /* BSR_OK, BSR_ERR_NOCONV or BSR_ERR_BREAKDOWN */
    int steps;                  /* --steps: refactor + solve steps after the first solve */
    double step_refactor, step_solve; /* their medians of the slowest rank's seconds */
    int step_iters;             /* iterations of the last step (worst column) */
    int profiled;               /* the DR_P_* and DR_K_* figures were measured (profile=1) */
    const char *halo_note;      /* why the halo path is not the one asked for ("" if it is) */
} dsolve_report;

/* The report on stdout: one screen, or one JSON object. */
void dsolve_report_text(const dsolve_report *r);
void dsolve_report_json(const dsolve_report *r);

#endif
