/* src/base/fast_divisor.h against C's division: every dividend up to 2^16 and the last 2^16
 * below 2^31 for the small divisors, and the dividends around each multiple of the divisor
 * (where a wrong quotient would first show) for divisors from 1 to 2^31 - 1: powers of two,
 * their neighbours and random draws. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/fast_divisor.h"

static long failures;

static void check(int32_t n, int32_t d)
{
    const int32_t got = wino_fast_divide(n, wino_fast_divisor_of(d));
    if (got != n / d && failures++ < 10)
        fprintf(stderr, "FAIL %d / %d = %d, fast %d\n", n, d, n / d, got);
}

/* n around the multiples of d nearest to 0, to m and to 2^31 - 1. */
static void check_around(int32_t d, int64_t m)
{
    const int64_t top = INT32_MAX;
    const int64_t centres[3] = {0, m - m % d, top - top % d};
    for (int c = 0; c < 3; c++)
        for (int64_t n = centres[c] - 2; n <= centres[c] + 2; n++)
            if (n >= 0 && n <= top)
                check((int32_t)n, d);
}

int main(void)
{
    for (int32_t d = 1; d <= 64; d++) {
        for (int32_t n = 0; n < 1 << 16; n++)
            check(n, d);
        for (int32_t n = INT32_MAX; n > INT32_MAX - (1 << 16); n--)
            check(n, d);
    }
    srand(20261125);
    for (int l = 0; l < 31; l++)
        for (int32_t delta = -1; delta <= 1; delta++) {
            const int64_t d = ((int64_t)1 << l) + delta;
            if (d < 1 || d > INT32_MAX)
                continue;
            for (int i = 0; i < 200; i++)
                check_around((int32_t)d, ((int64_t)rand() << 16 ^ rand()) % INT32_MAX);
        }
    for (int i = 0; i < 20000; i++) {
        const int32_t d = 1 + (int32_t)((((int64_t)rand() << 16) ^ rand()) % INT32_MAX) %
                                  (i % 2 ? 100000 : INT32_MAX);
        check_around(d, (((int64_t)rand() << 16) ^ rand()) % INT32_MAX);
    }
    printf("fast divisor: %s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
