/* `wino gen`: the exact transforms of F(m, r), their op counts and optionally emitted code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/default_tiles.h"
#include "gen/op_table.h"
#include "wino_gen.h"

static const char *const usage_text =
    "usage: wino gen --m M --r R [--points P] [--integer-bt] [--integer-at] [--json]\n"
    "                [--emit c|cuda|opencl [--out FILE]]\n"
    "  Prints the points, the exact A^T, G, B^T of F(M, R) and the op counts of the 2D\n"
    "  transforms F(MxM, RxR) before and after the recipe optimizer.\n"
    "  --points P     comma-separated alpha-1 distinct rationals, e.g. 0,1,-1,2,-2 (default:\n"
    "                 the recorded most accurate points; infinity is always added last)\n"
    "  --integer-bt   rescale B^T rows to integers (factors moved into G)\n"
    "  --integer-at   rescale A^T columns to integers (factors moved into G)\n"
    "  --emit LANG    print the generated transforms as C, CUDA or OpenCL source instead of the\n"
    "                 report: standard output then holds the source alone\n"
    "                 (wino gen ... --emit c > f.c)\n"
    "  --out FILE     with --emit: write the source to FILE (standard output stays empty)\n"
    "  --json         print one JSON object with exact rational strings; with --emit and no\n"
    "                 --out, its \"code\" member holds the source\n"
    "usage: wino gen --op-table\n"
    "  Prints the op-count table of docs/transform-ops.md (m in [2,10], r in {3,5,7}).\n"
    "usage: wino gen --write-defaults DIR\n"
    "  Regenerates the committed transforms of the default tiles (DIR/src/cpu/generated,\n"
    "  DIR/src/cuda/generated, DIR/src/opencl/generated) and the table in\n"
    "  DIR/docs/transform-ops.md.\n"
    "Options may also be written --name=value.\n";

static const char *const matrix_names[3] = {"AT", "G", "BT"};
static const char *const transform_names[3] = {"input", "filter", "output"};

/* Entry (i, j) of matrix `which` as a malloc'ed exact string. */
static char *entry(const wino_tile *t, enum wino_matrix which, int i, int j)
{
    size_t need = 0;
    wino_tile_entry_string(t, which, i, j, NULL, 0, &need);
    char *s = malloc(need);
    if (s)
        wino_tile_entry_string(t, which, i, j, s, need, NULL);
    return s;
}

static char *point(const wino_tile *t, int i)
{
    size_t need = 0;
    wino_tile_point_string(t, i, NULL, 0, &need);
    char *s = malloc(need);
    if (s)
        wino_tile_point_string(t, i, s, need, NULL);
    return s;
}

static void print_matrix_text(const wino_tile *t, enum wino_matrix which, const char *label)
{
    int rows, cols, width = 1;
    wino_tile_matrix_shape(t, which, &rows, &cols);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            char *s = entry(t, which, i, j);
            if (s && (int)strlen(s) > width)
                width = (int)strlen(s);
            free(s);
        }
    printf("%s (%d x %d):\n", label, rows, cols);
    for (int i = 0; i < rows; i++) {
        printf(" ");
        for (int j = 0; j < cols; j++) {
            char *s = entry(t, which, i, j);
            printf(" %*s", width, s ? s : "?");
            free(s);
        }
        printf("\n");
    }
}

static void print_matrix_json(const wino_tile *t, enum wino_matrix which)
{
    int rows, cols;
    wino_tile_matrix_shape(t, which, &rows, &cols);
    printf("\"%s\":[", matrix_names[which]);
    for (int i = 0; i < rows; i++) {
        printf("%s[", i ? "," : "");
        for (int j = 0; j < cols; j++) {
            char *s = entry(t, which, i, j);
            printf("%s\"%s\"", j ? "," : "", s ? s : "?");
            free(s);
        }
        printf("]");
    }
    printf("]");
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            printf("\\n");
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* Percent fewer operations of opt than base, an fma weighing fma_weight. */
static double fewer(const struct wino_op_counts *base, const struct wino_op_counts *opt,
                    long fma_weight)
{
    return 100.0 * (1.0 - (double)(opt->add + opt->mul + fma_weight * opt->fma) /
                              (double)(base->add + base->mul + fma_weight * base->fma));
}

/* Prints the op counts; returns 0, or 1 when they could not be computed. */
static int print_ops(const wino_tile *t, int json)
{
    struct wino_op_counts base[3], opt[3];
    for (int k = 0; k < 3; k++)
        if (wino_tile_op_counts(t, (enum wino_transform)k, &base[k], &opt[k])) {
            fprintf(stderr, "wino gen: op counts: %s\n", wino_last_error());
            return 1;
        }
    if (json) {
        printf(",\"ops\":{");
        for (int k = 0; k < 3; k++)
            printf("%s\"%s\":{\"baseline\":{\"add\":%ld,\"mul\":%ld,\"fma\":%ld},"
                   "\"optimized\":{\"add\":%ld,\"mul\":%ld,\"fma\":%ld}}",
                   k ? "," : "", transform_names[k], base[k].add, base[k].mul, base[k].fma,
                   opt[k].add, opt[k].mul, opt[k].fma);
        printf("}");
        return 0;
    }
    printf("op counts of the 2D transforms F(%dx%d, %dx%d) (fewer ops: an fma is one operation; "
           "fewer flops: two):\n", wino_tile_m(t), wino_tile_m(t), wino_tile_r(t), wino_tile_r(t));
    printf("  %-7s %9s %9s | %9s %9s %9s | %9s %11s\n", "", "base add", "base mul", "add", "mul",
           "fma", "fewer ops", "fewer flops");
    for (int k = 0; k < 3; k++)
        printf("  %-7s %9ld %9ld | %9ld %9ld %9ld | %8.1f%% %10.1f%%\n", transform_names[k],
               base[k].add, base[k].mul, opt[k].add, opt[k].mul, opt[k].fma,
               fewer(&base[k], &opt[k], 1), fewer(&base[k], &opt[k], 2));
    return 0;
}

/* Emits code into a malloc'ed string, or NULL with the reason printed. */
static char *emit(const wino_tile *t, enum wino_emit_lang lang)
{
    size_t need = 0;
    if (wino_tile_emit(t, lang, NULL, 0, &need)) {
        fprintf(stderr, "wino gen: emit: %s\n", wino_last_error());
        return NULL;
    }
    char *code = malloc(need);
    if (!code || wino_tile_emit(t, lang, code, need, NULL)) {
        fprintf(stderr, "wino gen: emit: %s\n", code ? wino_last_error() : "out of memory");
        free(code);
        return NULL;
    }
    return code;
}

/* The two whole-repository modes: --op-table and --write-defaults DIR. */
static int op_table(void)
{
    char *table = wino_gen_op_table();
    if (!table) {
        fprintf(stderr, "wino gen: %s\n", wino_last_error());
        return 1;
    }
    fputs(table, stdout);
    free(table);
    return 0;
}

static int write_defaults(const char *dir)
{
    if (wino_gen_write_defaults(dir)) {
        fprintf(stderr, "wino gen: %s\n", wino_last_error());
        return 1;
    }
    return 0;
}

/* The finite points, each printed with fmt (one %s). */
static void print_points(const wino_tile *t, const char *fmt)
{
    for (int i = 0; i < wino_tile_alpha(t) - 1; i++) {
        char *p = point(t, i);
        printf(fmt, p ? p : "?");
        free(p);
    }
}

/* The report: points, matrices and op counts as text. Returns 0 or 1. */
static int print_report(const wino_tile *t)
{
    printf("F(%d, %d): alpha = %d\npoints:", wino_tile_m(t), wino_tile_r(t), wino_tile_alpha(t));
    print_points(t, " %s");
    printf(" inf\n");
    print_matrix_text(t, WINO_MATRIX_AT, "A^T");
    print_matrix_text(t, WINO_MATRIX_G, "G");
    print_matrix_text(t, WINO_MATRIX_BT, "B^T");
    return print_ops(t, 0);
}

/* One JSON object; code (NULL: none) becomes its "code" member. Returns 0 or 1. */
static int print_json(const wino_tile *t, const char *code)
{
    printf("{\"m\":%d,\"r\":%d,\"alpha\":%d,\"points\":[", wino_tile_m(t), wino_tile_r(t),
           wino_tile_alpha(t));
    print_points(t, "\"%s\",");
    printf("\"inf\"]");
    for (int k = 0; k < 3; k++) {
        printf(",");
        print_matrix_json(t, (enum wino_matrix)k);
    }
    const int rc = print_ops(t, 1);
    if (code) {
        printf(",\"code\":");
        print_json_string(code);
    }
    printf("}\n");
    return rc;
}

/* Writes code to path, or to standard output when path is NULL. Returns 0 or 1. */
static int write_code(const char *code, const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    int failed = !f || fputs(code, f) < 0;
    failed |= f && (path ? fclose(f) : fflush(f)) != 0;
    if (failed)
        fprintf(stderr, "wino gen: cannot write %s\n", path ? path : "to standard output");
    return failed;
}

int wino_cmd_gen(int argc, char **argv)
{
    long m = 0, r = 0;
    const char *points = NULL, *out_path = NULL, *defaults_dir = NULL;
    int json = 0, lang = -1, integer_bt = 0, integer_at = 0, table = 0;
    enum { TILE = 1, OP_TABLE = 2, DEFAULTS = 4 };
    const struct cli_option options[] = {
        {"--m", CLI_LONG, &m, TILE, 1, WINO_MAX_ALPHA, NULL, NULL},
        {"--r", CLI_LONG, &r, TILE, 1, WINO_MAX_ALPHA, NULL, NULL},
        {"--points", CLI_STRING, &points, TILE, 0, 0, NULL, NULL},
        {"--integer-bt", CLI_FLAG, &integer_bt, TILE, 0, 0, NULL, NULL},
        {"--integer-at", CLI_FLAG, &integer_at, TILE, 0, 0, NULL, NULL},
        {"--emit", CLI_CHOICE, &lang, TILE, 0, 0, "c|cuda|opencl", NULL},
        {"--out", CLI_STRING, &out_path, TILE, 0, 0, NULL, NULL},
        {"--json", CLI_FLAG, &json, TILE, 0, 0, NULL, NULL},
        {"--op-table", CLI_FLAG, &table, OP_TABLE, 0, 0, NULL, NULL},
        {"--write-defaults", CLI_STRING, &defaults_dir, DEFAULTS, 0, 0, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("gen", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;
    if (table)
        return op_table();
    if (defaults_dir)
        return write_defaults(defaults_dir);
    if (!m || !r)
        return cli_usage_error("gen", "--m and --r are required (wino gen --help)");
    if (out_path && lang < 0)
        return cli_usage_error("gen", "--out needs --emit");
    wino_tile *t = NULL;
    const unsigned flags = (integer_bt ? WINO_TILE_INTEGER_BT : 0u) |
                           (integer_at ? WINO_TILE_INTEGER_AT : 0u);
    enum wino_status st = wino_tile_create((int)m, (int)r, points, flags, &t);
    if (st) {
        fprintf(stderr, "wino gen: %s\n", wino_last_error());
        return st == WINO_INVALID_ARGUMENT ? 2 : 1;
    }
    char *code = lang >= 0 ? emit(t, (enum wino_emit_lang)lang) : NULL; /* choices in enum order */
    int rc = lang >= 0 && !code;
    if (!rc && code && (out_path || !json))
        rc = write_code(code, out_path);
    if (!rc && json)
        rc = print_json(t, out_path ? NULL : code);
    else if (!rc && lang < 0)
        rc = print_report(t);
    free(code);
    wino_tile_destroy(t);
    return rc;
}
