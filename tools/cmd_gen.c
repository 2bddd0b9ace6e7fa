/* `wino gen`: the exact transforms of F(m, r), their op counts and optionally emitted code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/default_tiles.h"
#include "gen/op_table.h"
#include "wino.h"

static const char *const usage_text =
    "usage: wino gen --m M --r R [--points P] [--integer-bt] [--integer-at] [--emit c|cuda] [--out FILE] "
    "[--json]\n"
    "  Prints the points, the exact A^T, G, B^T of F(M, R) and the op counts of the 2D\n"
    "  transforms F(MxM, RxR) before and after the recipe optimizer.\n"
    "  --points P     comma-separated alpha-1 distinct rationals, e.g. 0,1,-1,2,-2 (default:\n"
    "                 the recorded most accurate points; infinity is always added last)\n"
    "  --integer-bt   rescale B^T rows to integers (factors moved into G)\n"
    "  --integer-at   rescale A^T columns to integers (factors moved into G)\n"
    "  --emit LANG    also print the generated transforms as C or CUDA source\n"
    "  --out FILE     write the emitted source to FILE instead of standard output\n"
    "  --json         print one JSON object with exact rational strings\n"
    "usage: wino gen --op-table\n"
    "  Prints the op-count table of docs/transform-ops.md (m in [2,10], r in {3,5,7}).\n"
    "usage: wino gen --write-defaults DIR\n"
    "  Regenerates the committed transforms of the default tiles (DIR/src/cpu/generated,\n"
    "  DIR/src/cuda/generated) and the table in DIR/docs/transform-ops.md.\n";

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

int wino_cmd_gen(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--op-table"))
        return op_table();
    if (argc == 3 && !strcmp(argv[1], "--write-defaults"))
        return write_defaults(argv[2]);
    long m = 0, r = 0;
    const char *points = NULL, *out_path = NULL, *v;
    int json = 0, lang = -1;
    unsigned flags = WINO_TILE_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--integer-bt")) {
            flags |= WINO_TILE_INTEGER_BT;
        } else if (!strcmp(a, "--integer-at")) {
            flags |= WINO_TILE_INTEGER_AT;
        } else if (!strcmp(a, "--m") || !strcmp(a, "--r")) {
            if (!(v = cli_value("gen", argc, argv, &i)) ||
                cli_parse_long("gen", a + 2, v, 1, WINO_MAX_ALPHA, a[2] == 'm' ? &m : &r))
                return 2;
        } else if (!strcmp(a, "--points")) {
            if (!(points = cli_value("gen", argc, argv, &i)))
                return 2;
        } else if (!strcmp(a, "--out")) {
            if (!(out_path = cli_value("gen", argc, argv, &i)))
                return 2;
        } else if (!strcmp(a, "--emit")) {
            if (!(v = cli_value("gen", argc, argv, &i)))
                return 2;
            if (strcmp(v, "c") && strcmp(v, "cuda")) {
                fprintf(stderr, "wino gen: --emit: \"%s\" is not c or cuda\n", v);
                return 2;
            }
            lang = strcmp(v, "c") ? WINO_EMIT_CUDA : WINO_EMIT_C;
        } else {
            fprintf(stderr, "wino gen: unknown option \"%s\" (wino gen --help)\n", a);
            return 2;
        }
    }
    if (!m || !r) {
        fprintf(stderr, "wino gen: --m and --r are required (wino gen --help)\n");
        return 2;
    }
    if (out_path && lang < 0) {
        fprintf(stderr, "wino gen: --out needs --emit\n");
        return 2;
    }
    wino_tile *t = NULL;
    enum wino_status st = wino_tile_create((int)m, (int)r, points, flags, &t);
    if (st) {
        fprintf(stderr, "wino gen: %s\n", wino_last_error());
        return st == WINO_INVALID_ARGUMENT ? 2 : 1;
    }
    char *code = lang >= 0 ? emit(t, (enum wino_emit_lang)lang) : NULL;
    int rc = lang >= 0 && !code;
    if (!rc && out_path) {
        FILE *f = fopen(out_path, "w");
        if (!f || fputs(code, f) < 0 || fclose(f)) {
            fprintf(stderr, "wino gen: cannot write %s\n", out_path);
            rc = 1;
        }
    }
    const int a = wino_tile_alpha(t);
    if (!rc && json) {
        printf("{\"m\":%ld,\"r\":%ld,\"alpha\":%d,\"points\":[", m, r, a);
        for (int i = 0; i < a - 1; i++) {
            char *p = point(t, i);
            printf("\"%s\",", p ? p : "?");
            free(p);
        }
        printf("\"inf\"]");
        for (int k = 0; k < 3; k++) {
            printf(",");
            print_matrix_json(t, (enum wino_matrix)k);
        }
        rc = print_ops(t, 1);
        if (code && !out_path) {
            printf(",\"code\":");
            print_json_string(code);
        }
        printf("}\n");
    } else if (!rc) {
        printf("F(%ld, %ld): alpha = %d\npoints:", m, r, a);
        for (int i = 0; i < a - 1; i++) {
            char *p = point(t, i);
            printf(" %s", p ? p : "?");
            free(p);
        }
        printf(" inf\n");
        print_matrix_text(t, WINO_MATRIX_AT, "A^T");
        print_matrix_text(t, WINO_MATRIX_G, "G");
        print_matrix_text(t, WINO_MATRIX_BT, "B^T");
        rc = print_ops(t, 0);
        if (code && !out_path)
            fputs(code, stdout);
    }
    free(code);
    wino_tile_destroy(t);
    return rc;
}
