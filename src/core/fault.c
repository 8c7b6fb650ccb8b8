/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection for the tests (declared in internal.h): event
 * counters per kind, one of which may be armed to fail at its n-th event,
 * and the device allocator's count of live allocations.  Atomic because
 * events happen inside OpenMP regions; disarmed, an event costs one relaxed
 * increment and one load. */
#include "internal.h"
#include <stdatomic.h>

static _Atomic long fault_count[BSR_FAULT_KINDS];
static _Atomic long fault_at[BSR_FAULT_KINDS];   /* 0: disarmed */
static _Atomic long dev_live;

/* Make the n-th event of kind from now fail (n <= 0: none); restarts its count. */
void bsr_fault_arm(bsr_fault_kind kind, long n)
{
    atomic_store(&fault_at[kind], 0);
    atomic_store(&fault_count[kind], 0);
    atomic_store(&fault_at[kind], n > 0 ? n : 0);
}

/* Disarm every kind and zero its count. */
void bsr_fault_reset(void)
{
    for (int k = 0; k < BSR_FAULT_KINDS; k++) bsr_fault_arm((bsr_fault_kind)k, 0);
}

/* Events of kind since it was last armed (or reset). */
long bsr_fault_count(bsr_fault_kind kind) { return atomic_load(&fault_count[kind]); }

/* Count an event; 1 when it is the armed one (exactly one event fails). */
int bsr_fault_hit(bsr_fault_kind kind)
{
    long c = atomic_fetch_add_explicit(&fault_count[kind], 1, memory_order_relaxed) + 1;
    long at = atomic_load_explicit(&fault_at[kind], memory_order_relaxed);
    return at > 0 && c == at;
}

/* Live device (and pinned host) allocations: +1 per allocation, -1 per free. */
void bsr_fault_dev_note(long delta) { atomic_fetch_add_explicit(&dev_live, delta, memory_order_relaxed); }

/* The device allocator's count of live allocations. */
long bsr_fault_dev_live(void) { return atomic_load(&dev_live); }
