/* The OpenCL tuning database (src/op/opencl_tuning.h), read and written through the tuning
 * cache's file handling (src/op/tuning_cache.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "op/conv2d_impl.h"
#include "op/opencl_tuning.h"
#include "op/tuning_cache.h"

#define HEADER "wino-opencl-tuning 2\n"
#define DEVICE_CAP 400 /* wino_opencl_device_key's "NAME / DRIVER" fits */
#define KEY_FIELDS 16  /* DTYPE .. M */
#define PARAM_FIELDS 11
#define LINE_CAP 1024

struct entry {
    char device[DEVICE_CAP];
    long key[KEY_FIELDS];
    struct wino_opencl_tuned tuned;
};

static void key_of(const struct wino_conv2d_desc *d, int tile_m, long *key)
{
    const long k[KEY_FIELDS] = {d->dtype,   d->layout,   d->n,          d->c,
                                d->h,       d->w,        d->k,          d->r,
                                d->s,       d->pad_h,    d->pad_w,      d->stride_h,
                                d->stride_w, d->dilation_h, d->dilation_w, tile_m};
    memcpy(key, k, sizeof k);
}

static int *param_field(struct wino_opencl_params *p, int i)
{
    int *const fields[PARAM_FIELDS] = {&p->gemm_bm,    &p->gemm_bn,    &p->gemm_rm,
                                       &p->gemm_rn,    &p->gemm_bk,    &p->gemm_local,
                                       &p->gemm_chunk, &p->fused_ft,   &p->fused_fk,
                                       &p->fused_kpt,  &p->fused_fc};
    return fields[i];
}

/* Parses one entry line (its newline removed); 0 on success. */
static int parse_entry(const char *line, struct entry *e)
{
    const char *tab = strchr(line, '\t');
    if (!tab || tab == line || (size_t)(tab - line) >= DEVICE_CAP)
        return -1;
    memcpy(e->device, line, (size_t)(tab - line));
    e->device[tab - line] = '\0';
    const char *s = tab + 1;
    long v[KEY_FIELDS + 1 + PARAM_FIELDS];
    for (int i = 0; i < KEY_FIELDS + 1 + PARAM_FIELDS; i++) {
        char *end;
        v[i] = strtol(s, &end, 10);
        if (end == s || v[i] < INT_MIN || v[i] > INT_MAX)
            return -1;
        s = end;
    }
    int used = 0;
    if (sscanf(s, "%lf %lf %n", &e->tuned.non_fused_ms, &e->tuned.fused_ms, &used) != 2 ||
        s[used] != '\0')
        return -1;
    memcpy(e->key, v, sizeof e->key);
    e->tuned.variant = (enum wino_variant)v[KEY_FIELDS];
    for (int i = 0; i < PARAM_FIELDS; i++)
        *param_field(&e->tuned.params, i) = (int)v[KEY_FIELDS + 1 + i];
    return 0;
}

static int parse_any(const char *line, void *e) { return parse_entry(line, e); }

/* Reads every entry of path into a malloc'ed array: the count, or a CACHE_ value. */
static int read_entries(const char *path, struct entry **out)
{
    void *all = NULL;
    const int n = wino_cache_read(path, HEADER, LINE_CAP, sizeof **out, parse_any, &all, NULL);
    *out = all;
    return n;
}

/* 1 when the tuner could have written e: a valid FP32 or FP16 layer with a default tile, a variant, a
 * positive value in every parameter (whether the values suit the device the component checks)
 * and times it measures. */
static int plausible(const struct entry *e)
{
    const long *k = e->key;
    struct wino_conv2d_desc d = wino_conv2d_desc_make((int)k[2], (int)k[3], (int)k[4], (int)k[5],
                                                      (int)k[6], (int)k[7], (int)k[8], (int)k[9],
                                                      (int)k[10]);
    struct wino_conv_sizes sz;
    d.dtype = (enum wino_dtype)k[0];
    d.layout = (enum wino_layout)k[1];
    d.stride_h = (int)k[11];
    d.stride_w = (int)k[12];
    d.dilation_h = (int)k[13];
    d.dilation_w = (int)k[14];
    const int m = (int)k[15];
    if ((d.dtype != WINO_DTYPE_F32 && d.dtype != WINO_DTYPE_F16) ||
        (d.layout != WINO_LAYOUT_NCHW && d.layout != WINO_LAYOUT_NHWC))
        return 0;
    if (wino_conv_desc_check(&d, &sz) || wino_winograd_refusal(&d, m) ||
        !wino_f32_engine_has_tile(m, d.r))
        return 0;
    struct wino_opencl_params p = e->tuned.params;
    for (int i = 0; i < PARAM_FIELDS; i++)
        if (*param_field(&p, i) < (i == 5 ? 0 : 1)) /* gemm_local is 0 or 1 */
            return 0;
    const double nf = e->tuned.non_fused_ms, fu = e->tuned.fused_ms;
    return (e->tuned.variant == WINO_VARIANT_NON_FUSED || e->tuned.variant == WINO_VARIANT_FUSED) &&
           isfinite(nf) && isfinite(fu) && nf >= 0.0 && (fu >= 0.0 || fu == -1.0);
}

double wino_opencl_tuned_ms(const struct wino_opencl_tuned *t)
{
    return t->variant == WINO_VARIANT_FUSED ? t->fused_ms : t->non_fused_ms;
}

static int same_key(const struct entry *a, const struct entry *b)
{
    return !strcmp(a->device, b->device) && !memcmp(a->key, b->key, sizeof a->key);
}

/* The entry of all (n of them) for (device, desc) and tile_m, or, tile_m 0, the fastest of
 * its tiles; -1 when there is none. Of entries with the same key only the first counts (a
 * store keeps that one), and only when it is plausible. */
static int find(const struct entry *all, int n, const char *device,
                const struct wino_conv2d_desc *desc, int tile_m)
{
    long key[KEY_FIELDS];
    key_of(desc, tile_m, key);
    const size_t compared = sizeof key - (tile_m ? 0 : sizeof *key); /* M is the last field */
    int found = -1;
    for (int i = 0; i < n; i++) {
        int first = !strcmp(all[i].device, device) && !memcmp(all[i].key, key, compared);
        for (int j = 0; j < i && first; j++)
            first = !same_key(&all[j], &all[i]);
        if (!first)
            continue;
        if (!plausible(&all[i])) {
            if (tile_m)
                return -1;
            continue;
        }
        if (found < 0 ||
            wino_opencl_tuned_ms(&all[i].tuned) < wino_opencl_tuned_ms(&all[found].tuned))
            found = i;
        if (tile_m)
            break;
    }
    return found;
}

/* *tuned (and *tile_m, when asked) of find()'s entry: 1, or 0 when there is none. */
static int lookup(const char *path, const char *device, const struct wino_conv2d_desc *desc,
                  int *tile_m, struct wino_opencl_tuned *tuned)
{
    struct entry *all;
    const int n = read_entries(path, &all);
    const int i = find(all, n, device, desc, *tile_m);
    if (i >= 0) {
        *tuned = all[i].tuned;
        *tile_m = (int)all[i].key[KEY_FIELDS - 1];
    }
    free(all);
    wino_ok(); /* an unusable file is ignored, no error */
    return i >= 0;
}

int wino_opencl_tuning_lookup(const char *path, const char *device,
                              const struct wino_conv2d_desc *desc, int tile_m,
                              struct wino_opencl_tuned *tuned)
{
    return tile_m > 0 && lookup(path, device, desc, &tile_m, tuned);
}

int wino_opencl_tuning_fastest(const char *path, const char *device,
                               const struct wino_conv2d_desc *desc, int *tile_m,
                               struct wino_opencl_tuned *tuned)
{
    int m = 0;
    const int found = lookup(path, device, desc, &m, tuned);
    if (found)
        *tile_m = m;
    return found;
}

static int write_entry(FILE *f, const struct entry *e)
{
    if (fprintf(f, "%s\t", e->device) < 0)
        return 0;
    for (int j = 0; j < KEY_FIELDS; j++)
        if (fprintf(f, "%ld ", e->key[j]) < 0)
            return 0;
    struct wino_opencl_params p = e->tuned.params;
    if (fprintf(f, "%d", (int)e->tuned.variant) < 0)
        return 0;
    for (int j = 0; j < PARAM_FIELDS; j++)
        if (fprintf(f, " %d", *param_field(&p, j)) < 0)
            return 0;
    return fprintf(f, " %.6f %.6f\n", e->tuned.non_fused_ms, e->tuned.fused_ms) > 0;
}

/* What a store writes: the plausible entries of other keys (the first of each), then the new
 * one. */
struct store {
    const struct entry *all;
    int n;
    const struct entry *added;
};

static int write_store(FILE *f, void *arg)
{
    const struct store *s = arg;
    int ok = fputs(HEADER, f) >= 0;
    for (int i = 0; i < s->n && ok; i++) {
        int first = !same_key(&s->all[i], s->added) && plausible(&s->all[i]);
        for (int j = 0; j < i && first; j++)
            first = !same_key(&s->all[j], &s->all[i]);
        if (first)
            ok = write_entry(f, &s->all[i]);
    }
    return ok && write_entry(f, s->added);
}

enum wino_status wino_opencl_tuning_store(const char *path, const char *device,
                                          const struct wino_conv2d_desc *desc, int tile_m,
                                          const struct wino_opencl_tuned *tuned)
{
    struct entry added;
    memset(&added, 0, sizeof added);
    if (strlen(device) >= DEVICE_CAP || strpbrk(device, "\t\n"))
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL tuning database: a device key of "
                         "more than %d characters, or with a tab or line break", DEVICE_CAP - 1);
    memcpy(added.device, device, strlen(device) + 1);
    key_of(desc, tile_m, added.key);
    added.tuned = *tuned;
    struct entry *all;
    int n = read_entries(path, &all);
    if (n == CACHE_NO_MEMORY)
        return wino_fail(WINO_OUT_OF_MEMORY, "OpenCL tuning database: out of memory");
    if (n == CACHE_NOT_REGULAR || n == CACHE_UNREADABLE)
        return wino_fail(WINO_INVALID_ARGUMENT, "OpenCL tuning database %s is not a readable "
                         "regular file", path);
    if (n < 0) /* missing or malformed: start afresh */
        n = 0;
    struct store s = {all, n, &added};
    const enum wino_status st = wino_cache_replace(path, write_store, &s);
    free(all);
    if (st)
        return wino_fail(st, "cannot write the OpenCL tuning database %s", path);
    return wino_ok();
}
