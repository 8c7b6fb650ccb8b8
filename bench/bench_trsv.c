/* `bsrsolve bench trsv` (placeholder until issue 6 lands). */
#include "cli.h"

int bench_trsv(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench trsv is not built yet\n");
    return 2;
}
