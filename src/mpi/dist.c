/* The distributed context: a duplicated communicator and the rank's backend;
 * collective error agreement and deterministic global sums. */
#include "dist_impl.h"
#include <string.h>

bsr_status bsr_mpi_fail(int err, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, msg, &len);
    return bsr_error(BSR_ERR_INTERNAL, "MPI: %s failed: %s", call, msg);
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
    d->ctx = ctx;
    d->device = ctx && bsr_context_backend(ctx) == BSR_BACKEND_CUDA;
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

bsr_status bsr_dist_sum(bsr_dist *d, const double *part, double *out, int n)
{
    if (d->size == 1) {
        if (out != part) memcpy(out, part, sizeof(double) * (size_t)n);
        return BSR_OK;
    }
    double stack[256], *all = (size_t)n * d->size <= 256 ? stack
                                  : bsr_malloc(sizeof(double) * (size_t)n * d->size, "global sum");
    if (!all) return BSR_ERR_NOMEM;
    int e = MPI_Allgather(part, n, MPI_DOUBLE, all, n, MPI_DOUBLE, d->comm);
    if (e == MPI_SUCCESS)
        for (int j = 0; j < n; j++) {
            double s = all[j];
            for (int r = 1; r < d->size; r++) s += all[(size_t)r * n + j];
            out[j] = s;
        }
    if (all != stack) free(all);
    return e == MPI_SUCCESS ? BSR_OK : bsr_mpi_fail(e, "MPI_Allgather (global sum)");
}
