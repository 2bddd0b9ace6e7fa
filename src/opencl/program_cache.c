/* The on-disk cache of OpenCL program binaries (src/opencl/program_cache.h). A cache file holds
 * the whole key (device, driver, options, source) before the binary, so a hash collision or a
 * stale file is detected by comparison, never trusted. */
#define _POSIX_C_SOURCE 200809L
#include "opencl/program_cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

#define CACHE_MAGIC "wino-opencl-program 1\n"

enum wino_status wino_opencl_device_key(cl_device_id device, char *key, size_t cap)
{
    char name[256] = "", driver[128] = "";
    if (clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof driver - 1, driver, NULL) !=
            CL_SUCCESS)
        return wino_fail(WINO_INVALID_ARGUMENT, "cl_device is not an OpenCL device");
    snprintf(key, cap, "%s / %s", name, driver);
    for (char *c = key; *c; c++) /* one field of a line in the tuning database */
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
    return WINO_SUCCESS;
}

/* The cache directory (created when missing) into dir, or 0 when caching is off. */
static int cache_directory(char *dir, size_t cap)
{
    const char *named = getenv("WINO_OPENCL_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    if (named && !strcmp(named, "off"))
        return 0;
    if (named && named[0])
        snprintf(dir, cap, "%s", named);
    else if (xdg && xdg[0])
        snprintf(dir, cap, "%s/wino/opencl", xdg);
    else if (home && home[0])
        snprintf(dir, cap, "%s/.cache/wino/opencl", home);
    else
        return 0;
    /* mkdir -p: each prefix in turn, existing ones are fine */
    for (char *slash = strchr(dir + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash)
            *slash = '\0';
        const int made = mkdir(dir, 0755) == 0 || errno == EEXIST;
        if (slash)
            *slash = '/';
        if (!made)
            return 0;
        if (!slash)
            return 1;
    }
}

/* FNV-1a over the key's parts, for the file name. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL; /* a separator, so that parts cannot run together */
}

/* The binary of the cache file path if its key is key (malloc'ed, *size set), else NULL. */
static unsigned char *read_binary(const char *path, const char *key, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    const size_t key_len = strlen(key);
    char *stored = malloc(key_len + 1);
    unsigned char *binary = NULL;
    uint64_t len = 0;
    if (stored && fread(stored, 1, key_len, f) == key_len && !memcmp(stored, key, key_len) &&
        fread(&len, sizeof len, 1, f) == 1 && len > 0 && len < ((uint64_t)1 << 31) &&
        (binary = malloc((size_t)len)) && fread(binary, 1, (size_t)len, f) == len)
        *size = (size_t)len;
    else {
        free(binary);
        binary = NULL;
    }
    free(stored);
    fclose(f);
    return binary;
}

/* Stores program's binary under path with key, through a temporary file renamed into place;
 * a failure leaves no file (the cache is an optimisation). */
static void write_binary(const char *path, const char *key, cl_program program)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
            CL_SUCCESS ||
        !size)
        return;
    unsigned char *binary = malloc(size);
    if (!binary)
        return;
    unsigned char *binaries[1] = {binary};
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = NULL;
    int ok = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, NULL) ==
                 CL_SUCCESS &&
             (f = fopen(tmp, "wb")) != NULL;
    const uint64_t len = size;
    ok = ok && fwrite(key, 1, strlen(key), f) == strlen(key) &&
         fwrite(&len, sizeof len, 1, f) == 1 && fwrite(binary, 1, size, f) == size;
    if (f && fclose(f))
        ok = 0;
    if (f && (!ok || rename(tmp, path)))
        remove(tmp);
    free(binary);
}

/* clBuildProgram, with the log in the failure message. */
static enum wino_status build(cl_program program, cl_device_id device, const char *options)
{
    const cl_int err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err == CL_SUCCESS)
        return WINO_SUCCESS;
    char log[200] = "";
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    for (char *c = log; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return wino_fail(WINO_INTERNAL_ERROR, "OpenCL build failed (%d): %s", (int)err, log);
}

enum wino_status wino_opencl_build(cl_context context, cl_device_id device, const char *source,
                                   const char *options, int keep, cl_program *program,
                                   int *from_cache)
{
    *program = NULL;
    if (from_cache)
        *from_cache = 0;
    char device_key[400], dir[4096], path[4200];
    enum wino_status st = wino_opencl_device_key(device, device_key, sizeof device_key);
    if (st)
        return st;
    const int cached = cache_directory(dir, sizeof dir);
    char *key = NULL;
    if (cached) {
        const uint64_t h = fnv1a(fnv1a(fnv1a(14695981039346656037ULL, device_key), options),
                                 source);
        snprintf(path, sizeof path, "%s/%016llx.bin", dir, (unsigned long long)h);
        const size_t n = strlen(CACHE_MAGIC) + strlen(device_key) + strlen(options) +
                         strlen(source) + 3;
        if ((key = malloc(n)))
            snprintf(key, n, "%s%s\n%s\n%s", CACHE_MAGIC, device_key, options, source);
    }
    size_t size = 0;
    unsigned char *binary = key ? read_binary(path, key, &size) : NULL;
    cl_int err = CL_SUCCESS, binary_status = CL_SUCCESS;
    if (binary) {
        const unsigned char *binaries[1] = {binary};
        *program = clCreateProgramWithBinary(context, 1, &device, &size, binaries,
                                             &binary_status, &err);
        free(binary);
        if (err == CL_SUCCESS && binary_status == CL_SUCCESS &&
            build(*program, device, options) == WINO_SUCCESS) {
            if (from_cache)
                *from_cache = 1;
            free(key);
            wino_ok();
            return WINO_SUCCESS;
        }
        if (*program) /* a binary the driver no longer takes: rebuilt from source below */
            clReleaseProgram(*program);
        *program = NULL;
    }
    *program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (err != CL_SUCCESS) {
        free(key);
        *program = NULL;
        return wino_fail(err == CL_OUT_OF_HOST_MEMORY ? WINO_OUT_OF_MEMORY : WINO_DEVICE_ERROR,
                         "clCreateProgramWithSource: error %d", (int)err);
    }
    st = build(*program, device, options);
    if (st) {
        clReleaseProgram(*program);
        *program = NULL;
    } else if (key && keep) {
        write_binary(path, key, *program);
    }
    free(key);
    return st;
}
