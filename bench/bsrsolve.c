/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve: command-line front end.  Dispatches to the subcommand files;
 * under mpiexec (MPI builds), a solve on several ranks to the distributed one. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>
#ifdef BSR_HAVE_MPI
#include <mpi.h>
#endif

void bsr_generate_usage(FILE *f);

/* Print the top-level usage and the generators' list to f. */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: bsrsolve [FILE.mtx | --gen SPEC] [options]     solve (default: the embedded problem)\n"
        "       bsrsolve FILE.mtx|--gen SPEC --info [--json] [--block B|auto] [--reorder SPEC] [--write PREFIX]\n"
        "                                   (--write: PREFIX.mtx, PREFIX_rhs.mtx, PREFIX_xexact.mtx)\n"
        "       bsrsolve bench spmm|ilu|trsv|trsvcpu|rbgs|sor|pyramid [options]\n"
        "common options:\n"
        "  --block B|auto    block size 1..%d for Matrix Market input (default auto)\n"
        "  --float           single precision: matrix, Krylov vectors, preconditioner (default double)\n"
        "  --json            one JSON object on stdout\n"
        "  --help            this text; `bsrsolve bench NAME --help` for a benchmark's options\n"
        "  --version         the version (every JSON report has it too, \"version\")\n"
        "exit codes: 0 done, 1 error, 2 usage (bad option or value), 3 not converged\n",
        BSR_MAX_BLOCK);
    cli_usage_solve(f);
#ifdef BSR_HAVE_MPI
    fprintf(f,
        "distributed: mpiexec -n P bsrsolve FILE.mtx|--gen SPEC [--backend cpu|cuda] [--config ...] [--rhs ones|B.mtx]\n"
        "             [--float] [--steps N] [--json]: a generator builds each rank's rows (equal ranges), a file is\n"
        "             read by rank 0, partitioned with METIS k-way and scattered; the report adds the partition\n"
        "             and the communication times; --x0 --out --reference --compare --exact --plot --warm\n"
        "             --error-estimate are serial only\n");
#endif
    fprintf(f, "generators (--gen):\n");
    bsr_generate_usage(f);
}

/* What argv asks for. */
typedef enum { CMD_BENCH, CMD_HELP, CMD_VERSION, CMD_INFO, CMD_SOLVE } command;
static command which(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bench")) return CMD_BENCH;
    if (cli_flag(argc, argv, "--help") || cli_flag(argc, argv, "-h")) return CMD_HELP;
    if (cli_flag(argc, argv, "--version")) return CMD_VERSION;
    if (cli_flag(argc, argv, "--info")) return CMD_INFO;
    return CMD_SOLVE;
}

/* Run command c on this process alone; its exit code. */
static int run(command c, int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(int, char **); } benches[] = {
        {"spmm", bench_spmm}, {"ilu", bench_ilu}, {"trsv", bench_trsv}, {"trsvcpu", bench_trsvcpu},
        {"rbgs", bench_rbgs}, {"sor", bench_sor}, {"pyramid", bench_pyramid},
    };
    switch (c) {
    case CMD_BENCH:
        if (argc < 3) { usage(stderr); return 2; }
        for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
            if (!strcmp(argv[2], benches[i].name)) return benches[i].fn(argc - 2, argv + 2);
        fprintf(stderr, "bsrsolve: unknown benchmark '%s'\n", argv[2]);
        return 2;
    case CMD_HELP: usage(stdout); return 0;
    case CMD_VERSION: printf("bsrsolve %s\n", bsr_version()); return 0;
    case CMD_INFO: return cmd_info(argc, argv);
    default: return cmd_solve(argc, argv);
    }
}

#ifdef BSR_HAVE_MPI
/* Started by an MPI launcher (mpiexec/mpirun of Open MPI, MPICH or Intel
 * MPI, srun): only then is MPI initialized, so that a plain run stays the
 * serial run, without MPI's start-up. */
static int mpi_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* Under mpiexec: a solve on more than one rank is the distributed one; any
 * other command runs on rank 0 alone (one output) and every rank exits
 * with its code. */
static int run_mpi(command c, int argc, char **argv)
{
    int rank = 0, size = 1, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1) {
        rc = run(c, argc, argv);
    } else if (c == CMD_SOLVE) {
        rc = cmd_dsolve(argc, argv);
    } else {
        if (rank == 0) rc = run(c, argc, argv);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return rc;
}
#endif

int main(int argc, char **argv)
{
    command c = which(argc, argv);
#ifdef BSR_HAVE_MPI
    if (mpi_launched()) return run_mpi(c, argc, argv);
#endif
    return run(c, argc, argv);
}
