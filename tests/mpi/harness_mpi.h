/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI suites' main: one CUnit suite per process, rank 0's report only,
 * the worst exit code of all ranks. */
#ifndef BSR_TEST_HARNESS_MPI_H
#define BSR_TEST_HARNESS_MPI_H

#include "harness.h"
#include <mpi.h>

/* MPI_Init, *rank and *nranks set, the suite "<name>_np<ranks>" run on every
 * rank (stdout of ranks > 0 silenced), MPI_Finalize; returns the exit code. */
int bsr_test_mpi_main(const char *name, const bsr_test *tests, int argc, char **argv, int *rank, int *nranks);

#endif
