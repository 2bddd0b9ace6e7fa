/* The default tiles, whose transforms are emitted with the default points and committed:
 * C in src/cpu/generated/, CUDA in src/cuda/generated/, OpenCL in src/opencl/generated/. Rerun
 * wino_gen_write_defaults whenever the generator or the recorded points (src/gen/point_db.c)
 * change; tests/test_emit.c fails until then. */
#ifndef WINO_GEN_DEFAULT_TILES_H
#define WINO_GEN_DEFAULT_TILES_H

#include <stddef.h>

#include "wino_gen.h"

/* F(m x m, r x r) with 2 <= r <= 7, 2 <= m <= 8 and alpha = m + r - 1 <= 10: 32 tiles. */
#define WINO_DEFAULT_MIN_R 2
#define WINO_DEFAULT_MAX_R 7
#define WINO_DEFAULT_MIN_M 2
#define WINO_DEFAULT_MAX_M 8
#define WINO_DEFAULT_MAX_ALPHA 10

int wino_is_default_tile(int m, int r);

/* The repository-relative path of the committed emission of F(m x m, r x r) in lang, e.g.
 * "src/cpu/generated/wino_f32_transforms_f4x4_3x3.c". */
void wino_default_tile_path(int m, int r, enum wino_emit_lang lang, char *buf, size_t cap);

#define WINO_TRANSFORM_TABLE_PATH "src/cpu/generated/transform_table.c"

/* The text of WINO_TRANSFORM_TABLE_PATH (malloc'ed), or NULL when out of memory. */
char *wino_gen_transform_table(void);

#define WINO_CUDA_TILE_LIST_PATH "src/cuda/generated/wino_f32_tiles.cuh"

/* The text of WINO_CUDA_TILE_LIST_PATH (malloc'ed), or NULL when out of memory: includes every
 * default tile's CUDA transforms and defines WINO_CUDA_DEFAULT_TILES(X), X(name, m, r) a tile. */
char *wino_gen_cuda_tile_list(void);

/* (Re)writes every file above under repo_root, the runtime's tables (gen/runtime_tables.h),
 * plus the op-count table between its markers in
 * docs/transform-ops.md (see src/gen/op_table.h). Returns WINO_SUCCESS or a failure status with
 * wino_last_error() naming the file at fault. */
int wino_gen_write_defaults(const char *repo_root);

#endif
