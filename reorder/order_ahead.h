/* SPDX-License-Identifier: BSD-3-Clause */
/* An ordering made ahead on a second host thread, while the calling thread
 * goes on (order_ahead.c). */
#ifndef BSR_ORDER_AHEAD_H
#define BSR_ORDER_AHEAD_H

#include "internal.h"

/* Start the ordering under opt of A's block graph on a new host thread:
 * the graph is built here, on the calling thread, so A may change or go
 * once this returns.  The thread runs no OpenMP team (one core); its METIS
 * calls and any other thread's take turns (bsr_metis_lock), so every
 * ordering is the same as without it.  max_products > 0: a complete
 * factor's line (bsr_ilu_complete_line); where the graph's estimate
 * (bsr_sep_products) passes it, the thread orders nothing (that setup
 * refuses the factor without its ordering, ilu_complete_bound).  *out NULL (and BSR_OK) where no thread could start:
 * the ordering is then made when needed. */
bsr_status bsr_order_ahead_start(const bsr_matrix *A, const bsr_order_options *opt, double max_products,
                                 bsr_order_ahead **out);

/* Call h's thread off without waiting: a dissection gives up before its
 * next METIS call, and h will hand out nothing.  NULL-safe. */
void bsr_order_ahead_stop(bsr_order_ahead *h);

/* Wait for h's thread; h keeps what it made.  NULL-safe; a second call
 * returns at once. */
void bsr_order_ahead_wait(bsr_order_ahead *h);

/* After bsr_order_ahead_wait: a copy of h's ordering where it finished and
 * is the one opt asks for on n rows; NULL otherwise (h NULL, called off,
 * failed, other options, out of memory).  *secs (may be NULL): the seconds
 * the thread took. */
bsr_ordering *bsr_order_ahead_copy(const bsr_order_ahead *h, const bsr_order_options *opt, int n, double *secs);

/* After bsr_order_ahead_wait: 1 where h's thread estimated the complete
 * LU's block products of A's graph (n rows) under the line `line`
 * (bsr_sep_products: *est, its top separator's rows in *sep, may be NULL),
 * so that the setup need not estimate again; 0 otherwise (h NULL, another
 * line or size, no estimate made, out of memory). */
int bsr_order_ahead_estimate(const bsr_order_ahead *h, double line, int n, double *est, int *sep);

/* Call h off and let it go without waiting: freed here where its thread
 * has ended, else by the thread when it ends (at its next METIS call's end
 * for a dissection, a whole METIS_NodeND's for the metis kind).  NULL-safe. */
void bsr_order_ahead_release(bsr_order_ahead *h);

#endif
