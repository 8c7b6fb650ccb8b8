/* `bsrsolve bench sor` (placeholder until issue 8 lands). */
#include "cli.h"

int bench_sor(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench sor is not built yet\n");
    return 2;
}
