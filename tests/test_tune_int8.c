/* INT8 tuning: wino_tune times the CPU's INT8 candidates and records the fastest under the INT8
 * ISA; wino_conv2d_create_int8 with AUTO follows a valid entry (direct, or Winograd with its
 * tile), computing the same bytes as the operator created explicitly, and wino_int8_auto_choice
 * answers what it takes; stale INT8 entries are reported by the check and ignored. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/gemm_s8.h"
#include "test_util.h"
#include "wino.h"

/* An NHWC INT8 layer with inputs of type dtype. */
static struct wino_conv2d_desc int8_layer(int c, int hw, int k, int r, int pad, int stride,
                                          enum wino_dtype dtype)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, c, hw, hw, k, r, r, pad, pad);
    d.stride_h = d.stride_w = stride;
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = dtype;
    return d;
}

/* Parameters that every tile and direct take for the layers here (alpha_ta >= x_scale). */
static const struct wino_int8_params params = {
    .x_scale = 0.02f, .alpha_ta = 4.0f, .alpha_tw = 0.5f, .y_scale = 0.05f,
    .y_dtype = WINO_DTYPE_S8};

/* The cache line of d (3x3, stride and padding as given) with isa, threads and the choice
 * "ALGO M VARIANT", into line. */
static void entry_line(char *line, size_t cap, int isa, int threads,
                       const struct wino_conv2d_desc *d, const char *choice)
{
    snprintf(line, cap, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %s 0.5\n", isa,
             threads, (int)d->dtype, (int)d->layout, d->n, d->c, d->h, d->w, d->k, d->r, d->s,
             d->pad_h, d->pad_w, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w, choice);
}

/* Writes a cache of one entry; 1 on success. */
static int write_cache(const char *path, int isa, int threads, const struct wino_conv2d_desc *d,
                       const char *choice)
{
    char text[512] = "wino-tuning-cache 1\n";
    entry_line(text + strlen(text), sizeof text - strlen(text), isa, threads, d, choice);
    return test_write_file(path, text);
}

/* What create_int8 (options NULL: AUTO) builds for d with ctx into *algo and *m, and whether
 * wino_int8_auto_choice answers the same; 0 when either fails. */
static int created_choice(const struct wino_conv2d_desc *d, const struct wino_context *ctx,
                          const float *w, enum wino_algo *algo, int *m)
{
    wino_conv2d *op = NULL;
    enum wino_algo answered;
    int answered_m;
    const int ok = wino_conv2d_create_int8(d, w, &params, ctx, NULL, &op) == WINO_SUCCESS &&
                   wino_conv2d_algo(op, algo, m) == WINO_SUCCESS &&
                   wino_int8_auto_choice(d, ctx, &answered, &answered_m) == WINO_SUCCESS &&
                   answered == *algo && answered_m == *m;
    wino_conv2d_destroy(op);
    return ok;
}

/* Runs op on x into y (poisoned first); 0 on failure. */
static int run(wino_conv2d *op, const unsigned char *x, signed char *y, size_t y_bytes)
{
    size_t bytes = 0;
    void *ws = NULL;
    memset(y, 0x7f, y_bytes);
    int ok = wino_conv2d_workspace_size(op, &bytes) == WINO_SUCCESS &&
             (ws = test_alloc64(bytes ? bytes : 64)) != NULL &&
             wino_conv2d_run(op, x, y, ws, bytes) == WINO_SUCCESS;
    free(ws);
    return ok;
}

/* The operator AUTO creates from the cache computes the same bytes as the one created with the
 * cache's algorithm and tile explicitly. */
static int same_bytes(const struct wino_conv2d_desc *d, const struct wino_context *ctx,
                      const float *w, struct test_rng *rng, enum wino_algo algo, int m)
{
    int p, q;
    wino_conv2d_output_size(d, &p, &q);
    const size_t xn = (size_t)d->n * d->h * d->w * d->c, yn = (size_t)d->n * p * q * d->k;
    unsigned char *x = malloc(xn);
    signed char *y_auto = malloc(yn), *y_explicit = malloc(yn);
    const struct wino_conv2d_options explicit = {.algo = algo, .tile_m = m};
    const struct wino_context plain = {.threads = ctx->threads};
    wino_conv2d *a = NULL, *e = NULL;
    int ok = x && y_auto && y_explicit;
    for (size_t i = 0; ok && i < xn; i++)
        x[i] = (unsigned char)test_rng_next(rng);
    ok = ok && wino_conv2d_create_int8(d, w, &params, ctx, NULL, &a) == WINO_SUCCESS &&
         wino_conv2d_create_int8(d, w, &params, &plain, &explicit, &e) == WINO_SUCCESS &&
         run(a, x, y_auto, yn) && run(e, x, y_explicit, yn) && !memcmp(y_auto, y_explicit, yn);
    wino_conv2d_destroy(a);
    wino_conv2d_destroy(e);
    free(x), free(y_auto), free(y_explicit);
    return ok;
}

/* wino_tune on S8 and U8 layers (3x3 stride 1, 3x3 stride 2, 1x1) writes entries that the
 * check accepts and create_int8 follows. */
static void tune_layers(struct test_counts *c, const char *path, const float *w)
{
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    int ok = 1, followed = 1;
    for (int u8 = 0; u8 < 2; u8++) {
        const enum wino_dtype t = u8 ? WINO_DTYPE_U8 : WINO_DTYPE_S8;
        const struct wino_conv2d_desc layers[] = {int8_layer(8, 10, 8, 3, 1, 1, t),
                                                  int8_layer(8, 11, 8, 3, 1, 2, t),
                                                  int8_layer(8, 10, 8, 1, 0, 1, t)};
        for (int i = 0; i < 3; i++) {
            struct wino_tuning_choice choice;
            const int winograd_shape = i == 0;
            const int valid =
                wino_tune(&layers[i], &ctx, 2, &choice) == WINO_SUCCESS && choice.ms >= 0.0 &&
                choice.variant == WINO_VARIANT_AUTO &&
                ((choice.algo == WINO_ALGO_DIRECT && choice.tile_m == 0) ||
                 (winograd_shape && choice.algo == WINO_ALGO_WINOGRAD &&
                  (choice.tile_m == 2 || choice.tile_m == 4 || choice.tile_m == 6)));
            if (!valid)
                printf("  %s layer %d: %s\n", u8 ? "U8" : "S8", i, wino_last_error());
            ok &= valid;
            enum wino_algo algo;
            int m;
            followed &= created_choice(&layers[i], &ctx, w, &algo, &m) &&
                        algo == choice.algo && m == choice.tile_m;
        }
    }
    test_check(c, ok, "wino_tune measures valid INT8 choices (S8, U8; 3x3, stride 2, 1x1)");
    test_check(c, wino_tuning_cache_check(path) == WINO_SUCCESS && test_count_lines(path) == 7,
               "the cache it wrote holds six valid entries");
    test_check(c, followed, "create_int8 AUTO and wino_int8_auto_choice follow them");
    remove(path);
}

/* Hand-written entries: direct and tile 2 for a 3x3 layer are followed, with the same bytes as
 * the explicit operators; entries of another ISA or thread count are not. */
static void follow_entries(struct test_counts *c, const char *path, const float *w,
                           struct test_rng *rng)
{
    const struct wino_conv2d_desc d = int8_layer(8, 10, 8, 3, 1, 1, WINO_DTYPE_S8);
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    const int isa = (int)wino_s8_isa();
    enum wino_algo algo;
    int m;
    wino_conv2d *op = NULL;
    int ok = write_cache(path, isa, 1, &d, "1 0 0") &&
             wino_tuning_cache_check(path) == WINO_SUCCESS &&
             created_choice(&d, &ctx, w, &algo, &m) && algo == WINO_ALGO_DIRECT && m == 0;
    test_check(c, ok, "an entry saying direct makes AUTO build direct for a 3x3 layer");
    ok = wino_conv2d_create_int8(&d, w, &params, &ctx, NULL, &op) == WINO_SUCCESS &&
         strstr(wino_conv2d_reason(op), "tuning cache");
    wino_conv2d_destroy(op);
    test_check(c, ok, "wino_conv2d_reason says the tuning cache chose it");
    test_check(c, same_bytes(&d, &ctx, w, rng, WINO_ALGO_DIRECT, 0),
               "it computes the bytes of the explicit direct operator");

    ok = write_cache(path, isa, 1, &d, "2 2 0") && wino_tuning_cache_check(path) == WINO_SUCCESS &&
         created_choice(&d, &ctx, w, &algo, &m) && algo == WINO_ALGO_WINOGRAD && m == 2;
    test_check(c, ok, "an entry naming tile 2 makes AUTO take m = 2");
    test_check(c, same_bytes(&d, &ctx, w, rng, WINO_ALGO_WINOGRAD, 2),
               "it computes the bytes of the explicit F(2x2, 3x3) operator");

    /* valid entries of another key: the INT8 ISA is the key, and the thread count */
    ok = write_cache(path, (isa + 1) % 4, 1, &d, "1 0 0") &&
         wino_tuning_cache_check(path) == WINO_SUCCESS &&
         created_choice(&d, &ctx, w, &algo, &m) && algo == WINO_ALGO_WINOGRAD && m == 4;
    ok &= write_cache(path, isa, 2, &d, "1 0 0") &&
          created_choice(&d, &ctx, w, &algo, &m) && algo == WINO_ALGO_WINOGRAD && m == 4;
    test_check(c, ok, "entries of another INT8 ISA or thread count are not followed");

    /* options that fix anything leave the cache alone */
    const struct wino_conv2d_options tile6 = {.algo = WINO_ALGO_AUTO, .tile_m = 6};
    ok = write_cache(path, isa, 1, &d, "1 0 0") &&
         wino_conv2d_create_int8(&d, w, &params, &ctx, &tile6, &op) == WINO_SUCCESS &&
         wino_conv2d_algo(op, &algo, &m) == WINO_SUCCESS && algo == WINO_ALGO_WINOGRAD && m == 6;
    wino_conv2d_destroy(op);
    test_check(c, ok, "AUTO with a tile given ignores the cache");
    remove(path);
}

/* Stale INT8 entries are reported by the check and ignored by create and auto_choice. */
static void stale_entries(struct test_counts *c, const char *path, const float *w)
{
    const struct wino_conv2d_desc d3 = int8_layer(8, 10, 8, 3, 1, 1, WINO_DTYPE_U8),
                                  d_s2 = int8_layer(8, 11, 8, 3, 1, 2, WINO_DTYPE_U8);
    struct wino_conv2d_desc nchw = d3;
    nchw.layout = WINO_LAYOUT_NCHW;
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    const int isa = (int)wino_s8_isa();
    static const struct {
        int layer; /* 0: 3x3 stride 1, 1: stride 2, 2: NCHW */
        int isa;   /* -1: wino_s8_isa() */
        const char *choice, *what;
    } stale[] = {
        {1, -1, "2 4 0", "Winograd for a stride-2 layer"},
        {0, -1, "2 3 0", "tile 3"},
        {0, -1, "2 5 0", "tile 5"},
        {0, -1, "2 8 0", "tile 8"},
        {0, -1, "2 4 2", "a variant (FUSED)"},
        {0, -1, "2 4 1", "a variant (NON_FUSED)"},
        {0, -1, "1 4 0", "direct with a tile"},
        {0, -1, "1 0 2", "direct with a variant"},
        {0, 4, "1 0 0", "INT8 ISA 4"},
        {0, -2, "1 0 0", "INT8 ISA -1"},
        {2, -1, "1 0 0", "an NCHW layer"},
    };
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        const struct wino_conv2d_desc *d = stale[i].layer == 0   ? &d3
                                           : stale[i].layer == 1 ? &d_s2
                                                                 : &nchw;
        const int entry_isa = stale[i].isa == -1 ? isa : stale[i].isa == -2 ? -1 : stale[i].isa;
        enum wino_algo algo;
        int m;
        int ok = write_cache(path, entry_isa, 1, d, stale[i].choice) &&
                 wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
                 strstr(wino_last_error(), "line 2") && strstr(wino_last_error(), "stale");
        if (stale[i].layer == 0)
            ok = ok && created_choice(d, &ctx, w, &algo, &m) && algo == WINO_ALGO_WINOGRAD &&
                 m == 4;
        if (stale[i].layer == 1)
            ok = ok && created_choice(d, &ctx, w, &algo, &m) && algo == WINO_ALGO_DIRECT &&
                 m == 0;
        char what[128];
        snprintf(what, sizeof what, "a stale INT8 entry (%s) is reported and ignored",
                 stale[i].what);
        test_check(c, ok, what);
        if (!ok)
            printf("  %s\n", wino_last_error());
    }
    /* the INT8 ISA 3 (AMX) is no FP32 ISA */
    struct wino_conv2d_desc f32 = wino_conv2d_desc_make(1, 8, 10, 10, 8, 3, 3, 1, 1);
    test_check(c, write_cache(path, 3, 1, &f32, "1 0 0") &&
                      wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
                      strstr(wino_last_error(), "ISA"),
               "ISA 3 is refused on an FP32 line");
    remove(path);
}

/* Bad input gives a status and a message. */
static void bad_input(struct test_counts *c, const char *path)
{
    const struct wino_conv2d_desc d = int8_layer(8, 10, 8, 3, 1, 1, WINO_DTYPE_S8);
    struct wino_conv2d_desc nchw = d, f16 = d, huge = int8_layer(140000, 3, 1, 3, 1, 1,
                                                                 WINO_DTYPE_S8);
    nchw.layout = WINO_LAYOUT_NCHW;
    f16.dtype = WINO_DTYPE_F16;
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    const struct wino_context cuda = {.threads = 1, .backend = WINO_BACKEND_CUDA};
    const struct wino_context opencl = {.threads = 1, .backend = WINO_BACKEND_OPENCL};
    enum wino_algo algo;
    int m;
#define FAILS(call, status) ((call) == (status) && wino_last_error()[0])
#define REFUSED(call) ((call) != WINO_SUCCESS && wino_last_error()[0])
    test_check(c, FAILS(wino_tune(&d, &ctx, 0, NULL), WINO_INVALID_ARGUMENT), "reps 0");
    test_check(c, REFUSED(wino_tune(&d, &cuda, 1, NULL)) && REFUSED(wino_tune(&d, &opencl, 1,
                                                                               NULL)),
               "an INT8 layer on the CUDA or OpenCL backend");
    test_check(c, FAILS(wino_tune(&nchw, &ctx, 1, NULL), WINO_UNSUPPORTED) &&
                      FAILS(wino_tune(&f16, &ctx, 1, NULL), WINO_UNSUPPORTED),
               "an INT8 layer in NCHW, an FP16 layer");
    test_check(c, FAILS(wino_tune(&huge, &ctx, 1, NULL), WINO_UNSUPPORTED) &&
                      strstr(wino_last_error(), "no candidate"),
               "a layer no INT8 candidate can run (C beyond the int32 bounds)");
    test_check(c, FAILS(wino_int8_auto_choice(NULL, &ctx, &algo, &m), WINO_INVALID_ARGUMENT) &&
                      FAILS(wino_int8_auto_choice(&d, &ctx, NULL, &m), WINO_INVALID_ARGUMENT) &&
                      FAILS(wino_int8_auto_choice(&d, &ctx, &algo, NULL),
                            WINO_INVALID_ARGUMENT) &&
                      FAILS(wino_int8_auto_choice(&f16, &ctx, &algo, &m),
                            WINO_INVALID_ARGUMENT) &&
                      FAILS(wino_int8_auto_choice(&nchw, &ctx, &algo, &m), WINO_UNSUPPORTED) &&
                      REFUSED(wino_int8_auto_choice(&d, &opencl, &algo, &m)),
               "wino_int8_auto_choice: NULL, FP16, NCHW, OpenCL");
    test_check(c, wino_int8_auto_choice(&d, NULL, &algo, &m) == WINO_SUCCESS &&
                      algo == WINO_ALGO_WINOGRAD && m == 4,
               "wino_int8_auto_choice without a context: the shape rule");
#undef FAILS
#undef REFUSED
    remove(path);
}

/* A tile that calibrated weights take beyond its int32 bound is never the tuner's choice:
 * F(6,3) with 128 channels, refused after wino_int8_calibrate, is not named (each of 3 tunes). */
static void no_tile_real_weights_refuse(struct test_counts *c, const char *path,
                                        struct test_rng *rng)
{
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    struct wino_conv2d_desc d = int8_layer(128, 12, 8, 3, 1, 1, WINO_DTYPE_U8);
    struct wino_conv2d_desc f32 = d;
    f32.dtype = WINO_DTYPE_F32;
    const size_t wn = (size_t)d.k * 9 * d.c, xn = (size_t)d.h * d.w * d.c;
    float *w = malloc(sizeof(float) * wn), *x = malloc(sizeof(float) * xn);
    int ok = w && x;
    for (size_t i = 0; ok && i < wn; i++)
        w[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; ok && i < xn; i++)
        x[i] = (float)(0.5 + 0.5 * test_rng_sym(rng));
    struct wino_int8_params calibrated;
    const struct wino_conv2d_options f6 = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 6};
    wino_conv2d *op = NULL;
    ok = ok &&
         wino_int8_calibrate(&f32, 6, x, w, NULL, 0, 0.0f, WINO_CALIBRATE_PERCENTILE, 99.9,
                             &calibrated) == WINO_SUCCESS &&
         wino_conv2d_create_int8(&d, w, &calibrated, &ctx, &f6, &op) == WINO_UNSUPPORTED;
    wino_conv2d_destroy(op);
    for (int t = 0; ok && t < 3; t++) {
        struct wino_tuning_choice choice;
        ok = wino_tune(&d, &ctx, 1, &choice) == WINO_SUCCESS && choice.tile_m != 6;
    }
    test_check(c, ok, "a tile that calibrated weights overflow (F(6,3), C = 128) is never tuned");
    free(w), free(x);
    remove(path);
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct test_counts c = {0, 0};
    char path[] = "/tmp/wino-tune-int8-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    remove(path);
    float w[8 * 9 * 8]; /* K x R x S x C of the layers here */
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        w[i] = (float)(0.3 * test_rng_sym(&rng));
    tune_layers(&c, path, w);
    no_tile_real_weights_refuse(&c, path, &rng);
    follow_entries(&c, path, w, &rng);
    stale_entries(&c, path, w);
    bad_input(&c, path);
    return test_report(&c);
}
