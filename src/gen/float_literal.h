/* Exact rationals as FP32 constants in emitted code. */
#ifndef WINO_GEN_FLOAT_LITERAL_H
#define WINO_GEN_FLOAT_LITERAL_H

#include <gmp.h>
#include <stddef.h>

/* The float nearest to q (ties to even), for q within the float range (see gen/q_range.h);
 * q that rounds beyond FLT_MAX gives +-infinity. */
float wino_q_to_float(mpq_srcptr q);

/* Writes the shortest decimal C literal that reads back as the finite float f, such as "0.5f",
 * "-4.0f", "0.16666667f" or "1.5258789e-05f", into buf (32 bytes always suffice). Computed with
 * exact arithmetic, so the text does not depend on the C library or the locale. */
void wino_float_literal(float f, char *buf, size_t cap);

#endif
