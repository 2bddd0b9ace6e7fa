/* Reading a fuzz input as a stream of small fields, shared by the fuzz targets. A field read
 * past the end of the input is 0, so every input decodes to some call. */
#ifndef WINO_TESTS_FUZZ_INPUT_H
#define WINO_TESTS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
};

static inline uint8_t fuzz_u8(struct fuzz_input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

/* One of count choices. */
static inline int fuzz_pick(struct fuzz_input *in, int count)
{
    return fuzz_u8(in) % count;
}

static inline uint32_t fuzz_u32(struct fuzz_input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | fuzz_u8(in);
    return v;
}

/* A NUL-terminated malloc'ed copy of the next `len` bytes (fewer at the end; bytes after an
 * embedded NUL are cut off by C string semantics). NULL when out of memory. */
static inline char *fuzz_string(struct fuzz_input *in, size_t len)
{
    if (len > in->size - in->pos)
        len = in->size - in->pos;
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, in->data + in->pos, len);
        s[len] = '\0';
    }
    in->pos += len;
    return s;
}

/* Stops the fuzzer with a message: libFuzzer saves the input as a crash file. */
#define FUZZ_REQUIRE(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

#endif
