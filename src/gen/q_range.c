#include "gen/q_range.h"

#include <math.h>
#include <stdio.h>

int wino_q_range(mpq_srcptr q, double lo, double hi)
{
    if (!mpq_sgn(q))
        return 0;
    const double d = fabs(mpq_get_d(q)); /* truncated; where normal, within a step of |q| */
    if (d > 2.0 * lo && d < 0.5 * hi)
        return 0;
    mpq_t a, bound;
    mpq_inits(a, bound, NULL);
    mpq_abs(a, q);
    mpq_set_d(bound, hi);
    int range = mpq_cmp(a, bound) > 0;
    mpq_set_d(bound, lo);
    if (!range && mpq_cmp(a, bound) < 0)
        range = -1;
    mpq_clears(a, bound, NULL);
    return range;
}

void wino_q_range_words(int range, const char *format, double lo, double hi, char *buf,
                        size_t cap)
{
    if (range > 0)
        snprintf(buf, cap, "overflows %s (|value| > %g)", format, hi);
    else
        snprintf(buf, cap, "underflows %s (0 < |value| < %g)", format, lo);
}

void wino_q_describe(mpq_srcptr q, char *buf, size_t cap)
{
    if (mpz_sizeinbase(mpq_numref(q), 10) + mpz_sizeinbase(mpq_denref(q), 10) + 3 <= cap) {
        gmp_snprintf(buf, cap, "%Qd", q);
        return;
    }
    mpf_t f;
    mpf_init2(f, 64);
    mpf_set_q(f, q);
    gmp_snprintf(buf, cap, "about %.6Fe", f);
    mpf_clear(f);
}
