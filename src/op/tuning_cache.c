#define _POSIX_C_SOURCE 200809L /* getpid, fdopen, O_CLOEXEC */

#include "op/tuning_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op/conv2d_impl.h"
#include "base/error.h"

#define HEADER "wino-tuning-cache 1\n"
static const char invalid_layer[] = "not a valid layer: ";
#define KEY_FIELDS 17
#define LINE_CAP 512

struct entry {
    long key[KEY_FIELDS];
    struct wino_tuning_choice choice;
};

static void key_of(int isa, int threads, const struct wino_conv2d_desc *d, long *key)
{
    const long k[KEY_FIELDS] = {isa,          threads,      d->dtype,    d->layout,
                                d->n,         d->c,         d->h,        d->w,
                                d->k,         d->r,         d->s,        d->pad_h,
                                d->pad_w,     d->stride_h,  d->stride_w, d->dilation_h,
                                d->dilation_w};
    memcpy(key, k, sizeof k);
}

/* Parses one entry line; 0 on success. */
static int parse_entry(const char *line, struct entry *e)
{
    const char *s = line;
    for (int i = 0; i < KEY_FIELDS; i++) {
        char *end;
        e->key[i] = strtol(s, &end, 10);
        if (end == s)
            return -1;
        s = end;
    }
    int algo, m, variant, used = 0;
    if (sscanf(s, "%d %d %d %lf %n", &algo, &m, &variant, &e->choice.ms, &used) != 4 ||
        s[used] != '\0')
        return -1;
    if ((algo != WINO_ALGO_DIRECT && algo != WINO_ALGO_WINOGRAD) || m < 0 ||
        m > WINO_MAX_ALPHA || variant < WINO_VARIANT_AUTO || variant > WINO_VARIANT_FUSED ||
        !isfinite(e->choice.ms) || e->choice.ms < 0.0)
        return -1;
    e->choice.algo = (enum wino_algo)algo;
    e->choice.tile_m = m;
    e->choice.variant = (enum wino_variant)variant;
    return 0;
}

FILE *wino_cache_open(const char *path, int *why)
{
    struct stat st;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = errno == ENOENT ? CACHE_MISSING : CACHE_UNREADABLE;
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        *why = CACHE_NOT_REGULAR;
    else if (!(f = fdopen(fd, "r")))
        *why = CACHE_NO_MEMORY;
    if (!f)
        close(fd);
    return f;
}

int wino_cache_read(const char *path, const char *header, int line_cap, size_t entry_size,
                    int (*parse)(const char *line, void *entry), void **out, int *bad_line)
{
    int last = 1;
    if (bad_line)
        *bad_line = last;
    *out = NULL;
    int rc = 0;
    FILE *f = wino_cache_open(path, &rc);
    if (!f)
        return rc;
    char line[WINO_CACHE_LINE_MAX];
    line_cap = line_cap < WINO_CACHE_LINE_MAX ? line_cap : WINO_CACHE_LINE_MAX;
    int n = 0, cap = 0;
    if (!fgets(line, line_cap, f) || strcmp(line, header))
        rc = CACHE_MALFORMED;
    while (!rc && fgets(line, line_cap, f)) {
        ++last;
        size_t len = strlen(line);
        if (!len || line[len - 1] != '\n') {
            rc = CACHE_MALFORMED;
            break;
        }
        line[len - 1] = '\0';
        if (n == cap) {
            void *grown = realloc(*out, entry_size * (size_t)(cap = cap ? 2 * cap : 16));
            if (!grown) {
                rc = CACHE_NO_MEMORY;
                break;
            }
            *out = grown;
        }
        if (parse(line, (char *)*out + entry_size * (size_t)n))
            rc = CACHE_MALFORMED;
        else
            n++;
    }
    fclose(f);
    if (bad_line)
        *bad_line = last;
    if (rc) {
        free(*out);
        *out = NULL;
        return rc;
    }
    return n;
}

static int parse_any(const char *line, void *e) { return parse_entry(line, e); }

/* Reads every entry of path into a malloc'ed array. Returns the count or a CACHE_ value. */
static int read_entries(const char *path, struct entry **out, int *bad_line)
{
    void *all = NULL;
    const int n =
        wino_cache_read(path, HEADER, LINE_CAP, sizeof **out, parse_any, &all, bad_line);
    *out = all;
    return n;
}

const char *wino_tuning_choice_refusal(const struct wino_conv2d_desc *d,
                                       const struct wino_tuning_choice *c)
{
    if (d->dtype != WINO_DTYPE_F32)
        return "wino_tune times FP32 layers only";
    if (c->algo == WINO_ALGO_DIRECT)
        return c->tile_m || c->variant != WINO_VARIANT_AUTO
                   ? "direct convolution has no tile and no variant (both 0)"
                   : NULL;
    if (c->tile_m < WINO_TUNE_MIN_M || c->tile_m > WINO_TUNE_MAX_M)
        return "wino_tune times Winograd tiles m = 2 to 6 only";
    if (c->variant != WINO_VARIANT_NON_FUSED && c->variant != WINO_VARIANT_FUSED)
        return "wino_tune times the NON_FUSED (1) and FUSED (2) variants only";
    const char *why = wino_winograd_refusal(d, c->tile_m);
    if (why)
        return why;
    return wino_f32_engine_has_tile(c->tile_m, d->r) ? NULL
                                                      : "this tile has no generated transforms";
}

/* Why create() ignores entry i of all (count entries), or NULL when it follows it. *d receives
 * the entry's layer. */
static const char *entry_refusal(const struct entry *all, int i, struct wino_conv2d_desc *d)
{
    const long *k = all[i].key;
    struct wino_conv_sizes sz;
    if (k[0] != WINO_ISA_SCALAR && k[0] != WINO_ISA_AVX2 && k[0] != WINO_ISA_AVX512)
        return "unknown ISA (0 scalar, 1 AVX2, 2 AVX-512)";
    if (k[1] < 1 || k[1] > WINO_MAX_THREADS)
        return "threads outside [1, WINO_MAX_THREADS]";
    for (int j = 2; j < KEY_FIELDS; j++)
        if (k[j] < INT_MIN || k[j] > INT_MAX)
            return "a layer field outside int";
    *d = wino_conv2d_desc_make((int)k[4], (int)k[5], (int)k[6], (int)k[7], (int)k[8], (int)k[9],
                               (int)k[10], (int)k[11], (int)k[12]);
    d->dtype = (enum wino_dtype)k[2];
    d->layout = (enum wino_layout)k[3];
    d->stride_h = (int)k[13];
    d->stride_w = (int)k[14];
    d->dilation_h = (int)k[15];
    d->dilation_w = (int)k[16];
    if (wino_conv_desc_check(d, &sz)) /* the reason follows in wino_last_error() */
        return invalid_layer;
    for (int j = 0; j < i; j++)
        if (!memcmp(all[j].key, k, sizeof all[j].key))
            return "a second entry of the same ISA, threads and layer (the first counts)";
    return wino_tuning_choice_refusal(d, &all[i].choice);
}

int wino_tuning_lookup(const char *path, int isa, int threads,
                       const struct wino_conv2d_desc *desc, struct wino_tuning_choice *choice)
{
    struct entry *all;
    int bad, found = 0;
    const int n = read_entries(path, &all, &bad);
    long key[KEY_FIELDS];
    key_of(isa, threads, desc, key);
    int i = 0;
    while (i < n && memcmp(all[i].key, key, sizeof key))
        i++;
    if (i < n && !wino_tuning_choice_refusal(desc, &all[i].choice)) {
        *choice = all[i].choice;
        found = 1;
    }
    free(all);
    return found;
}

static int write_entry(FILE *f, const long *key, const struct wino_tuning_choice *c)
{
    for (int j = 0; j < KEY_FIELDS; j++)
        if (fprintf(f, "%ld ", key[j]) < 0)
            return 0;
    return fprintf(f, "%d %d %d %.6f\n", (int)c->algo, c->tile_m, (int)c->variant, c->ms) > 0;
}

enum wino_status wino_cache_replace(const char *path, int (*write)(FILE *f, void *arg),
                                    void *arg)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return wino_fail(WINO_INVALID_ARGUMENT, "cache path too long");
    unlink(tmp); /* a leftover of a process with the same id; O_EXCL then makes a new file */
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f && fd >= 0)
        close(fd);
    int ok = f && write(f, arg);
    if (f && fclose(f))
        ok = 0;
    if (!ok || rename(tmp, path)) {
        if (fd >= 0)
            unlink(tmp);
        return wino_fail(WINO_INVALID_ARGUMENT, "cannot write %s", path);
    }
    return WINO_SUCCESS;
}

/* What wino_tuning_store writes: the valid entries of another key, then the new one. */
struct store {
    const struct entry *all;
    int n;
    const long *key;
    const struct wino_tuning_choice *choice;
};

static int write_store(FILE *f, void *arg)
{
    const struct store *s = arg;
    int ok = fputs(HEADER, f) >= 0;
    for (int i = 0; i < s->n && ok; i++) {
        struct wino_conv2d_desc d;
        if (memcmp(s->all[i].key, s->key, sizeof s->all[i].key) && !entry_refusal(s->all, i, &d))
            ok = write_entry(f, s->all[i].key, &s->all[i].choice);
    }
    return ok && write_entry(f, s->key, s->choice);
}

enum wino_status wino_tuning_store(const char *path, int isa, int threads,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_tuning_choice *choice)
{
    struct entry *all;
    int bad;
    int n = read_entries(path, &all, &bad);
    if (n == CACHE_NO_MEMORY)
        return wino_fail(WINO_OUT_OF_MEMORY, "tuning cache: out of memory");
    if (n == CACHE_NOT_REGULAR || n == CACHE_UNREADABLE)
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s is not a readable regular file",
                         path);
    if (n < 0) /* missing or malformed: start afresh */
        n = 0;
    long key[KEY_FIELDS];
    key_of(isa, threads, desc, key);
    struct store s = {all, n, key, choice};
    const enum wino_status st = wino_cache_replace(path, write_store, &s);
    free(all);
    if (st)
        return wino_fail(st, "cannot write the tuning cache %s", path);
    return wino_ok(); /* the stale entries dropped above are no error of this call */
}

enum wino_status wino_tuning_cache_check(const char *path)
{
    wino_ok();
    if (!path)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tuning_cache_check: path is NULL");
    struct entry *all;
    int bad;
    const int n = read_entries(path, &all, &bad);
    const char *why = NULL;
    int i = 0;
    for (struct wino_conv2d_desc d; i < n && !why; i++)
        why = entry_refusal(all, i, &d);
    const struct wino_tuning_choice c = why ? all[i - 1].choice : (struct wino_tuning_choice){0};
    free(all);
    switch (n) {
    case CACHE_MISSING:
        return wino_fail(WINO_UNSUPPORTED, "tuning cache %s does not exist", path);
    case CACHE_MALFORMED:
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s: line %d is not a valid entry "
                         "of format version 1", path, bad);
    case CACHE_NO_MEMORY:
        return wino_fail(WINO_OUT_OF_MEMORY, "tuning cache: out of memory");
    case CACHE_NOT_REGULAR:
    case CACHE_UNREADABLE:
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s is not a readable regular file",
                         path);
    }
    if (!why)
        return WINO_SUCCESS;
    char detail[256] = "";
    if (why == invalid_layer)
        snprintf(detail, sizeof detail, "%s", wino_last_error());
    /* line i + 1: the header is line 1 */
    return wino_fail(WINO_INVALID_ARGUMENT,
                     "tuning cache %s: line %d (algo %d, m %d, variant %d) is stale, create() "
                     "ignores it: %s%s",
                     path, i + 1, (int)c.algo, c.tile_m, (int)c.variant, why, detail);
}
