/* Operation counts and code emission for the 2D transforms of a tile (recipe optimizer). */
#ifndef WINO_GEN_TRANSFORM_OPS_H
#define WINO_GEN_TRANSFORM_OPS_H

#include "gen/toom_cook.h"
#include "wino_gen.h"

/* Counts of the dense matrix products (baseline) and of the optimized recipe (optimized) for the
 * 2D transform `which` of F(m x m, r x r); either output may be NULL. Returns WINO_SUCCESS or
 * WINO_OUT_OF_MEMORY. */
enum wino_status wino_gen_op_counts(const wino_toom *t, enum wino_transform which,
                                    struct wino_op_counts *baseline,
                                    struct wino_op_counts *optimized);

/* Emits the three 2D transforms of t as C or CUDA source into buf (see wino_tile_emit). */
enum wino_status wino_gen_emit(const wino_toom *t, enum wino_emit_lang lang, char *buf,
                               size_t cap, size_t *needed);

#endif
