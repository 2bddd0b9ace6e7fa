/* The OpenCL backend's tuning (src/op/opencl_tuning.h):
 *  - the database: an entry stored is read back; entries of other layers and devices are kept
 *    by a store, a stale one is dropped; another device's entry, a corrupt file and a path that
 *    is not a regular file are never used;
 *  - with a device: create follows an entry (AUTO: its parameters and variant, a variant asked:
 *    its parameters), checked through the parameters the operator reports, and its output
 *    against the FP64 reference; an entry whose parameters the device cannot run, or of
 *    another device, leaves the defaults; entries through every path of the GEMM kernel and
 *    every chunk size, on a layer taken in two chunks;
 *  - AUTO's tile: the tile of the layer's fastest entry (the database's lookup and create);
 *  - the tuner on a small layer within a candidate budget, for one tile and for every tile
 *    (an entry each): AUTO then runs what it stored (the fastest tile's), within test_opencl's
 *    error bound.
 * No check depends on a time. In a build without the OpenCL component the database checks run
 * and the tuner must answer WINO_UNSUPPORTED. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conv_check.h"
#include "op/opencl_tuning.h"
#include "test_util.h"
#include "wino.h"

static struct test_counts counts;
static char dir[64], path[96];

/* Non-default parameters every device of the tests runs: work-groups of 128 and 256 items,
 * under 20 KiB of local memory at alpha 6. */
static const struct wino_opencl_params chosen = {64, 16, 4, 2, 16, 1, 32, 32, 16, 2, 4};

static struct wino_opencl_tuned entry(enum wino_variant variant)
{
    const struct wino_opencl_tuned t = {chosen, variant, 1.5, 0.75};
    return t;
}

static void write_file(const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

static int file_holds(const char *text)
{
    char buf[4096] = "";
    FILE *f = fopen(path, "r");
    const size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static void database(void)
{
    const char *device = "Some GPU / 1.2.3";
    const struct wino_conv2d_desc a = wino_conv2d_desc_make(1, 16, 12, 12, 24, 3, 3, 1, 1),
                                  b = wino_conv2d_desc_make(2, 8, 9, 9, 8, 5, 5, 2, 2);
    struct wino_opencl_tuned stored = entry(WINO_VARIANT_FUSED), got;
    remove(path);
    test_check(&counts, !wino_opencl_tuning_lookup(path, device, &a, 4, &got),
               "a missing database holds no entry");
    test_check(&counts, !wino_opencl_tuning_store(path, device, &a, 4, &stored) &&
                            !wino_opencl_tuning_store(path, device, &b, 2, &stored) &&
                            !wino_opencl_tuning_store(path, "Other / 9", &a, 4, &stored),
               "three entries stored");
    memset(&got, 0, sizeof got);
    test_check(&counts, wino_opencl_tuning_lookup(path, device, &a, 4, &got) &&
                            !memcmp(&got.params, &chosen, sizeof chosen) &&
                            got.variant == WINO_VARIANT_FUSED && got.non_fused_ms == 1.5 &&
                            got.fused_ms == 0.75,
               "an entry read back as stored");
    test_check(&counts, wino_opencl_tuning_lookup(path, device, &b, 2, &got) &&
                            wino_opencl_tuning_lookup(path, "Other / 9", &a, 4, &got),
               "a store keeps the entries of other layers and devices");
    test_check(&counts, !wino_opencl_tuning_lookup(path, "Some GPU / 1.2.4", &a, 4, &got) &&
                            !wino_opencl_tuning_lookup(path, device, &a, 2, &got),
               "another driver version or tile matches no entry");
    stored.variant = WINO_VARIANT_NON_FUSED;
    test_check(&counts, !wino_opencl_tuning_store(path, device, &a, 4, &stored) &&
                            wino_opencl_tuning_lookup(path, device, &a, 4, &got) &&
                            got.variant == WINO_VARIANT_NON_FUSED,
               "a second store of a key replaces its entry");

    /* AUTO's lookup: of the layer's entries, whatever their tile, the one whose variant
     * measured the least (the fused 0.75 ms of entry() against a non-fused 1.5 ms) */
    int m = 0;
    remove(path);
    test_check(&counts, !wino_opencl_tuning_fastest(path, device, &a, &m, &got) && m == 0,
               "no entry: no fastest tile");
    struct wino_opencl_tuned quick = entry(WINO_VARIANT_FUSED), quicker = quick;
    quicker.fused_ms = 0.5;
    test_check(&counts, !wino_opencl_tuning_store(path, device, &a, 4, &stored) &&
                            !wino_opencl_tuning_store(path, device, &a, 2, &quick) &&
                            !wino_opencl_tuning_store(path, device, &b, 3, &quicker) &&
                            !wino_opencl_tuning_store(path, "Other / 9", &a, 5, &quicker),
               "entries of three tiles, two layers and two devices stored");
    test_check(&counts, wino_opencl_tuning_fastest(path, device, &a, &m, &got) && m == 2 &&
                            got.variant == WINO_VARIANT_FUSED && got.fused_ms == 0.75,
               "the fastest tile of the layer on the device: its entry");
    test_check(&counts, !wino_opencl_tuning_store(path, device, &a, 3, &quicker) &&
                            wino_opencl_tuning_fastest(path, device, &a, &m, &got) && m == 3 &&
                            got.fused_ms == 0.5,
               "a faster tile stored: it becomes the fastest");

    /* a stale entry (F(9, 3) has no generated transforms) is ignored and dropped by a store */
    write_file("wino-opencl-tuning 2\n"
               "Some GPU / 1.2.3\t0 0 1 16 12 12 24 3 3 1 1 1 1 1 1 9 2 32 32 4 4 8 1 16 16 16 4 "
               "8 1.0 1.0\n");
    const struct wino_conv2d_desc stale = wino_conv2d_desc_make(1, 16, 12, 12, 24, 3, 3, 1, 1);
    m = 0;
    test_check(&counts, !wino_opencl_tuning_lookup(path, device, &stale, 9, &got) &&
                            !wino_opencl_tuning_fastest(path, device, &stale, &m, &got),
               "a stale entry is not used");
    test_check(&counts, !wino_opencl_tuning_store(path, device, &b, 2, &stored) &&
                            !file_holds(" 9 2 32 32"),
               "a store drops a stale entry");

    /* corrupt files: every entry of one is ignored */
    static const char *const corrupt[] = {
        "wino-opencl-tuning 1\nSome GPU / 1.2.3\t0 0 1 16 12 12 24 3 3 1 1 1 1 1 1 4 2 64 16 4 "
        "2 16 1 32 32 16 2 4 1.5 0.75\n", /* the format before gemm_chunk */
        "wino-opencl-tuning 2\nSome GPU / 1.2.3\t0 0 1 16 12 12 24 3 3 1 1 1 1 1 1 4 2 64 16 4 "
        "2 16 1 32 32 16 2 4 1.5 0.75\ngarbage\n",
        "wino-opencl-tuning 2\nSome GPU / 1.2.3\t0 0 1 16 12 12 24 3 3 1 1 1 1 1 1 4 2 64 16 4 "
        "2 16 1 32 32 16 2 4 1.5", /* cut short */
        "wino-opencl-tuning 2\nSome GPU / 1.2.3 0 0 1 16 12 12 24 3 3 1 1 1 1 1 1 4 2 64 16 4 "
        "2 16 1 32 32 16 2 4 1.5 0.75\n"}; /* no tab after the device */
    for (size_t i = 0; i < sizeof corrupt / sizeof *corrupt; i++) {
        write_file(corrupt[i]);
        char what[80];
        snprintf(what, sizeof what, "corrupt database %zu: no entry used", i);
        test_check(&counts, !wino_opencl_tuning_lookup(path, device, &a, 4, &got), what);
    }
    test_check(&counts, !wino_opencl_tuning_store(path, device, &a, 4, &stored) &&
                            wino_opencl_tuning_lookup(path, device, &a, 4, &got),
               "a store over a corrupt database starts it afresh");
    test_check(&counts, wino_opencl_tuning_store(dir, device, &a, 4, &stored) ==
                                WINO_INVALID_ARGUMENT &&
                            !wino_opencl_tuning_lookup(dir, device, &a, 4, &got),
               "a directory is neither written nor read");
    test_check(&counts, wino_opencl_tuning_store(path, "tab\there", &a, 4, &stored) ==
                            WINO_INVALID_ARGUMENT,
               "a device key with a tab is refused");
}

#ifndef WINO_TEST_OPENCL

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/wino-opencl-tune-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    snprintf(path, sizeof path, "%s/db.txt", dir);
    database();
    int dummy = 0;
    const struct wino_context ctx = {.backend = WINO_BACKEND_OPENCL, .cl_context = &dummy,
                                     .cl_device = &dummy, .stream = &dummy};
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, 6, 6, 2, 3, 3, 1, 1);
    const struct wino_opencl_search search = {0.0, 3, 1};
    struct wino_opencl_tuning result;
    test_check(&counts, wino_opencl_tune(&d, &ctx, 0, &search, &result) == WINO_UNSUPPORTED,
               "a build without the OpenCL component: the tuner answers WINO_UNSUPPORTED");
    remove(path);
    rmdir(dir);
    return test_report(&counts);
}

#else

#include "op/opencl_loader.h"
#include "opencl_env.h"

/* An operator of desc on env (variant asked, ctx's database) run on cd's data: its error
 * against the reference (NaN when a call failed), the parameters and variant it runs. */
static double run_tuned_tile(const struct cl_env *env, const struct wino_context *ctx,
                             const struct wino_conv2d_desc *d, enum wino_variant variant,
                             const struct conv_case_data *cd, struct wino_opencl_params *params,
                             int *tuned, enum wino_variant *used, int *tile_m)
{
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.variant = variant;
    cl_mem x = device_elements(env, d, cd->x, cd->xe), w = device_elements(env, d, cd->w, cd->we);
    cl_mem y = device_elements(env, d, cd->y, cd->ye), ws = NULL;
    float *got = malloc(cd->ye * 4);
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    double err = NAN;
    enum wino_algo algo;
    *tuned = -1;
    if (!wino_conv2d_create(d, w, ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes) &&
        (ws = device_copy(env, NULL, bytes)) && !wino_conv2d_opencl_params(op, params, tuned) &&
        !wino_conv2d_variant(op, used) && !wino_conv2d_algo(op, &algo, tile_m) &&
        !wino_conv2d_run(op, x, y, ws, bytes) && !transfer_elements(env, d, y, got, cd->ye, 0))
        err = wino_rel_l1_f32(got, cd->ref, cd->ye);
    wino_conv2d_destroy(op);
    clReleaseMemObject(x), clReleaseMemObject(w), clReleaseMemObject(y);
    if (ws)
        clReleaseMemObject(ws);
    free(got);
    return err;
}

/* run_tuned_tile without the tile. */
static double run_tuned(const struct cl_env *env, const struct wino_context *ctx,
                        const struct wino_conv2d_desc *d, enum wino_variant variant,
                        const struct conv_case_data *cd, struct wino_opencl_params *params,
                        int *tuned, enum wino_variant *used)
{
    int tile_m;
    return run_tuned_tile(env, ctx, d, variant, cd, params, tuned, used, &tile_m);
}

/* The GEMM's code paths through entries the device runs, non-fused, each on a layer of 9
 * tiles taken 5 at a time (WINO_OPENCL_CHUNK_TILES: two chunks, the second short): runs of 1,
 * 2 and 4 rows and columns per work-item (and two of 4), every staged step, unstaged, every
 * chunk size; float4 loads and stores where C and K are multiples of 4, scalar ones where not. */
static void gemm_paths(const struct cl_env *env, struct test_rng *rng, const char *device)
{
    static const struct wino_opencl_params paths[5] = {
        {16, 16, 1, 1, 4, 1, 8, 16, 16, 4, 8},     /* scalar loads */
        {16, 128, 1, 8, 8, 0, 32, 16, 16, 4, 8},   /* scalar, unstaged, stores of 4 cropped */
        {32, 64, 2, 8, 16, 1, 16, 16, 16, 4, 8},   /* float4 */
        {64, 32, 8, 2, 32, 1, 64, 16, 16, 4, 8},   /* float4 */
        {32, 32, 4, 4, 8, 0, 128, 16, 16, 4, 8}};  /* float4, unstaged */
    struct wino_context ctx = context_of(env);
    ctx.tuning_cache = path;
    setenv("WINO_OPENCL_CHUNK_TILES", "5", 1);
    for (int i = 0; i < 5; i++) {
        const int vec = i >= 2;
        struct wino_conv2d_desc d =
            wino_conv2d_desc_make(1, vec ? 16 : 13, 12, 12, vec ? 24 : 10, 3, 3, 1, 1);
        d.layout = i % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        struct wino_conv2d_options none;
        memset(&none, 0, sizeof none);
        struct conv_case_data cd;
        conv_case_make(&d, &none, rng, 0, &cd);
        const struct wino_opencl_tuned entry_i = {paths[i], WINO_VARIANT_NON_FUSED, 1.0, 1.0};
        struct wino_opencl_params params;
        int tuned = -1;
        enum wino_variant used = WINO_VARIANT_AUTO;
        remove(path);
        const double err =
            wino_opencl_tuning_store(path, device, &d, 4, &entry_i)
                ? NAN
                : run_tuned(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used);
        const struct wino_opencl_params *p = &paths[i];
        char what[200];
        snprintf(what, sizeof what,
                 "GEMM %dx%d/%dx%d bk%d %s chunk %d MiB, C %d K %d, 2 chunks: rel L1 %.2e",
                 p->gemm_bm, p->gemm_bn, p->gemm_rm, p->gemm_rn, p->gemm_bk,
                 p->gemm_local ? "staged" : "unstaged", p->gemm_chunk, d.c, d.k, err);
        test_check(&counts, err <= f32_bound(6) && tuned == 1 &&
                                !memcmp(&params, p, sizeof params) &&
                                used == WINO_VARIANT_NON_FUSED,
                   what);
        conv_case_free(&cd);
    }
    unsetenv("WINO_OPENCL_CHUNK_TILES");
}

/* create follows the database: the entry's parameters and, for AUTO, its variant; an entry of
 * another device, or with parameters the device cannot run, leaves the defaults. */
static void create_follows(const struct cl_env *env, struct test_rng *rng)
{
    struct wino_context ctx = context_of(env);
    char device[400];
    if (wino_opencl_component()->device_key(&ctx, device, sizeof device)) {
        test_check(&counts, 0, wino_last_error());
        return;
    }
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 16, 12, 12, 24, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    struct wino_conv2d_options none;
    memset(&none, 0, sizeof none);
    struct conv_case_data cd;
    conv_case_make(&d, &none, rng, 0, &cd);
    struct wino_opencl_params defaults, params;
    int tuned = -1;
    enum wino_variant used = WINO_VARIANT_AUTO;
    double err = run_tuned(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &defaults, &tuned, &used);
    test_check(&counts, err <= f32_bound(6) && !tuned && used == WINO_VARIANT_NON_FUSED,
               "no database: the defaults, non-fused");

    ctx.tuning_cache = path;
    const struct wino_opencl_tuned fused = entry(WINO_VARIANT_FUSED);
    remove(path);
    test_check(&counts, !wino_opencl_tuning_store(path, device, &d, 4, &fused), "entry stored");
    static const enum wino_variant asked[3] = {WINO_VARIANT_AUTO, WINO_VARIANT_NON_FUSED,
                                               WINO_VARIANT_FUSED};
    static const char *const names[3] = {"AUTO", "non-fused", "fused"};
    for (int i = 0; i < 3; i++) {
        err = run_tuned(env, &ctx, &d, asked[i], &cd, &params, &tuned, &used);
        char what[160];
        snprintf(what, sizeof what, "%s with an entry: its parameters, %s, rel L1 %.2e", names[i],
                 i ? "the variant asked" : "its variant", err);
        test_check(&counts, err <= f32_bound(6) && tuned == 1 &&
                                !memcmp(&params, &chosen, sizeof chosen) &&
                                used == (i ? asked[i] : WINO_VARIANT_FUSED),
                   what);
    }

    /* AUTO takes the tile of the fastest entry, a tile asked its own entry */
    remove(path);
    const struct wino_opencl_tuned slow = entry(WINO_VARIANT_NON_FUSED);
    int tile_m = 0;
    test_check(&counts, !wino_opencl_tuning_store(path, device, &d, 4, &slow) &&
                            !wino_opencl_tuning_store(path, device, &d, 2, &fused),
               "entries of F(4, 3) at 1.5 ms and F(2, 3) at 0.75 ms stored");
    err = run_tuned_tile(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used, &tile_m);
    char what_tile[160];
    snprintf(what_tile, sizeof what_tile, "AUTO with entries of two tiles: the faster, F(%d, 3), "
             "fused, rel L1 %.2e", tile_m, err);
    test_check(&counts, err <= f32_bound(4) && tuned == 1 && tile_m == 2 &&
                            used == WINO_VARIANT_FUSED,
               what_tile);

    /* never trusted: another device's entry, parameters the device cannot run */
    remove(path);
    test_check(&counts, !wino_opencl_tuning_store(path, "Other device / 0.0", &d, 4, &fused),
               "foreign entry stored");
    err = run_tuned(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used);
    test_check(&counts, err <= f32_bound(6) && !tuned && used == WINO_VARIANT_NON_FUSED &&
                            !memcmp(&params, &defaults, sizeof params),
               "another device's entry: the defaults");
    static const struct wino_opencl_params unusable[4] = {
        {48, 32, 4, 4, 8, 1, 16, 16, 16, 4, 8},   /* 48: not a listed tile */
        {128, 128, 1, 1, 8, 0, 16, 16, 16, 4, 8}, /* work-groups of 16384 */
        {32, 32, 4, 4, 8, 1, 16, 16, 16, 8, 8},   /* 8 x 36 accumulators per work-item */
        {32, 32, 4, 4, 8, 1, 24, 16, 16, 4, 8}};  /* 24 MiB: not a listed chunk */
    for (int i = 0; i < 4; i++) {
        struct wino_opencl_tuned bad = fused;
        bad.params = unusable[i];
        remove(path);
        wino_opencl_tuning_store(path, device, &d, 4, &bad);
        err = run_tuned(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used);
        char what[120];
        snprintf(what, sizeof what, "an entry with unusable parameters %d: the defaults", i);
        test_check(&counts, err <= f32_bound(6) && !tuned && used == WINO_VARIANT_NON_FUSED &&
                                !memcmp(&params, &defaults, sizeof params),
                   what);
    }
    conv_case_free(&cd);
    gemm_paths(env, rng, device);
}

/* The tuner within a budget of four candidates on a small layer: what it stores, AUTO runs,
 * and its output is right. */
static void tuner(const struct cl_env *env, struct test_rng *rng)
{
    struct wino_context ctx = context_of(env);
    ctx.tuning_cache = path;
    char device[400];
    if (wino_opencl_component()->device_key(&ctx, device, sizeof device)) {
        test_check(&counts, 0, wino_last_error());
        return;
    }
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 10, 10, 16, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    const struct wino_opencl_search search = {0.0, 4, 2};
    struct wino_opencl_tuning result;
    remove(path);
    const enum wino_status st = wino_opencl_tune(&d, &ctx, 4, &search, &result);
    char what[200];
    snprintf(what, sizeof what,
             "tuner, F(4, 3): %d timed, %d refused of %d candidates (budget 4), best %s%s%s",
             result.candidates, result.refused, result.space,
             result.best.variant == WINO_VARIANT_FUSED ? "fused" : "non-fused", st ? ": " : "",
             st ? wino_last_error() : "");
    test_check(&counts, !st && result.candidates + result.refused == 4 &&
                            result.candidates >= 1 && result.space > 4 && result.tile_m == 4 &&
                            !result.tiles,
               what);
    struct wino_conv2d_options none;
    memset(&none, 0, sizeof none);
    struct conv_case_data cd;
    conv_case_make(&d, &none, rng, 0, &cd);
    struct wino_opencl_params params;
    int tuned = -1;
    enum wino_variant used = WINO_VARIANT_AUTO;
    double err = run_tuned(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used);
    snprintf(what, sizeof what, "AUTO runs the tuner's choice: rel L1 %.2e", err);
    test_check(&counts, err <= f32_bound(6) && tuned == 1 && used == result.best.variant &&
                            !memcmp(&params, &result.best.params, sizeof params),
               what);

    /* the tile searched too: an entry per tile served (F(2..8, 3)), AUTO runs the fastest */
    const struct wino_opencl_search three = {0.0, 3, 1};
    remove(path);
    const enum wino_status tiles_st = wino_opencl_tune(&d, &ctx, 0, &three, &result);
    int entries = 0, fastest_m = 0, tile_m = 0;
    struct wino_opencl_tuned got;
    for (int m = 2; m <= 8; m++)
        entries += wino_opencl_tuning_lookup(path, device, &d, m, &got);
    snprintf(what, sizeof what, "tuner, every tile: %d tiles timed, %d entries, the fastest "
             "F(%d, 3)%s%s", result.tiles, entries, result.tile_m, tiles_st ? ": " : "",
             tiles_st ? wino_last_error() : "");
    test_check(&counts, !tiles_st && result.tiles == 7 && entries == 7 &&
                            wino_opencl_tuning_fastest(path, device, &d, &fastest_m,
                                                       &got) &&
                            fastest_m == result.tile_m &&
                            !memcmp(&got.params, &result.best.params, sizeof got.params),
               what);
    err = run_tuned_tile(env, &ctx, &d, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used, &tile_m);
    snprintf(what, sizeof what, "AUTO runs the fastest tile, F(%d, 3): rel L1 %.2e", tile_m, err);
    test_check(&counts, err <= f32_bound(tile_m + 2) && tuned == 1 && tile_m == result.tile_m &&
                            used == result.best.variant &&
                            !memcmp(&params, &result.best.params, sizeof params),
               what);
    conv_case_free(&cd);

    /* FP16: an entry of its own (the key holds the dtype), which AUTO then runs */
    struct wino_conv2d_desc half = d;
    half.dtype = WINO_DTYPE_F16;
    conv_case_make(&half, &none, rng, 0, &cd);
    const enum wino_status half_st = wino_opencl_tune(&half, &ctx, 4, &search, &result);
    struct wino_opencl_tuned half_entry, f32_entry;
    err = run_tuned(env, &ctx, &half, WINO_VARIANT_AUTO, &cd, &params, &tuned, &used);
    snprintf(what, sizeof what, "FP16 tuned: its own entry, AUTO runs it: rel L1 %.2e%s%s", err,
             half_st ? ": " : "", half_st ? wino_last_error() : "");
    test_check(&counts, !half_st && err <= F16_BOUND && tuned == 1 &&
                            wino_opencl_tuning_lookup(path, device, &half, 4, &half_entry) &&
                            wino_opencl_tuning_lookup(path, device, &d, 4, &f32_entry) &&
                            !memcmp(&params, &half_entry.params, sizeof params),
               what);
    conv_case_free(&cd);

    const struct wino_opencl_search no_reps = {0.0, 4, 0};
    struct wino_conv2d_desc strided = d;
    strided.stride_h = strided.stride_w = 2;
    test_check(&counts, wino_opencl_tune(&d, &ctx, 0, &no_reps, &result) ==
                                WINO_INVALID_ARGUMENT &&
                            wino_opencl_tune(&strided, &ctx, 0, &search, &result) ==
                                WINO_UNSUPPORTED,
               "the tuner refuses reps 0 and stride 2");
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct cl_env env;
    snprintf(dir, sizeof dir, "/tmp/wino-opencl-tune-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    snprintf(path, sizeof path, "%s/db.txt", dir);
    database();
    if (!open_device(&env)) {
        printf(NO_DEVICE);
        return 1;
    }
    printf("device: %s\n", env.name);
    create_follows(&env, &rng);
    tuner(&env, &rng);
    close_device(&env);
    remove(path);
    rmdir(dir);
    return test_report(&counts);
}

#endif
