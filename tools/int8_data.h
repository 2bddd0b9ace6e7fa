/* Data for calibrating and studying INT8 layers (`wino calibrate`): synthetic activations and
 * weights shaped like a trained network's, and photographs read from binary PPM files. */
#ifndef WINO_TOOLS_INT8_DATA_H
#define WINO_TOOLS_INT8_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Post-ReLU activations, NHWC n x h x w x c: white Gaussian noise blurred twice with the binomial
 * kernel (1 4 6 4 1)/16 along each axis (neighbouring pixels correlate as in natural feature
 * maps, correlation length about 2 pixels), shifted down by a quarter of its spread, a
 * log-normal gain per channel, clipped at zero (about 40% zeros). */
void int8_data_activations(uint64_t seed, int n, int h, int w, int c, float *x);

/* Heavy-tailed weights, K x 3 x 3 x C: Laplace with a log-normal scale per output channel. */
void int8_data_weights(uint64_t seed, int k, int c, float *w);

/* out[i] = x[i] / scale rounded to nearest even and clamped to 0..255: activations (>= 0) as
 * uint8 with step scale. */
void int8_data_quantize_u8(const float *x, size_t n, float scale, unsigned char *out);

/* out[i] = v[i] / scale rounded to nearest even and clamped to -127..127, with the symmetric
 * scale max |v| / 127 (1 when all zero), which is returned: weights or inputs as int8. */
float int8_data_quantize_s8(const float *v, size_t n, signed char *out);

/* Reads a binary PPM (P6, maxval 255) into a malloc'ed h x w x 3 float array scaled to [0, 1].
 * Returns NULL (with a line on stderr) when the file cannot be read or is not a regular file
 * (a FIFO would block). */
float *int8_data_read_ppm(const char *path, int *h, int *w);

#endif
