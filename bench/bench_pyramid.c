/* `bsrsolve bench pyramid` (placeholder until issue 9 lands). */
#include "cli.h"

int bench_pyramid(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "bsrsolve: bench pyramid is not built yet\n");
    return 2;
}
