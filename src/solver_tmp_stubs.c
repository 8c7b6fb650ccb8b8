/* TEMPORARY (removed when the reorder/ilu branches are merged): stand-ins so
 * the solver builds before its dependencies land. */
#include "internal.h"
#include <string.h>
bsr_status bsr_order_parse(const char *spec, bsr_order_options *o)
{
    bsr_order_options_default(o, BSR_ORDER_NATURAL);
    if (!strcmp(spec, "natural") || !strcmp(spec, "rcm") || !strncmp(spec, "nd", 2) || !strcmp(spec, "amd") || !strcmp(spec, "metis")) return BSR_OK;
    return bsr_error(BSR_ERR_ARG, "unknown ordering '%s'", spec);
}
void bsr_order_options_default(bsr_order_options *o, bsr_order_kind kind) { memset(o, 0, sizeof *o); o->kind = kind; o->depth = -1; o->seed = 1; }
