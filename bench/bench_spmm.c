/* `bsrsolve bench spmm` (placeholder until issue 3 lands). */
#include "cli.h"

int bench_spmm(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench spmm is not built yet\n");
    return 2;
}
