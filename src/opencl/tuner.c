/* The OpenCL tuner (src/opencl/tuner.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "opencl/tuner.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/half.h"
#include "opencl/opencl_kernels.h"
#include "opencl/opencl_params.h"

/* Largest relative L1 difference from the default's output that a candidate may show: both
 * run the same FP32 algorithm (1e-5 apart at most, and FP16's roundings of y, 5e-4 at most); a
 * broken kernel is O(1) off. */
#define MAX_DIFFERENCE 1e-3
/* A candidate whose first timed run takes this many times its variant's best median so far is
 * not run again: it would not win, and the runs of slow candidates would eat the budget. */
#define GIVE_UP 2.0

/* One layer's buffers, and the output every candidate is compared with. */
struct trial {
    cl_command_queue queue;
    int reps;
    cl_mem x, u, y, workspace;
    size_t y_elems, workspace_bytes;
    size_t elem;        /* bytes of an element of x, w and y (FP32 or FP16) */
    uint16_t *y_half;   /* FP16: y as read, before it becomes got or want */
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

/* The same permutation of n candidates on every run, so that the candidates the search samples
 * spread over the whole space, the same on every device. */
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

/* Reads y into out as floats. 0 on success. */
static int read_output(const struct trial *t, float *out)
{
    void *to = t->elem == 2 ? (void *)t->y_half : (void *)out;
    if (clEnqueueReadBuffer(t->queue, t->y, CL_TRUE, 0, t->elem * t->y_elems, to, 0, NULL,
                            NULL) != CL_SUCCESS)
        return -1;
    if (t->elem == 2)
        wino_floats_from_halves(t->y_half, out, t->y_elems);
    return 0;
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
    const uint16_t nan_half = 0x7e00u;
    const void *poison = t->elem == 2 ? (const void *)&nan_half : (const void *)&nan;
    if (clEnqueueFillBuffer(t->queue, t->y, poison, t->elem, 0, t->elem * t->y_elems, 0, NULL,
                            NULL) != CL_SUCCESS ||
        run(t, layer, fused) || read_output(t, t->have_want ? t->got : t->want))
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

/* t's workspace at least bytes (candidates' chunks differ): 0, or -1 when it cannot be had. */
static int grow_workspace(struct trial *t, cl_context context, size_t bytes)
{
    if (bytes <= t->workspace_bytes)
        return 0;
    release(t->workspace);
    t->workspace = buffer(context, bytes, NULL);
    t->workspace_bytes = t->workspace ? bytes : 0;
    return t->workspace ? 0 : -1;
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
                                                                   : WINO_VARIANT_NON_FUSED) ||
                              (!fused && grow_workspace(t, context, layer.workspace_bytes))
                          ? -1.0
                          : measure(t, &layer, fused, best_ms);
    wino_opencl_layer_release(&layer);
    return ms;
}

/* A device buffer of n values of v as elements of elem bytes (FP16: rounded). */
static cl_mem elements(cl_context context, const float *v, size_t n, size_t elem)
{
    if (elem == 4)
        return buffer(context, sizeof(float) * n, v);
    uint16_t *h = malloc(sizeof *h * (n ? n : 1));
    if (!h)
        return NULL;
    wino_halves_from_floats(v, h, n);
    const cl_mem m = buffer(context, sizeof *h * n, h);
    free(h);
    return m;
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
    t->elem = wino_opencl_elem_size(d);
    t->y_half = t->elem == 2 ? malloc(sizeof *t->y_half * t->y_elems) : NULL;
    t->want = malloc(sizeof(float) * t->y_elems);
    t->got = malloc(sizeof(float) * t->y_elems);
    t->times = malloc(sizeof(double) * (size_t)t->reps);
    cl_mem weights = NULL;
    enum wino_status st = WINO_SUCCESS;
    if (!x || !w || !t->want || !t->got || !t->times || (t->elem == 2 && !t->y_half))
        st = wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuner: out of memory");
    if (!st) {
        fill(x, x_elems, 1);
        fill(w, w_elems, 2);
        t->x = elements(context, x, x_elems, t->elem);
        weights = elements(context, w, w_elems, t->elem);
        t->u = buffer(context, sizeof(float) * alpha2 * d->k * d->c, NULL);
        t->y = buffer(context, t->elem * t->y_elems, NULL);
        if (!t->x || !weights || !t->u || !t->y ||
            grow_workspace(t, context, layer0->workspace_bytes))
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
    free(t->y_half);
    free(t->want);
    free(t->got);
    free(t->times);
}

/* One variant's search: its candidates shuffled, which of them were tried, the best so far. */
struct variant_search {
    int fused;
    struct wino_opencl_params *list;
    char *tried;
    int n, left;
    int climbed; /* the last candidate was a neighbour's turn */
    struct wino_opencl_params best;
    double best_ms; /* -1: none ran */
};

/* s for the valid candidates of its variant other than base, base the best so far at best_ms.
 * 0, or -1 when out of memory. */
static int start_search(struct variant_search *s, const struct wino_opencl_limits *lim,
                        int alpha, const struct wino_opencl_params *base, double best_ms)
{
    const enum wino_variant v = s->fused ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED;
    s->n = s->left = wino_opencl_params_space(lim, alpha, v, base, NULL, 0);
    s->list = malloc(sizeof *s->list * (size_t)(s->n ? s->n : 1));
    s->tried = calloc((size_t)(s->n ? s->n : 1), 1);
    s->best = *base;
    s->best_ms = best_ms;
    if (!s->list || !s->tried)
        return -1;
    wino_opencl_params_space(lim, alpha, v, base, s->list, s->n);
    shuffle(s->list, s->n);
    return 0;
}

/* How many parameters of a variant's half differ between a and b (gemm_bk only where both
 * stage their operands: it is unused otherwise). */
static int differences(const struct wino_opencl_params *a, const struct wino_opencl_params *b,
                       int fused)
{
    if (fused)
        return (a->fused_ft != b->fused_ft) + (a->fused_fk != b->fused_fk) +
               (a->fused_kpt != b->fused_kpt) + (a->fused_fc != b->fused_fc);
    return (a->gemm_bm != b->gemm_bm) + (a->gemm_bn != b->gemm_bn) +
           (a->gemm_rm != b->gemm_rm) + (a->gemm_rn != b->gemm_rn) +
           (a->gemm_local != b->gemm_local) + (a->gemm_chunk != b->gemm_chunk) +
           (a->gemm_local && b->gemm_local && a->gemm_bk != b->gemm_bk);
}

/* The next candidate of s (s->left > 0), in turn the first untried neighbour of the best so
 * far (one parameter changed) and the first untried one: a local search around the best and a
 * sample of the whole space, since climbing alone stays in one region (on pocl, the GEMMs
 * staged in local memory, 4 times slower than the best unstaged ones). */
static const struct wino_opencl_params *next_candidate(struct variant_search *s)
{
    const int climb = s->climbed = !s->climbed;
    int pick = -1;
    for (int i = 0; i < s->n && !(pick >= 0 && !climb); i++) {
        if (s->tried[i])
            continue;
        if (climb && differences(&s->list[i], &s->best, s->fused) == 1) {
            pick = i;
            break;
        }
        if (pick < 0)
            pick = i;
    }
    s->tried[pick] = 1;
    s->left--;
    return &s->list[pick];
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
    struct trial t = {.queue = queue, .reps = search->reps};
    struct wino_opencl_layer layer0;
    memset(&layer0, 0, sizeof layer0);
    st = wino_opencl_layer_build(context, device, desc, tile_m, 0, 0, &base, 1, &layer0);
    if (!st)
        st = prepare(&t, context, desc, &layer0);
    /* the defaults, whatever the bounds: the non-fused output is what the others must give */
    const double default_ms = st ? -1.0 : measure(&t, &layer0, 0, 0.0);
    if (!st && default_ms < 0.0)
        st = wino_fail(WINO_DEVICE_ERROR, "OpenCL tuner: the default non-fused kernels failed "
                       "on this layer");
    const double fused_ms = st || wino_opencl_layer_fits(&layer0, device, WINO_VARIANT_FUSED)
                                ? -1.0
                                : measure(&t, &layer0, 1, 0.0);
    wino_opencl_layer_release(&layer0);
    struct variant_search v[2];
    memset(v, 0, sizeof v);
    v[1].fused = 1;
    if (!st && (start_search(&v[0], &lim, alpha, &base, default_ms) ||
                start_search(&v[1], &lim, alpha, &base, fused_ms)))
        st = wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuner: out of memory");
    int tried = 2;
    result->refused = fused_ms < 0.0;
    for (; !st && (v[0].left || v[1].left); tried++) {
        if ((search->max_candidates > 0 && tried >= search->max_candidates) ||
            (search->budget_s > 0.0 && now_s() - start >= search->budget_s))
            break;
        struct variant_search *s = &v[!v[0].left || (v[1].left && tried % 2)];
        const struct wino_opencl_params *c = next_candidate(s);
        const double ms = try_candidate(&t, context, device, desc, tile_m, c, s->fused,
                                        s->best_ms);
        if (ms < 0.0)
            result->refused++;
        else if (s->best_ms < 0.0 || ms < s->best_ms) {
            s->best_ms = ms;
            s->best = *c;
        }
    }
    release_trial(&t);
    for (int i = 0; i < 2; i++) {
        free(v[i].list);
        free(v[i].tried);
    }
    if (st)
        return st;
    /* one entry: the GEMM half of the best non-fused candidate, the fused half of the best
     * fused one */
    result->best.params = v[0].best;
    result->best.params.fused_ft = v[1].best.fused_ft;
    result->best.params.fused_fk = v[1].best.fused_fk;
    result->best.params.fused_kpt = v[1].best.fused_kpt;
    result->best.params.fused_fc = v[1].best.fused_fc;
    result->best.non_fused_ms = v[0].best_ms;
    result->best.fused_ms = v[1].best_ms;
    result->best.variant = v[1].best_ms >= 0.0 && v[1].best_ms < v[0].best_ms
                               ? WINO_VARIANT_FUSED
                               : WINO_VARIANT_NON_FUSED;
    result->default_ms = default_ms;
    result->candidates = tried - result->refused;
    result->space = 2 + v[0].n + v[1].n;
    result->seconds = now_s() - start;
    return wino_ok(); /* candidates refused on the way leave no error behind */
}
