/* --reorder SPEC summary (placeholder until the reordering issue lands). */
#include "cli.h"

int cli_reorder_info(const bsr_matrix *A, const char *spec, int json)
{
    (void)A; (void)json;
    fprintf(stderr, "bsrsolve: --reorder %s is not built yet\n", spec);
    return 2;
}
