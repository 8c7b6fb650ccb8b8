/* SPDX-License-Identifier: BSD-3-Clause */
/* Numeric block ILU values, one per backend, on a finished symbolic value.
 *
 * The plan is a bsr_ilu made by ilu_sym_build (ilu_impl.h): ordering,
 * matching, map of A, scaling rule and, for ILU(0), the patterns of L and U
 * and their level schedules; nothing of it changes afterwards.  A threshold
 * kind's pattern (for ILU2 with its kept second-order part) is chosen by the
 * first factorization of its numeric value and frozen there.  A numeric
 * value holds the values of one factorization of A on that plan, on one
 * backend, behind one table of operations, and is built from the numeric
 * options the preconditioner resolved (no solver options reach it).  The ILU
 * preconditioner (precond_ilu.c) knows the factor only through this table,
 * so its host and device rows are the same code holding different factors; a
 * new backend is one file defining one table. */
#ifndef BSR_ILU_NUMERIC_H
#define BSR_ILU_NUMERIC_H

#include "ilu_impl.h"
#include "gpu_ilu.h"

typedef struct ilu_numeric ilu_numeric;

typedef struct {
    const char *name;   /* "cpu", "cuda" */
    /* Factor A's values (same pattern as the plan's A) into the plan's
     * pattern.  On failure the factor holds no values (apply refuses) until
     * a later call succeeds: never the factors of older values. */
    bsr_status (*numeric)(ilu_numeric *f, const bsr_matrix *A);
    /* Y = M^{-1} X in A's numbering (vectors resident where the backend computes). */
    bsr_status (*apply)(ilu_numeric *f, const bsr_multivec *X, bsr_multivec *Y);
    /* The plan pattern the current values belong to (0: none). */
    uint64_t (*pattern_id)(const ilu_numeric *f);
    void (*destroy)(ilu_numeric *f);
} ilu_numeric_ops;

/* What every backend's factor carries; backends extend it (first member). */
struct ilu_numeric {
    const ilu_numeric_ops *ops;
    bsr_ilu *plan;      /* borrowed: it outlives the factor */
    uint64_t pattern;   /* plan->pattern_id of the current values; 0 after a failure */
    int on_device;      /* the values were computed on the device */
    int nreg;           /* pivots regularized by the last numeric */
    double factor_s;    /* seconds of the last numeric */
    double host_s;      /* seconds of host setup work its constructor ran (the CUDA factor's
                         * first host factorization with factor=cpu) */
    double bytes_fixed, bytes_passes; /* one apply's least traffic (bsr_pc's fields of the same names) */
};

/* f's figures taken from the plan's last host factorization (the CPU factor,
 * and the CUDA factor whose values were factored on the host). */
static inline void ilu_numeric_host_figures(ilu_numeric *f)
{
    f->nreg = f->plan->st.pivots_regularized;
    f->factor_s = f->plan->st.factor_s;
}

/* The host factor on the finished plan: the plan's own values (its first
 * factorization of A here, ilu_num_host; later ones by bsr_ilu_refactor;
 * applied by bsr_ilu_apply).  A plan that brings its first factorization
 * (bsr_ilu_setup with match=auto, which chooses the matching by factoring
 * with and without it) has it taken over as it is. */
bsr_status ilu_numeric_cpu(bsr_ilu *plan, const bsr_matrix *A, ilu_numeric **f);

/* The numeric options of a device factor (what the preconditioner resolved
 * from its solver options and A). */
typedef struct {
    int on_device;      /* values factored on the device (factor=gpu); 0: on the host, uploaded */
    int factor_float;   /* device factors stored in float (mixed with double vectors) */
    int trisolve;       /* 0: exact triangular solves; N > 0: N Jacobi sweeps on each factor */
} ilu_numeric_options;

/* The CUDA factor in ctx on the finished plan, its values computed on the
 * device (on_device: the plan holds no host values, and a threshold kind's
 * pattern was chosen before, by a pattern pass, ilu_pattern_pass, which
 * this refuses to run for it; A, device mirror current, is factored once
 * here) or on the host into the plan and uploaded (the first factorization
 * here, ilu_num_host, unless the plan brings it as ilu_numeric_cpu's; each
 * later numeric refactors the plan, then uploads). */
bsr_status ilu_numeric_cuda(bsr_context *ctx, bsr_ilu *plan, const bsr_matrix *A, const ilu_numeric_options *no,
                            ilu_numeric **f);

#endif
