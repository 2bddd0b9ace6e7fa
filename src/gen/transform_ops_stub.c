/* TEMPORARY until the recipe optimizer lands. */
#include "gen/transform_ops.h"
enum wino_status wino_gen_op_counts(const wino_toom *t, enum wino_transform which,
                                    struct wino_op_counts *baseline,
                                    struct wino_op_counts *optimized)
{ (void)t; (void)which; (void)baseline; (void)optimized; return WINO_UNSUPPORTED; }
enum wino_status wino_gen_emit(const wino_toom *t, enum wino_emit_lang lang, char *buf,
                               size_t cap, size_t *needed)
{ (void)t; (void)lang; (void)buf; (void)cap; (void)needed; return WINO_UNSUPPORTED; }
