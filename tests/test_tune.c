/* Tuning: wino_tune measures and records a choice, create() follows a matching cache entry, and
 * a missing, stale or corrupt cache is reported by the check and ignored by create(). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, posix_memalign in conv_check.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv_check.h"

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0;
    if (f)
        ok &= fclose(f) == 0;
    return ok;
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
    FILE *f = fopen(path, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        lines += ch == '\n';
    if (f)
        fclose(f);
    test_check(&c, ok && lines == 3, "entries of other layers are kept");

    const char *bad[] = {"wino-tuning-cache 2\n", "garbage\n",
                         "wino-tuning-cache 1\n1 2 3\n",
                         "wino-tuning-cache 1\n2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 99 1 0.5\n",
                         "wino-tuning-cache 1\n2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 4 1 0.5"};
    ok = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ok &= write_file(path, bad[i]);
        ok &= wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT && wino_last_error()[0];
        ok &= conv_check(&d, &auto_opts, &ctx, &rng, 0, NULL) <= 1e-5; /* ignored, still works */
    }
    test_check(&c, ok, "stale and corrupt caches are refused by the check, ignored by create");
    /* well formed, but not a choice create() can follow: direct with a variant and a tile */
    ok = write_file(path, "wino-tuning-cache 1\n"
                          "2 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 1 4 2 0.5\n");
    ok &= conv_check(&d, &auto_opts, &ctx, &rng, 0, NULL) <= 1e-5;
    test_check(&c, ok, "an entry create() cannot follow is ignored");

    struct wino_conv2d_desc int8 = d;
    int8.dtype = WINO_DTYPE_S8;
    test_check(&c, wino_tune(NULL, &ctx, 3, NULL) == WINO_INVALID_ARGUMENT &&
                       wino_tune(&d, &ctx, 0, NULL) == WINO_INVALID_ARGUMENT &&
                       wino_tune(&int8, &ctx, 3, NULL) == WINO_UNSUPPORTED &&
                       wino_tuning_cache_check(NULL) == WINO_INVALID_ARGUMENT,
               "bad arguments");
    struct wino_context nowhere = {.threads = 1, .tuning_cache = "/nonexistent-dir/cache"};
    test_check(&c, wino_tune(&d, &nowhere, 1, NULL) == WINO_INVALID_ARGUMENT,
               "an unwritable cache path is an error of wino_tune");
    remove(path);
    return test_report(&c);
}
