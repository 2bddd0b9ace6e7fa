/* OpenCL programs built from source for one device, their binaries kept on disk so that a
 * layer's kernels are compiled once per device and driver. */
#ifndef WINO_OPENCL_PROGRAM_CACHE_H
#define WINO_OPENCL_PROGRAM_CACHE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "wino.h"

/* Builds source with options for device: from the cached binary when the cache directory holds
 * one made from the same device name, driver version, options and source, else from source
 * (then, with keep, the binary is stored, atomically: a new file renamed into place; the tuner's
 * candidates are not kept, since fetching a binary makes pocl compile every kernel of the
 * program, slower than the build itself). The cache directory
 * is $WINO_OPENCL_CACHE, else $XDG_CACHE_HOME/wino/opencl, else $HOME/.cache/wino/opencl;
 * WINO_OPENCL_CACHE=off (or an unwritable directory) builds from source every time. On failure
 * the compiler's log begins wino_last_error(). *from_cache (optional) tells which way. */
enum wino_status wino_opencl_build(cl_context context, cl_device_id device, const char *source,
                                   const char *options, int keep, cl_program *program,
                                   int *from_cache);

/* The device's name and driver version as one string ("NAME / DRIVER", tabs and line breaks
 * made spaces), the key of its cached programs and tuning entries. */
enum wino_status wino_opencl_device_key(cl_device_id device, char *key, size_t cap);

#endif
