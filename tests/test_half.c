/* The host's FP16 conversions (src/base/half.h) against their definition: every FP16 value goes
 * to float and back unchanged (NaN to a NaN); floats round to the nearest FP16 value, ties to
 * the even one, overflow to infinity, checked against a search over the FP16 values in double:
 * every FP16 value, the midpoints between neighbours and points around them, and random floats
 * of every exponent. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "test_util.h"

static struct test_counts counts;

/* The FP16 value nearest |f| (finite), ties to even, by binary search over the ordered positive
 * encodings 0 .. 0x7bff and infinity above the largest value's half-way point. */
static uint16_t nearest(float f)
{
    const double a = fabs((double)f), top = 65504.0 + 16.0; /* 65520: rounds to infinity */
    uint16_t sign = signbit(f) ? 0x8000u : 0u;
    if (a >= top)
        return (uint16_t)(sign | 0x7c00u);
    unsigned lo = 0, hi = 0x7bffu; /* largest encoding with value <= a */
    while (lo < hi) {
        const unsigned mid = (lo + hi + 1) / 2;
        if ((double)wino_half_to_float((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo < 0x7bffu) {
        const double below = a - wino_half_to_float((uint16_t)lo);
        const double above = wino_half_to_float((uint16_t)(lo + 1)) - a;
        if (above < below || (above == below && (lo & 1u)))
            lo++;
    }
    return (uint16_t)(sign | lo);
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int main(void)
{
    int round_trip = 0, nan_ok = 1;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        const float f = wino_half_to_float((uint16_t)h);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
            nan_ok &= isnan(f) && (wino_half_from_float(f) & 0x7fffu) > 0x7c00u;
        else
            round_trip += wino_half_from_float(f) == h;
    }
    test_check(&counts, round_trip == 0x10000 - 2 * 1023, "every FP16 value round-trips");
    test_check(&counts, nan_ok, "NaN stays NaN");

    int checked = 0, wrong = 0;
    char first[160] = "";
    for (uint32_t h = 0; h < 0x7c00u; h++) { /* around every value and every midpoint */
        const double v = wino_half_to_float((uint16_t)h);
        const double next = h < 0x7bffu ? wino_half_to_float((uint16_t)(h + 1)) : 65536.0;
        const double mid = 0.5 * (v + next);
        const float probes[5] = {(float)v, float_of(bits_of((float)mid) - 1), (float)mid,
                                 float_of(bits_of((float)mid) + 1), -(float)mid};
        for (int i = 0; i < 5; i++, checked++)
            if (wino_half_from_float(probes[i]) != nearest(probes[i]) && !wrong++)
                snprintf(first, sizeof first, ": %.9g gives 0x%04x, nearest 0x%04x",
                         (double)probes[i], wino_half_from_float(probes[i]), nearest(probes[i]));
    }
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 1000000; i++, checked++) { /* random floats, infinities excluded */
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        const uint32_t u = (uint32_t)state;
        const float f = float_of(u);
        if (isnan(f) || isinf(f))
            continue;
        if (wino_half_from_float(f) != nearest(f) && !wrong++)
            snprintf(first, sizeof first, ": %.9g gives 0x%04x, nearest 0x%04x", (double)f,
                     wino_half_from_float(f), nearest(f));
    }
    char what[240];
    snprintf(what, sizeof what, "floats round to the nearest FP16 value, ties to even: %d of %d "
             "wrong%s", wrong, checked, first);
    test_check(&counts, !wrong, what);
    test_check(&counts, wino_half_from_float(INFINITY) == 0x7c00u &&
                            wino_half_from_float(-INFINITY) == 0xfc00u &&
                            wino_half_from_float(65519.99f) == 0x7bffu &&
                            wino_half_from_float(65520.0f) == 0x7c00u,
               "infinities, and 65520 the first float to overflow");
    return test_report(&counts);
}
