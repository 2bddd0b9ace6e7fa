/*
 * wino_gen.h -- the public API of libwino_gen, wino's exact transform generator (Toom-Cook over
 * exact rationals with GMP, point search, recipe optimizer, code emitters).
 *
 * The runtime (libwino, wino.h) does not need it: the tiles of the recorded points are built into
 * the runtime as tables. A program that wants other points builds the tile here and hands its
 * matrices to the runtime (wino_tile_matrices, struct wino_conv2d_options.matrices).
 * Link with libwino_gen and libwino (pkg-config wino-gen, CMake wino::gen).
 */
#ifndef WINO_GEN_H
#define WINO_GEN_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Generator: exact Toom-Cook transforms for any F(m, r)
 *
 * A 1D algorithm F(m, r) computes m outputs of an r-tap correlation from alpha = m + r - 1 inputs:
 *     y = A^T [ (G g) .* (B^T d) ],   y_i = sum_k g_k d_{i+k}
 * with A^T (m x alpha), G (alpha x r), B^T (alpha x alpha). It is built from alpha - 1 distinct
 * finite rational points a_0..a_{alpha-2} plus the point at infinity, in the standard convention:
 * row j of B^T holds the coefficients (lowest power first) of prod_{k != j}(x - a_k), the last
 * (infinity) row those of prod_k (x - a_k); A^T[i][j] = a_j^i with the infinity column e_{m-1};
 * G[j][k] = a_j^k / prod_{k' != j}(a_j - a_k'), infinity row e_{r-1}. Integer points thus give
 * integer A^T and B^T with all fractions in G. Row j of B^T and G belongs to the j-th point given.
 * A 2D algorithm F(m x n, r x s) nests two 1D algorithms: Y = A1^T [(G1 g G2^T) .* (B1^T d B2)] A2.
 * ------------------------------------------------------------------------------------------- */

typedef struct wino_tile wino_tile;

enum wino_matrix { WINO_MATRIX_AT = 0, WINO_MATRIX_G = 1, WINO_MATRIX_BT = 2 };

/* Flags for wino_tile_create. */
enum wino_tile_flags {
    WINO_TILE_DEFAULT = 0,
    /* Multiply each row of B^T by the least common multiple of its denominators and divide the
     * matching row of G by the same factor: the product is unchanged and B^T becomes integer
     * (needed by integer input transforms). */
    WINO_TILE_INTEGER_BT = 1,
    /* Likewise for each column of A^T, dividing the matching row of G: A^T becomes integer
     * (needed by integer output transforms). Both flags may be combined. */
    WINO_TILE_INTEGER_AT = 2
};

/* Creates the exact 1D algorithm F(m, r), m >= 1, r >= 1, m + r - 1 <= WINO_MAX_ALPHA.
 * points: NULL for the recorded most accurate points of this alpha (see docs/points.md), or a
 * comma-separated list of exactly alpha - 1 distinct finite rationals such as "0,1,-1,1/2,-2"
 * (integers or p/q with q > 0; the point at infinity is always added last and must not be given).
 * flags: a combination of enum wino_tile_flags. */
WINO_API enum wino_status wino_tile_create(int m, int r, const char *points, unsigned flags,
                                           wino_tile **tile);
WINO_API void wino_tile_destroy(wino_tile *tile); /* NULL is fine */

WINO_API int wino_tile_m(const wino_tile *tile);
WINO_API int wino_tile_r(const wino_tile *tile);
WINO_API int wino_tile_alpha(const wino_tile *tile);

/* The finite points as exact strings "p/q" or "p", index 0..alpha-2. Writes at most cap bytes
 * including the terminating NUL; *needed (optional) receives the size required. */
WINO_API enum wino_status wino_tile_point_string(const wino_tile *tile, int index, char *buf,
                                                 size_t cap, size_t *needed);

/* Shape of one matrix. */
WINO_API enum wino_status wino_tile_matrix_shape(const wino_tile *tile, enum wino_matrix which,
                                                 int *rows, int *cols);
/* One entry as an exact rational string ("-1/6", "0", "21/4"), same buffer rules as above. */
WINO_API enum wino_status wino_tile_entry_string(const wino_tile *tile, enum wino_matrix which,
                                                 int row, int col, char *buf, size_t cap,
                                                 size_t *needed);
/* The whole matrix rounded to double (toward zero, as GMP's mpq_get_d does: within one unit in
 * the last place), row-major, rows*cols values; WINO_UNSUPPORTED (naming the entry) when a
 * nonzero entry is outside the range of double. */
WINO_API enum wino_status wino_tile_matrix_double(const wino_tile *tile, enum wino_matrix which,
                                                  double *out);

/* Operation counts of a 2D transform F(m x m, r x r) built from this tile. */
enum wino_transform {
    WINO_TRANSFORM_INPUT = 0,  /* V = B^T d B, alpha x alpha -> alpha x alpha */
    WINO_TRANSFORM_FILTER = 1, /* U = G g G^T, r x r -> alpha x alpha */
    WINO_TRANSFORM_OUTPUT = 2  /* Y = A^T M A, alpha x alpha -> m x m */
};

struct wino_op_counts {
    long add; /* additions and subtractions */
    long mul; /* multiplications by a constant other than +-1 */
    long fma; /* fused multiply-adds (each replaces one mul and one add) */
};

/* baseline: plain matrix products (every multiplication and addition of the dense products).
 * optimized: the straight-line recipe wino emits (0/+-1 dropped, factored, CSE, symmetric row
 * pairs, FMA contraction). Either pointer may be NULL. */
WINO_API enum wino_status wino_tile_op_counts(const wino_tile *tile, enum wino_transform which,
                                              struct wino_op_counts *baseline,
                                              struct wino_op_counts *optimized);

enum wino_emit_lang {
    WINO_EMIT_C = 0,   /* C99 functions transforming a lane-contiguous batch of tiles */
    WINO_EMIT_CUDA = 1,  /* CUDA C __device__ functions transforming one tile in registers */
    WINO_EMIT_OPENCL = 2 /* OpenCL C functions transforming one tile in private memory, named
                          * wino_f32_<stage>_transform_<tile>__opencl. Since 0.3 */
};

/* Emits the three 2D transforms of F(m x m, r x r) as source code into buf (cap bytes, NUL
 * terminated); *needed (optional) receives the size required. With buf == NULL only *needed is
 * set. The code is a pure function of the tile: same tile, same text. WINO_UNSUPPORTED (naming the
 * constant) when a nonzero constant of the code is outside the normal FP32 range. */
WINO_API enum wino_status wino_tile_emit(const wino_tile *tile, enum wino_emit_lang lang, char *buf,
                                         size_t cap, size_t *needed);

/* The tile's matrices rounded to double, for the runtime (struct wino_conv2d_options.matrices):
 * storage receives A^T, G and B^T, row-major one after the other (m alpha + alpha r +
 * alpha^2 doubles; storage_count says how many it holds), and *matrices points into it, so it
 * stays valid while storage does. WINO_INSUFFICIENT_WORKSPACE when storage is too small,
 * WINO_UNSUPPORTED as wino_tile_matrix_double. */
WINO_API enum wino_status wino_tile_matrices_get(const wino_tile *tile, double *storage,
                                                 size_t storage_count,
                                                 struct wino_tile_matrices *matrices);

/* ---------------------------------------------------------------------------------------------
 * Interpolation points (docs/points.md). Since 0.3.
 * ------------------------------------------------------------------------------------------- */

/* The recorded most accurate points of tile size alpha, 1 <= alpha <= WINO_MAX_ALPHA, as
 * wino_tile_create takes them ("0,1,-1,2,-2"; "" for alpha 1), the ones it uses for points NULL;
 * NULL outside that range. Static storage. */
WINO_API const char *wino_points_recorded(int alpha);

/* Searches the most accurate points for tile size alpha, 4 <= alpha <= WINO_MAX_ALPHA, as `wino
 * points` does: the set whose F(alpha-2 x alpha-2, 3 x 3) in FP32 has the lowest median relative
 * L1 error against FP64 over trials random tiles (0: 10,000), measured by threads threads (0:
 * 2), deterministic for a seed. Writes the points (canonical order, wino_tile_create's text) into
 * buf (cap bytes with the NUL; *needed as for wino_tile_point_string) and their median error into
 * *median_rel_l1 (optional). Seconds for small alpha, minutes from alpha 10 on. */
WINO_API enum wino_status wino_points_search(int alpha, long trials, int threads,
                                             unsigned long long seed, char *buf, size_t cap,
                                             size_t *needed, double *median_rel_l1);

/* The median relative L1 error of given points (alpha - 1 of them, wino_tile_create's text) on
 * the trials the search uses for that alpha, trials (0: 10,000) and seed. */
WINO_API enum wino_status wino_points_error(int alpha, const char *points, long trials,
                                            unsigned long long seed, double *median_rel_l1);

#ifdef __cplusplus
}
#endif

#endif /* WINO_GEN_H */
