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
    DR_SETUP_S, DR_SOLVE_S, DR_HALO_S, DR_REDUCE_S, DR_THREADS, DR_FIGURES
};

typedef struct {
    const char *problem;        /* file name or generator spec */
    const char *partition;      /* how the rows were split */
    const char *config, *backend;
    int ranks, b;
    int64_t nglobal, nnzb;      /* block rows and blocks of the whole matrix */
    const double *rank;         /* [ranks][DR_FIGURES] */
    const bsr_solver_stats *st; /* global iterations and residuals; rank 0's preconditioner words */
    const double *err;          /* [k] error vs the exact solution, NULL when none */
    bsr_status result;          /* BSR_OK, BSR_ERR_NOCONV or BSR_ERR_BREAKDOWN */
    int steps;                  /* --steps: refactor + solve steps after the first solve */
    double step_refactor, step_solve; /* their medians of the slowest rank's seconds */
    int step_iters;             /* iterations of the last step (worst column) */
} dsolve_report;

/* The report on stdout: one screen, or one JSON object. */
void dsolve_report_text(const dsolve_report *r);
void dsolve_report_json(const dsolve_report *r);

#endif
