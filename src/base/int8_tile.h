/* The integer tiles of the INT8 Winograd pipeline (docs/int8-winograd.md): F(m, 3) for m in
 * {2, 4, 6} on fixed integer-friendly points, with B'^T and A'^T integer (rows of B^T and
 * columns of A^T scaled, the factors moved into G'), and powers of two moved from the rows of
 * G' into the columns of A'^T so that all positions of G' g G'^T have about the same range.
 * The generator builds them exactly; the runtime takes them from its table of tiles
 * (base/tile_matrices.h: wino_int8_tile_make). Pure arithmetic: libwino_gen compiles this file
 * too, to write the INT8 tables. */
#ifndef WINO_BASE_INT8_TILE_H
#define WINO_BASE_INT8_TILE_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WINO_INT8_MAX_M 6
#define WINO_INT8_MAX_ALPHA 8

struct wino_int8_tile {
    int m, alpha;
    int bt[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA]; /* B'^T, alpha x alpha */
    int at[WINO_INT8_MAX_M][WINO_INT8_MAX_ALPHA];     /* A'^T, m x alpha */
    double g[WINO_INT8_MAX_ALPHA][3];                 /* G', alpha x 3, rounded from exact */
    int shift[WINO_INT8_MAX_ALPHA]; /* G' row p = G row p / 2^shift[p], A'^T column p times it */
    int beta_b, beta_a; /* largest absolute row sums of B'^T and A'^T */
};

/* The balanced tile *t from the exact one (integer B^T and A^T): the shifts below. */
void wino_int8_tile_balance(const struct wino_tile_matrices *exact, struct wino_int8_tile *t);

/* U = G' g G'^T in double for one 3 x 3 filter g (step 3 before the clip); g is only read
 * (not const: C99 cannot pass a plain 2D array as a const one). */
void wino_int8_filter_transform(const struct wino_int8_tile *t, double g[3][3],
                                double u[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA]);

/* V = B'^T d B', exactly, for one alpha x alpha window of integers (step 1); d is only read. */
void wino_int8_input_transform(const struct wino_int8_tile *t,
                               long long d[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA],
                               long long v[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA]);

#ifdef __cplusplus
}
#endif

#endif
