#include "dither_glue.h"

#include <string.h>

void gh_dither_seed(gh_dither_state *state, uint32_t seed) {
    for (int j = 0; j < 8; j++) {
        uint32_t x = seed + 0x9E3779B9u * (uint32_t)(j + 1);
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        state->lanes[j] = x ? x : 0x2545F491u;
    }
}

typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef int16_t i16x8 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));

/* Eight samples: rounding adds 1.5 * 2^23, after which the integer sits in the float's low mantissa bits. */
static inline __attribute__((always_inline)) void dither8(u32x8 *lanes, const float *input, int16_t *output,
                                                          i32x8 *over) {
    f32x8 v;
    memcpy(&v, input, sizeof v);
    u32x8 s = *lanes;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    *lanes = s;
    f32x8 a = (f32x8)(0x3F800000u | ((s & 0xFFFFu) << 7));
    f32x8 b = (f32x8)(0x3F800000u | ((s >> 16) << 7));
    *over -= (v > 1.0f) | (v < -1.0f);
    f32x8 y = v * 32768.0f + (a - b);
    y = (f32x8)((i32x8)y & (y == y));
    y = __builtin_elementwise_min(__builtin_elementwise_max(y, (f32x8){0} - 32768.0f), (f32x8){0} + 32767.0f);
    i32x8 n = (i32x8)(y + 12582912.0f) - 0x4B400000;
#ifdef __SSE2__
    typedef int32_t i32x4 __attribute__((vector_size(16)));
    i32x4 lo = {n[0], n[1], n[2], n[3]}, hi = {n[4], n[5], n[6], n[7]};
    i16x8 packed = (i16x8)__builtin_ia32_packssdw128(lo, hi);
#else
    i16x8 packed = __builtin_convertvector(n, i16x8);
#endif
    memcpy(output, &packed, sizeof packed);
}

__attribute__((target_clones("avx2", "default")))
long gh_dither_to_s16(gh_dither_state *state, const float *input, long count, int16_t *output) {
    u32x8 lanes;
    memcpy(&lanes, state->lanes, sizeof lanes);
    i32x8 over = {0};
    long i = 0;
    for (; i + 8 <= count; i += 8) dither8(&lanes, input + i, output + i, &over);
    if (i < count) {
        float x[8] = {0};
        int16_t y[8];
        memcpy(x, input + i, (size_t)(count - i) * sizeof(float));
        dither8(&lanes, x, y, &over);
        memcpy(output + i, y, (size_t)(count - i) * sizeof(int16_t));
    }
    memcpy(state->lanes, &lanes, sizeof lanes);
    long total = 0;
    for (int j = 0; j < 8; j++) total += over[j];
    return total;
}
