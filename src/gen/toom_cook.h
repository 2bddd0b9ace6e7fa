/* Exact Toom-Cook construction of the 1D Winograd algorithm F(m, r) (convention in wino.h). */
#ifndef WINO_GEN_TOOM_COOK_H
#define WINO_GEN_TOOM_COOK_H

#include "gen/qmat.h"

typedef struct wino_toom {
    int m, r, alpha;
    int npoints;     /* alpha - 1 finite points; infinity is implicit and last */
    mpq_t *points;
    wino_qmat AT;    /* m x alpha */
    wino_qmat G;     /* alpha x r */
    wino_qmat BT;    /* alpha x alpha */
} wino_toom;

/* Builds F(m, r) from alpha - 1 distinct finite points (the caller has validated m, r, count and
 * distinctness). Returns 0, or -1 when out of memory (t is then cleared). */
int wino_toom_build(wino_toom *t, int m, int r, mpq_t *points);
void wino_toom_clear(wino_toom *t); /* safe on a zeroed struct */

/* Multiplies each row of B^T by the least common multiple of its denominators (making B^T
 * integer) and divides the matching row of G by the same factor; A^T [(G g) .* (B^T d)] is
 * unchanged. */
void wino_toom_integer_bt(wino_toom *t);

/* Multiplies each column of A^T by the least common multiple of its denominators (making A^T
 * integer) and divides the matching row of G by the same factor; the product is unchanged. */
void wino_toom_integer_at(wino_toom *t);

#endif
