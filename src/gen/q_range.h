/* Exact rationals against a floating-point format: does a value survive the conversion, and a
 * short text of it for error messages. */
#ifndef WINO_GEN_Q_RANGE_H
#define WINO_GEN_Q_RANGE_H

#include <gmp.h>
#include <stddef.h>

/* Where q lies against a format whose smallest normal number is lo and largest finite number is
 * hi (FLT_MIN, FLT_MAX or DBL_MIN, DBL_MAX): 0 when q is zero or lo <= |q| <= hi; 1 when
 * |q| > hi (it would become infinity); -1 when 0 < |q| < lo (it would become a subnormal number
 * or zero, losing its relative precision). */
int wino_q_range(mpq_srcptr q, double lo, double hi);

/* The words for a nonzero wino_q_range result, e.g. "overflows FP32 (|value| > 3.40282e+38)". */
void wino_q_range_words(int range, const char *format, double lo, double hi, char *buf,
                        size_t cap);

/* q as exact text ("-1/6") when that fits in cap bytes, else in scientific notation with 6
 * significant digits ("about 1.000000e+1300"). */
void wino_q_describe(mpq_srcptr q, char *buf, size_t cap);

#endif
