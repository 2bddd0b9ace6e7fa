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
 * failed. The component is never unloaded: operators and the shared cuBLAS handles live in it. */
#define _GNU_SOURCE /* dladdr1 and struct link_map */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "cuda/conv2d_cuda.h"
#include "cuda/cuda_component.h"

static const struct wino_cuda_services services = {WINO_CUDA_ABI, wino_fail, wino_ok};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const struct wino_cuda_ops *ops;   /* the component's table, or NULL */
static char load_failure[1024];           /* why ops is NULL: each file tried and its error */

/* Appends printf-style text to load_failure, separated by "; ". */
static void note_failure(const char *fmt, ...)
{
    size_t used = strlen(load_failure);
    if (used && used + 2 < sizeof load_failure) {
        memcpy(load_failure + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_failure + used, sizeof load_failure - used, fmt, ap);
    va_end(ap);
}

/* dlopen(path), then its table: 1 when ops is set, else 0 with the reason noted. */
static int try_component(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        note_failure("%s", why ? why : path);
        return 0;
    }
    wino_cuda_component_fn entry = NULL;
    void *symbol = dlsym(lib, WINO_CUDA_ENTRY);
    memcpy(&entry, &symbol, sizeof entry); /* ISO C has no object-to-function pointer cast */
    const struct wino_cuda_ops *table = entry ? entry(&services) : NULL;
    if (!entry)
        note_failure("%s: not a wino CUDA component (no %s)", path, WINO_CUDA_ENTRY);
    else if (!table || table->abi != WINO_CUDA_ABI)
        note_failure("%s: a component of another build (ABI %d, this libwino's is %d)", path,
                     table ? table->abi : -1, WINO_CUDA_ABI);
    if (!table || table->abi != WINO_CUDA_ABI) {
        dlclose(lib);
        return 0;
    }
    ops = table;
    return 1;
}

/* The directory of the file that holds this code into dir (without the final '/'): 1, or 0
 * when it cannot be told. The main program's name in the link map is empty (a static libwino),
 * so its file is read from /proc/self/exe. */
static int own_directory(char *dir, size_t cap)
{
    Dl_info info;
    struct link_map *map = NULL;
    void *self = NULL;
    enum wino_status (*here)(void) = wino_ok;
    memcpy(&self, &here, sizeof self);
    if (!dladdr1(self, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    if (map->l_name && map->l_name[0]) {
        if (strlen(map->l_name) >= cap)
            return 0;
        strcpy(dir, map->l_name);
    } else {
        const ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
        if (n <= 0)
            return 0;
        dir[n] = '\0';
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

static void load(void)
{
    const char *named = getenv("WINO_CUDA_LIBRARY");
    if (named && named[0]) {
        try_component(named);
        return;
    }
    char path[PATH_MAX + sizeof WINO_CUDA_LIBRARY_NAME + 1];
    if (own_directory(path, PATH_MAX)) {
        strcat(path, "/" WINO_CUDA_LIBRARY_NAME);
        if (try_component(path))
            return;
    }
    try_component(WINO_CUDA_LIBRARY_NAME);
}

/* The component's table, or NULL with the reason recorded for wino_last_error(). */
static const struct wino_cuda_ops *component(void)
{
    pthread_once(&load_once, load);
    if (!ops)
        wino_fail(WINO_UNSUPPORTED, "the CUDA backend is not available: %s", load_failure);
    return ops;
}

enum wino_status wino_cuda_conv_create(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes, const void *weights,
                                       const struct wino_context *ctx, int tile_m,
                                       enum wino_variant variant, const float *bias, int relu,
                                       int tf32, struct wino_cuda_conv **conv,
                                       size_t *workspace_bytes)
{
    const struct wino_cuda_ops *c = component();
    return c ? c->create(desc, sizes, weights, ctx, tile_m, variant, bias, relu, tf32, conv,
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
