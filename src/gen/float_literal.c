#include "gen/float_literal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int mantissa_even(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return !(bits & 1u);
}

float wino_q_to_float(mpq_srcptr q)
{
    /* mpq_get_d truncates, so the rounded double is within one float step of the answer: pick
     * the best of it and its two neighbours by exact distance. */
    float best = (float)mpq_get_d(q);
    if (!isfinite(best)) /* outside the float range: mpq_set_d would trap on it */
        return best;
    const float cand[2] = {nextafterf(best, -INFINITY), nextafterf(best, INFINITY)};
    mpq_t c, err, best_err;
    mpq_inits(c, err, best_err, NULL);
    mpq_set_d(c, best);
    mpq_sub(best_err, q, c);
    mpq_abs(best_err, best_err);
    for (int i = 0; i < 2; i++) {
        if (!isfinite(cand[i]))
            continue;
        mpq_set_d(c, cand[i]);
        mpq_sub(err, q, c);
        mpq_abs(err, err);
        int cmp = mpq_cmp(err, best_err);
        if (cmp < 0 || (cmp == 0 && mantissa_even(cand[i]) && !mantissa_even(best))) {
            best = cand[i];
            mpq_set(best_err, err);
        }
    }
    mpq_clears(c, err, best_err, NULL);
    return best;
}

/* out = 10^e for any integer e. */
static void pow10_q(mpq_t out, int e)
{
    mpz_ui_pow_ui(mpq_numref(out), 10, (unsigned long)(e < 0 ? -e : e));
    mpz_set_ui(mpq_denref(out), 1);
    if (e < 0)
        mpq_inv(out, out);
}

/* Rounds |x| > 0 to p significant digits: |x| ~ N * 10^(e - p + 1), 10^(p-1) <= N < 10^p. */
static void round_digits(mpq_srcptr x, int p, mpz_t n, int *e)
{
    mpq_t a, s;
    mpq_inits(a, s, NULL);
    mpq_abs(a, x);
    *e = (int)floor(log10(mpq_get_d(a)));
    for (;;) { /* fix the floating-point estimate of e exactly */
        pow10_q(s, *e);
        if (mpq_cmp(a, s) < 0) {
            (*e)--;
            continue;
        }
        pow10_q(s, *e + 1);
        if (mpq_cmp(a, s) >= 0) {
            (*e)++;
            continue;
        }
        break;
    }
    pow10_q(s, p - 1 - *e);
    mpq_mul(a, a, s);
    mpq_set_ui(s, 1, 2);
    mpq_add(a, a, s);
    mpz_fdiv_q(n, mpq_numref(a), mpq_denref(a)); /* round half up */
    mpz_t limit;
    mpz_init(limit);
    mpz_ui_pow_ui(limit, 10, (unsigned long)p);
    if (!mpz_cmp(n, limit)) { /* 9.99.. rounded up to 10.0 */
        mpz_divexact_ui(n, n, 10);
        (*e)++;
    }
    mpz_clear(limit);
    mpq_clears(a, s, NULL);
}

/* Formats digits (no trailing zeros) whose first digit has weight 10^e, like %g does. */
static void format_digits(const char *digits, int e, int negative, char *buf, size_t cap)
{
    const int k = (int)strlen(digits);
    const char *sign = negative ? "-" : "";
    if (e < -5 || e > 8)
        snprintf(buf, cap, "%s%c.%se%df", sign, digits[0], k > 1 ? digits + 1 : "0", e);
    else if (e < 0)
        snprintf(buf, cap, "%s0.%.*s%sf", sign, -e - 1, "00000", digits);
    else if (k <= e + 1)
        snprintf(buf, cap, "%s%s%.*s.0f", sign, digits, e + 1 - k, "00000000");
    else
        snprintf(buf, cap, "%s%.*s.%sf", sign, e + 1, digits, digits + e + 1);
}

void wino_float_literal(float f, char *buf, size_t cap)
{
    if (f == 0.0f) {
        snprintf(buf, cap, "%s0.0f", signbit(f) ? "-" : "");
        return;
    }
    mpq_t x, d;
    mpz_t n;
    mpq_inits(x, d, NULL);
    mpz_init(n);
    mpq_set_d(x, f);
    int e = 0;
    for (int p = 1; p <= 9; p++) { /* 9 significant digits always read back exactly */
        round_digits(x, p, n, &e);
        pow10_q(d, e - p + 1);
        mpz_mul(mpq_numref(d), mpq_numref(d), n);
        mpq_canonicalize(d);
        if (wino_q_to_float(d) == fabsf(f))
            break;
    }
    char digits[16];
    mpz_get_str(digits, 10, n);
    for (size_t k = strlen(digits); k > 1 && digits[k - 1] == '0'; k--)
        digits[k - 1] = '\0';
    format_digits(digits, e, f < 0, buf, cap);
    mpz_clear(n);
    mpq_clears(x, d, NULL);
}
