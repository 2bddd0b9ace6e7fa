#define _POSIX_C_SOURCE 200112L /* getpid */

#include "core/tuning_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

#define HEADER "wino-tuning-cache 1\n"
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
        !(e->choice.ms >= 0.0))
        return -1;
    e->choice.algo = (enum wino_algo)algo;
    e->choice.tile_m = m;
    e->choice.variant = (enum wino_variant)variant;
    return 0;
}

/* Reads every entry of path into a malloc'ed array. Returns the count, -1 when the file is
 * missing, -2 when it is malformed (*bad_line says where), -3 when out of memory. */
static int read_entries(const char *path, struct entry **out, int *bad_line)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[LINE_CAP];
    int n = 0, cap = 0, rc = 0;
    *bad_line = 1;
    if (!fgets(line, sizeof line, f) || strcmp(line, HEADER))
        rc = -2;
    while (!rc && fgets(line, sizeof line, f)) {
        ++*bad_line;
        size_t len = strlen(line);
        if (!len || line[len - 1] != '\n') {
            rc = -2;
            break;
        }
        line[len - 1] = '\0';
        if (n == cap) {
            struct entry *grown = realloc(*out, sizeof **out * (size_t)(cap = cap ? 2 * cap : 16));
            if (!grown) {
                rc = -3;
                break;
            }
            *out = grown;
        }
        if (parse_entry(line, &(*out)[n]))
            rc = -2;
        else
            n++;
    }
    fclose(f);
    if (rc) {
        free(*out);
        *out = NULL;
        return rc;
    }
    return n;
}

int wino_tuning_lookup(const char *path, int isa, int threads,
                       const struct wino_conv2d_desc *desc, struct wino_tuning_choice *choice)
{
    struct entry *all;
    int bad, found = 0;
    const int n = read_entries(path, &all, &bad);
    long key[KEY_FIELDS];
    key_of(isa, threads, desc, key);
    for (int i = 0; i < n && !found; i++)
        if (!memcmp(all[i].key, key, sizeof key)) {
            *choice = all[i].choice;
            found = 1;
        }
    free(all);
    return found;
}

enum wino_status wino_tuning_store(const char *path, int isa, int threads,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_tuning_choice *choice)
{
    struct entry *all;
    int bad;
    int n = read_entries(path, &all, &bad);
    if (n == -3)
        return wino_fail(WINO_OUT_OF_MEMORY, "tuning cache: out of memory");
    if (n < 0) /* missing or corrupt: start afresh */
        n = 0;
    long key[KEY_FIELDS];
    key_of(isa, threads, desc, key);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        free(all);
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache path too long");
    }
    FILE *f = fopen(tmp, "w");
    int ok = f && fputs(HEADER, f) >= 0;
    for (int i = 0; i < n && ok; i++)
        if (memcmp(all[i].key, key, sizeof key)) {
            for (int j = 0; j < KEY_FIELDS; j++)
                fprintf(f, "%ld ", all[i].key[j]);
            ok = fprintf(f, "%d %d %d %.6f\n", (int)all[i].choice.algo, all[i].choice.tile_m,
                         (int)all[i].choice.variant, all[i].choice.ms) > 0;
        }
    for (int j = 0; j < KEY_FIELDS && ok; j++)
        fprintf(f, "%ld ", key[j]);
    ok = ok && fprintf(f, "%d %d %d %.6f\n", (int)choice->algo, choice->tile_m,
                       (int)choice->variant, choice->ms) > 0;
    free(all);
    if (f && fclose(f))
        ok = 0;
    if (!ok || rename(tmp, path)) {
        remove(tmp);
        return wino_fail(WINO_INVALID_ARGUMENT, "cannot write the tuning cache %s", path);
    }
    return WINO_SUCCESS;
}

enum wino_status wino_tuning_cache_check(const char *path)
{
    wino_ok();
    if (!path)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_tuning_cache_check: path is NULL");
    struct entry *all;
    int bad;
    const int n = read_entries(path, &all, &bad);
    free(all);
    if (n == -1)
        return wino_fail(WINO_UNSUPPORTED, "tuning cache %s does not exist", path);
    if (n == -2)
        return wino_fail(WINO_INVALID_ARGUMENT, "tuning cache %s: line %d is not a valid entry "
                         "of format version 1", path, bad);
    if (n == -3)
        return wino_fail(WINO_OUT_OF_MEMORY, "tuning cache: out of memory");
    return WINO_SUCCESS;
}
