/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed context: a duplicated communicator and the rank's backend;
 * collective error agreement and deterministic global sums. */
#ifdef __linux__
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#endif
#include "dist_impl.h"
#include <omp.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* OpenMPI's MPIX_CUDA_AWARE_SUPPORT */
#endif

/* MPI takes device pointers: compiled in and reported by the library at run time. */
static int cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

bsr_status bsr_mpi_fail(int err, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, msg, &len);
    return bsr_error(BSR_ERR_INTERNAL, "MPI: %s failed: %s", call, msg);
}

/* CPUs the ranks of node (a communicator of one node's ranks) may run on
 * together: the union of their affinity masks (a container's cpuset, or the
 * cores mpiexec bound them to), else the node's online CPUs; 0 if unknown.
 * Collective over node. */
static int node_cpus(MPI_Comm node)
{
#ifdef __linux__
    enum { W = sizeof(cpu_set_t) / sizeof(unsigned long) };
    unsigned long mine[W + 1], all[W + 1];
    cpu_set_t set;
    CPU_ZERO(&set);
    int failed = sched_getaffinity(0, sizeof set, &set) != 0;
    memcpy(mine, &set, sizeof set);
    mine[W] = (unsigned long)failed;   /* every rank takes part, failed or not */
    if (MPI_Allreduce(mine, all, W + 1, MPI_UNSIGNED_LONG, MPI_BOR, node) == MPI_SUCCESS && !all[W]) {
        memcpy(&set, all, sizeof set);
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
#else
    (void)node;
#endif
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 && c < (1L << 20) ? (int)c : 0;
}

/* The ranks of a node share its cores: each rank's OpenMP team
 * took every core (mpiexec -n 4 on a 64-core host: 4 x 64 threads on 64
 * cores, each rank waiting at its barriers for threads the others had
 * displaced).  Unless OMP_NUM_THREADS is set, the calling thread's OpenMP
 * thread count becomes max(1, min(node CPUs / ranks of comm on this node,
 * CPUs this process may run on)) (bsr_threads_per_rank), both within the
 * cgroup CPU quota.  Collective over
 * d->comm. */
static void share_node_cores(bsr_dist *d)
{
    int local = 1, cpus = 0;
    MPI_Comm node;
    if (MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        cpus = node_cpus(node);
        MPI_Comm_free(&node);
    }
    /* ranks of one container share its cgroup CPU quota too */
    const int quota = bsr_cgroup_cpus();
    if (quota > 0 && (cpus <= 0 || quota < cpus)) cpus = quota;
    int t = bsr_threads_per_rank(cpus, local, bsr_cpus_available(), bsr_omp_threads_user_set());
    if (t > 0) omp_set_num_threads(t);
    d->local_ranks = local;
}

bsr_status bsr_dist_create(bsr_dist **out, MPI_Comm comm, bsr_context *ctx)
{
    BSR_CHECK_ARG(out, "bsr_dist_create: NULL argument");
    *out = NULL;
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return bsr_error(BSR_ERR_ARG, "bsr_dist_create: MPI is not initialized (call MPI_Init first)");
    bsr_dist *d = bsr_calloc(1, sizeof *d, "distributed context");
    if (!d) return BSR_ERR_NOMEM;
    int e = MPI_Comm_dup(comm, &d->comm);
    if (e != MPI_SUCCESS) { free(d); return bsr_mpi_fail(e, "MPI_Comm_dup"); }
    /* errors come back as codes, turned into statuses here, never an abort */
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    share_node_cores(d);
    d->ctx = ctx;
    d->device = ctx && bsr_context_backend(ctx) == BSR_BACKEND_CUDA;
    /* every rank must take the same halo path: on only where all ranks can */
    int aware = d->device && cuda_aware(), all = 0;
    MPI_Allreduce(&aware, &all, 1, MPI_INT, MPI_MIN, d->comm);
    d->cuda_aware = all;
    *out = d;
    return BSR_OK;
}

void bsr_dist_destroy(bsr_dist *d)
{
    if (!d) return;
    MPI_Comm_free(&d->comm);
    free(d);
}

int bsr_dist_rank(const bsr_dist *d) { return d ? d->rank : -1; }
int bsr_dist_cuda_aware(const bsr_dist *d) { return d ? d->cuda_aware : 0; }

bsr_status bsr_dist_set_cuda_aware(bsr_dist *d, int on)
{
    BSR_CHECK_ARG(d, "bsr_dist_set_cuda_aware: NULL context");
    if (on && !d->cuda_aware)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_dist_set_cuda_aware: this MPI does not take device pointers "
                         "(or the context is not a CUDA one on every rank)");
    d->cuda_aware = on;
    return BSR_OK;
}
int bsr_dist_size(const bsr_dist *d) { return d ? d->size : 0; }
MPI_Comm bsr_dist_comm(const bsr_dist *d) { return d ? d->comm : MPI_COMM_NULL; }

bsr_status bsr_dist_agree(bsr_dist *d, bsr_status st)
{
    /* the lowest failing rank: MIN over (failed ? rank : size) */
    int mine = st != BSR_OK ? d->rank : d->size, first = d->size;
    int e = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, d->comm);
    if (e != MPI_SUCCESS) return bsr_mpi_fail(e, "MPI_Allreduce (error agreement)");
    if (first == d->size) return BSR_OK;
    struct { int status; char msg[480]; } m;
    memset(&m, 0, sizeof m);
    if (d->rank == first) {
        m.status = (int)st;
        snprintf(m.msg, sizeof m.msg, "%s", bsr_last_error());
    }
    e = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, d->comm);
    if (e != MPI_SUCCESS) return bsr_mpi_fail(e, "MPI_Bcast (error agreement)");
    if (d->rank == first) return st;
    return bsr_error((bsr_status)m.status, "rank %d: %s", first, m.msg[0] ? m.msg : bsr_status_string(m.status));
}

/* Values [v0, v0+c) of the virtual array (part[0..n), flag[, stamp])
 * gathered from every rank into all (c values per rank, rank-major). */
static int gather_chunk(bsr_dist *d, const double *part, int n, double flag, double stamp, int v0, int c,
                        double *all)
{
    double mine[64];
    for (int t = 0; t < c; t++) mine[t] = v0 + t < n ? part[v0 + t] : v0 + t == n ? flag : stamp;
    return MPI_Allgather(mine, c, MPI_DOUBLE, all, c, MPI_DOUBLE, d->comm);
}

bsr_status bsr_dist_sum_late(bsr_dist *d, const double *part, double *out, int n, double flag, double *flags,
                             double *late)
{
    /* chunks of at most 64 values through a fixed buffer: nothing here can
     * fail on one rank alone and leave the others in the collective */
    enum { CAP = 8192 };
    static _Thread_local double all[CAP];
    int chunk = CAP / d->size;
    if (chunk > 64) chunk = 64;
    if (chunk < 1) return bsr_error(BSR_ERR_UNSUPPORTED, "global sum: more than %d ranks", CAP);
    /* the arrival stamp travels as one more value, its maximum taken instead of the sum */
    const int nv = n + 1 + (late != NULL);
    const double stamp = late ? bsr_now() /* monotonic: shared by the processes of one host */ : 0;
    double latest = stamp;
    *flags = 0;
    for (int v0 = 0; v0 < nv; v0 += chunk) {
        int c = nv - v0 < chunk ? nv - v0 : chunk;
        int e = gather_chunk(d, part, n, flag, stamp, v0, c, all);
        if (e != MPI_SUCCESS) return bsr_mpi_fail(e, "MPI_Allgather (global sum)");
        for (int t = 0; t < c; t++) {
            if (v0 + t == n + 1) {
                for (int r = 0; r < d->size; r++)
                    if (all[(size_t)r * c + t] > latest) latest = all[(size_t)r * c + t];
                continue;
            }
            double s = all[t];
            for (int r = 1; r < d->size; r++) s += all[(size_t)r * c + t];
            if (v0 + t < n) out[v0 + t] = s; else *flags = s;
        }
    }
    if (late) *late = d->local_ranks == d->size ? latest - stamp : -1;
    return BSR_OK;
}

bsr_status bsr_dist_sum(bsr_dist *d, const double *part, double *out, int n, double flag, double *flags)
{
    return bsr_dist_sum_late(d, part, out, n, flag, flags, NULL);
}
