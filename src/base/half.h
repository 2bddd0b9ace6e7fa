/* IEEE binary16 (FP16) to and from float on the host, for what has no device to convert: the
 * OpenCL tuner's data and results. Rounding to nearest, ties to even, subnormals and infinities
 * as the standard has them, NaN kept a (quiet) NaN. */
#ifndef WINO_BASE_HALF_H
#define WINO_BASE_HALF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t wino_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) /* infinity, NaN */
        return (uint16_t)(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0u));
    if (x >= 0x477ff000u) /* 65520 and above round to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (x < 0x38800000u) {           /* below 2^-14: a subnormal half, or zero */
        const int e = (int)(x >> 23); /* biased float exponent, at most 112 */
        if (e < 102)                  /* below 2^-25: rounds to zero */
            return (uint16_t)sign;
        const uint32_t m = (x & 0x7fffffu) | 0x800000u, shift = (uint32_t)(126 - e);
        const uint32_t rest = m & ((1u << shift) - 1u), half_way = 1u << (shift - 1u);
        uint32_t h = m >> shift; /* units of 2^-24 */
        h += rest > half_way || (rest == half_way && (h & 1u));
        return (uint16_t)(sign | h);
    }
    uint32_t h = (x >> 13) - (112u << 10); /* exponent rebiased, 10 bits of mantissa */
    const uint32_t rest = x & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u)); /* a carry moves the exponent up */
    return (uint16_t)(sign | h);
}

static inline float wino_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 31)
        x = sign | 0x7f800000u | (m << 13);
    else if (e)
        x = sign | ((e + 112u) << 23) | (m << 13);
    else if (!m)
        x = sign;
    else { /* subnormal: m 2^-24, normalized */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        x = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* The same over n values. */
static inline void wino_halves_from_floats(const float *in, uint16_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = wino_half_from_float(in[i]);
}

static inline void wino_floats_from_halves(const uint16_t *in, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = wino_half_to_float(in[i]);
}

/* v's n values rounded to the nearest FP16 values, kept as floats. */
static inline void wino_round_to_half(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = wino_half_to_float(wino_half_from_float(v[i]));
}

#endif
