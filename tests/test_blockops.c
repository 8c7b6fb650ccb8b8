/* SPDX-License-Identifier: BSD-3-Clause */
/* The block update bsr_blk_mulsub_n in each of its forms (scalar loops,
 * pairs of columns, AVX where the processor has it) gives the same bits for
 * b = 1..10: the ILU factors every other test compares bit for bit (between
 * thread counts, against the device) are built by whichever form the
 * processor picks. */
#include "harness.h"
#include "blockops.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* A value of a wide range with, now and then, a signed zero, a subnormal, a
 * huge value, an infinity or a NaN (xorshift state s). */
static double value(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    const double u = (double)(*s >> 11) / 9007199254740992.0 - 0.5;
    switch (*s % 97) {
    case 0: return -0.0;
    case 1: return 0.0;
    case 2: return 1e-310 * u;
    case 3: return 1e300 * u;
    case 4: return u > 0 ? INFINITY : -INFINITY;
    case 5: return NAN;
    default: return u * pow(10.0, (double)(int)(*s % 21) - 10.0);
    }
}

#define NT 9   /* updates a call */

/* c_{cs[t]} -= a m_{ms[t]} by plain loops, each c_ij over k ascending
 * (reverse: descending, an order the kernels must not take). */
static void plain(int b, double *c, const int *cs, const double *a, const double *m, const int *ms, int reverse)
{
    const int bb = b * b;
    for (int t = 0; t < NT; t++) {
        double *ct = c + (size_t)(cs[t] >= 0 ? cs[t] : ~cs[t]) * bb;
        const double *mt = m + (size_t)ms[t] * bb;
        for (int i = 0; i < b; i++)
            for (int j = 0; j < b; j++) {
                double r = cs[t] >= 0 ? ct[i * b + j] : 0.0;
                for (int k0 = 0; k0 < b; k0++) {
                    const int k = reverse ? b - 1 - k0 : k0;
                    r -= a[i * b + k] * mt[k * b + j];
                }
                ct[i * b + j] = r;
            }
    }
}

/* Every form available (the scalar one included) against plain loops: 200
 * random calls a b, each with NT targets, a third of them unset (cs < 0).
 * The same data under the reverse order differs (the test can fail). */
static void test_forms(void)
{
    const int best = bsr_blk_mulsub_force(-1);
    CU_ASSERT(best >= 0);
    CU_ASSERT_EQUAL(bsr_blk_mulsub_force(3), -1);   /* no such form */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int bad = 0, calls = 0, order_seen = 0;
    for (int b = 1; b <= 10; b++) {
        const int bb = b * b;
        double c0[NT * 100], c1[NT * 100], a[100], m[NT * 100];
        int cs[NT], ms[NT];
        for (int trial = 0; trial < 200; trial++) {
            for (int e = 0; e < NT * bb; e++) { c0[e] = value(&s); m[e] = value(&s); }
            for (int e = 0; e < bb; e++) a[e] = value(&s);
            for (int t = 0; t < NT; t++) {
                cs[t] = t % 3 == 1 ? ~((t * 4) % NT) : (t * 4) % NT;   /* distinct targets */
                ms[t] = (NT - 1 - t + trial) % NT;
            }
            double ref[NT * 100], rev[NT * 100];
            memcpy(ref, c0, sizeof(double) * NT * bb);
            memcpy(rev, c0, sizeof(double) * NT * bb);
            plain(b, ref, cs, a, m, ms, 0);
            plain(b, rev, cs, a, m, ms, 1);
            order_seen += b > 1 && memcmp(ref, rev, sizeof(double) * NT * bb) != 0;
            for (int form = 0; form <= best; form++) {
                memcpy(c1, c0, sizeof(double) * NT * bb);
                CU_ASSERT_EQUAL(bsr_blk_mulsub_force(form), best);
                bsr_blk_mulsub_n(b, NT, c1, cs, a, m, ms);
                calls++;
                if (memcmp(ref, c1, sizeof(double) * NT * bb)) {
                    if (bad++ < 5) printf("\n  b = %d, form %d: not the plain loops' bits", b, form);
                }
            }
        }
    }
    bsr_blk_mulsub_force(-1);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(order_seen > 100);
    printf(" [%d calls of forms 0..%d]", calls, best);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"bsr_blk_mulsub_n: every form = plain loops bit for bit, b = 1..10", test_forms},
        {NULL, NULL},
    };
    return bsr_test_main("blockops", tests, argc, argv);
}
