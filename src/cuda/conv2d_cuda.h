/* The CUDA backend of wino_conv2d, as the runtime calls it: Winograd in three kernels around
 * cuBLAS's alpha^2 batched GEMMs, or fused ones (src/cuda/conv2d_cuda.cu), in the CUDA component
 * libwino_cuda.so.MAJOR. These functions (src/op/cuda_loader.c) load the component on first
 * use and call through its table; without a component (not installed, no CUDA runtime, another
 * ABI) every one answers WINO_UNSUPPORTED, naming what it tried. Callable from C. */
#ifndef WINO_CUDA_CONV2D_CUDA_H
#define WINO_CUDA_CONV2D_CUDA_H

#include <stddef.h>

#include "base/conv_desc.h"
#include "op/int8_layer.h"
#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wino_cuda_conv;

/* FP32 / FP16 Winograd F(tile_m x tile_m, r x r) with a generated tile; weights in device
 * memory; bias (K host floats) or NULL. variant: FUSED (F(2x2,3x3) and F(4x4,3x3) only),
 * NON_FUSED, or AUTO (the faster of the two, timed here, where both exist); or ROWS (FP16 and
 * BF16): one-dimensional F(tile_m, s), whose matrices are line. Sets *conv and the workspace
 * bytes run() needs. */
enum wino_status wino_cuda_conv_create(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes, const void *weights,
                                       const struct wino_context *ctx, int tile_m,
                                       const struct wino_tile_matrices *line,
                                       enum wino_variant variant, const float *bias, int relu,
                                       int tf32, struct wino_cuda_conv **conv,
                                       size_t *workspace_bytes);

/* INT8 Winograd for a layer prepared on the host (its Uq and constants are copied); variant
 * as above. */
enum wino_status wino_cuda_conv_create_int8(const struct wino_conv2d_desc *desc,
                                            const struct wino_conv_sizes *sizes,
                                            const struct wino_int8_layer *layer,
                                            const struct wino_context *ctx,
                                            enum wino_variant variant,
                                            struct wino_cuda_conv **conv,
                                            size_t *workspace_bytes);

/* Copies bytes of ctx's device memory at src into host memory at dst, after checking that src
 * is device memory of that device (WINO_INVALID_ARGUMENT otherwise). */
enum wino_status wino_cuda_copy_to_host(const struct wino_context *ctx, const void *src,
                                        size_t bytes, void *dst);

/* Sets the batch and image sizes of the following runs (desc and sizes: create()'s with new n,
 * h and w, already checked) and their workspace bytes; the tile, variant and transformed
 * weights stay. Host work only; not concurrent with a run() of conv. On failure conv is as it
 * was. */
enum wino_status wino_cuda_conv_reshape(struct wino_cuda_conv *conv,
                                        const struct wino_conv2d_desc *desc,
                                        const struct wino_conv_sizes *sizes,
                                        size_t *workspace_bytes);

/* Enqueues y = conv(x) on stream (a cudaStream_t of the operator's device, NULL: its default
 * stream), and nothing else: no allocation, no synchronization, no attribute calls (capturable
 * in a CUDA graph). x, y and workspace are checked to be memory of the operator's device, and
 * the stream to be one of its streams (WINO_INVALID_ARGUMENT otherwise), the first time run()
 * sees each of them: conv remembers the last few it accepted. Concurrent runs of one operator
 * on several streams are safe, each with its own workspace. */
enum wino_status wino_cuda_conv_run(struct wino_cuda_conv *conv, const void *x, void *y,
                                    void *workspace, size_t workspace_bytes, void *stream);

/* Enqueues the transform of new weights (as create took them, memory of the operator's device)
 * on stream and nothing else; runs enqueued after it on that stream use them. FP32 / FP16
 * operators only (INT8: WINO_UNSUPPORTED). */
enum wino_status wino_cuda_conv_set_weights(struct wino_cuda_conv *conv, const void *weights,
                                            void *stream);

enum wino_variant wino_cuda_conv_variant(const struct wino_cuda_conv *conv);

void wino_cuda_conv_destroy(struct wino_cuda_conv *conv); /* NULL is fine */

/* backward-data's forward filters (src/op/conv2d_backward.c): new memory of ctx's device holding
 * w'[c][k][R-1-i][S-1-j] = weights[k][c][i][j] (desc's layout; FP32 or FP16), written when this
 * returns; weights must be memory of that device (WINO_INVALID_ARGUMENT otherwise). Free it with
 * wino_cuda_device_free (NULL is fine). */
enum wino_status wino_cuda_rotated_filters_create(const struct wino_conv2d_desc *desc,
                                                  const void *weights,
                                                  const struct wino_context *ctx,
                                                  void **rotated);
/* Zeroed memory of ctx's device (timing scratch), and its release (NULL is fine). */
enum wino_status wino_cuda_device_zeros(const struct wino_context *ctx, size_t bytes, void **p);
void wino_cuda_device_free(const struct wino_context *ctx, void *p);
/* The median ms of 5 runs of run(arg, stream) on ctx's stream after a warm-up. */
enum wino_status wino_cuda_time_run(const struct wino_context *ctx,
                                    enum wino_status (*run)(void *arg, void *stream), void *arg,
                                    double *ms);
/* The name of ctx's device as CUDA reports it (e.g. "NVIDIA H100 80GB HBM3") into buf. */
enum wino_status wino_cuda_device_name(const struct wino_context *ctx, char *buf, size_t cap);
/* Enqueues w' of weights into rotated (from wino_cuda_rotated_filters_create for desc) on
 * stream of device; no wait. Needs a loaded component (one that made rotated). */
enum wino_status wino_cuda_rotate_filters(const struct wino_conv2d_desc *desc,
                                          const void *weights, void *rotated, int device,
                                          void *stream);

#ifdef __cplusplus
}
#endif

#endif
