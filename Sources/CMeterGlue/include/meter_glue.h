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

/// dst[f] += src[f] · gain for `count` samples (a product, then a sum: never fused), and adds dst's sum of squares
/// and largest |x| to `*squares` and `*peak` (a NaN never raises it): a mixer's last pass, measured as it is written.
void gh_meter_scale_add(float *dst, const float *src, float gain, long count, float *squares, float *peak);

/// Copies `frames` interleaved stereo frames from `source` into `left` and `right`, and adds each channel's sum of
/// squares and largest |x| to `squares[c]` and `peaks[c]` (a NaN never raises it): a stream's read from its ring,
/// measured as it is copied.
void gh_meter_deinterleave_stereo(const float *source, float *left, float *right, long frames, float *squares,
                                  float *peaks);

#endif
