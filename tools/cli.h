/* The `wino` command-line tool: one function per verb, plus shared option parsing.
 * A verb gets argv[0] = its own name and returns the process exit status:
 * 0 success, 1 failure while running, 2 bad usage (one clear line on stderr). */
#ifndef WINO_TOOLS_CLI_H
#define WINO_TOOLS_CLI_H

int wino_cmd_gen(int argc, char **argv);
int wino_cmd_points(int argc, char **argv);
int wino_cmd_demo(int argc, char **argv);
int wino_cmd_tune(int argc, char **argv);
int wino_cmd_bench(int argc, char **argv);
int wino_cmd_info(int argc, char **argv);
int wino_cmd_calibrate(int argc, char **argv);

/* Parses a whole decimal integer in [min, max]; on error prints
 * "wino VERB: --NAME: reason" to stderr and returns -1. */
int cli_parse_long(const char *verb, const char *name, const char *value, long min, long max,
                   long *out);

/* Returns argv[*i + 1] and advances *i, or prints "wino VERB: --NAME needs a value" and returns
 * NULL when the option is last. */
const char *cli_value(const char *verb, int argc, char **argv, int *i);

/* 1 if argv[i] is -h or --help. */
int cli_is_help(const char *arg);

#endif
