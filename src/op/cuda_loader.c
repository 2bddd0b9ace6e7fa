/* The runtime's side of the CUDA component (src/cuda/cuda_component.h): the functions of
 * src/cuda/conv2d_cuda.h load libwino_cuda.so.MAJOR once, on the first call from any thread,
 * and call through its table. libwino itself links no CUDA library, so a program that uses the
 * CPU alone needs none. The component is looked up, in this order:
 *   1. the file that the environment variable WINO_CUDA_LIBRARY names, if set (then only it:
 *      a file asked for by name and missing is reported, not replaced by another one);
 *   2. libwino_cuda.so.MAJOR in the directory of the object holding this code (libwino.so's
 *      directory, or the executable's for a static libwino: how build-tree programs find it);
 *   3. libwino_cuda.so.MAJOR through the dynamic linker's search (RUNPATH, LD_LIBRARY_PATH,
 *      the system's directories).
 * Without a component every call answers WINO_UNSUPPORTED with what was tried and why it
 * failed (src/op/component_loader.c). The component is never unloaded: operators and the shared
 * cuBLAS handles live in it. */
#include "base/error.h"
#include "cuda/conv2d_cuda.h"
#include "cuda/cuda_component.h"
#include "op/component_loader.h"

static const struct wino_component_services services = {WINO_CUDA_ABI, wino_fail, wino_ok};
static struct wino_component cuda = {"CUDA", "WINO_CUDA_LIBRARY", WINO_CUDA_LIBRARY_NAME,
                                     WINO_CUDA_ENTRY, &services, PTHREAD_ONCE_INIT, NULL, ""};
static const struct wino_cuda_ops *ops; /* the table, once component() returned it */

static void load(void)
{
    wino_component_load(&cuda);
    ops = cuda.table;
}

/* The component's table, or NULL with the reason recorded for wino_last_error(). */
static const struct wino_cuda_ops *component(void)
{
    return wino_component_table(&cuda, load);
}

enum wino_status wino_cuda_conv_create(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes, const void *weights,
                                       const struct wino_context *ctx, int tile_m,
                                       const struct wino_tile_matrices *line,
                                       enum wino_variant variant, const float *bias, int relu,
                                       int tf32, struct wino_cuda_conv **conv,
                                       size_t *workspace_bytes)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->create(desc, sizes, weights, ctx, tile_m, line, variant, bias, relu, tf32, conv,
                         workspace_bytes)
             : WINO_UNSUPPORTED;
}

enum wino_status wino_cuda_conv_create_int8(const struct wino_conv2d_desc *desc,
                                            const struct wino_conv_sizes *sizes,
                                            const struct wino_int8_layer *layer,
                                            const struct wino_context *ctx,
                                            enum wino_variant variant,
                                            struct wino_cuda_conv **conv,
                                            size_t *workspace_bytes)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->create_int8(desc, sizes, layer, ctx, variant, conv, workspace_bytes)
             : WINO_UNSUPPORTED;
}

enum wino_status wino_cuda_copy_to_host(const struct wino_context *ctx, const void *src,
                                        size_t bytes, void *dst)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->copy_to_host(ctx, src, bytes, dst) : WINO_UNSUPPORTED;
}

enum wino_status wino_cuda_rotated_filters_create(const struct wino_conv2d_desc *desc,
                                                  const void *weights,
                                                  const struct wino_context *ctx,
                                                  void **rotated)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->rotated_filters_create(desc, weights, ctx, rotated) : WINO_UNSUPPORTED;
}

enum wino_status wino_cuda_device_zeros(const struct wino_context *ctx, size_t bytes, void **p)
{
    const struct wino_cuda_ops *c = component();
    *p = NULL;
    return c ? c->device_zeros(ctx, bytes, p) : WINO_UNSUPPORTED;
}

enum wino_status wino_cuda_device_name(const struct wino_context *ctx, char *buf, size_t cap)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->device_name(ctx, buf, cap) : WINO_UNSUPPORTED;
}

/* The functions below take an operator or memory, which only a loaded component makes. */

enum wino_status wino_cuda_conv_reshape(struct wino_cuda_conv *conv,
                                        const struct wino_conv2d_desc *desc,
                                        const struct wino_conv_sizes *sizes,
                                        size_t *workspace_bytes)
{
    return ops->reshape(conv, desc, sizes, workspace_bytes);
}

enum wino_status wino_cuda_conv_run(struct wino_cuda_conv *conv, const void *x, void *y,
                                    void *workspace, size_t workspace_bytes, void *stream)
{
    return ops->run(conv, x, y, workspace, workspace_bytes, stream);
}

enum wino_status wino_cuda_conv_set_weights(struct wino_cuda_conv *conv, const void *weights,
                                            void *stream)
{
    return ops->set_weights(conv, weights, stream);
}

enum wino_variant wino_cuda_conv_variant(const struct wino_cuda_conv *conv)
{
    return ops->variant(conv);
}

void wino_cuda_conv_destroy(struct wino_cuda_conv *conv)
{
    if (conv)
        ops->destroy(conv);
}

void wino_cuda_device_free(const struct wino_context *ctx, void *p)
{
    if (p) /* only a loaded component makes one */
        ops->device_free(ctx, p);
}

enum wino_status wino_cuda_time_run(const struct wino_context *ctx,
                                    enum wino_status (*run)(void *arg, void *stream), void *arg,
                                    double *ms)
{
    return ops->time_run(ctx, run, arg, ms);
}

enum wino_status wino_cuda_rotate_filters(const struct wino_conv2d_desc *desc,
                                          const void *weights, void *rotated, int device,
                                          void *stream)
{
    return ops->rotate_filters(desc, weights, rotated, device, stream);
}

const struct wino_cuda_winrs_ops *wino_cuda_winrs(void)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->winrs : NULL;
}

const struct wino_cuda_vendor_ops *wino_cuda_vendor(void)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->vendor : NULL;
}
