/* `bsrsolve bench ilu` (placeholder until issue 5 lands). */
#include "cli.h"

int bench_ilu(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench ilu is not built yet\n");
    return 2;
}
