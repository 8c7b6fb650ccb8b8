/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI suites' main (harness_mpi.h). */
#include "harness_mpi.h"
#include <stdio.h>
#include <string.h>

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

int bsr_test_all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int bsr_test_injected_failures(bsr_dsolver *s, const bsr_multivec *B, bsr_multivec *X, const bsr_multivec *X0,
                               const char *msg, int *fail_at, int *fired)
{
    int rank, nranks, agreed = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t bytes = (size_t)bsr_multivec_rows(X) * bsr_multivec_cols(X) * bsr_precision_size(bsr_multivec_precision(X));
    *fired = 0;
    for (int n = 1; n <= 120; n += 7) {
        *fail_at = rank == nranks - 1 ? n : 0;
        bsr_multivec_fill(X, 0);
        bsr_status st = bsr_dsolver_solve(s, B, X, NULL);
        *fail_at = 0;
        if (st != BSR_OK && st != BSR_ERR_INTERNAL) agreed = 0;
        if (msg && st == BSR_ERR_INTERNAL && !strstr(bsr_last_error(), msg)) agreed = 0;
        int failed = st != BSR_OK, anyf = 0, allf = 0;
        MPI_Allreduce(&failed, &anyf, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&failed, &allf, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (anyf != allf) agreed = 0;
        *fired += anyf;
        /* a clean solve afterwards */
        bsr_multivec_fill(X, 0);
        if (bsr_dsolver_solve(s, B, X, NULL) != BSR_OK) agreed = 0;
        if (X0 && memcmp(bsr_multivec_cdata(X), bsr_multivec_cdata(X0), bytes)) agreed = 0;
    }
    return agreed;
}
