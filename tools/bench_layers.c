/* The layers a verb runs: layer-set files (`name N C H W K R S pad stride` a line, as in
 * bench/sets/NAME.txt) found by name beside the binary or given as a path, and layers given
 * inline with --layer. */
#define _POSIX_C_SOURCE 200112L /* readlink */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

#define BENCH_DIM_MAX (1L << 20) /* far above any real layer, low enough to keep products sane */
#define LINE_MAX_CHARS 1024

struct wino_conv2d_desc bench_layer_desc(const struct bench_layer *l)
{
    struct wino_conv2d_desc d =
        wino_conv2d_desc_make(l->n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad, l->pad);
    d.stride_h = d.stride_w = l->stride;
    return d;
}

/* Splits s at blanks into at most max tokens (NULs written into s); returns their count, or
 * max + 1 when there are more. */
static int split(char *s, char **tok, int max)
{
    int n = 0;
    for (;;) {
        s += strspn(s, " \t\r\n");
        if (!*s)
            return n;
        if (n == max)
            return max + 1;
        tok[n++] = s;
        s += strcspn(s, " \t\r\n");
        if (*s)
            *s++ = '\0';
    }
}

/* Fills *l from a name and the nine sizes N C H W K R S pad stride; returns NULL or why not. */
static const char *parse_fields(const char *name, char **sizes, struct bench_layer *l)
{
    if (strlen(name) >= BENCH_NAME_MAX)
        return "layer name too long";
    strcpy(l->name, name);
    int *fields[9] = {&l->n, &l->c, &l->h, &l->w, &l->k, &l->r, &l->s, &l->pad, &l->stride};
    for (int i = 0; i < 9; i++) {
        long v;
        const long min = i == 7 ? 0 : 1;
        if (cli_to_long(sizes[i], &v) || v < min || v > BENCH_DIM_MAX)
            return "a size is not an integer in range (pad >= 0, others >= 1)";
        *fields[i] = (int)v;
    }
    return NULL;
}

/* NULL, or why the library refuses the layer's geometry (e.g. a filter larger than the padded
 * input). */
static const char *check_geometry(const struct bench_layer *l)
{
    struct wino_conv2d_desc d = bench_layer_desc(l);
    return wino_conv2d_output_size(&d, NULL, NULL) == WINO_SUCCESS ? NULL : wino_last_error();
}

int bench_layer_option(void *dest, const char *value, char *why, size_t cap)
{
    struct bench_layer_args *a = dest;
    char text[256], *tok[10], name[BENCH_NAME_MAX];
    if (a->inline_count == BENCH_INLINE_MAX) {
        snprintf(why, cap, "at most %d layers", BENCH_INLINE_MAX);
        return 1;
    }
    if (strlen(value) >= sizeof text) {
        snprintf(why, cap, "too long");
        return 1;
    }
    strcpy(text, value);
    const int n = split(text, tok, 10);
    if (n != 9 && n != 10) {
        snprintf(why, cap, "expected \"N C H W K R S pad stride\", optionally with a name first");
        return 1;
    }
    snprintf(name, sizeof name, "layer%d", a->inline_count + 1);
    const char *bad = parse_fields(n == 10 ? tok[0] : name, tok + (n - 9),
                                   &a->inline_layers[a->inline_count]);
    if (bad) {
        snprintf(why, cap, "%s", bad);
        return 1;
    }
    a->inline_count++;
    return 0;
}

/* A set given by name is a plain file stem; anything with a '/' or ending in .txt is a path. */
static int is_path(const char *set)
{
    const size_t n = strlen(set);
    return strchr(set, '/') || (n >= 4 && !strcmp(set + n - 4, ".txt"));
}

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

/* The directory of the running binary, from /proc/self/exe: no source path is built in. */
static int exe_dir(char *buf, size_t cap)
{
    const ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1)
        return -1;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* Opens set NAME: DIR/NAME.txt with --sets-dir, else the copy in the build tree
 * (<binary's dir>/sets) or the installed one (<binary's dir>/../share/wino/sets). On failure
 * returns NULL with one line in why. */
static FILE *open_named_set(const char *dir, const char *set, char *path, size_t path_cap,
                            char *why, size_t cap)
{
    char exe[2048], dirs[2][2100], looked[sizeof dirs + 8] = "";
    int count = 0;
    if (dir)
        snprintf(dirs[count++], sizeof dirs[0], "%s", dir);
    else if (!exe_dir(exe, sizeof exe)) {
        snprintf(dirs[count++], sizeof dirs[0], "%s/sets", exe);
        snprintf(dirs[count++], sizeof dirs[0], "%s/../share/wino/sets", exe);
    }
    for (int i = 0; i < count; i++) {
        FILE *f;
        if ((size_t)snprintf(path, path_cap, "%s/%s.txt", dirs[i], set) < path_cap &&
            (f = cli_open_regular(path, "r", why, cap)))
            return f;
        snprintf(looked + strlen(looked), sizeof looked - strlen(looked), "%s%s", i ? ", " : "",
                 dirs[i]);
    }
    snprintf(why, cap, "unknown layer set \"%s\" (no %s.txt in %s)", set, set,
             count ? looked : "the binary's directory: /proc/self/exe unreadable");
    return NULL;
}

/* Appends the layers of set (a name or a path) to *list (count *n, capacity *cap); the set's
 * name for reports goes to label. Returns 0, or 2 after one line on stderr. */
static int read_set(const char *verb, const char *dir, const char *set, struct bench_layer **list,
                    int *n, int *cap, char *label, size_t label_cap)
{
    char path[4096], why[4300], line[LINE_MAX_CHARS];
    FILE *f = NULL;
    if (is_path(set)) {
        snprintf(path, sizeof path, "%s", set);
        if (!(f = cli_open_regular(path, "r", why, sizeof why)))
            return cli_usage_error(verb, "--set %s: %s", set, why);
        const char *base = strrchr(set, '/') ? strrchr(set, '/') + 1 : set;
        const size_t len = strlen(base) - (is_path(base) ? 4 : 0);
        snprintf(label, label_cap, "%.*s", (int)len, base);
    } else if (!valid_set_name(set)) {
        return cli_usage_error(verb, "--set: \"%s\" is neither a set name (letters, digits, "
                                     "-_.) nor a file (a path with '/' or ending in .txt)",
                               set);
    } else {
        if (!(f = open_named_set(dir, set, path, sizeof path, why, sizeof why)))
            return cli_usage_error(verb, "%s", why);
        snprintf(label, label_cap, "%s", set);
    }
    const int first = *n;
    int lineno = 0;
    const char *bad = NULL;
    while (!bad && fgets(line, sizeof line, f)) {
        char *tok[10];
        lineno++;
        line[strcspn(line, "#")] = '\0';
        const int fields = split(line, tok, 10);
        if (!fields)
            continue;
        if (*n == *cap) {
            *cap = 2 * *cap + 16;
            struct bench_layer *grown = realloc(*list, (size_t)*cap * sizeof **list);
            if (!grown) {
                bad = "out of memory";
                break;
            }
            *list = grown;
        }
        if (fields != 10)
            bad = "expected `name N C H W K R S pad stride`";
        else if (!(bad = parse_fields(tok[0], tok + 1, &(*list)[*n])) &&
                 !(bad = check_geometry(&(*list)[*n])))
            ++*n;
    }
    fclose(f);
    if (!bad && *n == first)
        bad = "no layers";
    return bad ? cli_usage_error(verb, "%s:%d: %s", path, lineno, bad) : 0;
}

int bench_load_layers(const char *verb, const struct bench_layer_args *a, const char *default_set,
                      struct bench_layer **layers, int *count, char *name, size_t name_cap)
{
    const char *set = a->set ? a->set : a->inline_count ? NULL : default_set;
    struct bench_layer *list = NULL;
    int n = 0, cap = 0;
    if (!set && !a->inline_count)
        return cli_usage_error(verb, "--set NAME|FILE or --layer \"N C H W K R S pad stride\" "
                                     "is required (e.g. --set resnet18)");
    snprintf(name, name_cap, "inline");
    if (set && read_set(verb, a->sets_dir, set, &list, &n, &cap, name, name_cap)) {
        free(list);
        return 2;
    }
    if (a->inline_count) {
        struct bench_layer *all = realloc(list, (size_t)(n + a->inline_count) * sizeof *all);
        if (!all) {
            free(list);
            return cli_usage_error(verb, "out of memory");
        }
        list = all;
    }
    for (int i = 0; i < a->inline_count; i++) {
        const char *bad = check_geometry(&a->inline_layers[i]);
        if (bad) {
            free(list);
            return cli_usage_error(verb, "--layer %s: %s", a->inline_layers[i].name, bad);
        }
        list[n++] = a->inline_layers[i];
    }
    *layers = list;
    *count = n;
    return 0;
}
