/* The OpenCL tuner (src/opencl/tuner.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "opencl/tuner.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "opencl/opencl_kernels.h"
#include "opencl/opencl_params.h"

/* Largest relative L1 difference from the default's output that a candidate may show: both
 * run the same FP32 algorithm (1e-5 apart at most); a broken kernel is O(1) off. */
#define MAX_DIFFERENCE 1e-3
/* A candidate whose first timed run takes this many times its variant's best median so far is
 * not run again: it would not win, and the runs of slow candidates would eat the budget. */
#define GIVE_UP 2.0

/* One layer's buffers, and the output every candidate is compared with. */
struct trial {
    cl_command_queue queue;
    int reps;
    cl_mem x, u, y, workspace;
    size_t y_elems;
    float *want, *got; /* the default non-fused output, a candidate's */
    int have_want;
    double *times;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* n reproducible values in (-1, 1): timings on zeros can flatter. */
static void fill(float *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((double)(splitmix64(&seed) >> 11) / 4503599627370496.0 - 1.0);
}

/* The same permutation of n candidates on every run, so that any prefix of the search samples
 * the whole space and a search repeated with the same bounds tries the same candidates. */
static void shuffle(struct wino_opencl_params *c, int n)
{
    uint64_t state = 20200427; /* EuroSys'20 */
    for (int i = n - 1; i > 0; i--) {
        const int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
        const struct wino_opencl_params swap = c[i];
        c[i] = c[j];
        c[j] = swap;
    }
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run of layer's variant, waited for. 0 on success. */
static int run(const struct trial *t, const struct wino_opencl_layer *layer, int fused)
{
    const enum wino_status st =
        fused ? wino_opencl_run_fused(layer, t->queue, t->x, t->u, NULL, t->y)
              : wino_opencl_run_non_fused(layer, t->queue, t->x, t->u, NULL, t->y, t->workspace);
    return st || clFinish(t->queue) != CL_SUCCESS;
}

/* sum |got - want| / sum |want| (NaN when either holds one). */
static double difference(const float *got, const float *want, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        num += fabs((double)got[i] - (double)want[i]);
        den += fabs((double)want[i]);
    }
    return num / den;
}

/* Runs layer's variant once on y poisoned with NaN (drivers compile at the first launch) and
 * compares the output with the default's (the first call's output becomes it), then times
 * t->reps runs. Returns their median in ms (the first run's time when that exceeds best_ms
 * times GIVE_UP, best_ms > 0), or -1 when the candidate fails or is wrong. */
static double measure(struct trial *t, const struct wino_opencl_layer *layer, int fused,
                      double best_ms)
{
    const float nan = NAN;
    const size_t bytes = sizeof(float) * t->y_elems;
    if (clEnqueueFillBuffer(t->queue, t->y, &nan, sizeof nan, 0, bytes, 0, NULL, NULL) !=
            CL_SUCCESS ||
        run(t, layer, fused) ||
        clEnqueueReadBuffer(t->queue, t->y, CL_TRUE, 0, bytes, t->have_want ? t->got : t->want,
                            0, NULL, NULL) != CL_SUCCESS)
        return -1.0;
    const double off = difference(t->have_want ? t->got : t->want, t->want, t->y_elems);
    if (!(off <= MAX_DIFFERENCE)) /* the default's own output is checked for NaN this way */
        return -1.0;
    t->have_want = 1;
    for (int i = 0; i < t->reps; i++) {
        const double t0 = now_s();
        if (run(t, layer, fused))
            return -1.0;
        t->times[i] = 1e3 * (now_s() - t0);
        if (!i && best_ms > 0.0 && t->times[0] > GIVE_UP * best_ms)
            return t->times[0];
    }
    qsort(t->times, (size_t)t->reps, sizeof *t->times, compare_double);
    return t->reps % 2 ? t->times[t->reps / 2]
                       : 0.5 * (t->times[t->reps / 2 - 1] + t->times[t->reps / 2]);
}

/* A device buffer of bytes holding host (NULL: uninitialized). */
static cl_mem buffer(cl_context context, size_t bytes, const void *host)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : sizeof(float), (void *)host, &err);
    return err == CL_SUCCESS ? m : NULL;
}

static void release(cl_mem m)
{
    if (m)
        clReleaseMemObject(m);
}

/* Builds candidate c (its program not stored) and measures variant fused on it as measure()
 * does. */
static double try_candidate(struct trial *t, cl_context context, cl_device_id device,
                            const struct wino_conv2d_desc *desc, int tile_m,
                            const struct wino_opencl_params *c, int fused, double best_ms)
{
    struct wino_opencl_layer layer;
    if (wino_opencl_layer_build(context, device, desc, tile_m, 0, 0, c, 0, &layer))
        return -1.0;
    const double ms = wino_opencl_layer_fits(&layer, device, fused ? WINO_VARIANT_FUSED
                                                                   : WINO_VARIANT_NON_FUSED)
                          ? -1.0
                          : measure(t, &layer, fused, best_ms);
    wino_opencl_layer_release(&layer);
    return ms;
}

/* Sets up t for desc: random x and weights, U transformed by layer0 (the defaults' layer,
 * built and stored), y and the workspace. */
static enum wino_status prepare(struct trial *t, cl_context context,
                                const struct wino_conv2d_desc *d,
                                const struct wino_opencl_layer *layer0)
{
    const size_t x_elems = (size_t)d->n * d->c * d->h * d->w,
                 w_elems = (size_t)d->k * d->c * d->r * d->s,
                 alpha2 = (size_t)layer0->alpha * (size_t)layer0->alpha;
    float *x = malloc(sizeof(float) * x_elems), *w = malloc(sizeof(float) * w_elems);
    t->y_elems = layer0->y_elems;
    t->want = malloc(sizeof(float) * t->y_elems);
    t->got = malloc(sizeof(float) * t->y_elems);
    t->times = malloc(sizeof(double) * (size_t)t->reps);
    cl_mem weights = NULL;
    enum wino_status st = WINO_SUCCESS;
    if (!x || !w || !t->want || !t->got || !t->times)
        st = wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuner: out of memory");
    if (!st) {
        fill(x, x_elems, 1);
        fill(w, w_elems, 2);
        t->x = buffer(context, sizeof(float) * x_elems, x);
        weights = buffer(context, sizeof(float) * w_elems, w);
        t->u = buffer(context, sizeof(float) * alpha2 * d->k * d->c, NULL);
        t->y = buffer(context, sizeof(float) * t->y_elems, NULL);
        t->workspace = buffer(context, layer0->workspace_bytes, NULL);
        if (!t->x || !weights || !t->u || !t->y || !t->workspace)
            st = wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuner: the device's buffers failed");
    }
    if (!st)
        st = wino_opencl_filter_transform(layer0, t->queue, weights, t->u);
    if (!st && clFinish(t->queue) != CL_SUCCESS)
        st = wino_fail(WINO_DEVICE_ERROR, "OpenCL tuner: the filter transform failed");
    release(weights);
    free(x);
    free(w);
    return st;
}

static void release_trial(struct trial *t)
{
    release(t->x);
    release(t->u);
    release(t->y);
    release(t->workspace);
    free(t->want);
    free(t->got);
    free(t->times);
}

/* The valid candidates of variant other than base, shuffled (malloc'ed; *n their count). */
static struct wino_opencl_params *candidates(const struct wino_opencl_limits *lim, int alpha,
                                             enum wino_variant variant,
                                             const struct wino_opencl_params *base, int *n)
{
    *n = wino_opencl_params_space(lim, alpha, variant, base, NULL, 0);
    struct wino_opencl_params *list = malloc(sizeof *list * (size_t)(*n ? *n : 1));
    if (list) {
        wino_opencl_params_space(lim, alpha, variant, base, list, *n);
        shuffle(list, *n);
    }
    return list;
}

enum wino_status wino_opencl_tune_layer(cl_context context, cl_device_id device,
                                        cl_command_queue queue,
                                        const struct wino_conv2d_desc *desc, int tile_m,
                                        const struct wino_opencl_search *search,
                                        struct wino_opencl_tuning *result)
{
    const double start = now_s();
    memset(result, 0, sizeof *result);
    result->tile_m = tile_m;
    const int alpha = tile_m + desc->r - 1;
    struct wino_opencl_limits lim;
    struct wino_opencl_params base;
    enum wino_status st = wino_opencl_limits(device, &lim);
    if (!st)
        st = wino_opencl_params_default(&lim, alpha, &base);
    if (st)
        return st;
    int n_gemm = 0, n_fused = 0;
    struct wino_opencl_params *gemm = candidates(&lim, alpha, WINO_VARIANT_NON_FUSED, &base,
                                                 &n_gemm),
                              *fused = candidates(&lim, alpha, WINO_VARIANT_FUSED, &base,
                                                  &n_fused);
    struct trial t = {queue, search->reps, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL};
    struct wino_opencl_layer layer0;
    memset(&layer0, 0, sizeof layer0);
    if (!gemm || !fused)
        st = wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuner: out of memory");
    if (!st)
        st = wino_opencl_layer_build(context, device, desc, tile_m, 0, 0, &base, 1, &layer0);
    if (!st)
        st = prepare(&t, context, desc, &layer0);
    /* the defaults, whatever the bounds: the non-fused output is what the others must give */
    const double default_ms = st ? -1.0 : measure(&t, &layer0, 0, 0.0);
    if (!st && default_ms < 0.0)
        st = wino_fail(WINO_DEVICE_ERROR, "OpenCL tuner: the default non-fused kernels failed "
                       "on this layer");
    if (st) {
        wino_opencl_layer_release(&layer0);
        release_trial(&t);
        free(gemm);
        free(fused);
        return st;
    }
    struct wino_opencl_params best_gemm = base, best_fused = base;
    double gemm_ms = default_ms,
           fused_ms = wino_opencl_layer_fits(&layer0, device, WINO_VARIANT_FUSED)
                          ? -1.0
                          : measure(&t, &layer0, 1, 0.0);
    wino_opencl_layer_release(&layer0);
    int tried = 2;
    result->refused = fused_ms < 0.0;
    for (int i = 0, j = 0; i < n_gemm || j < n_fused; tried++) {
        if ((search->max_candidates > 0 && tried >= search->max_candidates) ||
            (search->budget_s > 0.0 && now_s() - start >= search->budget_s))
            break;
        const int is_fused = i >= n_gemm || (j < n_fused && tried % 2);
        const struct wino_opencl_params *c = is_fused ? &fused[j++] : &gemm[i++];
        double *best_ms = is_fused ? &fused_ms : &gemm_ms;
        const double ms = try_candidate(&t, context, device, desc, tile_m, c, is_fused, *best_ms);
        if (ms < 0.0)
            result->refused++;
        else if (*best_ms < 0.0 || ms < *best_ms) {
            *best_ms = ms;
            *(is_fused ? &best_fused : &best_gemm) = *c;
        }
    }
    /* one entry: the GEMM half of the best non-fused candidate, the fused half of the best
     * fused one */
    result->best.params = best_gemm;
    result->best.params.fused_ft = best_fused.fused_ft;
    result->best.params.fused_fk = best_fused.fused_fk;
    result->best.params.fused_kpt = best_fused.fused_kpt;
    result->best.params.fused_fc = best_fused.fused_fc;
    result->best.non_fused_ms = gemm_ms;
    result->best.fused_ms = fused_ms;
    result->best.variant = fused_ms >= 0.0 && fused_ms < gemm_ms ? WINO_VARIANT_FUSED
                                                                 : WINO_VARIANT_NON_FUSED;
    result->default_ms = default_ms;
    result->candidates = tried - result->refused;
    result->space = 2 + n_gemm + n_fused;
    result->seconds = now_s() - start;
    release_trial(&t);
    free(gemm);
    free(fused);
    return wino_ok(); /* candidates refused on the way leave no error behind */
}
