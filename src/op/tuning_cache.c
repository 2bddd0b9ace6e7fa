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
#include "base/tile_matrices.h"
#include "cpu/gemm_f32.h"
#include "cpu/gemm_s8.h"
#include "op/int8_layer.h"

#define HEADER "wino-tuning-cache 1\n"
#define CUDA_TAG "cuda\t" /* what begins a CUDA line */
static const char invalid_layer[] = "not a valid layer: ";
#define DESC_FIELDS 15 /* DTYPE LAYOUT N C H W K R S PAD_H PAD_W STRIDE_H STRIDE_W DIL_H DIL_W */
#define CPU_KEY_FIELDS (2 + DESC_FIELDS)      /* ISA THREADS, the layer */
#define CUDA_KEY_FIELDS (1 + DESC_FIELDS + 4) /* KIND, the layer, TF32 ACCUMULATE BIAS RELU */

/* One line of either kind. */
struct entry {
    int cuda;                          /* a CUDA line, else a CPU line */
    char device[WINO_CUDA_DEVICE_CAP]; /* a CUDA line's DEVICE */
    long key[CUDA_KEY_FIELDS];         /* a CPU line's key fills the first CPU_KEY_FIELDS */
    struct wino_tuning_choice choice;  /* a CPU line's choice */
    struct wino_cuda_choice gpu;       /* a CUDA line's choice */
};

/* The key fields of a layer, DTYPE to DIL_W. */
static void desc_fields(const struct wino_conv2d_desc *d, long *k)
{
    const long f[DESC_FIELDS] = {d->dtype,    d->layout,   d->n,         d->c,
                                 d->h,        d->w,        d->k,         d->r,
                                 d->s,        d->pad_h,    d->pad_w,     d->stride_h,
                                 d->stride_w, d->dilation_h, d->dilation_w};
    memcpy(k, f, sizeof f);
}

/* The CPU entry of (isa, threads, d), without its choice. */
static struct entry cpu_entry(int isa, int threads, const struct wino_conv2d_desc *d)
{
    struct entry e;
    memset(&e, 0, sizeof e); /* keys are compared with memcmp */
    e.key[0] = isa;
    e.key[1] = threads;
    desc_fields(d, e.key + 2);
    return e;
}

/* The CUDA entry of layer, without its choice; *e untouched (1) when its device does not fit
 * a line. */
static int cuda_entry(const struct wino_cuda_layer *l, struct entry *e)
{
    memset(e, 0, sizeof *e);
    if (!l->device[0] || strlen(l->device) >= sizeof e->device || strpbrk(l->device, "\t\n"))
        return 1;
    e->cuda = 1;
    memcpy(e->device, l->device, strlen(l->device) + 1);
    e->key[0] = l->kind;
    desc_fields(&l->desc, e->key + 1);
    const long flags[4] = {l->tf32, l->accumulate, l->bias, l->relu};
    memcpy(e->key + 1 + DESC_FIELDS, flags, sizeof flags);
    return 0;
}

static int same_key(const struct entry *a, const struct entry *b)
{
    return a->cuda == b->cuda && !strcmp(a->device, b->device) &&
           !memcmp(a->key, b->key, sizeof a->key);
}

/* Reads n integers from *s on; 0 on success. */
static int parse_fields(const char **s, long *k, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        k[i] = strtol(*s, &end, 10);
        if (end == *s)
            return -1;
        *s = end;
    }
    return 0;
}

/* Parses a CPU line; 0 on success. */
static int parse_cpu(const char *s, struct entry *e)
{
    if (parse_fields(&s, e->key, CPU_KEY_FIELDS))
        return -1;
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

/* Parses a CUDA line after its tag; 0 on success (whether its values are plausible is
 * cuda_refusal's to say). */
static int parse_cuda(const char *s, struct entry *e)
{
    const char *tab = strchr(s, '\t');
    if (!tab || tab == s || (size_t)(tab - s) >= sizeof e->device)
        return -1;
    e->cuda = 1;
    memcpy(e->device, s, (size_t)(tab - s));
    e->device[tab - s] = '\0';
    s = tab + 1;
    if (parse_fields(&s, e->key, CUDA_KEY_FIELDS))
        return -1;
    struct wino_cuda_choice *c = &e->gpu;
    int used = 0;
    return sscanf(s, "%d %d %lf %lf %n", &c->vendor, &c->tile_m, &c->wino_ms, &c->vendor_ms,
                  &used) == 4 && s[used] == '\0'
               ? 0
               : -1;
}

/* Parses one entry line (its newline removed); 0 on success. */
static int parse_entry(const char *line, void *out)
{
    struct entry *e = out;
    memset(e, 0, sizeof *e);
    const size_t tag = strlen(CUDA_TAG);
    return strncmp(line, CUDA_TAG, tag) ? parse_cpu(line, e) : parse_cuda(line + tag, e);
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

/* Reads every entry of path into a malloc'ed array. Returns the count or a CACHE_ value. */
static int read_entries(const char *path, struct entry **out, int *bad_line)
{
    void *all = NULL;
    const int n = wino_cache_read(path, HEADER, WINO_CACHE_LINE_MAX, sizeof **out, parse_entry,
                                  &all, bad_line);
    *out = all;
    return n;
}

static int int8_dtype(long dtype)
{
    return dtype == WINO_DTYPE_S8 || dtype == WINO_DTYPE_U8;
}

const char *wino_tuning_choice_refusal(const struct wino_conv2d_desc *d,
                                       const struct wino_tuning_choice *c)
{
    const int int8 = int8_dtype(d->dtype);
    if (d->dtype != WINO_DTYPE_F32 && !int8)
        return "wino_tune times FP32 and INT8 (S8, U8) layers only";
    if (int8 && d->layout != WINO_LAYOUT_NHWC)
        return "INT8 layers run NHWC only";
    if (c->algo == WINO_ALGO_DIRECT)
        return c->tile_m || c->variant != WINO_VARIANT_AUTO
                   ? "direct convolution has no tile and no variant (both 0)"
                   : NULL;
    if (c->tile_m < WINO_TUNE_MIN_M || c->tile_m > WINO_TUNE_MAX_M)
        return "wino_tune times Winograd tiles m = 2 to 6 only";
    if (int8) {
        if (c->variant != WINO_VARIANT_AUTO)
            return "the CPU's INT8 Winograd has no variants (0)";
        if (!wino_int8_exact_tile(c->tile_m))
            return "INT8 Winograd runs m = 2, 4 and 6 only";
        return wino_int8_winograd_shape(d) ? NULL
                                           : "INT8 Winograd needs a 3x3 filter, stride 1 and "
                                             "dilation 1";
    }
    if (c->variant != WINO_VARIANT_NON_FUSED && c->variant != WINO_VARIANT_FUSED)
        return "wino_tune times the NON_FUSED (1) and FUSED (2) variants only";
    const char *why = wino_winograd_refusal(d, c->tile_m);
    if (why)
        return why;
    return wino_f32_engine_has_tile(c->tile_m, d->r) ? NULL
                                                      : "this tile has no generated transforms";
}

/* The layer of key fields k (DTYPE to DIL_W) into *d, or why it is none: invalid_layer (the
 * reason follows in wino_last_error()) or another. */
static const char *layer_refusal(const long *k, struct wino_conv2d_desc *d)
{
    struct wino_conv_sizes sz;
    for (int j = 0; j < DESC_FIELDS; j++)
        if (k[j] < INT_MIN || k[j] > INT_MAX)
            return "a layer field outside int";
    *d = wino_conv2d_desc_make((int)k[2], (int)k[3], (int)k[4], (int)k[5], (int)k[6], (int)k[7],
                               (int)k[8], (int)k[9], (int)k[10]);
    d->dtype = (enum wino_dtype)k[0];
    d->layout = (enum wino_layout)k[1];
    d->stride_h = (int)k[11];
    d->stride_w = (int)k[12];
    d->dilation_h = (int)k[13];
    d->dilation_w = (int)k[14];
    return wino_conv_desc_check(d, &sz) ? invalid_layer : NULL;
}

/* A median as timed: finite, and >= 0 or -1 (not timed). */
static int timed_ms(double ms)
{
    return isfinite(ms) && (ms >= 0.0 || ms == -1.0);
}

/* Why CUDA's AUTO never writes the choice of CUDA line e (its layer valid, in d), or NULL. */
static const char *cuda_choice_refusal(const struct entry *e, const struct wino_conv2d_desc *d)
{
    const long kind = e->key[0], *flags = e->key + 1 + DESC_FIELDS;
    const struct wino_cuda_choice *c = &e->gpu;
    if (d->dtype != WINO_DTYPE_F32 && d->dtype != WINO_DTYPE_F16 && d->dtype != WINO_DTYPE_BF16)
        return "CUDA's AUTO chooses for FP32, FP16 and BF16 layers";
    for (int j = 0; j < 4; j++)
        if (flags[j] != 0 && flags[j] != 1)
            return "TF32, ACCUMULATE, BIAS and RELU are 0 or 1";
    if (kind != WINO_CONV2D_FORWARD && (flags[2] || flags[3]))
        return "bias and ReLU are the forward convolution's";
    if (kind != WINO_CONV2D_BACKWARD_FILTER && flags[1])
        return "accumulate is backward-filter's";
    if ((c->vendor != 0 && c->vendor != 1) || !timed_ms(c->wino_ms) || !timed_ms(c->vendor_ms))
        return "VENDOR is 0 or 1, the times >= 0 or -1";
    if ((c->vendor ? c->vendor_ms : c->wino_ms) < 0.0)
        return "the choice was not timed";
    if (kind == WINO_CONV2D_BACKWARD_FILTER)
        return c->tile_m ? "backward-filter's WinRS has no tile (M 0)" : NULL;
    int tiles[WINO_CUDA_AUTO_TILES], i = 0;
    const int count = wino_cuda_auto_tiles(d, kind == WINO_CONV2D_FORWARD, tiles);
    while (i < count && tiles[i] != c->tile_m)
        i++;
    if (i < count || (c->vendor && !c->tile_m))
        return NULL;
    return "M is not a tile that CUDA's AUTO times for this layer";
}

/* Why create() ignores entry i of all, or NULL when it follows it. */
static const char *entry_refusal(const struct entry *all, int i)
{
    const struct entry *e = &all[i];
    const long *k = e->key;
    struct wino_conv2d_desc d;
    const char *why = NULL;
    if (e->cuda) {
        if (k[0] < WINO_CONV2D_FORWARD || k[0] > WINO_CONV2D_BACKWARD_FILTER)
            return "unknown kind (0 forward, 1 backward-data, 2 backward-filter)";
        why = layer_refusal(k + 1, &d);
    } else {
        /* the ISA of the kernels timed: wino_s8_isa() for INT8 layers, wino_cpu_isa() else */
        if (int8_dtype(k[2]) && (k[0] < WINO_S8_SCALAR || k[0] > WINO_S8_AMX))
            return "unknown INT8 ISA (0 scalar, 1 AVX2, 2 AVX-512 VNNI, 3 AMX)";
        if (!int8_dtype(k[2]) && (k[0] < WINO_ISA_SCALAR || k[0] > WINO_ISA_AVX512))
            return "unknown ISA (0 scalar, 1 AVX2, 2 AVX-512)";
        if (k[1] < 1 || k[1] > WINO_MAX_THREADS)
            return "threads outside [1, WINO_MAX_THREADS]";
        why = layer_refusal(k + 2, &d);
    }
    if (why)
        return why;
    for (int j = 0; j < i; j++)
        if (same_key(&all[j], e))
            return "a second entry of the same key (the first counts)";
    return e->cuda ? cuda_choice_refusal(e, &d) : wino_tuning_choice_refusal(&d, &e->choice);
}

/* The index of path's first entry (n of them, all) of key's key when create() follows it, else
 * -1. */
static int find(const struct entry *all, int n, const struct entry *key)
{
    int i = 0;
    while (i < n && !same_key(&all[i], key))
        i++;
    return i < n && !entry_refusal(all, i) ? i : -1;
}

int wino_tuning_lookup(const char *path, int isa, int threads,
                       const struct wino_conv2d_desc *desc, struct wino_tuning_choice *choice)
{
    struct entry *all;
    int bad;
    const int n = read_entries(path, &all, &bad);
    const struct entry key = cpu_entry(isa, threads, desc);
    const int i = find(all, n, &key);
    if (i >= 0)
        *choice = all[i].choice;
    free(all);
    return i >= 0;
}

int wino_cuda_choice_lookup(const char *path, const struct wino_cuda_layer *layer,
                            struct wino_cuda_choice *choice)
{
    struct entry key, *all;
    int bad;
    if (cuda_entry(layer, &key))
        return 0;
    const int n = read_entries(path, &all, &bad);
    const int i = find(all, n, &key);
    if (i >= 0)
        *choice = all[i].gpu;
    free(all);
    return i >= 0;
}

static int write_entry(FILE *f, const struct entry *e)
{
    const int fields = e->cuda ? CUDA_KEY_FIELDS : CPU_KEY_FIELDS;
    if (e->cuda && fprintf(f, CUDA_TAG "%s\t", e->device) < 0)
        return 0;
    for (int j = 0; j < fields; j++)
        if (fprintf(f, "%ld ", e->key[j]) < 0)
            return 0;
    const struct wino_tuning_choice *c = &e->choice;
    const struct wino_cuda_choice *g = &e->gpu;
    return (e->cuda ? fprintf(f, "%d %d %.6f %.6f\n", g->vendor, g->tile_m, g->wino_ms,
                              g->vendor_ms)
                    : fprintf(f, "%d %d %d %.6f\n", (int)c->algo, c->tile_m, (int)c->variant,
                              c->ms)) > 0;
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

/* What a store writes: the valid entries of other keys, of both kinds, then the new one. */
struct store {
    const struct entry *all;
    int n;
    const struct entry *added;
};

static int write_store(FILE *f, void *arg)
{
    const struct store *s = arg;
    int ok = fputs(HEADER, f) >= 0;
    for (int i = 0; i < s->n && ok; i++)
        if (!same_key(&s->all[i], s->added) && !entry_refusal(s->all, i))
            ok = write_entry(f, &s->all[i]);
    return ok && write_entry(f, s->added);
}

/* Adds or replaces the entry of added's key in path; a malformed file is started afresh when
 * afresh says so, else left as it is (WINO_INVALID_ARGUMENT). */
static enum wino_status store(const char *path, const struct entry *added, int afresh)
{
    struct entry *all;
    int bad;
    int n = read_entries(path, &all, &bad);
    if (n == CACHE_NO_MEMORY)
        return wino_fail(WINO_OUT_OF_MEMORY, "tuning cache: out of memory");
    if (n == CACHE_NOT_REGULAR || n == CACHE_UNREADABLE)
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s is not a readable regular file",
                         path);
    if (n == CACHE_MALFORMED && !afresh)
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s: line %d is not a valid entry; "
                         "the file is left as it is", path, bad);
    if (n < 0) /* missing, or malformed and to be started afresh */
        n = 0;
    struct store s = {all, n, added};
    const enum wino_status st = wino_cache_replace(path, write_store, &s);
    free(all);
    if (st)
        return wino_fail(st, "cannot write the tuning cache %s", path);
    return wino_ok(); /* the stale entries dropped above are no error of this call */
}

enum wino_status wino_tuning_store(const char *path, int isa, int threads,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_tuning_choice *choice)
{
    struct entry e = cpu_entry(isa, threads, desc);
    e.choice = *choice;
    return store(path, &e, 1);
}

enum wino_status wino_cuda_choice_store(const char *path, const struct wino_cuda_layer *layer,
                                        const struct wino_cuda_choice *choice)
{
    struct entry e;
    if (cuda_entry(layer, &e))
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache: a device key that is empty, of "
                         "%d characters or more, or with a tab or line break",
                         WINO_CUDA_DEVICE_CAP);
    e.gpu = *choice;
    return store(path, &e, 0);
}

/* What a line at fault holds, for the check's message. */
static void describe(const struct entry *e, char *buf, size_t cap)
{
    if (e->cuda)
        snprintf(buf, cap, "CUDA kind %ld, vendor %d, m %d", e->key[0], e->gpu.vendor,
                 e->gpu.tile_m);
    else
        snprintf(buf, cap, "algo %d, m %d, variant %d", (int)e->choice.algo, e->choice.tile_m,
                 (int)e->choice.variant);
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
    for (; i < n && !why; i++)
        why = entry_refusal(all, i);
    char what[96] = "";
    if (why)
        describe(&all[i - 1], what, sizeof what);
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
                     "tuning cache %s: line %d (%s) is stale, create() ignores it: %s%s", path,
                     i + 1, what, why, detail);
}
