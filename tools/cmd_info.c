/* `wino info`: the Winograd tile table of Mori et al. Table 1, computed from the exact tiles:
 * range enlargement gamma of the input transform, transformed-weight memory, theoretical MAC
 * reduction and the MAC reduction over a whole network (layers that are not stride-1 3x3 run as
 * direct convolutions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "wino_gen.h"

static const char *const usage_text =
    "usage: wino info [--set NAME|FILE] [--layer L ...] [--sets-dir DIR]\n"
    "  For F(2,3), F(3,3), F(4,3), F(6,3) on the integer-friendly points 0, 1, -1, 2, -2, 1/2,\n"
    "  -1/2 (as many as the tile needs): gamma, the largest factor by which B^T d B can exceed\n"
    "  max |d| (the squared largest absolute row sum of B^T); the weight memory alpha^2 / 9;\n"
    "  the theoretical MAC reduction 9 m^2 / alpha^2; and, over every layer of the set (default\n"
    "  resnet18-all: all convolutions of ResNet-18), direct MACs over MACs with Winograd on\n"
    "  the stride-1 3x3 layers (whole tiles, eq. 6 of Mori et al.).\n"
    BENCH_LAYER_USAGE;

static const char *const points[] = {"0,1,-1", "0,1,-1,2", "0,1,-1,2,-2", "",
                                     "0,1,-1,2,-2,1/2,-1/2"};

static double layer_macs(const struct bench_layer *l, int m)
{
    const double p = (l->h + 2 * l->pad - l->r) / l->stride + 1,
                 q = (l->w + 2 * l->pad - l->s) / l->stride + 1;
    if (!m || l->r != 3 || l->s != 3 || l->stride != 1)
        return (double)l->n * p * q * l->k * l->c * l->r * l->s;
    const double a = m + 2;
    return (double)l->n * ceil(p / m) * a * ceil(q / m) * a * l->k * l->c;
}

/* gamma: the squared largest absolute row sum of B^T. */
static int gamma_of(const wino_tile *t, double *gamma)
{
    const int a = wino_tile_alpha(t);
    double *bt = malloc(sizeof(double) * a * a), worst = 0.0;
    if (!bt || wino_tile_matrix_double(t, WINO_MATRIX_BT, bt)) {
        free(bt);
        return -1;
    }
    for (int i = 0; i < a; i++) {
        double s = 0.0;
        for (int j = 0; j < a; j++)
            s += fabs(bt[i * a + j]);
        worst = s > worst ? s : worst;
    }
    free(bt);
    *gamma = worst * worst;
    return 0;
}

int wino_cmd_info(int argc, char **argv)
{
    struct bench_layer_args layer_args;
    memset(&layer_args, 0, sizeof layer_args);
    const struct cli_option options[] = {BENCH_LAYER_OPTIONS(&layer_args, 0),
                                         {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("info", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;
    struct bench_layer *layers;
    char set[BENCH_NAME_MAX];
    int count, rc = bench_load_layers("info", &layer_args, "resnet18-all", &layers, &count, set,
                                      sizeof set);
    if (rc)
        return rc;
    double direct = 0.0;
    for (int i = 0; i < count; i++)
        direct += layer_macs(&layers[i], 0);
    printf("| tile | gamma | weight memory | MAC reduction, theoretical | MAC reduction, %s |\n"
           "| --- | ---: | ---: | ---: | ---: |\n",
           set);
    static const int ms[] = {2, 3, 4, 6};
    for (int t = 0; t < 4; t++) {
        const int m = ms[t], a = m + 2;
        wino_tile *tile;
        double gamma, wino = 0.0;
        if (wino_tile_create(m, 3, points[m - 2], 0, &tile) || gamma_of(tile, &gamma)) {
            fprintf(stderr, "wino info: F(%d,3): %s\n", m, wino_last_error());
            free(layers);
            return 1;
        }
        wino_tile_destroy(tile);
        for (int i = 0; i < count; i++)
            wino += layer_macs(&layers[i], m);
        printf("| F(%d,3) | %.6gx | %.3gx | %.3gx | %.3gx |\n", m, gamma, a * a / 9.0,
               9.0 * m * m / (a * a), direct / wino);
    }
    free(layers);
    return 0;
}
