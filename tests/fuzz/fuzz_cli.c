/* Fuzz target: the `wino` tool's option parser (tools/cli_args.c) and its verbs' tables.
 * Input: the command line after "wino", its arguments separated by NUL bytes
 * ("gen\0--m\0004\0--r\0003"); the first is the verb.
 * 1. cli_parse with a table of every kind of option, on an argv of exactly argc entries (the
 *    parser reads nothing beyond): a result of the three, a one-line "wino fuzz: ..." message
 *    for bad usage, and values within their bounds.
 * 2. The tool itself (tools/wino.c, main renamed wino_cli_main) on the same command line. The
 *    verbs parse their options before any work, so a command that would run heavy work or write
 *    files (see runs_cheaply) gets an unknown option appended: every option before it still
 *    goes through the verb's own table, and the verb must stop with status 2 (0 after --help).
 *    Cheap commands run for real: their status must be 0, 1 or 2. */
#include <limits.h>

#include "bench.h"
#include "cli.h"
#include "fuzz/fuzz_input.h"

#define MAX_ARGS 64
#define SENTINEL "--fuzz-end"

int wino_cli_main(int argc, char **argv);

/* ---- 1. the parser on a table of every kind ---- */

struct parsed_values {
    int flag, choice, mode;
    const char *string;
    long number;
    struct bench_layer_args layers;
};

static void check_parser(int argc, char **argv)
{
    struct parsed_values v;
    memset(&v, 0, sizeof v);
    v.choice = v.mode = -1;
    v.number = LONG_MIN;
    enum { A = 1, B = 2 };
    const struct cli_option table[] = {
        {"--flag", CLI_FLAG, &v.flag, 0, 0, 0, NULL, NULL},
        {"--string", CLI_STRING, &v.string, A, 0, 0, NULL, NULL},
        {"--number", CLI_LONG, &v.number, A, -5, 1000, NULL, NULL},
        {"--choice", CLI_CHOICE, &v.choice, B, 0, 0, "c|cuda|x", NULL},
        {"--mode", CLI_MODE, &v.mode, 0, 0, 0, "a|b", NULL},
        BENCH_LAYER_OPTIONS(&v.layers, B),
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    struct cli_parsed out;
    const enum cli_result r = cli_parse("fuzz", table, argc, argv, &out);
    FUZZ_REQUIRE(r == CLI_OK || r == CLI_USAGE || r == CLI_HELP, "result %d", (int)r);
    const char *end = memchr(out.error, '\0', sizeof out.error);
    FUZZ_REQUIRE(end, "error message not terminated");
    const size_t len = (size_t)(end - out.error);
    FUZZ_REQUIRE((r == CLI_USAGE) == (len > 0), "result %d with message \"%s\"", (int)r,
                 out.error);
    if (r == CLI_USAGE)
        FUZZ_REQUIRE(!strncmp(out.error, "wino fuzz: ", 11) && !strchr(out.error, '\n'),
                     "message \"%s\"", out.error);
    if (r != CLI_OK)
        return;
    FUZZ_REQUIRE(v.number == LONG_MIN || (v.number >= -5 && v.number <= 1000), "number %ld",
                 v.number);
    FUZZ_REQUIRE(v.choice >= -1 && v.choice <= 2 && v.mode >= -1 && v.mode <= 1,
                 "choice %d, mode %d", v.choice, v.mode);
    FUZZ_REQUIRE(v.flag == 0 || v.flag == 1, "flag %d", v.flag);
    FUZZ_REQUIRE(v.layers.inline_count >= 0 && v.layers.inline_count <= BENCH_INLINE_MAX,
                 "%d inline layers", v.layers.inline_count);
    const int in_a = v.string || v.number != LONG_MIN;
    const int in_b = v.choice >= 0 || v.layers.inline_count || v.layers.set || v.layers.sets_dir;
    FUZZ_REQUIRE(!(in_a && in_b) && !(v.mode == 0 && in_b) && !(v.mode == 1 && in_a),
                 "options of two modes accepted together (--mode %d)", v.mode);
    if (!v.string)
        return;
    int inside = 0; /* the value is (the tail of) one of the arguments */
    for (int i = 1; i < argc && !inside; i++)
        inside = v.string >= argv[i] && v.string <= argv[i] + strlen(argv[i]);
    FUZZ_REQUIRE(inside, "--string points outside argv");
}

/* ---- 2. the tool ---- */

/* The value of the last --NAME in argv (as "--NAME V" or "--NAME=V"), or NULL. */
static const char *last_value(int argc, char **argv, const char *name)
{
    const size_t len = strlen(name);
    const char *value = NULL;
    for (int i = 2; i < argc; i++)
        if (!strncmp(argv[i], name, len) && argv[i][len] == '=')
            value = argv[i] + len + 1;
        else if (!strcmp(argv[i], name))
            value = i + 1 < argc ? argv[i + 1] : NULL;
    return value;
}

static int given(int argc, char **argv, const char *name)
{
    const size_t len = strlen(name);
    for (int i = 2; i < argc; i++)
        if (!strncmp(argv[i], name, len) && (argv[i][len] == '\0' || argv[i][len] == '='))
            return 1;
    return 0;
}

/* An integer value of the last --NAME, or def when it is absent or not a plain integer. */
static long last_long(int argc, char **argv, const char *name, long def)
{
    const char *s = last_value(argc, argv, name);
    long v;
    return s && !cli_to_long(s, &v) ? v : def;
}

/* 1 when the command finishes in milliseconds and writes no file: never bench, calibrate or demo
 * (they time convolutions), tune only with --check, points only --eval of a small tile with few
 * trials, gen of tiles up to alpha 8; no option that writes a file or runs every tile; no '/'
 * outside a point list (paths to devices or other trees). */
static int runs_cheaply(int argc, char **argv)
{
    static const char *const writers[] = {"--out", "--write-defaults", "--write-db", "--cache",
                                          "--op-table", "--all"};
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        if (given(argc, argv, writers[i]))
            return 0;
    for (int i = 1; i < argc; i++)
        if (strchr(argv[i], '/') && strncmp(argv[i], "--points=", 9) &&
            strcmp(argv[i - 1], "--points"))
            return 0;
    if (argc < 2)
        return 1;
    const char *verb = argv[1];
    if (!strcmp(verb, "bench") || !strcmp(verb, "calibrate") || !strcmp(verb, "demo"))
        return 0;
    if (!strcmp(verb, "tune"))
        return given(argc, argv, "--check");
    if (!strcmp(verb, "points"))
        return given(argc, argv, "--eval") && last_long(argc, argv, "--alpha", 99) <= 8 &&
               last_long(argc, argv, "--trials", LONG_MAX) <= 64;
    if (!strcmp(verb, "gen"))
        return last_long(argc, argv, "--m", 99) <= 9 && last_long(argc, argv, "--r", 99) <= 9 &&
               last_long(argc, argv, "--m", 99) + last_long(argc, argv, "--r", 99) <= 9;
    return 1; /* info, help, --version, unknown verbs */
}

static void check_tool(int argc, char **args)
{
    char *argv[MAX_ARGS + 3]; /* "wino", the arguments, maybe the sentinel, NULL */
    char wino[] = "wino", sentinel[] = SENTINEL;
    argv[0] = wino;
    for (int i = 0; i < argc; i++)
        argv[i + 1] = args[i];
    int n = argc + 1;
    const int real = runs_cheaply(n, argv);
    if (!real)
        argv[n++] = sentinel;
    argv[n] = NULL;
    const int status = wino_cli_main(n, argv);
    fflush(stdout);
    if (real)
        FUZZ_REQUIRE(status >= 0 && status <= 2, "exit status %d", status);
    else
        FUZZ_REQUIRE(status == 0 || status == 2, "exit status %d with an unknown option last",
                     status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *args[MAX_ARGS];
    int argc = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAX_ARGS; i++)
        if (i == size || !data[i]) {
            struct fuzz_input in = {data, i, start};
            args[argc++] = fuzz_string(&in, i - start); /* exactly its length, for ASan */
            start = i + 1;
        }
    int ok = 1;
    for (int i = 0; i < argc; i++)
        ok &= args[i] != NULL;
    if (ok) {
        char **argv = malloc(sizeof(char *) * (size_t)argc); /* no terminating NULL */
        FUZZ_REQUIRE(argv, "out of memory");
        memcpy(argv, args, sizeof(char *) * (size_t)argc);
        check_parser(argc, argv);
        free(argv);
        check_tool(argc, args);
    }
    for (int i = 0; i < argc; i++)
        free(args[i]);
    return 0;
}
