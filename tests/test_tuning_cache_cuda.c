/* The tuning cache's CUDA lines (src/op/tuning_cache.h), without a GPU: CUDA AUTO's choices are
 * stored in the documented line, looked up by device, kind, layer and options only, replaced;
 * malformed lines make the file unused and stale ones are reported by wino_tuning_cache_check
 * and never followed; a file holding CPU and CUDA entries is read by both readers, kept whole by
 * both writers and passes the check; entries of the ROWS tiles (FP16 and BF16 NHWC forward
 * layers, as 100 + m) are followed, those of its former numbering (m alone) are stale. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op/tuning_cache.h"
#include "test_util.h"

#define DEVICE "NVIDIA H100 80GB HBM3 / cuDNN 9.19.0"
#define HEADER "wino-tuning-cache 1\n"
/* The key fields after KIND of layer_of's layer: FP32 NCHW 1x8x13x11, K 6, 3x3, pad 1, no
 * options (DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W TF32 ACCUMULATE
 * BIAS RELU). */
#define LAYER "0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0"
/* The same layer as a CPU line's key, ISA 0 (scalar) and 1 thread. */
#define CPU_KEY "0 1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1"

static struct wino_cuda_layer layer_of(enum wino_conv2d_kind kind)
{
    struct wino_cuda_layer l;
    memset(&l, 0, sizeof l);
    snprintf(l.device, sizeof l.device, "%s", DEVICE);
    l.kind = kind;
    l.desc = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    return l;
}

/* 1 when path holds an entry for l that lookup returns, equal to want (times of a few binary
 * digits, exact through the file's six decimals). */
static int holds(const char *path, const struct wino_cuda_layer *l,
                 const struct wino_cuda_choice *want)
{
    struct wino_cuda_choice got;
    memset(&got, 0, sizeof got);
    return wino_cuda_choice_lookup(path, l, &got) && got.vendor == want->vendor &&
           got.tile_m == want->tile_m && got.wino_ms == want->wino_ms &&
           got.vendor_ms == want->vendor_ms;
}

static int finds_none(const char *path, const struct wino_cuda_layer *l)
{
    struct wino_cuda_choice got;
    return !wino_cuda_choice_lookup(path, l, &got);
}

/* The first bytes of path, NUL-terminated, into buf. */
static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    const size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static void store_lookup_replace(struct test_counts *c, const char *path)
{
    remove(path);
    const struct wino_cuda_layer fwd = layer_of(WINO_CONV2D_FORWARD);
    const struct wino_cuda_choice first = {0, 3, 0.25, 0.5};
    char text[1024];
    test_check(c, wino_cuda_choice_store(path, &fwd, &first) == WINO_SUCCESS &&
                      wino_tuning_cache_check(path) == WINO_SUCCESS && holds(path, &fwd, &first),
               "a stored CUDA choice passes the check and is found");
    read_text(path, text, sizeof text);
    test_check(c, !strcmp(text, HEADER "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.250000 0.500000\n"),
               "the CUDA line is the documented one");
    if (strcmp(text, HEADER "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.250000 0.500000\n"))
        printf("  %s", text);

    /* every part of the key tells layers apart */
    struct wino_cuda_layer other[7];
    for (int i = 0; i < 7; i++)
        other[i] = fwd;
    snprintf(other[0].device, sizeof other[0].device, "NVIDIA H200 / cuDNN 9.19.0");
    snprintf(other[1].device, sizeof other[1].device, "NVIDIA H100 80GB HBM3 / cuDNN 9.10.0");
    other[2].kind = WINO_CONV2D_BACKWARD_DATA;
    other[3].desc.dtype = WINO_DTYPE_F16;
    other[4].desc.k = 5;
    other[5].tf32 = 1;
    other[6].bias = 1;
    int none = 1;
    for (int i = 0; i < 7; i++)
        none &= finds_none(path, &other[i]);
    test_check(c, none, "another device, vendor library, kind, dtype, layer or option misses");

    const struct wino_cuda_choice second = {1, 4, 0.5, 0.25};
    test_check(c, wino_cuda_choice_store(path, &fwd, &second) == WINO_SUCCESS &&
                      holds(path, &fwd, &second) && test_count_lines(path) == 2,
               "a store replaces the layer's entry");
    const struct wino_cuda_layer filter = layer_of(WINO_CONV2D_BACKWARD_FILTER);
    const struct wino_cuda_choice winrs = {0, 0, 0.125, -1.0};
    test_check(c, wino_cuda_choice_store(path, &filter, &winrs) == WINO_SUCCESS &&
                      holds(path, &filter, &winrs) && holds(path, &fwd, &second) &&
                      test_count_lines(path) == 3 && wino_tuning_cache_check(path) == WINO_SUCCESS,
               "another layer's entry is added beside it (backward-filter: WinRS, no tile)");

    struct wino_cuda_layer bad = fwd;
    snprintf(bad.device, sizeof bad.device, "GPU\twith a tab");
    const enum wino_status tab = wino_cuda_choice_store(path, &bad, &first);
    bad.device[0] = '\0';
    test_check(c, tab == WINO_INVALID_ARGUMENT &&
                      wino_cuda_choice_store(path, &bad, &first) == WINO_INVALID_ARGUMENT &&
                      test_count_lines(path) == 3,
               "a device key with a tab, or empty, is refused and the file left alone");
}

/* CPU and CUDA lines in one file: each reader finds its own, each writer keeps the other's. */
static void both_kinds(struct test_counts *c, const char *path)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 13, 11, 6, 3, 3, 1, 1);
    const struct wino_cuda_layer fwd = layer_of(WINO_CONV2D_FORWARD);
    const struct wino_cuda_choice cuda = {0, 6, 0.125, 0.5};
    const struct wino_tuning_choice cpu = {WINO_ALGO_WINOGRAD, 4, WINO_VARIANT_FUSED, 0.5};
    struct wino_tuning_choice got;
    memset(&got, 0, sizeof got);
    int ok = test_write_file(path, HEADER CPU_KEY " 2 4 2 0.5\n"
                                          "cuda\t" DEVICE "\t0 " LAYER " 0 6 0.125 0.5\n") &&
             wino_tuning_cache_check(path) == WINO_SUCCESS;
    ok = ok && wino_tuning_lookup(path, 0, 1, &d, &got) && got.algo == cpu.algo &&
         got.tile_m == cpu.tile_m && got.variant == cpu.variant && holds(path, &fwd, &cuda);
    test_check(c, ok, "a file of CPU and CUDA lines passes the check, both readers find theirs");

    struct wino_conv2d_desc d2 = d;
    d2.k = 5;
    ok = wino_tuning_store(path, 0, 1, &d2, &cpu) == WINO_SUCCESS && holds(path, &fwd, &cuda) &&
         test_count_lines(path) == 4;
    test_check(c, ok, "the CPU's store keeps the CUDA lines");
    const struct wino_cuda_layer data = layer_of(WINO_CONV2D_BACKWARD_DATA);
    const struct wino_cuda_choice vendor = {1, 0, -1.0, 0.25};
    ok = wino_cuda_choice_store(path, &data, &vendor) == WINO_SUCCESS &&
         wino_tuning_lookup(path, 0, 1, &d, &got) && wino_tuning_lookup(path, 0, 1, &d2, &got) &&
         holds(path, &data, &vendor) && test_count_lines(path) == 5 &&
         wino_tuning_cache_check(path) == WINO_SUCCESS;
    test_check(c, ok, "CUDA's store keeps the CPU lines (a vendor's choice with no tile timed)");
}

/* Lines that are no entry: the file is malformed, unused, and left as it is by a store. */
static void malformed_lines(struct test_counts *c, const char *path)
{
    static const char *const lines[] = {
        "cuda\t0 " LAYER " 0 3 0.25 0.5\n",                        /* no device */
        "cuda\t\t0 " LAYER " 0 3 0.25 0.5\n",                      /* an empty device */
        "cuda " DEVICE " 0 " LAYER " 0 3 0.25 0.5\n",              /* spaces for tabs */
        "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.25\n",                /* a time missing */
        "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.25 0.5 1\n",          /* a field too many */
        "cuda\t" DEVICE "\t0 0 0 1 8 13 11\n",                      /* fields missing */
        "cuda\t" DEVICE "\tforward " LAYER " 0 3 0.25 0.5\n",      /* a word for a number */
    };
    const struct wino_cuda_layer fwd = layer_of(WINO_CONV2D_FORWARD);
    int ok = 1;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, HEADER "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.25 0.5\n%s",
                 lines[i]);
        const int refused = test_write_file(path, text) &&
                            wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
                            strstr(wino_last_error(), "line 3 is not a valid entry") &&
                            finds_none(path, &fwd);
        if (!refused)
            printf("  accepted: %s  (%s)\n", lines[i], wino_last_error());
        ok &= refused;
    }
    char text[1024] = HEADER "cuda\t";
    memset(text + strlen(text), 'G', WINO_CUDA_DEVICE_CAP);
    snprintf(text + strlen(text), 200, "\t0 " LAYER " 0 3 0.25 0.5\n");
    ok &= test_write_file(path, text) && wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT;
    test_check(c, ok, "malformed CUDA lines make the file unused (the good line beside them too)");
    const struct wino_cuda_choice choice = {0, 2, 0.5, 0.5};
    char before[1024], after[1024];
    read_text(path, before, sizeof before);
    const enum wino_status st = wino_cuda_choice_store(path, &fwd, &choice);
    read_text(path, after, sizeof after);
    test_check(c, st == WINO_INVALID_ARGUMENT && !strcmp(before, after) &&
                      finds_none(path, &fwd),
               "CUDA's store leaves a malformed file as it is (it may be another program's)");
}

/* Well-formed lines that AUTO could not have written: reported, never followed, dropped by the
 * next store. */
static void stale_lines(struct test_counts *c, const char *path)
{
    static const struct {
        const char *fields, *what; /* after "cuda\tDEVICE\t" */
    } stale[] = {
        {"3 " LAYER " 0 3 0.25 0.5", "an unknown kind"},
        {"0 " LAYER " 0 8 0.25 0.5", "F(8x8, 3x3), which AUTO does not time"},
        {"0 1 0 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 5 0.25 0.5", "FP16 beyond F(4x4, 3x3)"},
        {"0 " LAYER " 0 0 0.25 0.5", "wino's without a tile"},
        {"0 " LAYER " 2 3 0.25 0.5", "VENDOR 2"},
        {"0 " LAYER " 0 3 -1 0.5", "wino's choice not timed"},
        {"0 " LAYER " 1 3 0.25 -0.5", "a negative time"},
        {"0 " LAYER " 0 3 nan 0.5", "a NaN time"},
        {"2 " LAYER " 0 4 0.25 0.5", "backward-filter with a tile"},
        {"1 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 1 0 0 3 0.25 0.5", "backward-data with a bias"},
        {"0 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 0 1 0 0 0 3 0.25 0.5", "forward accumulating"},
        {"0 0 0 1 8 13 11 6 3 3 1 1 1 1 1 1 2 0 0 0 0 3 0.25 0.5", "TF32 = 2"},
        {"0 2 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 1 0 -1 0.5", "an INT8 layer"},
        {"0 0 0 1 8 13 11 0 3 3 1 1 1 1 1 1 0 0 0 0 1 0 -1 0.5", "K = 0"},
        {"0 0 0 1 8 13 11 6 3 3 1 1 2 2 1 1 0 0 0 0 0 3 0.25 0.5", "Winograd with stride 2"},
        {"0 1 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 5 0.25 0.5", "FP16 NHWC F(5, 3) rows"},
        {"0 4 0 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 6 0.25 0.5", "BF16 NCHW, no ROWS"},
        {"1 4 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 106 0.25 0.5", "ROWS for backward-data"},
        {"0 4 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 6 0.25 0.5", "BF16 ROWS as m alone"},
        {"0 1 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 105 0.25 0.5", "FP16 ROWS F(5, 3)"},
    };
    const struct wino_cuda_layer fwd = layer_of(WINO_CONV2D_FORWARD);
    int ok = 1;
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, HEADER "cuda\t" DEVICE "\t%s\n", stale[i].fields);
        const int refused = test_write_file(path, text) &&
                            wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
                            strstr(wino_last_error(), "line 2") &&
                            strstr(wino_last_error(), "stale") && finds_none(path, &fwd);
        if (!refused)
            printf("  not reported: %s (%s)\n", stale[i].what, wino_last_error());
        ok &= refused;
    }
    test_check(c, ok, "stale CUDA entries are reported and never followed");

    /* of two entries of one key the first counts, the second is stale */
    const struct wino_cuda_choice first = {0, 3, 0.25, 0.5};
    ok = test_write_file(path, HEADER "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.25 0.5\n"
                                      "cuda\t" DEVICE "\t0 " LAYER " 1 5 0.5 0.25\n") &&
         wino_tuning_cache_check(path) == WINO_INVALID_ARGUMENT &&
         strstr(wino_last_error(), "line 3") && holds(path, &fwd, &first);
    test_check(c, ok, "a second entry of the same key is stale, the first is followed");

    const struct wino_cuda_layer data = layer_of(WINO_CONV2D_BACKWARD_DATA);
    const struct wino_cuda_choice choice = {1, 2, 0.5, 0.25};
    ok = test_write_file(path, HEADER "cuda\t" DEVICE "\t0 " LAYER " 0 8 0.25 0.5\n"
                                      "cuda\t" DEVICE "\t0 " LAYER " 0 3 0.25 0.5\n") &&
         wino_cuda_choice_store(path, &data, &choice) == WINO_SUCCESS &&
         test_count_lines(path) == 2 && holds(path, &data, &choice) &&
         wino_tuning_cache_check(path) == WINO_SUCCESS;
    test_check(c, ok, "a store drops the stale entries and the duplicates");
}

/* The ROWS kernels' tiles, F(4, 3) and F(6, 3) for FP16 and F(6, 3) for BF16 NHWC forward layers
 * (100 + m), which AUTO times beside the 2D tiles: their entries are followed and pass the
 * check. */
static void rows_lines(struct test_counts *c, const char *path)
{
    const char *text = HEADER
        "cuda\t" DEVICE "\t0 1 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 104 0.25 0.5\n"
        "cuda\t" DEVICE "\t0 4 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 0 0 106 0.25 0.5\n"
        "cuda\t" DEVICE "\t0 1 1 1 8 13 11 6 3 3 1 1 1 1 1 1 0 0 0 1 0 106 0.25 0.5\n";
    struct wino_cuda_layer f16 = layer_of(WINO_CONV2D_FORWARD), bf16 = f16;
    f16.desc.dtype = WINO_DTYPE_F16, bf16.desc.dtype = WINO_DTYPE_BF16;
    f16.desc.layout = bf16.desc.layout = WINO_LAYOUT_NHWC;
    struct wino_cuda_layer f16_relu = f16;
    f16_relu.relu = 1;
    const struct wino_cuda_choice f43 = {0, 104, 0.25, 0.5}, f63 = {0, 106, 0.25, 0.5};
    const int ok = test_write_file(path, text) && wino_tuning_cache_check(path) == WINO_SUCCESS &&
                   holds(path, &f16, &f43) && holds(path, &bf16, &f63) &&
                   holds(path, &f16_relu, &f63);
    if (!ok)
        printf("  %s\n", wino_last_error());
    test_check(c, ok, "FP16 and BF16 NHWC forward entries of the ROWS tiles are followed");
}

int main(void)
{
    struct test_counts c = {0, 0};
    char path[] = "/tmp/wino-cuda-cache-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    store_lookup_replace(&c, path);
    both_kinds(&c, path);
    malformed_lines(&c, path);
    stale_lines(&c, path);
    rows_lines(&c, path);
    remove(path);
    return test_report(&c);
}
