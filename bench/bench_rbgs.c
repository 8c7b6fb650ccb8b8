/* `bsrsolve bench rbgs` (placeholder until issue 8 lands). */
#include "cli.h"

int bench_rbgs(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench rbgs is not built yet\n");
    return 2;
}
