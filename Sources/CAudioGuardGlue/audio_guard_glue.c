#include "audio_guard_glue.h"

/* A square is NaN or above the ceiling's square for every implausible sample, infinities included; the compiler
   turns the loop into vector compares whose results are gathered with AND. */
__attribute__((target_clones("avx2", "default")))
int gh_audio_guard_plausible(const float *samples, long count, float ceiling) {
    const float limit = ceiling * ceiling;
    int plausible = 1;
    for (long i = 0; i < count; i++) plausible &= samples[i] * samples[i] <= limit;
    return plausible;
}
