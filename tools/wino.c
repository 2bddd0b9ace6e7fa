/* `wino`: command-line front of the library. Each verb lives in tools/cmd_<verb>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "wino.h"

struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct verb verbs[] = {
    {"bench", wino_cmd_bench, "time wino against oneDNN and OpenBLAS on a named layer set"},
    {"calibrate", wino_cmd_calibrate, "INT8 Winograd clipping factors from data; error study"},
    {"demo", wino_cmd_demo, "generate F(4,3), convolve a default layer, report the error"},
    {"info", wino_cmd_info, "Winograd tile table: range enlargement, memory, MAC reduction"},
    {"gen", wino_cmd_gen, "print the exact transforms of F(m, r), op counts, emitted code"},
    {"points", wino_cmd_points, "search the most accurate interpolation points for a tile size"},
    {"tune", wino_cmd_tune, "measure the best algorithm, tile and variant per layer into a cache"},
};

static void usage(void)
{
    printf("usage: wino VERB [options]   (wino VERB --help for a verb's options)\n\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        printf("  %-10s %s\n", verbs[i].name, verbs[i].summary);
    printf("\nwino %s: Winograd convolution with exact generated transforms.\n",
            wino_version());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "wino: no verb given (wino --help lists them)\n");
        return 2;
    }
    if (cli_is_help(argv[1])) {
        usage();
        return 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(argv[1], verbs[i].name))
            return verbs[i].run(argc - 1, argv + 1);
    fprintf(stderr, "wino: unknown verb \"%s\" (wino --help lists them)\n", argv[1]);
    return 2;
}
