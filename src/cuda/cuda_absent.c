/* The CUDA backend in a build without CUDA: every entry answers WINO_UNSUPPORTED. */
#include "core/error.h"
#include "cuda/conv2d_cuda.h"

static enum wino_status absent(void)
{
    return wino_fail(WINO_UNSUPPORTED, "this build of wino has no CUDA backend");
}

enum wino_status wino_cuda_conv_create(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes, const void *weights,
                                       const struct wino_context *ctx, int tile_m,
                                       enum wino_variant variant, const float *bias, int relu,
                                       int tf32, struct wino_cuda_conv **conv,
                                       size_t *workspace_bytes)
{
    (void)desc, (void)sizes, (void)weights, (void)ctx, (void)tile_m, (void)variant, (void)bias;
    (void)relu, (void)tf32, (void)conv, (void)workspace_bytes;
    return absent();
}

enum wino_status wino_cuda_conv_create_int8(const struct wino_conv2d_desc *desc,
                                            const struct wino_conv_sizes *sizes,
                                            const struct wino_int8_layer *layer,
                                            const struct wino_context *ctx,
                                            enum wino_variant variant,
                                            struct wino_cuda_conv **conv,
                                            size_t *workspace_bytes)
{
    (void)desc, (void)sizes, (void)layer, (void)ctx, (void)variant, (void)conv;
    (void)workspace_bytes;
    return absent();
}

enum wino_status wino_cuda_copy_to_host(const struct wino_context *ctx, const void *src,
                                        size_t bytes, void *dst)
{
    (void)ctx, (void)src, (void)bytes, (void)dst;
    return absent();
}

enum wino_status wino_cuda_conv_run(struct wino_cuda_conv *conv, const void *x, void *y,
                                    void *workspace, size_t workspace_bytes)
{
    (void)conv, (void)x, (void)y, (void)workspace, (void)workspace_bytes;
    return absent();
}

enum wino_variant wino_cuda_conv_variant(const struct wino_cuda_conv *conv)
{
    (void)conv;
    return WINO_VARIANT_AUTO;
}

void wino_cuda_conv_destroy(struct wino_cuda_conv *conv)
{
    (void)conv;
}
