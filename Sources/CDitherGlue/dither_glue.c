#include "dither_glue.h"

#include <string.h>

void gh_dither_seed(gh_dither_state *state, uint32_t seed) {
    for (int j = 0; j < 16; j++) {
        uint32_t x = seed + 0x9E3779B9u * (uint32_t)(j + 1);
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        state->lanes[j] = x ? x : 0x2545F491u;
    }
}

typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef int16_t i16x16 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));

/* Sixteen samples: rounding adds 1.5 * 2^23, after which the integer sits in the float's low mantissa bits; the
   clamp before it makes the narrowing to 16 bits exact. */
static inline __attribute__((always_inline)) void dither16(u32x16 *lanes, const float *input, int16_t *output,
                                                           i32x16 *over) {
    f32x16 v;
    memcpy(&v, input, sizeof v);
    u32x16 s = *lanes;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    *lanes = s;
    f32x16 a = (f32x16)(0x3F800000u | ((s & 0xFFFFu) << 7));
    f32x16 b = (f32x16)(0x3F800000u | ((s >> 16) << 7));
    *over -= (v > 1.0f) | (v < -1.0f);
    f32x16 y = v * 32768.0f + (a - b);
    y = (f32x16)((i32x16)y & (y == y));
    y = __builtin_elementwise_min(__builtin_elementwise_max(y, (f32x16){0} - 32768.0f), (f32x16){0} + 32767.0f);
    i32x16 n = (i32x16)(y + 12582912.0f) - 0x4B400000;
    i16x16 packed = __builtin_convertvector(n, i16x16);
    memcpy(output, &packed, sizeof packed);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
long gh_dither_to_s16(gh_dither_state *state, const float *input, long count, int16_t *output) {
    u32x16 lanes;
    memcpy(&lanes, state->lanes, sizeof lanes);
    i32x16 over = {0};
    long i = 0;
    for (; i + 16 <= count; i += 16) dither16(&lanes, input + i, output + i, &over);
    if (i < count) {
        float x[16] = {0};
        int16_t y[16];
        memcpy(x, input + i, (size_t)(count - i) * sizeof(float));
        dither16(&lanes, x, y, &over);
        memcpy(output + i, y, (size_t)(count - i) * sizeof(int16_t));
    }
    memcpy(state->lanes, &lanes, sizeof lanes);
    long total = 0;
    for (int j = 0; j < 16; j++) total += over[j];
    return total;
}
