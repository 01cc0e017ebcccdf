#ifndef GH_METER_GLUE_H
#define GH_METER_GLUE_H

/// For each of `channels` channels (channel c at `samples + c * stride`), the sum of squares and the largest |x| of
/// `count` samples, into `squares[c]` and `peaks[c]`: the level meter's inner loop, in AVX2 with FMA where the
/// processor has them (chosen once, when the program loads; two channels a turn), else in SSE2. A NaN sample never
/// raises the peak; it spoils the sum. No allocation, no lock: the render world calls it.
void gh_meter_run_levels(const float *samples, long stride, long channels, long count, float *squares, float *peaks);

/// The same in SSE2 alone, as processors without AVX2 run it (the tests compare the two).
void gh_meter_run_levels_sse2(const float *samples, long stride, long channels, long count, float *squares,
                              float *peaks);

#endif
