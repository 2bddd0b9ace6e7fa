/* The operator behind the public wino_conv2d handle, shared by the files that create it. */
#ifndef WINO_CORE_CONV2D_IMPL_H
#define WINO_CORE_CONV2D_IMPL_H

#include "core/conv_desc.h"
#include "cpu/direct_f32.h"
#include "cpu/winograd_f32.h"
#include "cpu/winograd_s8.h"
#include "cpu/winograd_scalar.h"
#include "cuda/conv2d_cuda.h"
#include "wino.h"

struct wino_conv2d {
    struct wino_conv2d_desc desc;
    struct wino_conv_sizes sizes;
    enum wino_algo algo;
    struct wino_f32_direct direct;    /* DIRECT */
    float *bias;                      /* K values copied from the options, or NULL */
    int relu;
    struct wino_f32_engine engine;    /* WINOGRAD with generated transforms (engine.U != NULL) */
    struct wino_f32_winograd winograd; /* WINOGRAD on the scalar path otherwise */
    struct wino_s8_engine *int8;      /* INT8 Winograd, or NULL */
    struct wino_cuda_conv *cuda;      /* on the CUDA backend, or NULL */
    void *stream;                     /* CUDA: the context's stream, wino_conv2d_run's */
    int tile_m;                       /* Winograd's tile (0 otherwise; INT8: see int8) */
    size_t workspace_bytes;
    enum wino_conv2d_kind kind;
    struct wino_conv2d_backward *backward; /* backward-data / -filter state, or NULL */
    int unshaped;                     /* created without sizes: run() waits for a reshape */
};

/* The descriptor create plans for: desc itself, or, when its sizes are unknown (n = h = w = 0),
 * *nominal, a copy with n = 1 and h, w = 56 (or the dilated filter's extent when larger). */
const struct wino_conv2d_desc *wino_desc_for_planning(const struct wino_conv2d_desc *desc,
                                                      struct wino_conv2d_desc *nominal);

/* The end of every create: st, after marking a created *op unshaped when it was planned on
 * nominal sizes. */
enum wino_status wino_conv2d_shaped(enum wino_status st, wino_conv2d **op, int unshaped);

/* The backward operators' part of wino_conv2d_reshape: d and sizes are checked; sets
 * *workspace_bytes for them and leaves op unchanged on failure. */
enum wino_status wino_conv2d_backward_reshape(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                              const struct wino_conv_sizes *sizes,
                                              size_t *workspace_bytes);

/* Checks the fields of options that mean the same on every backend. */
enum wino_status wino_conv2d_check_options(const struct wino_conv2d_options *options);

/* Checks the backend, device and threads of ctx (NULL is the default CPU context). */
enum wino_status wino_context_check(const struct wino_context *ctx);

/* Why Winograd F(tile_m, r) cannot serve desc, or NULL when it can. */
const char *wino_winograd_refusal(const struct wino_conv2d_desc *desc, int tile_m);

/* Checks run()'s workspace against the operator's size and its 64-byte alignment. */
enum wino_status wino_conv2d_check_workspace(const wino_conv2d *op, const void *workspace,
                                             size_t workspace_bytes);

/* The backward operators' part of the shared entry points (src/core/conv2d_backward.c): run
 * (backward-data; a backward-filter operator is refused), variant, and the release of their
 * state (NULL is fine). */
enum wino_status wino_conv2d_backward_run(const wino_conv2d *op, const void *dy, void *dx,
                                          void *workspace, size_t workspace_bytes);
enum wino_variant wino_conv2d_backward_variant(const wino_conv2d *op);
void wino_conv2d_backward_release(struct wino_conv2d_backward *backward);

/* wino_conv2d_create for ctx->backend == WINO_BACKEND_CUDA (src/core/conv2d_cuda.c). */
enum wino_status wino_conv2d_create_cuda(const struct wino_conv2d_desc *desc,
                                         const void *weights, const struct wino_context *ctx,
                                         const struct wino_conv2d_options *options,
                                         wino_conv2d **op);

#endif
