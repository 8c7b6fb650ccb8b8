/* bsrsolve: command-line front end.  Dispatches to the subcommand files. */
#include "cli.h"
#include <string.h>

void bsr_generate_usage(FILE *f);

/* Print the top-level usage and the generators' list to f. */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: bsrsolve [FILE.mtx | --gen SPEC] [options]     solve (default: the embedded problem)\n"
        "       bsrsolve FILE.mtx|--gen SPEC --info [--json] [--block B|auto] [--reorder SPEC]\n"
        "       bsrsolve bench spmm|ilu|trsv|rbgs|sor|pyramid [options]\n"
        "common options:\n"
        "  --block B|auto    block size 1..%d for Matrix Market input (default auto)\n"
        "  --float           single precision: matrix, Krylov vectors, preconditioner (default double)\n"
        "  --json            one JSON object on stdout\n"
        "  --help            this text; `bsrsolve bench NAME --help` for a benchmark's options\n"
        "exit codes: 0 done, 1 error, 2 usage (bad option or value), 3 not converged\n",
        BSR_MAX_BLOCK);
    cli_usage_solve(f);
    fprintf(f, "generators (--gen):\n");
    bsr_generate_usage(f);
}

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(int, char **); } benches[] = {
        {"spmm", bench_spmm}, {"ilu", bench_ilu}, {"trsv", bench_trsv},
        {"rbgs", bench_rbgs}, {"sor", bench_sor}, {"pyramid", bench_pyramid},
    };
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        if (argc < 3) { usage(stderr); return 2; }
        for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
            if (!strcmp(argv[2], benches[i].name)) return benches[i].fn(argc - 2, argv + 2);
        fprintf(stderr, "bsrsolve: unknown benchmark '%s'\n", argv[2]);
        return 2;
    }
    if (cli_flag(argc, argv, "--help") || cli_flag(argc, argv, "-h")) { usage(stdout); return 0; }
    if (cli_flag(argc, argv, "--info")) return cmd_info(argc, argv);
    return cmd_solve(argc, argv);
}
