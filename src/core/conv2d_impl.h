/* The operator behind the public wino_conv2d handle, shared by the files that create it. */
#ifndef WINO_CORE_CONV2D_IMPL_H
#define WINO_CORE_CONV2D_IMPL_H

#include "core/conv_desc.h"
#include "cpu/direct_f32.h"
#include "cpu/winograd_f32.h"
#include "cpu/winograd_s8.h"
#include "cpu/winograd_scalar.h"
#include "wino.h"

struct wino_conv2d {
    struct wino_conv2d_desc desc;
    struct wino_conv_sizes sizes;
    enum wino_algo algo;
    struct wino_f32_direct direct;    /* DIRECT */
    float *bias;                      /* K values copied from the options, or NULL */
    int relu;
    wino_tile *tile;                  /* WINOGRAD */
    struct wino_f32_engine engine;    /* WINOGRAD with generated transforms (engine.U != NULL) */
    struct wino_f32_winograd winograd; /* WINOGRAD on the scalar path otherwise */
    struct wino_s8_engine *int8;      /* INT8 Winograd, or NULL */
    size_t workspace_bytes;
};

#endif
