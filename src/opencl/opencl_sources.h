/* The OpenCL C texts the component builds from, embedded at build time from the committed
 * files by cmake/embed_opencl.cmake: src/opencl/winograd_float.cl, and the generator's emission
 * of every default tile in src/opencl/generated. */
#ifndef WINO_OPENCL_OPENCL_SOURCES_H
#define WINO_OPENCL_OPENCL_SOURCES_H

/* src/opencl/winograd_float.cl */
extern const char wino_opencl_winograd_float[];

/* The transforms of F(m x m, r x r), or NULL for a tile that is not a default one. */
const char *wino_opencl_tile_source(int m, int r);

#endif
