/* SPDX-License-Identifier: BSD-3-Clause */
/* The host numeric ILU factor (ilu_numeric.h): the values of the plan itself,
 * factored by the row kernel (ilu_factor.c) and applied by bsr_ilu_apply. */
#include "ilu_numeric.h"

static bsr_status cpu_numeric(ilu_numeric *f, const bsr_matrix *A)
{
    f->pattern = 0;
    BSR_TRY(bsr_ilu_refactor(f->plan, A));
    f->pattern = f->plan->pattern_id;
    ilu_numeric_host_figures(f);
    return BSR_OK;
}

static bsr_status cpu_apply(ilu_numeric *f, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_ilu_apply(f->plan, X, Y);
}

static uint64_t cpu_pattern(const ilu_numeric *f) { return f->pattern; }

static void cpu_destroy(ilu_numeric *f) { free(f); }

static const ilu_numeric_ops cpu_ops = {"cpu", cpu_numeric, cpu_apply, cpu_pattern, cpu_destroy};

bsr_status ilu_numeric_cpu(bsr_ilu *plan, const bsr_matrix *A, ilu_numeric **out)
{
    *out = NULL;
    if (!plan->valid) BSR_TRY(ilu_num_host(plan, A));   /* else the plan brings it (match=auto) */
    ilu_numeric *f = bsr_calloc(1, sizeof *f, "host ILU factor");
    if (!f) return BSR_ERR_NOMEM;
    f->ops = &cpu_ops;
    f->plan = plan;
    f->pattern = plan->pattern_id;
    ilu_numeric_host_figures(f);
    *out = f;
    return BSR_OK;
}
