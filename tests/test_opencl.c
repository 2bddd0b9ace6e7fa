/* The OpenCL backend through the public API (WINO_BACKEND_OPENCL), against the FP64 reference:
 *  - every default tile F(m x m, r x r) in FP32 on a random shape (tests/winograd_shapes.h: a
 *    1x1 image with padding r - 1, one input channel, P and Q one more than a multiple of m, a
 *    free draw, in turn), NCHW and NHWC, non-fused and fused alternately, bias and ReLU drawn;
 *    F(2x2, 3x3) and F(4x4, 3x3) on eight more each; the tile wino picks; a medium layer; every
 *    default tile again in FP16 (x, w and y in FP16, FP32 arithmetic);
 *  - y is poisoned with NaN on the device before each run; relative L1 error within the bound
 *    of its alpha (the CUDA FP32 bounds, docs/opencl.md has the measured errors);
 *  - the non-fused pipeline in many chunks of tiles, the last one short, and its workspace;
 *  - reshape to other sizes; new weights through wino_conv2d_set_weights (the same output, bit
 *    for bit, as an operator created with them);
 *  - bad input refused with a status: host pointers, buffers and a queue of another
 *    cl_context, a missing context, a small workspace, an FP16 y buffer too small, what the
 *    backend does not run (direct, INT8, backward).
 * In a build without the OpenCL component (WINO_TEST_OPENCL undefined) it checks that the
 * backend answers WINO_UNSUPPORTED. With the component it needs an OpenCL device, and fails
 * when it finds none: CI installs pocl.
 * Usage: test_opencl (WINO_TEST_SEED=N to replay). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_check.h"
#include "test_util.h"
#include "wino.h"
#include "winograd_shapes.h"

static struct test_counts counts;

#ifndef WINO_TEST_OPENCL

int main(void)
{
    int dummy = 0;
    struct wino_context ctx = {.backend = WINO_BACKEND_OPENCL, .cl_context = &dummy,
                               .cl_device = &dummy, .stream = &dummy};
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, 6, 6, 2, 3, 3, 1, 1);
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_create(&d, &dummy, &ctx, NULL, &op);
    test_check(&counts, st == WINO_UNSUPPORTED && !op &&
                            strstr(wino_last_error(), "OpenCL backend is not available"),
               "a build without the OpenCL component answers WINO_UNSUPPORTED");
    printf("  (%s)\n", wino_last_error());
    return test_report(&counts);
}

#else

#include "opencl_env.h"

static double worst[2][11]; /* largest error by dtype (FP32, FP16) and alpha */

/* One convolution on the device: y poisoned there, run twice (the second on the poisoned
 * output again), checked against the reference. Returns the workspace's bytes. */
static size_t run_case(const struct cl_env *env, const struct wino_conv2d_desc *d, int tile_m,
                     enum wino_variant variant, struct test_rng *rng, int id)
{
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = tile_m;
    o.variant = variant;
    struct conv_case_data cd;
    conv_case_make(d, &o, rng, (int)(test_rng_next(rng) & 1), &cd);
    const struct wino_context ctx = context_of(env);
    cl_mem x = device_elements(env, d, cd.x, cd.xe), w = device_elements(env, d, cd.w, cd.we);
    cl_mem y = device_elements(env, d, cd.y, cd.ye), ws = NULL;
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    enum wino_algo algo = WINO_ALGO_AUTO;
    enum wino_variant used = WINO_VARIANT_AUTO;
    int m = 0;
    enum wino_status st = wino_conv2d_create(d, w, &ctx, &cd.o, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    if (!st && bytes)
        ws = device_copy(env, NULL, bytes);
    if (!st)
        st = wino_conv2d_algo(op, &algo, &m);
    if (!st)
        st = wino_conv2d_variant(op, &used);
    double err = NAN;
    for (int rep = 0; rep < 2 && !st; rep++) {
        transfer_elements(env, d, y, cd.y, cd.ye, 1); /* poisoned */
        st = wino_conv2d_run(op, x, y, ws, bytes);
        float *got = malloc(cd.ye * 4);
        if (!st && !transfer_elements(env, d, y, got, cd.ye, 0)) {
            const double e = wino_rel_l1_f32(got, cd.ref, cd.ye);
            err = rep && !(e == err) ? NAN : e; /* both runs give the same result */
        }
        free(got);
    }
    const int alpha = (m ? m : tile_m) + d->r - 1, half = d->dtype == WINO_DTYPE_F16;
    const double bound = half ? F16_BOUND : f32_bound(alpha);
    const int ok = !st && algo == WINO_ALGO_WINOGRAD && (!tile_m || m == tile_m) &&
                   (variant == WINO_VARIANT_AUTO || used == variant) && err <= bound;
    if (!st && err == err && err > worst[half][alpha])
        worst[half][alpha] = err;
    char what[400];
    snprintf(what, sizeof what,
             "case %d: %s F(%dx%d,%dx%d) %s %dx%dx%dx%d k%d pad %d,%d %s%s%s: rel L1 %.2e "
             "(bound %.0e)%s%s",
             id, half ? "FP16" : "FP32", m, m, d->r, d->r,
             used == WINO_VARIANT_FUSED ? "fused" : "non-fused", d->n, d->c,
             d->h, d->w, d->k, d->pad_h, d->pad_w,
             d->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW", cd.o.bias ? " bias" : "",
             cd.o.relu ? " relu" : "", err, bound, st ? ": " : "", st ? wino_last_error() : "");
    test_check(&counts, ok, what);
    wino_conv2d_destroy(op);
    clReleaseMemObject(x), clReleaseMemObject(w), clReleaseMemObject(y);
    if (ws)
        clReleaseMemObject(ws);
    conv_case_free(&cd);
    return bytes;
}

static void random_cases(const struct cl_env *env, struct test_rng *rng, int *id)
{
    for (int r = 2; r <= 7; r++)
        for (int m = 2; m <= 8 && m + r - 1 <= 10; m++, (*id)++) {
            const struct wino_conv2d_desc d =
                random_desc(rng, m, r, *id % 4, WINO_DTYPE_F32,
                            *id % 3 ? WINO_LAYOUT_NCHW : WINO_LAYOUT_NHWC);
            run_case(env, &d, m, *id % 2 ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED, rng,
                     *id);
        }
    for (int m = 2; m <= 4; m += 2)
        for (int i = 0; i < 8; i++, (*id)++) {
            const struct wino_conv2d_desc d = random_desc(
                rng, m, 3, i % 4, WINO_DTYPE_F32, i / 2 % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW);
            run_case(env, &d, m, i % 2 ? WINO_VARIANT_FUSED : WINO_VARIANT_NON_FUSED, rng, *id);
        }
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 17, 23, 19, 29, 3, 3, 1, 1);
    run_case(env, &d, 0, WINO_VARIANT_AUTO, rng, (*id)++);
    d = wino_conv2d_desc_make(2, 64, 20, 20, 64, 3, 3, 1, 1);
    run_case(env, &d, 4, WINO_VARIANT_NON_FUSED, rng, (*id)++);
    d.layout = WINO_LAYOUT_NHWC;
    run_case(env, &d, 4, WINO_VARIANT_FUSED, rng, (*id)++);
    for (int r = 2; r <= 7; r++)
        for (int m = 2; m <= 8 && m + r - 1 <= 10; m++, (*id)++) {
            d = random_desc(rng, m, r, *id % 4, WINO_DTYPE_F16,
                            *id % 3 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW);
            run_case(env, &d, m, *id % 2 ? WINO_VARIANT_NON_FUSED : WINO_VARIANT_FUSED, rng,
                     *id);
        }
}

/* The non-fused pipeline in chunks of tiles (WINO_OPENCL_CHUNK_TILES): 50 tiles 7 at a time
 * (the last chunk of one tile), float4 paths, and one at a time, scalar paths; the workspace
 * holds one chunk's V and M. */
static void chunk_cases(const struct cl_env *env, struct test_rng *rng, int *id)
{
    setenv("WINO_OPENCL_CHUNK_TILES", "7", 1);
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 64, 20, 20, 64, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    const size_t bytes = run_case(env, &d, 4, WINO_VARIANT_NON_FUSED, rng, (*id)++);
    const size_t v = 36 * 7 * 64, want = 4 * ((v + 63) / 64 * 64 + 36 * 7 * 64);
    char what[120];
    snprintf(what, sizeof what, "chunks of 7 tiles: a workspace of %zu bytes, %zu wanted", bytes,
             want);
    test_check(&counts, bytes == want, what);
    setenv("WINO_OPENCL_CHUNK_TILES", "1", 1);
    d = wino_conv2d_desc_make(2, 13, 20, 20, 10, 3, 3, 1, 1);
    run_case(env, &d, 4, WINO_VARIANT_NON_FUSED, rng, (*id)++);
    unsetenv("WINO_OPENCL_CHUNK_TILES");
}

/* An operator created for one size, reshaped to another and run there. */
static void reshape_case(const struct cl_env *env, struct test_rng *rng)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 5, 9, 9, 7, 3, 3, 1, 1);
    struct conv_case_data cd;
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    struct wino_conv2d_desc big = d;
    big.n = 2, big.h = 13, big.w = 11;
    conv_case_make(&big, &o, rng, 0, &cd);
    const struct wino_context ctx = context_of(env);
    cl_mem x = device_copy(env, cd.x, cd.xe * 4), w = device_copy(env, cd.w, cd.we * 4);
    cl_mem y = device_copy(env, cd.y, cd.ye * 4), ws = NULL;
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    double err = NAN;
    float *got = malloc(cd.ye * 4);
    if (!wino_conv2d_create(&d, w, &ctx, &o, &op) &&
        !wino_conv2d_reshape(op, big.n, big.h, big.w, &bytes) &&
        (ws = device_copy(env, NULL, bytes)) && !wino_conv2d_run(op, x, y, ws, bytes) &&
        clEnqueueReadBuffer(env->queue, y, CL_TRUE, 0, cd.ye * 4, got, 0, NULL, NULL) ==
            CL_SUCCESS)
        err = wino_rel_l1_f32(got, cd.ref, cd.ye);
    char what[200];
    snprintf(what, sizeof what, "reshape 1x5x9x9 -> 2x5x13x11: rel L1 %.2e", err);
    test_check(&counts, err <= f32_bound(6), what);
    free(got);
    wino_conv2d_destroy(op);
    clReleaseMemObject(x), clReleaseMemObject(w), clReleaseMemObject(y);
    if (ws)
        clReleaseMemObject(ws);
    conv_case_free(&cd);
}

static void expect(enum wino_status got, enum wino_status want, const char *what)
{
    char line[400];
    snprintf(line, sizeof line, "%s: status %d, want %d (%s)", what, (int)got, (int)want,
             wino_last_error());
    test_check(&counts, got == want, line);
}

/* Runs op on the device buffers and reads y (ye floats) into out: the status. */
static enum wino_status run_read(const struct cl_env *env, const wino_conv2d *op, cl_mem x,
                                 cl_mem y, cl_mem ws, size_t bytes, float *out, size_t ye)
{
    enum wino_status st = wino_conv2d_run(op, x, y, ws, bytes);
    if (!st && clEnqueueReadBuffer(env->queue, y, CL_TRUE, 0, ye * 4, out, 0, NULL, NULL) !=
                   CL_SUCCESS)
        st = WINO_DEVICE_ERROR;
    return st;
}

/* An operator given new weights by set_weights (on the context's queue) computes what one
 * created with them computes, bit for bit and within the reference's bound; new weights it
 * refuses leave the old ones. */
static void set_weights_case(const struct cl_env *env, struct test_rng *rng)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 6, 11, 9, 5, 3, 3, 1, 1);
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    struct conv_case_data old, cd;
    conv_case_make(&d, &o, rng, 0, &old);
    conv_case_make(&d, &o, rng, 0, &cd);
    const struct wino_context ctx = context_of(env);
    cl_mem x = device_copy(env, cd.x, cd.xe * 4), y = device_copy(env, NULL, cd.ye * 4);
    cl_mem w_old = device_copy(env, old.w, old.we * 4), w = device_copy(env, cd.w, cd.we * 4);
    cl_mem small = device_copy(env, NULL, 4), ws = NULL;
    wino_conv2d *op = NULL, *fresh = NULL;
    size_t bytes = 0;
    float *got = malloc(cd.ye * 4), *want = malloc(cd.ye * 4), *again = malloc(cd.ye * 4);
    enum wino_status st = wino_conv2d_create(&d, w_old, &ctx, &o, &op);
    if (!st)
        st = wino_conv2d_create(&d, w, &ctx, &o, &fresh);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    if (!st)
        ws = device_copy(env, NULL, bytes);
    if (!st)
        st = wino_conv2d_set_weights(op, w, NULL);
    if (!st)
        st = run_read(env, op, x, y, ws, bytes, got, cd.ye);
    if (!st)
        st = run_read(env, fresh, x, y, ws, bytes, want, cd.ye);
    const double err = st ? NAN : wino_rel_l1_f32(got, cd.ref, cd.ye);
    char what[200];
    snprintf(what, sizeof what, "set_weights: rel L1 %.2e against the new weights' reference%s%s",
             err, st ? ": " : "", st ? wino_last_error() : "");
    test_check(&counts, err <= f32_bound(6), what);
    test_check(&counts, !st && !memcmp(got, want, cd.ye * 4),
               "set_weights: the output of an operator created with the new weights, bit for bit");
    expect(wino_conv2d_set_weights(op, cd.w, NULL), WINO_INVALID_ARGUMENT,
           "set_weights with host weights");
    expect(wino_conv2d_set_weights(op, small, NULL), WINO_INVALID_ARGUMENT,
           "set_weights with a buffer too small");
    test_check(&counts, !run_read(env, op, x, y, ws, bytes, again, cd.ye) &&
                            !memcmp(again, got, cd.ye * 4),
               "set_weights refused: the operator keeps its weights");
    wino_conv2d_destroy(op);
    wino_conv2d_destroy(fresh);
    clReleaseMemObject(x), clReleaseMemObject(y), clReleaseMemObject(w_old);
    clReleaseMemObject(w), clReleaseMemObject(small);
    if (ws)
        clReleaseMemObject(ws);
    free(got), free(want), free(again);
    conv_case_free(&old);
    conv_case_free(&cd);
}

static void bad_input(const struct cl_env *env)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 3, 8, 8, 4, 3, 3, 1, 1);
    float host[3 * 8 * 8 * 4] = {0};
    const struct wino_context ctx = context_of(env);
    cl_mem x = device_copy(env, NULL, 4 * 3 * 64), y = device_copy(env, NULL, 4 * 4 * 64);
    cl_mem w = device_copy(env, host, 4 * 4 * 3 * 9), small = device_copy(env, NULL, 4 * 3);
    wino_conv2d *op = NULL;
    expect(wino_conv2d_create(&d, host, &ctx, NULL, &op), WINO_INVALID_ARGUMENT,
           "create with host weights");
    expect(wino_conv2d_create(&d, small, &ctx, NULL, &op), WINO_INVALID_ARGUMENT,
           "create with a weights buffer too small");
    struct wino_context no_queue = ctx;
    no_queue.stream = NULL;
    expect(wino_conv2d_create(&d, w, &no_queue, NULL, &op), WINO_INVALID_ARGUMENT,
           "create without a command queue");
    struct wino_context no_context = ctx;
    no_context.cl_context = NULL;
    expect(wino_conv2d_create(&d, w, &no_context, NULL, &op), WINO_INVALID_ARGUMENT,
           "create without a cl_context");
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_DIRECT;
    expect(wino_conv2d_create(&d, w, &ctx, &o, &op), WINO_UNSUPPORTED, "direct on OpenCL");
    o.algo = WINO_ALGO_WINOGRAD;
    o.tile_m = 9;
    expect(wino_conv2d_create(&d, w, &ctx, &o, &op), WINO_UNSUPPORTED,
           "F(9, 3), not a default tile");
    /* FP16: y holds N K P Q halves; one byte less is refused */
    struct wino_conv2d_desc half = d;
    half.dtype = WINO_DTYPE_F16;
    cl_mem y_short = device_copy(env, NULL, 2 * 4 * 64 - 1);
    expect(wino_conv2d_create(&half, w, &ctx, NULL, &op), WINO_SUCCESS, "FP16 create");
    size_t half_bytes = 0;
    wino_conv2d_workspace_size(op, &half_bytes);
    cl_mem half_ws = device_copy(env, NULL, half_bytes);
    expect(wino_conv2d_run(op, x, y_short, half_ws, half_bytes), WINO_INVALID_ARGUMENT,
           "FP16 run with y one byte short");
    expect(wino_conv2d_run(op, x, y, half_ws, half_bytes), WINO_SUCCESS, "FP16 run");
    clFinish(env->queue);
    wino_conv2d_destroy(op);
    op = NULL;
    clReleaseMemObject(y_short), clReleaseMemObject(half_ws);
    expect(wino_conv2d_backward_data_create(&d, w, &ctx, NULL, &op), WINO_UNSUPPORTED,
           "backward-data on OpenCL");
    expect(wino_conv2d_backward_filter_create(&d, &ctx, NULL, &op), WINO_UNSUPPORTED,
           "backward-filter on OpenCL");

    /* a second context: its queue and buffers are another context's */
    cl_int err = CL_SUCCESS;
    cl_context other = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
    cl_command_queue other_queue = clCreateCommandQueue(other, env->device, 0, &err);
    cl_mem other_x = clCreateBuffer(other, CL_MEM_READ_WRITE, 4 * 3 * 64, NULL, &err);
    struct wino_context mixed = ctx;
    mixed.stream = other_queue;
    expect(wino_conv2d_create(&d, w, &mixed, NULL, &op), WINO_INVALID_ARGUMENT,
           "create with a queue of another context");

    o.tile_m = 0;
    o.variant = WINO_VARIANT_NON_FUSED;
    expect(wino_conv2d_create(&d, w, &ctx, &o, &op), WINO_SUCCESS, "create");
    size_t bytes = 0;
    wino_conv2d_workspace_size(op, &bytes);
    cl_mem ws = device_copy(env, NULL, bytes), ws_small = device_copy(env, NULL, bytes / 2);
    expect(wino_conv2d_run(op, x, y, ws, bytes), WINO_SUCCESS, "run");
    expect(wino_conv2d_run(op, host, y, ws, bytes), WINO_INVALID_ARGUMENT, "run with host x");
    expect(wino_conv2d_run(op, x, host, ws, bytes), WINO_INVALID_ARGUMENT, "run with host y");
    expect(wino_conv2d_run(op, other_x, y, ws, bytes), WINO_INVALID_ARGUMENT,
           "run with x of another context");
    expect(wino_conv2d_run(op, x, y, ws_small, bytes), WINO_INSUFFICIENT_WORKSPACE,
           "run with a workspace buffer too small");
    expect(wino_conv2d_run(op, x, y, NULL, bytes), WINO_INSUFFICIENT_WORKSPACE,
           "run without a workspace");
    expect(wino_conv2d_run(op, y, y, ws, bytes), WINO_INVALID_ARGUMENT, "run with x == y");
    expect(wino_conv2d_run_stream(op, x, y, ws, bytes, NULL), WINO_INVALID_ARGUMENT,
           "run_stream without a queue");
    expect(wino_conv2d_run_stream(op, x, y, ws, bytes, other_queue), WINO_INVALID_ARGUMENT,
           "run_stream on a queue of another context");
    expect(wino_conv2d_set_weights(op, w, other_queue), WINO_INVALID_ARGUMENT,
           "set_weights on a queue of another context");
    clFinish(env->queue);
    wino_conv2d_destroy(op);
    clReleaseMemObject(ws), clReleaseMemObject(ws_small), clReleaseMemObject(other_x);
    clReleaseCommandQueue(other_queue);
    clReleaseContext(other);
    clReleaseMemObject(x), clReleaseMemObject(y), clReleaseMemObject(w);
    clReleaseMemObject(small);
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct cl_env env;
    if (!open_device(&env)) {
        printf(NO_DEVICE);
        return 1;
    }
    printf("device: %s\n", env.name);
    int id = 0;
    random_cases(&env, &rng, &id);
    chunk_cases(&env, &rng, &id);
    reshape_case(&env, &rng);
    set_weights_case(&env, &rng);
    bad_input(&env);
    for (int half = 0; half < 2; half++) {
        printf("largest relative L1 error by alpha, %s:", half ? "FP16" : "FP32");
        for (int a = 3; a <= 10; a++)
            printf(" %d: %.2e", a, worst[half][a]);
        printf("\n");
    }
    close_device(&env);
    return test_report(&counts);
}

#endif
