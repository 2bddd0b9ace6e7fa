#include "gen/points.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads [+-]digits[/digits] at *s into q; returns 0 or -1 (with err set). */
static int parse_one(const char **s, int index, mpq_t q, char *err, size_t errcap)
{
    const char *p = *s;
    while (*p == ' ')
        p++;
    const char *start = p;
    if (*p == '+' || *p == '-')
        p++;
    const char *num = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (p == num) {
        snprintf(err, errcap, "point %d: expected an integer or p/q, found \"%.20s\"", index + 1,
                 start);
        return -1;
    }
    const char *end_num = p;
    const char *den = NULL, *end_den = NULL;
    if (*p == '/') {
        den = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        end_den = p;
        if (den == end_den) {
            snprintf(err, errcap, "point %d: missing denominator after '/'", index + 1);
            return -1;
        }
    }
    const char *after = p;
    while (*p == ' ')
        p++;
    if (*p != ',' && *p != '\0') {
        snprintf(err, errcap, "point %d: unexpected \"%.20s\" (points are finite rationals; "
                 "infinity is always added last)", index + 1, after);
        return -1;
    }
    char buf[128];
    size_t nlen = (size_t)(end_num - start), dlen = den ? (size_t)(end_den - den) : 0;
    if (nlen + dlen + 2 > sizeof buf) {
        snprintf(err, errcap, "point %d: too many digits", index + 1);
        return -1;
    }
    memcpy(buf, start, nlen);
    buf[nlen] = '\0';
    if (den) {
        buf[nlen] = '/';
        memcpy(buf + nlen + 1, den, dlen);
        buf[nlen + 1 + dlen] = '\0';
    }
    if (buf[0] == '+')
        buf[0] = ' ';
    if (mpq_set_str(q, buf[0] == ' ' ? buf + 1 : buf, 10) != 0) {
        snprintf(err, errcap, "point %d: malformed number \"%s\"", index + 1, buf);
        return -1;
    }
    if (!mpz_sgn(mpq_denref(q))) {
        snprintf(err, errcap, "point %d: denominator is zero", index + 1);
        return -1;
    }
    mpq_canonicalize(q);
    *s = p;
    return 0;
}

int wino_points_parse(const char *text, int count, mpq_t **points, char *err, size_t errcap)
{
    *points = NULL;
    if (!text) {
        snprintf(err, errcap, "no points given");
        return -1;
    }
    mpq_t *q = malloc((size_t)(count > 0 ? count : 1) * sizeof(mpq_t));
    if (!q) {
        snprintf(err, errcap, "out of memory");
        return -2;
    }
    for (int i = 0; i < count; i++)
        mpq_init(q[i]);

    const char *s = text;
    int n = 0;
    while (*s == ' ')
        s++;
    if (*s != '\0') {
        for (;;) {
            if (n == count) {
                snprintf(err, errcap, "too many points: this tile needs exactly %d", count);
                goto fail;
            }
            if (parse_one(&s, n, q[n], err, errcap))
                goto fail;
            n++;
            if (*s == '\0')
                break;
            s++; /* the comma */
        }
    }
    if (n != count) {
        snprintf(err, errcap, "too few points: %d given, this tile needs exactly %d", n, count);
        goto fail;
    }
    for (int i = 0; i < count; i++)
        for (int j = 0; j < i; j++)
            if (mpq_equal(q[i], q[j])) {
                snprintf(err, errcap, "point %d repeats point %d: points must be distinct", i + 1,
                         j + 1);
                goto fail;
            }
    *points = q;
    return 0;
fail:
    wino_points_free(q, count);
    return -1;
}

void wino_points_free(mpq_t *points, int count)
{
    if (!points)
        return;
    for (int i = 0; i < count; i++)
        mpq_clear(points[i]);
    free(points);
}

char *wino_points_format(mpq_t *points, int count)
{
    size_t len = 1;
    for (int i = 0; i < count; i++)
        len += mpz_sizeinbase(mpq_numref(points[i]), 10) +
               mpz_sizeinbase(mpq_denref(points[i]), 10) + 4;
    char *out = malloc(len);
    if (!out)
        return NULL;
    char *p = out;
    *p = '\0';
    for (int i = 0; i < count; i++) {
        if (i)
            *p++ = ',';
        mpq_get_str(p, 10, points[i]);
        p += strlen(p);
    }
    return out;
}
