/* Layer-set files of `wino bench`: bench/sets/NAME.txt, `name N C H W K R S pad stride`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BENCH_DIM_MAX (1L << 20) /* far above any real layer, low enough to keep products sane */

struct wino_conv2d_desc bench_layer_desc(const struct bench_layer *l)
{
    struct wino_conv2d_desc d =
        wino_conv2d_desc_make(l->n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad, l->pad);
    d.stride_h = d.stride_w = l->stride;
    return d;
}

/* A set name is a plain file stem, so that --set can never walk out of the sets folder. */
static int valid_set_name(const char *s)
{
    if (!*s || strlen(s) >= BENCH_NAME_MAX)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

/* Parses one non-empty line into *l; returns NULL or the reason it is malformed. */
static const char *parse_line(char *line, struct bench_layer *l)
{
    const char *name = strtok(line, " \t\r\n");
    if (strlen(name) >= BENCH_NAME_MAX)
        return "layer name too long";
    strcpy(l->name, name);
    int *fields[9] = {&l->n, &l->c, &l->h, &l->w, &l->k, &l->r, &l->s, &l->pad, &l->stride};
    for (int i = 0; i < 9; i++) {
        const char *tok = strtok(NULL, " \t\r\n");
        if (!tok)
            return "expected `name N C H W K R S pad stride`";
        char *end = NULL;
        errno = 0;
        long v = strtol(tok, &end, 10);
        const long min = i == 7 ? 0 : 1;
        if (*end || errno || v < min || v > BENCH_DIM_MAX)
            return "a size is not an integer in range (pad >= 0, others >= 1)";
        *fields[i] = (int)v;
    }
    if (strtok(NULL, " \t\r\n"))
        return "more than 10 fields";
    struct wino_conv2d_desc d = bench_layer_desc(l);
    if (wino_conv2d_output_size(&d, NULL, NULL) != WINO_SUCCESS)
        return wino_last_error();
    return NULL;
}

int bench_read_set(const char *dir, const char *set, struct bench_layer **layers, int *count)
{
    if (!valid_set_name(set)) {
        fprintf(stderr, "wino bench: --set: \"%s\" is not a set name (letters, digits, -_.)\n",
                set);
        return 2;
    }
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.txt", dir, set) >= sizeof path) {
        fprintf(stderr, "wino bench: --sets-dir: path too long\n");
        return 2;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "wino bench: unknown layer set \"%s\" (%s: %s)\n", set, path,
                strerror(errno));
        return 2;
    }
    struct bench_layer *list = NULL;
    int n = 0, cap = 0, lineno = 0;
    char line[1024];
    const char *why = NULL;
    while (!why && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct bench_layer *grown = realloc(list, (size_t)cap * sizeof *list);
            if (!grown) {
                why = "out of memory";
                break;
            }
            list = grown;
        }
        why = parse_line(line, &list[n]);
        if (!why)
            n++;
    }
    fclose(f);
    if (!why && n == 0)
        why = "no layers";
    if (why) {
        fprintf(stderr, "wino bench: %s:%d: %s\n", path, lineno, why);
        free(list);
        return 2;
    }
    *layers = list;
    *count = n;
    return 0;
}
