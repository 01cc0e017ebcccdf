#ifndef GH_AUDIO_GUARD_GLUE_H
#define GH_AUDIO_GUARD_GLUE_H

/// 1 when every one of `count` samples is finite and its magnitude at most `ceiling`, else 0: the corrupt-audio
/// guard's test, in AVX2 where the processor has it (chosen once, when the program loads). It reads every sample (no
/// early exit): a block is a granule, and nearly every block passes.
int gh_audio_guard_plausible(const float *samples, long count, float ceiling);

#endif
