/* Division by a divisor fixed before a kernel starts, as a multiplication (Granlund and
 * Montgomery, "Division by invariant integers using multiplication", 1994): with
 * l = ceil(log2 d) and mul = floor(2^32 (2^l - d) / d) + 1, n / d = (mulhi(n, mul) + n) >> l
 * for every 0 <= n < 2^31 (the sum stays below 2^32). Three instructions on a GPU where a
 * division by a run-time value takes a chain of about forty. */
#ifndef WINO_BASE_FAST_DIVISOR_H
#define WINO_BASE_FAST_DIVISOR_H

#include <stdint.h>

#ifdef __CUDACC__
#define WINO_FAST_DIVISOR_FN static inline __host__ __device__
#else
#define WINO_FAST_DIVISOR_FN static inline
#endif

struct wino_fast_divisor {
    uint32_t mul;
    int shift;
};

/* The divisor d, 1 <= d <= 2^31 - 1. */
WINO_FAST_DIVISOR_FN struct wino_fast_divisor wino_fast_divisor_of(int32_t d)
{
    struct wino_fast_divisor f;
    int l = 0;
    while (((uint64_t)1 << l) < (uint64_t)d)
        l++;
    f.mul = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - (uint64_t)d)) / (uint64_t)d + 1);
    f.shift = l;
    return f;
}

/* n / d for 0 <= n < 2^31. */
WINO_FAST_DIVISOR_FN int32_t wino_fast_divide(int32_t n, struct wino_fast_divisor f)
{
    const uint32_t hi = (uint32_t)(((uint64_t)(uint32_t)n * f.mul) >> 32);
    return (int32_t)((hi + (uint32_t)n) >> f.shift);
}

#undef WINO_FAST_DIVISOR_FN

#endif
