/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI suites' main (harness_mpi.h). */
#include "harness_mpi.h"
#include <stdio.h>

int bsr_test_mpi_main(const char *name, const bsr_test *tests, int argc, char **argv, int *rank, int *nranks)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    if (*rank > 0 && !freopen("/dev/null", "w", stdout)) return 1;  /* one report, rank 0's */
    char suite[64];
    snprintf(suite, sizeof suite, "%s_np%d", name, *nranks);
    int rc = bsr_test_main(suite, tests, argc, argv), worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
