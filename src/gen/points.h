/* Interpolation points: parsing the text form "0,1,-1,1/2,-2" into exact rationals. */
#ifndef WINO_GEN_POINTS_H
#define WINO_GEN_POINTS_H

#include <gmp.h>
#include <stddef.h>

/* Parses exactly `count` distinct finite rationals (integers or p/q, q > 0, optional sign;
 * spaces around commas allowed). On success returns 0 and *points (count entries, free with
 * wino_points_free). On failure returns -1 with a one-line reason in err, or -2 when out of
 * memory. */
int wino_points_parse(const char *text, int count, mpq_t **points, char *err, size_t errcap);
void wino_points_free(mpq_t *points, int count);

/* Formats points as the text form above into a malloc'ed string (NULL when out of memory). */
char *wino_points_format(mpq_t *points, int count);

#endif
