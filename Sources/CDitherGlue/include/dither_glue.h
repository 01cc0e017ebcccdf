#ifndef GH_DITHER_GLUE_H
#define GH_DITHER_GLUE_H

#include <stdint.h>

/// Sixteen xorshift32 generators run side by side: the dither's random source.
typedef struct {
    uint32_t lanes[16];
} gh_dither_state;

/// Seeds `state` (any seed; the same seed gives the same dither).
void gh_dither_seed(gh_dither_state *state, uint32_t seed);

/// Float samples to 16-bit integers with triangular (TPDF) dither of ±1 LSB: each sample gets the difference of two
/// uniform random values before it is rounded to the nearest integer, so rounding becomes a steady noise floor that
/// does not depend on the signal. Samples beyond full scale are clipped there (NaN is written as 0). Returns how many
/// of the `count` samples were beyond full scale. Written so that the compiler turns it into vector code.
long gh_dither_to_s16(gh_dither_state *state, const float *input, long count, int16_t *output);

#endif
