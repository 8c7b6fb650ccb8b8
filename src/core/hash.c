/* SPDX-License-Identifier: BSD-3-Clause */
/* Small deterministic hashes shared by the generators, the multivector
 * filler and the tests (one definition of the splitmix64 mixing). */
#include "internal.h"

/* splitmix64: advance the stream *s and return its next 64-bit value. */
uint64_t bsr_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Deterministic value in [0,1) (53 random bits) from two integers: the
 * splitmix64 finalizer of a combination of a and b. */
double bsr_hash01(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
