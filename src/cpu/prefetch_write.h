/* Lines about to be stored to, asked for with intent to write (PREFETCHW). Where the stores go
 * beyond L2, each line's first store otherwise waits for the line from the last-level cache;
 * asked for a step ahead, those reads overlap the step before. Call it only where the CPU has
 * AVX-512 (every such CPU has PREFETCHW); elsewhere it compiles to nothing. Measurements:
 * docs/training.md ("Stores that wait for the last-level cache") and docs/cpu-winograd.md. */
#ifndef WINO_CPU_PREFETCH_WRITE_H
#define WINO_CPU_PREFETCH_WRITE_H

#include <stddef.h>

/* The lines of `floats` floats at at[i * row + j * col], i < rows, j < cols. */
static inline void wino_prefetch_for_write(const float *at, int rows, ptrdiff_t row, int cols,
                                           ptrdiff_t col, int floats)
{
#if defined(__x86_64__) && defined(__GNUC__)
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            for (int f = 0; f < floats; f += 16) {
                const char *line = (const char *)(at + i * row + j * col + f);
                __asm__ volatile("prefetchw %0" : : "m"(*line));
            }
#else
    (void)at, (void)rows, (void)row, (void)cols, (void)col, (void)floats;
#endif
}

#endif
