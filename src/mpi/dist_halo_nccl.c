/* SPDX-License-Identifier: BSD-3-Clause */
/* The NCCL halo (option halo=nccl; dist_impl.h): where every rank finds
 * NCCL, one communicator over the ranks, made at the first solve that asks
 * for it; each exchange the packed rows' sends and the ghosts' receives as
 * one NCCL group queued on the device (kernels/mpi/halo_nccl.cu), so that
 * no host waits for the halo and the interior product runs while it
 * travels.  NCCL sends and receives only in matching pairs: a rank that
 * skips its work after a failure still posts its part, from a scratch
 * buffer of its own, so that no neighbour's device waits forever. */
#include "dist_impl.h"
#include <string.h>

struct bsr_dnccl {
    bsr_context *ctx;   /* the GPU the communicator lives on */
    void *h;            /* its device side */
    size_t row;         /* bytes of a row in the last exchange posted (a skip posts as many) */
    void *scratch;      /* device rows for a skip: sends, then receives */
    size_t scratch_bytes;
};

/* Free A's NCCL halo (NULL-safe; collective where it was made). */
void bsr_dnccl_destroy(bsr_dmatrix *A)
{
    struct bsr_dnccl *N = A->nccl;
    if (!N) return;
    bsr_cuda_nccl_free(N->ctx, N->h);
    bsr_cuda_buffer_free(N->scratch);
    free(N);
    A->nccl = NULL;
}

/* Rows a skip sends and receives, for rows of row bytes. */
static size_t skip_bytes(const bsr_dmatrix *A, size_t row)
{
    return row * ((size_t)A->h.send_off[A->h.nsend] + (size_t)A->h.nghost);
}

/* Whether every rank's step succeeded (collective): s this rank's status
 * (a failure's message taken, and cleared); *all 1 when every s was BSR_OK,
 * else 0 and the lowest failing rank's message in note ("NCCL on rank R:
 * message").  Fails only on an MPI error. */
static bsr_status agree(bsr_dist *d, bsr_status s, char *note, size_t len, int *all)
{
    char w[160] = "";
    if (s) { snprintf(w, sizeof w, "%s", bsr_last_error()); bsr_clear_error(); }
    struct { int ok, rank; } in = {!s, d->rank}, out;
    MPI_TRY(MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, d->comm));
    *all = out.ok;
    if (out.ok) return BSR_OK;
    MPI_TRY(MPI_Bcast(w, (int)sizeof w, MPI_CHAR, out.rank, d->comm));
    snprintf(note, len, "NCCL on rank %d: %s", out.rank, w);
    return BSR_OK;
}

/* Whether two ranks share a GPU (NCCL takes one GPU a rank: its
 * communicator refuses a second rank on one), collective; *all 0 and the
 * note naming the first pair where they do. */
static bsr_status one_gpu_a_rank(bsr_dist *d, bsr_context *ctx, char *note, size_t len, int *all)
{
    enum { NAME = MPI_MAX_PROCESSOR_NAME + BSR_CUDA_BUSID_BYTES + 2 };
    char me[NAME] = "", bus[BSR_CUDA_BUSID_BYTES] = "?";
    int nl = 0;
    MPI_TRY(MPI_Get_processor_name(me, &nl));
    if (bsr_cuda_ipc_busid(ctx, bus, (int)sizeof bus)) bsr_clear_error();
    snprintf(me + strlen(me), sizeof me - strlen(me), "|%s", bus);
    char *every = bsr_malloc((size_t)NAME * (size_t)d->size, "NCCL halo: the ranks' GPUs");
    int ok = every != NULL, have = 0;
    MPI_TRY(MPI_Allreduce(&ok, &have, 1, MPI_INT, MPI_MIN, d->comm));
    if (!have) { free(every); return BSR_ERR_NOMEM; }
    int e = MPI_Allgather(me, NAME, MPI_CHAR, every, NAME, MPI_CHAR, d->comm);
    if (e != MPI_SUCCESS) { free(every); return bsr_mpi_fail(e, "MPI_Allgather (NCCL halo)"); }
    *all = 1;
    for (int r = 0; r < d->size && *all; r++)
        for (int q = r + 1; q < d->size && *all; q++)
            if (!strcmp(every + (size_t)r * NAME, every + (size_t)q * NAME)) {
                *all = 0;
                snprintf(note, len, "NCCL takes one GPU a rank: ranks %d and %d share %s", r, q,
                         every + (size_t)r * NAME);
            }
    free(every);
    return BSR_OK;
}

/* The communicator on ctx (collective), or why not in A->halo_note. */
static bsr_status make(bsr_dmatrix *A, bsr_context *ctx)
{
    bsr_dist *d = A->d;
    char why[256];   /* the message agree takes says the same */
    int all;
    BSR_TRY(agree(d, bsr_cuda_nccl_load(why, sizeof why), A->halo_note, sizeof A->halo_note, &all));
    if (!all) return BSR_OK;
    BSR_TRY(one_gpu_a_rank(d, ctx, A->halo_note, sizeof A->halo_note, &all));
    if (!all) return BSR_OK;
    unsigned char id[BSR_CUDA_NCCL_ID_BYTES] = {0};   /* made on rank 0 */
    bsr_status s = d->rank == 0 ? bsr_cuda_nccl_id(id) : BSR_OK;
    BSR_TRY(agree(d, s, A->halo_note, sizeof A->halo_note, &all));
    if (!all) return BSR_OK;
    MPI_TRY(MPI_Bcast(id, (int)sizeof id, MPI_UNSIGNED_CHAR, 0, d->comm));
    /* every rank's handle made before any rank enters the collective init,
     * which would wait forever for a rank that never comes */
    struct bsr_dnccl *N = bsr_calloc(1, sizeof *N, "NCCL halo");
    s = N ? bsr_cuda_nccl_new(ctx, &N->h) : BSR_ERR_NOMEM;
    if (N) N->ctx = ctx;
    A->nccl = N;
    BSR_TRY(agree(d, s, A->halo_note, sizeof A->halo_note, &all));
    if (!all) { bsr_dnccl_destroy(A); return BSR_OK; }
    s = bsr_cuda_nccl_init(ctx, N->h, id, d->size, d->rank);
    BSR_TRY(agree(d, s, A->halo_note, sizeof A->halo_note, &all));
    if (!all) bsr_dnccl_destroy(A);   /* a rank without its part: the others' are of no use */
    return BSR_OK;
}

bsr_status bsr_dnccl_setup(bsr_dmatrix *A, bsr_context *ctx, size_t row)
{
    if (A->nccl && A->nccl->ctx != ctx) bsr_dnccl_destroy(A);
    const int fresh = !A->nccl;
    if (fresh) BSR_TRY(make(A, ctx));
    struct bsr_dnccl *N = A->nccl;
    if (!N) return BSR_OK;
    N->row = row;
    const size_t need = skip_bytes(A, row);
    bsr_status s = BSR_OK;
    if (need > N->scratch_bytes) {
        bsr_cuda_buffer_free(N->scratch);
        N->scratch = NULL;
        N->scratch_bytes = 0;
        s = bsr_cuda_buffer(ctx, need, &N->scratch);
        if (!s) N->scratch_bytes = need;
    }
    int all;
    BSR_TRY(agree(A->d, s, A->halo_note, sizeof A->halo_note, &all));
    if (!all) { bsr_dnccl_destroy(A); return BSR_OK; }
    /* a new communicator connects its pairs at their first exchange (1.2-1.9
     * s on two H200s, measured): one exchange of scratch rows here, every
     * rank's, so that the solves do not pay it */
    if (fresh) {
        s = bsr_dnccl_skip(A);
        if (!s) s = bsr_context_sync(ctx);
        BSR_TRY(agree(A->d, s, A->halo_note, sizeof A->halo_note, &all));
        if (!all) bsr_dnccl_destroy(A);
    }
    return BSR_OK;
}

int bsr_dnccl_for(const bsr_dmatrix *A, const bsr_context *ctx)
{
    return A->nccl && ctx && A->nccl->ctx == ctx;
}

bsr_status bsr_dnccl_post(bsr_dmatrix *A, const void *sbuf, void *ghosts, size_t row)
{
    const bsr_halo *h = &A->h;
    struct bsr_dnccl *N = A->nccl;
    N->row = row;
    return bsr_cuda_nccl_post(N->ctx, N->h, h->nsend, h->send_rank, h->send_off, sbuf, h->nrecv, h->recv_rank,
                              h->recv_off, ghosts, row);
}

bsr_status bsr_dnccl_wait(bsr_dmatrix *A)
{
    return bsr_cuda_nccl_wait(A->nccl->ctx, A->nccl->h);
}

bsr_status bsr_dnccl_skip(bsr_dmatrix *A)
{
    struct bsr_dnccl *N = A->nccl;
    size_t row = skip_bytes(A, N->row) <= N->scratch_bytes ? N->row : 0;   /* a row never posted bigger */
    char *s = N->scratch, *r = s + row * (size_t)A->h.send_off[A->h.nsend];
    bsr_status st = bsr_dnccl_post(A, s, r, row);
    bsr_status s2 = st ? BSR_OK : bsr_dnccl_wait(A);
    return st ? st : s2;
}
