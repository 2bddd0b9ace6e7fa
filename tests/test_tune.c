/* Tuning: wino_tune measures and records a choice, create() follows a matching cache entry, and
 * a missing, stale or corrupt cache, or a path that is not a regular file, is reported by the
 * check and ignored by create(). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, posix_memalign in conv_check.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conv_check.h"
#include "cpu/gemm_f32.h"

static const struct wino_context one_thread = {.threads = 1};

/* The tile create() picks for d with ctx (-1 when create fails). */
static int chosen_tile(const struct wino_conv2d_desc *d, const struct wino_context *ctx)
{
    static const float w[8 * 8 * 9];
    wino_conv2d *op = NULL;
    enum wino_algo algo;
    int m = -1;
    if (wino_conv2d_create(d, w, ctx, NULL, &op) || wino_conv2d_algo(op, &algo, &m))
        m = -1;
    wino_conv2d_destroy(op);
    return m;
}

/* Defect: a well-formed entry that wino_tune cannot write was followed (F(14x14, 3x3)). */
static void stale_entries(struct test_counts *c, const char *path)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    const struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    const int isa = (int)wino_cpu_isa(), plain = chosen_tile(&d, &one_thread);
    /* "%d %d DTYPE LAYOUT" + the layer + choice, with the ISA and threads of ctx */
    static const struct {
        const char *entry, *what;
    } stale[] = {
        {"%d %d 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 14 1 0.5\n", "F(14x14, 3x3)"},
        {"%d %d 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 7 2 0.5\n", "m = 7 (generated, not tuned)"},
        {"%d %d 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 4 0 0.5\n", "Winograd without a variant"},
        {"%d %d 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 4 0 0.5\n", "direct with a tile"},
        {"%d %d 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 2 0.5\n", "direct with a variant"},
    };
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        char text[512], what[128];
        snprintf(text, sizeof text, "wino-tuning-cache 1\n");
        snprintf(text + strlen(text), sizeof text - strlen(text), stale[i].entry, isa, 1);
        int ok = test_write_file(path, text) &&
                 wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
                 strstr(wino_last_error(), "line 2") && strstr(wino_last_error(), "stale");
        ok = ok && chosen_tile(&d, &ctx) == plain;
        snprintf(what, sizeof what, "a stale entry (%s) is reported and ignored", stale[i].what);
        test_check(c, ok, what);
        if (!ok)
            printf("  %s\n", wino_last_error());
    }
    /* entries create() can never match: reported too */
    static const char *const unusable[] = {
        "7 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",       /* unknown ISA */
        "2 0 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",       /* threads 0 */
        "2 1025 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",    /* threads > maximum */
        "2 1 1 1 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",       /* FP16: not tuned */
        "2 1 2 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",       /* INT8 in NCHW */
        "2 1 0 0 0 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n",       /* N = 0 */
        "2 1 0 0 1 8 13 11 6 3 3 1 1 2 2 1 1 2 4 1 0.5\n",       /* Winograd with stride 2 */
        "2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 inf\n",       /* infinite time */
        "2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n"
        "2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 4 1 0.5\n",       /* the same layer twice */
        "2 1 0 0 99999999999 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.5\n", /* N beyond int */
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof unusable / sizeof unusable[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "wino-tuning-cache 1\n%s", unusable[i]);
        const int bad = test_write_file(path, text) &&
                        wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT;
        if (!bad)
            printf("  accepted: %s", unusable[i]);
        ok &= bad;
    }
    test_check(c, ok, "entries create() cannot use are reported");

    /* what wino_tune writes passes, and create() follows it */
    char text[512];
    snprintf(text, sizeof text, "wino-tuning-cache 1\n"
                                "%d 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 6 1 0.5\n"
                                "%d 1 0 1 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.25\n",
             isa, isa);
    test_check(c, test_write_file(path, text) && wino_tuning_cache_check(path) == WINO_SUCCESS &&
                      chosen_tile(&d, &ctx) == 6,
               "valid entries pass the check and are followed");

    /* wino_tune keeps the valid entries of other layers and drops the stale ones */
    snprintf(text, sizeof text, "wino-tuning-cache 1\n"
                                "%d 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 14 1 0.5\n"
                                "%d 1 0 1 1 8 13 11 6 3 3 1 1 1 1 1 1 1 0 0 0.25\n",
             isa, isa);
    struct wino_conv2d_desc d2 = d;
    d2.k = 5;
    ok = test_write_file(path, text) && wino_tune(&d2, &ctx, 1, NULL) == WINO_SUCCESS &&
         wino_tuning_cache_check(path) == WINO_SUCCESS;
    const int lines = test_count_lines(path);
    test_check(c, ok && lines == 3, "wino_tune drops stale entries and keeps valid ones");
    remove(path);
}

/* Defect: a FIFO given as the tuning cache blocked every open of it. */
static void not_regular_files(struct test_counts *c, const char *path)
{
    char fifo[256], sub[256];
    snprintf(fifo, sizeof fifo, "%s.fifo", path);
    snprintf(sub, sizeof sub, "%s.dir", path);
    if (mkfifo(fifo, 0600) || mkdir(sub, 0700)) {
        test_check(c, 0, "mkfifo and mkdir");
        return;
    }
    alarm(60); /* a blocking open ends the test here instead of hanging it */
    test_check(c, wino_tuning_cache_check(fifo) == WINO_INVALID_ARGUMENT &&
                      strstr(wino_last_error(), "regular file"),
               "the check refuses a FIFO at once");
    test_check(c, wino_tuning_cache_check(sub) == WINO_INVALID_ARGUMENT,
               "the check refuses a directory");
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    const struct wino_context ctx = {.threads = 1, .tuning_cache = fifo};
    test_check(c, chosen_tile(&d, &ctx) == chosen_tile(&d, &one_thread),
               "create() ignores a FIFO as its tuning cache");
    struct stat st;
    test_check(c, wino_tune(&d, &ctx, 1, NULL) == WINO_INVALID_ARGUMENT && !stat(fifo, &st) &&
                      S_ISFIFO(st.st_mode),
               "wino_tune refuses to store into a FIFO and leaves it");
    const struct wino_context to_dir = {.threads = 1, .tuning_cache = sub};
    test_check(c, wino_tune(&d, &to_dir, 1, NULL) == WINO_INVALID_ARGUMENT,
               "wino_tune refuses to store into a directory");
    alarm(0);
    remove(fifo);
    rmdir(sub);
}

int main(void)
{
    uint64_t seed = test_seed();
    struct test_rng rng = {seed};
    struct test_counts c = {0, 0};
    char path[] = "/tmp/wino-tune-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    remove(path);

    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    struct wino_context ctx = {.threads = 1, .tuning_cache = path};
    struct wino_tuning_choice choice;
    test_check(&c, wino_tuning_cache_check(path) == WINO_UNSUPPORTED, "a missing cache");
    test_check(&c, wino_tune(&d, &ctx, 3, &choice) == WINO_SUCCESS && choice.ms >= 0.0 &&
                       (choice.algo == WINO_ALGO_DIRECT ||
                        (choice.algo == WINO_ALGO_WINOGRAD && choice.tile_m >= 2 &&
                         choice.variant != WINO_VARIANT_AUTO)),
               "wino_tune measures a valid choice");
    test_check(&c, wino_tuning_cache_check(path) == WINO_SUCCESS, "the cache it wrote is valid");

    /* create() follows the entry: the algorithm and tile it reports are the tuned ones */
    const float w[6 * 8 * 9] = {0};
    wino_conv2d *op = NULL;
    enum wino_algo algo;
    int m;
    int ok = wino_conv2d_create(&d, w, &ctx, NULL, &op) == WINO_SUCCESS &&
             wino_conv2d_algo(op, &algo, &m) == WINO_SUCCESS && algo == choice.algo &&
             m == choice.tile_m;
    wino_conv2d_destroy(op);
    test_check(&c, ok, "create() uses the cache entry");
    const struct wino_conv2d_options auto_opts = {.algo = WINO_ALGO_AUTO};
    test_check(&c, conv_check(&d, &auto_opts, &ctx, &rng, 1, NULL) <= 1e-5,
               "the tuned operator computes the convolution");

    /* a second layer is added next to the first, which stays */
    struct wino_conv2d_desc d2 = d;
    d2.k = 5;
    struct wino_tuning_choice second;
    ok = wino_tune(&d2, &ctx, 2, &second) == WINO_SUCCESS;
    const int lines = test_count_lines(path);
    test_check(&c, ok && lines == 3, "entries of other layers are kept");

    const char *bad[] = {"wino-tuning-cache 2\n", "garbage\n",
                         "wino-tuning-cache 1\n1 2 3\n",
                         "wino-tuning-cache 1\n2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 99 1 0.5\n",
                         "wino-tuning-cache 1\n2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 4 1 0.5"};
    ok = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ok &= test_write_file(path, bad[i]);
        ok &= wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT && wino_last_error()[0];
        ok &= conv_check(&d, &auto_opts, &ctx, &rng, 0, NULL) <= 1e-5; /* ignored, still works */
    }
    test_check(&c, ok, "stale and corrupt caches are refused by the check, ignored by create");
    /* well formed, but not a choice create() can follow: direct with a variant and a tile */
    ok = test_write_file(path, "wino-tuning-cache 1\n"
                          "2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 4 2 0.5\n");
    ok &= conv_check(&d, &auto_opts, &ctx, &rng, 0, NULL) <= 1e-5;
    test_check(&c, ok, "an entry create() cannot follow is ignored");

    struct wino_conv2d_desc f16 = d; /* INT8 layers: tests/test_tune_int8.c */
    f16.dtype = WINO_DTYPE_F16;
    test_check(&c, wino_tune(NULL, &ctx, 3, NULL) == WINO_INVALID_ARGUMENT &&
                       wino_tune(&d, &ctx, 0, NULL) == WINO_INVALID_ARGUMENT &&
                       wino_tune(&f16, &ctx, 3, NULL) == WINO_UNSUPPORTED &&
                       wino_tuning_cache_check(NULL) == WINO_INVALID_ARGUMENT,
               "bad arguments");
    struct wino_context nowhere = {.threads = 1, .tuning_cache = "/nonexistent-dir/cache"};
    test_check(&c, wino_tune(&d, &nowhere, 1, NULL) == WINO_INVALID_ARGUMENT,
               "an unwritable cache path is an error of wino_tune");
    remove(path);
    stale_entries(&c, path);
    not_regular_files(&c, path);
    return test_report(&c);
}
