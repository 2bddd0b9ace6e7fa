/* The `wino` command-line tool: one function per verb, plus the option parser they share.
 * A verb gets argv[0] = its own name and returns the process exit status:
 * 0 success, 1 failure while running, 2 bad usage (one clear line on stderr). */
#ifndef WINO_TOOLS_CLI_H
#define WINO_TOOLS_CLI_H

#include <stddef.h>
#include <stdio.h>

int wino_cmd_gen(int argc, char **argv);
int wino_cmd_points(int argc, char **argv);
int wino_cmd_demo(int argc, char **argv);
int wino_cmd_tune(int argc, char **argv);
int wino_cmd_bench(int argc, char **argv);
int wino_cmd_info(int argc, char **argv);
int wino_cmd_calibrate(int argc, char **argv);

/* ---- options (tools/cli_args.c) ----
 * Every verb describes its options in a table and hands argv to cli_parse. An option is given as
 * `--name value` or `--name=value` (flags: `--name` alone); -h or --help asks for the usage.
 * A verb with several modes (e.g. `wino gen --op-table` beside `wino gen --m M --r R`) gives each
 * option the set of modes it belongs to: options of disjoint sets cannot be combined. */

enum cli_kind {
    CLI_FLAG,   /* no value; sets the int at dest to 1 */
    CLI_STRING, /* stores the value (a pointer into argv) in the const char * at dest */
    CLI_LONG,   /* a whole decimal integer in [min, max] into the long at dest */
    CLI_CHOICE, /* one of choices ("cpu|cuda"): its index into the int at dest */
    CLI_MODE,   /* a CLI_CHOICE whose value i also selects the verb's mode 1 << i */
    CLI_CALL    /* call(dest, value, why, cap): 0, or nonzero with the reason written to why */
};

struct cli_option {
    const char *name; /* "--set"; a table ends with a NULL name */
    enum cli_kind kind;
    void *dest;
    unsigned modes; /* the modes this option belongs to (bit i = mode i); 0 = every mode */
    long min, max;  /* CLI_LONG */
    const char *choices; /* CLI_CHOICE, CLI_MODE */
    int (*call)(void *dest, const char *value, char *why, size_t cap); /* CLI_CALL */
};

/* At most this many options per table (a bit set records which were given). */
#define CLI_MAX_OPTIONS 32

enum cli_result {
    CLI_OK = 0,
    CLI_USAGE = 2, /* bad usage: the reason is in error, the exit status is 2 */
    CLI_HELP = 3   /* -h or --help: print the verb's usage, exit 0 */
};

struct cli_parsed {
    unsigned modes;  /* the modes that every option given belongs to */
    char error[256]; /* "wino VERB: ..." after CLI_USAGE */
};

/* Parses argv[1 .. argc-1] (argv[0] is the verb) against table, storing values through the
 * options' dest pointers as it goes. Reads nothing beyond argv[argc - 1], prints nothing, keeps
 * no state of its own. Returns CLI_OK, CLI_HELP (at the first -h or --help) or CLI_USAGE. */
enum cli_result cli_parse(const char *verb, const struct cli_option *table, int argc,
                          char **argv, struct cli_parsed *out);

/* cli_parse for a verb: prints the error line to stderr. modes may be NULL. */
enum cli_result cli_parse_args(const char *verb, const struct cli_option *table, int argc,
                               char **argv, unsigned *modes);

/* A whole decimal integer with an optional '-' sign into *out: 0, or -1 when s is anything else
 * (blanks included) or out of range. Unlike strtol, it leaves errno alone. */
int cli_to_long(const char *s, long *out);

/* cli_parse_args for a verb whose usage is one text, printed on CLI_HELP: returns -1 when the
 * verb goes on, else its exit status (0 after the usage, 2 after the error line). */
int cli_parse_verb(const char *verb, const struct cli_option *table, int argc, char **argv,
                   const char *usage);

/* Prints "wino VERB: MSG" (printf-style) and a newline to stderr; returns 2 (bad usage). */
int cli_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- files the user names (tools/cli_file.c) ---- */

/* fopen(path, "r" or "rb") of a regular file only: a FIFO, a device or a directory is refused
 * without blocking. Returns NULL with the reason in why (cap bytes). */
FILE *cli_open_regular(const char *path, const char *mode, char *why, size_t cap);

/* ---- progress on a terminal (tools/cli_progress.c) ---- */

/* A one-line progress bar on stderr, drawn only when stderr is a terminal. */
struct cli_progress {
    int on;          /* stderr is a terminal */
    int percent;     /* what is shown now (-1: nothing), to redraw only on a change */
    char label[96];
    int width;       /* characters drawn, to erase them */
};

void cli_progress_start(struct cli_progress *p);
/* Shows "LABEL [####......] PCT%  EXTRA" for done of total (extra may be NULL). */
void cli_progress_draw(struct cli_progress *p, const char *label, long done, long total,
                       const char *extra);
/* Erases the line (call before printing results to a terminal, and at the end). */
void cli_progress_clear(struct cli_progress *p);

#endif
