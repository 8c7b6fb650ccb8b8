/* SPDX-License-Identifier: BSD-3-Clause */
/* The ranks of a node share its cores (issue 40): after bsr_dist_create the
 * OpenMP threads of all ranks on a node are no more than the CPUs they may
 * run on together (each rank at least 1), unless OMP_NUM_THREADS is set, which
 * is then left as it is.  ctest runs it twice: without OMP_NUM_THREADS and
 * with OMP_NUM_THREADS=3 (BSR_EXPECT_THREADS=3), ranks not bound to cores
 * (otherwise every rank sees one CPU and gets one thread whatever the rule). */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include "harness_mpi.h"
#include "bsrsolve_mpi.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

/* CPUs the ranks of node may run on together (union of their affinity masks). */
static int union_cpus(MPI_Comm node)
{
    enum { W = sizeof(cpu_set_t) / sizeof(unsigned long) };
    unsigned long mine[W], all[W];
    cpu_set_t set;
    CPU_ZERO(&set);
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof set, &set), 0);
    memcpy(mine, &set, sizeof set);
    MPI_Allreduce(mine, all, W, MPI_UNSIGNED_LONG, MPI_BOR, node);
    memcpy(&set, all, sizeof set);
    return CPU_COUNT(&set);
}

static void test_node_threads(void)
{
    const char *expect = getenv("BSR_EXPECT_THREADS");
    const int before = omp_get_max_threads();
    bsr_dist *d;
    BSR_ASSERT_OK(bsr_dist_create(&d, MPI_COMM_WORLD, NULL));
    const int t = omp_get_max_threads();
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local, sum = 0;
    MPI_Comm_size(node, &local);
    const int cpus = union_cpus(node);
    MPI_Allreduce(&t, &sum, 1, MPI_INT, MPI_SUM, node);
    MPI_Comm_free(&node);
    printf("\n  %d rank(s) on this node, %d CPU(s) for them, %d process CPU(s): threads per rank %d before, %d after "
           "bsr_dist_create (%d on the node)%s ",
           local, cpus, omp_get_num_procs(), before, t, sum, expect ? ", OMP_NUM_THREADS set" : "");
    CU_ASSERT(t >= 1);
    if (expect) {
        /* the user's choice stands */
        CU_ASSERT_EQUAL(t, atoi(expect));
        CU_ASSERT_EQUAL(t, before);
    } else {
        /* no oversubscription: the node's threads fit its CPUs (or one a rank) */
        CU_ASSERT(sum <= (cpus > local ? cpus : local));
        CU_ASSERT(t <= omp_get_num_procs());
        /* and no needless undersubscription: the CPUs split evenly */
        CU_ASSERT(t >= (cpus / local < omp_get_num_procs() ? cpus / local : omp_get_num_procs()));
    }
    bsr_dist_destroy(d);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"the ranks of a node share its CPUs", test_node_threads},
        {NULL, NULL},
    };
    return bsr_test_mpi_main("dist_threads", tests, argc, argv, &rank, &nranks);
}
