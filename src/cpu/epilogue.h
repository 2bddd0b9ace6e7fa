/* What every FP32 path applies to its outputs before they are stored: per-output-channel bias and
 * an optional ReLU, fused into the last stage so the output is written once. */
#ifndef WINO_CPU_EPILOGUE_H
#define WINO_CPU_EPILOGUE_H

#include <stddef.h>

struct wino_epilogue {
    const float *bias; /* K values, or NULL */
    int relu;          /* 1: max(0, .) after the bias */
};

static inline float wino_epilogue_one(const struct wino_epilogue *ep, int k, float v)
{
    if (ep->bias)
        v += ep->bias[k];
    return ep->relu && v < 0.0f ? 0.0f : v;
}

/* dst[k] = epilogue(src[k]) for the K channels of one output pixel (src == dst allowed). */
static inline void wino_epilogue_pixel(const struct wino_epilogue *ep, const float *src,
                                       float *dst, int K)
{
    for (int k = 0; k < K; k++)
        dst[k] = wino_epilogue_one(ep, k, src[k]);
}

#endif
