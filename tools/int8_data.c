#include "int8_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* splitmix64: independent streams from any seed. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s) /* (0, 1) */
{
    return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(uint64_t *s)
{
    return sqrt(-2.0 * log(uniform(s))) * cos(6.283185307179586 * uniform(s));
}

/* One pass of the binomial kernel along an axis of length len with stride st (zero outside). */
static void blur(float *v, float *tmp, int len, size_t st)
{
    static const float k[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};
    for (int i = 0; i < len; i++) {
        float s = 0.0f;
        for (int d = -2; d <= 2; d++)
            if (i + d >= 0 && i + d < len)
                s += k[d + 2] * v[(size_t)(i + d) * st];
        tmp[i] = s;
    }
    for (int i = 0; i < len; i++)
        v[(size_t)i * st] = tmp[i];
}

void int8_data_activations(uint64_t seed, int n, int h, int w, int c, float *x)
{
    uint64_t s = seed;
    const size_t plane = (size_t)h * w * c;
    float *tmp = malloc(sizeof(float) * (size_t)(h > w ? h : w));
    float *gain = malloc(sizeof(float) * (size_t)c);
    if (!tmp || !gain) {
        free(tmp), free(gain);
        memset(x, 0, sizeof(float) * plane * (size_t)n);
        return;
    }
    for (int ch = 0; ch < c; ch++)
        gain[ch] = (float)exp(0.5 * gaussian(&s));
    for (int b = 0; b < n; b++) {
        float *img = x + (size_t)b * plane;
        for (size_t i = 0; i < plane; i++)
            img[i] = (float)gaussian(&s);
        for (int ch = 0; ch < c; ch++)
            for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < h; i++) /* along w */
                    blur(img + (size_t)i * w * c + ch, tmp, w, (size_t)c);
                for (int j = 0; j < w; j++) /* along h */
                    blur(img + (size_t)j * c + ch, tmp, h, (size_t)w * c);
            }
        double sq = 0.0;
        for (size_t i = 0; i < plane; i++)
            sq += (double)img[i] * img[i];
        const float shift = 0.25f * (float)sqrt(sq / (double)plane);
        for (size_t i = 0; i < plane; i++) {
            const float v = gain[i % (size_t)c] * (img[i] - shift);
            img[i] = v > 0.0f ? v : 0.0f;
        }
    }
    free(tmp), free(gain);
}

void int8_data_weights(uint64_t seed, int k, int c, float *w)
{
    uint64_t s = seed ^ 0x5bd1e995ULL;
    for (int o = 0; o < k; o++) {
        const double b = 0.05 * exp(0.3 * gaussian(&s));
        for (size_t i = 0; i < (size_t)9 * c; i++) {
            const double u = uniform(&s) - 0.5;
            w[(size_t)o * 9 * c + i] = (float)(u < 0 ? b * log(1.0 + 2.0 * u) : -b * log(1.0 - 2.0 * u));
        }
    }
}

void int8_data_quantize_u8(const float *x, size_t n, float scale, unsigned char *out)
{
    for (size_t i = 0; i < n; i++) {
        const float v = rintf(x[i] / scale);
        out[i] = (unsigned char)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
}

float int8_data_quantize_s8(const float *v, size_t n, signed char *out)
{
    float vmax = 0.0f;
    for (size_t i = 0; i < n; i++)
        vmax = fabsf(v[i]) > vmax ? fabsf(v[i]) : vmax;
    const float scale = vmax > 0.0f ? vmax / 127.0f : 1.0f;
    for (size_t i = 0; i < n; i++) {
        const float q = rintf(v[i] / scale);
        out[i] = (signed char)(q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q);
    }
    return scale;
}

float *int8_data_read_ppm(const char *path, int *h, int *w)
{
    char why[160];
    FILE *f = cli_open_regular(path, "rb", why, sizeof why);
    int maxval = 0;
    char magic[3] = {0};
    if (!f) {
        fprintf(stderr, "wino calibrate: --image %s: %s\n", path, why);
        return NULL;
    }
    if (fscanf(f, "%2s %d %d %d", magic, w, h, &maxval) != 4 || strcmp(magic, "P6") ||
        maxval != 255 || *w < 1 || *h < 1 || *w > 16384 || *h > 16384 || fgetc(f) == EOF) {
        fprintf(stderr, "wino calibrate: %s: not a readable binary PPM (P6, maxval 255)\n", path);
        fclose(f);
        return NULL;
    }
    const size_t n = (size_t)*h * *w * 3;
    unsigned char *raw = malloc(n);
    float *img = malloc(sizeof(float) * n);
    if (!raw || !img || fread(raw, 1, n, f) != n) {
        fprintf(stderr, "wino calibrate: %s: truncated or out of memory\n", path);
        free(raw), free(img), fclose(f);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        img[i] = raw[i] / 255.0f;
    free(raw);
    fclose(f);
    return img;
}
