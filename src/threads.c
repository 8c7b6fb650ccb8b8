/* SPDX-License-Identifier: BSD-3-Clause */
/* The thread count of a rank that shares its node with other ranks: by
 * default every rank's OpenMP team took every core (mpiexec -n 4 on a 64-core
 * host: 4 x 64 threads on 64 cores).  The rule is a pure function so that it
 * is tested without MPI; src/mpi/dist.c applies it at bsr_dist_create. */
#include "internal.h"
#include <stdlib.h>

int bsr_threads_per_rank(int node_cores, int local_ranks, int avail, int user_set)
{
    if (user_set) return 0;
    if (local_ranks < 1) local_ranks = 1;
    int t = node_cores > 0 ? node_cores / local_ranks : (avail > 0 ? avail / local_ranks : 1);
    if (avail > 0 && t > avail) t = avail;
    return t > 1 ? t : 1;
}

int bsr_omp_threads_user_set(void)
{
    const char *e = getenv("OMP_NUM_THREADS");
    return e && *e;
}
