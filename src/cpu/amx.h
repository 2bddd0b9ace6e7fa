/* AMX on Linux: whether this process may use the tiles, and the one tile configuration wino's
 * AMX GEMMs use (palette 1, tmm0-7 of 16 rows x 64 bytes). */
#ifndef WINO_CPU_AMX_H
#define WINO_CPU_AMX_H

/* CPUID (AMX-TILE and AMX-INT8, or AMX-BF16), XCR0 and the OS's permission for the tile data,
 * asked for once per process. */
int wino_amx_int8_usable(void);
int wino_amx_bf16_usable(void);

/* Loads the configuration (every tile 16 rows x 64 bytes); the caller ends with _tile_release.
 * Only where one of the above says yes. */
void wino_amx_tiles_16x64(void);

#endif
