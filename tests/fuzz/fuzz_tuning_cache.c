/* Fuzz target: the tuning-cache reader. Input: the bytes of a cache file (format in
 * src/op/tuning_cache.h). The file is checked (wino_tuning_cache_check) and given to create()
 * for one small FP32 layer with WINO_ALGO_AUTO (1x3x12x12 -> 4, 3x3, pad 1, NCHW, 1 thread:
 * the key of the seeds in corpus/tuning_cache). Checks: the check's status and reason; create
 * succeeds whatever the file holds (corrupt or stale entries are ignored) and makes the choice
 * it makes without a cache or one that wino_tune could have stored; the operator's run is finite
 * and within a loose bound of the FP64 reference. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, posix_memalign */

#include <unistd.h>

#include "fuzz/fuzz_run_check.h"

static char path[] = "/tmp/wino-fuzz-cache-XXXXXX";

static void remove_cache(void)
{
    remove(path);
}

/* The process's cache file, created at the first call and removed at exit. */
static const char *cache_path(void)
{
    static int made;
    if (!made) {
        const int fd = mkstemp(path);
        FUZZ_REQUIRE(fd >= 0, "cannot create %s", path);
        close(fd);
        atexit(remove_cache);
        made = 1;
    }
    return path;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    FUZZ_REQUIRE(f && fwrite(data, 1, size, f) == size && !fclose(f), "cannot write %s", path);
}

struct choice {
    enum wino_algo algo;
    int tile_m;
    enum wino_variant variant;
};

static struct choice choice_of(const wino_conv2d *op)
{
    struct choice c;
    FUZZ_REQUIRE(!wino_conv2d_algo(op, &c.algo, &c.tile_m) && !wino_conv2d_variant(op, &c.variant),
                 "%s", wino_last_error());
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = cache_path();
    write_file(path, data, size);
    const enum wino_status check = wino_tuning_cache_check(path);
    FUZZ_REQUIRE(check == WINO_SUCCESS || check == WINO_INVALID_ARGUMENT ||
                     check == WINO_OUT_OF_MEMORY,
                 "check: status %d (%s)", (int)check, wino_last_error());
    FUZZ_REQUIRE(!check == !*wino_last_error(), "check: status %d, error \"%s\"", (int)check,
                 wino_last_error());

    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 3, 12, 12, 4, 3, 3, 1, 1);
    float w[4 * 3 * 3 * 3];
    struct test_rng rng = {size + 1};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = (float)test_rng_sym(&rng);
    const struct wino_context plain = {.threads = 1};
    struct wino_context cached = plain;
    cached.tuning_cache = path;
    wino_conv2d *op = NULL, *uncached = NULL;
    FUZZ_REQUIRE(!wino_conv2d_create(&d, w, &cached, NULL, &op), "create with the cache: %s",
                 wino_last_error());
    FUZZ_REQUIRE(!wino_conv2d_create(&d, w, &plain, NULL, &uncached), "create: %s",
                 wino_last_error());
    const struct choice got = choice_of(op), without = choice_of(uncached);
    wino_conv2d_destroy(uncached);
    const int same = got.algo == without.algo && got.tile_m == without.tile_m &&
                     got.variant == without.variant;
    const int staged = got.variant == WINO_VARIANT_NON_FUSED || got.variant == WINO_VARIANT_FUSED;
    const int tunable =
        got.algo == WINO_ALGO_DIRECT || (got.tile_m >= 2 && got.tile_m <= 6 && staged);
    FUZZ_REQUIRE(same || tunable,
                 "the cache chose algo %d, F(%dx%d, 3x3), variant %d: nothing wino_tune measures",
                 (int)got.algo, got.tile_m, got.tile_m, (int)got.variant);
    fuzz_check_f32_run(&d, op, w, NULL, 0, size, 0);
    wino_conv2d_destroy(op);
    return 0;
}
