/* The OpenCL backend's tuning: its database on disk (src/op/opencl_tuning_db.c), the search
 * that fills it and the parameters an operator runs with (src/op/conv2d_opencl.c; the search
 * itself is the component's, src/opencl/tuner.c).
 *
 * The database is a sibling of the CPU's tuning cache (src/op/tuning_cache.h), named by the
 * same struct wino_context.tuning_cache: its key is a device, not an ISA and thread count, and
 * its choice the kernel parameters. A text file:
 *   wino-opencl-tuning 2
 *   DEVICE<TAB>DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W M VARIANT
 *       GEMM_BM GEMM_BN GEMM_RM GEMM_RN GEMM_BK GEMM_LOCAL GEMM_CHUNK FUSED_FT FUSED_FK
 *       FUSED_KPT FUSED_FC
 *       NON_FUSED_MS FUSED_MS
 * (one line per entry; DEVICE is "NAME / DRIVER VERSION" as the device reports them; M the
 * tile F(M x M, R x S); VARIANT 1 non-fused, 2 fused; the times are the medians measured, -1
 * for a variant that did not run). Written whole to a temporary file renamed over the old one;
 * a missing, malformed or non-regular file is not used, an entry of another device or driver
 * never matches, and an entry that the tuner could not have written (an invalid layer, a tile
 * without generated transforms, parameters outside their lists or the device's limits: the
 * component checks those) is ignored. */
#ifndef WINO_OP_OPENCL_TUNING_H
#define WINO_OP_OPENCL_TUNING_H

#include "opencl/opencl_component.h"
#include "wino.h"

/* 1 with *tuned filled when path holds an entry for (device, desc, tile_m), else 0. */
int wino_opencl_tuning_lookup(const char *path, const char *device,
                              const struct wino_conv2d_desc *desc, int tile_m,
                              struct wino_opencl_tuned *tuned);

/* Of the entries for (device, desc), whatever their tile, the one whose variant measured the
 * smallest time (AUTO's choice): 1 with *tile_m and *tuned filled, or 0 when there is none. */
int wino_opencl_tuning_fastest(const char *path, const char *device,
                               const struct wino_conv2d_desc *desc, int *tile_m,
                               struct wino_opencl_tuned *tuned);

/* The median an entry's variant measured. */
double wino_opencl_tuned_ms(const struct wino_opencl_tuned *t);

/* Adds or replaces the entry of (device, desc, tile_m) in path, keeping the other entries
 * that are not stale (a malformed file is started afresh). WINO_INVALID_ARGUMENT when path is
 * not a regular file or cannot be written. */
enum wino_status wino_opencl_tuning_store(const char *path, const char *device,
                                          const struct wino_conv2d_desc *desc, int tile_m,
                                          const struct wino_opencl_tuned *tuned);

/* Searches the kernel parameters and variant of desc (FP32 or FP16) with F(tile_m x tile_m, r x r) on
 * ctx's OpenCL device within search's bounds, and stores the result in ctx->tuning_cache when
 * that is not NULL. tile_m 0 searches the tile too: every tile m in WINO_TUNE_MIN_M ..
 * WINO_OPENCL_TUNE_MAX_M that the kernels serve is timed with its default parameters, and the
 * rest of the budget searches the parameters of the fastest; each tile's entry is stored, and
 * *result is the fastest entry, the one AUTO then runs. */
#define WINO_OPENCL_TUNE_MAX_M 8 /* beyond the CPU's 6: the H100's fastest FP32 tiles are m 7, 8 */
enum wino_status wino_opencl_tune(const struct wino_conv2d_desc *desc,
                                  const struct wino_context *ctx, int tile_m,
                                  const struct wino_opencl_search *search,
                                  struct wino_opencl_tuning *result);

/* The kernel parameters an OpenCL forward operator runs with, and whether they are a tuning
 * database entry's (*tuned 1) or the defaults. WINO_INVALID_ARGUMENT for another operator. */
enum wino_status wino_conv2d_opencl_params(const wino_conv2d *op,
                                           struct wino_opencl_params *params, int *tuned);

#endif
