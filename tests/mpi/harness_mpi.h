/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI suites' main: one CUnit suite per process, rank 0's report only,
 * the worst exit code of all ranks. */
#ifndef BSR_TEST_HARNESS_MPI_H
#define BSR_TEST_HARNESS_MPI_H

#include "harness.h"
#include "bsrsolve_mpi.h"
#include <mpi.h>

/* MPI_Init, *rank and *nranks set, the suite "<name>_np<ranks>" run on every
 * rank (stdout of ranks > 0 silenced), MPI_Finalize; returns the exit code. */
int bsr_test_mpi_main(const char *name, const bsr_test *tests, int argc, char **argv, int *rank, int *nranks);

/* 1 when ok on every rank (MPI_MIN over MPI_COMM_WORLD). */
int bsr_test_all_ranks(int ok);

/* Failures injected into solves of B into X with s: for n = 1, 8, ..., 113
 * the last rank's *fail_at (the hook bsr_dist_fail_at) is n, so that its
 * n-th local operation fails.  Every rank must agree on each outcome (done,
 * or BSR_ERR_INTERNAL whose message holds msg where msg is not NULL), and a
 * clean solve must follow, equal bit for bit to X0 where X0 is not NULL.
 * Returns whether this rank saw all that; *fired = the solves that failed. */
int bsr_test_injected_failures(bsr_dsolver *s, const bsr_multivec *B, bsr_multivec *X, const bsr_multivec *X0,
                               const char *msg, int *fail_at, int *fired);

#endif
