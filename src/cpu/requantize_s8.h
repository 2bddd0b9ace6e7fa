/* Step 6 of docs/int8-winograd.md for the CPU INT8 engines (Winograd and direct): one output
 * pixel's K int32 sums to bytes, vectorized for AVX-512 and AVX2 with the same bits as the
 * scalar wino_int8_requantize (one fused multiply-add, the clamp, round to nearest even). */
#ifndef WINO_CPU_REQUANTIZE_S8_H
#define WINO_CPU_REQUANTIZE_S8_H

#include <stdint.h>

#include "cpu/gemm_f32.h" /* enum wino_isa */
#include "op/int8_layer.h"

/* Rows of sums to bytes: out[i ldo + k] = the low byte of requantize(y[i ldy + k - k0]) for
 * i < rows and k0 <= k < k1 <= L->k (the same bits for int8 and uint8 outputs), the sums of
 * channels k0 .. k1 - 1 starting at y. isa <= wino_cpu_isa(). */
void wino_s8_requantize(enum wino_isa isa, const struct wino_int8_layer *L, int rows,
                        const int32_t *y, size_t ldy, int k0, int k1, uint8_t *out, size_t ldo);

#endif
