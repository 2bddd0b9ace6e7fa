/* The generated tables the runtime reads instead of running the exact generator: the matrices of
 * every tile on the recorded points and of the INT8 tiles (base/tile_matrices.h), and the INT8
 * tiles' integer B'^T and A'^T as C constants. Written by wino_gen_write_defaults
 * (gen/default_tiles.h); tests/test_emit.c checks them byte for byte. */
#ifndef WINO_GEN_RUNTIME_TABLES_H
#define WINO_GEN_RUNTIME_TABLES_H

#include "wino_gen.h"

/* The points of the INT8 tile F(m, 3) (without infinity), or NULL when m is not 2, 4 or 6. */
const char *wino_int8_tile_points(int m);

#define WINO_RECORDED_TILES_PATH "src/base/generated/recorded_tiles.c"

/* The text of WINO_RECORDED_TILES_PATH (malloc'ed), or NULL with the reason recorded. */
char *wino_gen_recorded_tiles(void);

#define WINO_INT8_TABLES_PATH "src/cpu/generated/int8_tiles.h"

/* The text of WINO_INT8_TABLES_PATH (malloc'ed), or NULL with the reason recorded: B'^T and
 * A'^T of the three INT8 tiles as C constants, so that the engine's transforms compile to
 * straight-line code. */
char *wino_gen_int8_tables(void);

#define WINO_INT8_RECIPES_PATH "src/cpu/generated/int8_recipes.h"

/* The text of WINO_INT8_RECIPES_PATH (malloc'ed), or NULL with the reason recorded: B'^T and
 * A'^T of the three INT8 tiles as straight-line integer code (macros for C and CUDA), built by
 * the transform optimizer (gen/recipe.h) without its factoring and FMA passes. */
char *wino_gen_int8_recipes(void);

#define WINO_ROWS_TILES_PATH "src/cuda/generated/wino_rows_tiles.cuh"

/* The text of WINO_ROWS_TILES_PATH (malloc'ed), or NULL with the reason recorded: B^T and A^T
 * of the one-dimensional tile F(4, 3) on the recorded points as recipes of the transform
 * optimizer (steps with float constants), which the CUDA ROWS kernel of alpha 6 runs unrolled at
 * compile time. */
char *wino_gen_rows_tiles(void);

#endif
