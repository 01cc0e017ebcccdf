#include "meter_glue.h"

#include <immintrin.h>
#include <string.h>

// Products and sums stay apart, as Swift computes them: a meter must not change the sound it measures.
#pragma clang fp contract(off)

/// The loops' end: the four lanes' sum and maximum (by halving, in vector registers), then the samples from `f` to
/// `n` past the last whole vector.
static void finish(__m128 sums, __m128 tops, const float *p, long f, long n, float *squares, float *peak) {
    sums = _mm_add_ps(sums, _mm_movehl_ps(sums, sums));
    tops = _mm_max_ps(tops, _mm_movehl_ps(tops, tops));
    float sum = _mm_cvtss_f32(_mm_add_ss(sums, _mm_shuffle_ps(sums, sums, 1)));
    float top = _mm_cvtss_f32(_mm_max_ss(tops, _mm_shuffle_ps(tops, tops, 1)));
    for (; f < n; f++) {
        float x = p[f] < 0 ? -p[f] : p[f];
        sum += p[f] * p[f];
        top = x > top ? x : top;
    }
    *squares = sum;
    *peak = top;
}

/// |x| by clearing the sign bit; the maximum takes the running value where x is NaN (maxps returns its second
/// operand when either is NaN).
static void levels_sse2(const float *p, long n, float *squares, float *peak) {
    const __m128 magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    __m128 s0 = _mm_setzero_ps(), s1 = _mm_setzero_ps(), s2 = _mm_setzero_ps(), s3 = _mm_setzero_ps();
    __m128 m0 = _mm_setzero_ps(), m1 = _mm_setzero_ps(), m2 = _mm_setzero_ps(), m3 = _mm_setzero_ps();
    long f = 0;
    for (; f + 16 <= n; f += 16) {
        __m128 a = _mm_loadu_ps(p + f), b = _mm_loadu_ps(p + f + 4);
        __m128 c = _mm_loadu_ps(p + f + 8), d = _mm_loadu_ps(p + f + 12);
        m0 = _mm_max_ps(_mm_and_ps(a, magnitude), m0);
        m1 = _mm_max_ps(_mm_and_ps(b, magnitude), m1);
        m2 = _mm_max_ps(_mm_and_ps(c, magnitude), m2);
        m3 = _mm_max_ps(_mm_and_ps(d, magnitude), m3);
        s0 = _mm_add_ps(s0, _mm_mul_ps(a, a));
        s1 = _mm_add_ps(s1, _mm_mul_ps(b, b));
        s2 = _mm_add_ps(s2, _mm_mul_ps(c, c));
        s3 = _mm_add_ps(s3, _mm_mul_ps(d, d));
    }
    finish(_mm_add_ps(_mm_add_ps(s0, s1), _mm_add_ps(s2, s3)), _mm_max_ps(_mm_max_ps(m0, m1), _mm_max_ps(m2, m3)),
           p, f, n, squares, peak);
}

__attribute__((target("avx2,fma"))) static void levels_avx2(const float *p, long n, float *squares, float *peak) {
    // Four chains of each, so no maximum or add waits on the one before it in the same turn.
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps(), m2 = _mm256_setzero_ps(), m3 = _mm256_setzero_ps();
    long f = 0;
    for (; f + 32 <= n; f += 32) {
        __m256 a = _mm256_loadu_ps(p + f), b = _mm256_loadu_ps(p + f + 8);
        __m256 c = _mm256_loadu_ps(p + f + 16), d = _mm256_loadu_ps(p + f + 24);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0);
        m1 = _mm256_max_ps(_mm256_and_ps(b, magnitude), m1);
        m2 = _mm256_max_ps(_mm256_and_ps(c, magnitude), m2);
        m3 = _mm256_max_ps(_mm256_and_ps(d, magnitude), m3);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
        s2 = _mm256_fmadd_ps(c, c, s2);
        s3 = _mm256_fmadd_ps(d, d, s3);
    }
    s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    m0 = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
    for (; f + 8 <= n; f += 8) {
        __m256 a = _mm256_loadu_ps(p + f);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0);
        s0 = _mm256_fmadd_ps(a, a, s0);
    }
    finish(_mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1)),
           _mm_max_ps(_mm256_castps256_ps128(m0), _mm256_extractf128_ps(m0, 1)), p, f, n, squares, peak);
}

/// Two channels at once: eight sum chains and four maximum chains in flight, so the adds of one channel fill the
/// other's waits.
__attribute__((target("avx2,fma"))) static void pair_avx2(const float *p, const float *q, long n, float *squares,
                                                          float *peaks) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_setzero_ps(), t2 = _mm256_setzero_ps(), t3 = _mm256_setzero_ps();
    __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps(), n0 = _mm256_setzero_ps(), n1 = _mm256_setzero_ps();
    long f = 0;
    for (; f + 32 <= n; f += 32) {
        __m256 a = _mm256_loadu_ps(p + f), b = _mm256_loadu_ps(p + f + 8);
        __m256 c = _mm256_loadu_ps(q + f), d = _mm256_loadu_ps(q + f + 8);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
        t0 = _mm256_fmadd_ps(c, c, t0);
        t1 = _mm256_fmadd_ps(d, d, t1);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0);
        m1 = _mm256_max_ps(_mm256_and_ps(b, magnitude), m1);
        n0 = _mm256_max_ps(_mm256_and_ps(c, magnitude), n0);
        n1 = _mm256_max_ps(_mm256_and_ps(d, magnitude), n1);
        a = _mm256_loadu_ps(p + f + 16), b = _mm256_loadu_ps(p + f + 24);
        c = _mm256_loadu_ps(q + f + 16), d = _mm256_loadu_ps(q + f + 24);
        s2 = _mm256_fmadd_ps(a, a, s2);
        s3 = _mm256_fmadd_ps(b, b, s3);
        t2 = _mm256_fmadd_ps(c, c, t2);
        t3 = _mm256_fmadd_ps(d, d, t3);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0);
        m1 = _mm256_max_ps(_mm256_and_ps(b, magnitude), m1);
        n0 = _mm256_max_ps(_mm256_and_ps(c, magnitude), n0);
        n1 = _mm256_max_ps(_mm256_and_ps(d, magnitude), n1);
    }
    s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    t0 = _mm256_add_ps(_mm256_add_ps(t0, t1), _mm256_add_ps(t2, t3));
    m0 = _mm256_max_ps(m0, m1);
    n0 = _mm256_max_ps(n0, n1);
    for (; f + 8 <= n; f += 8) {
        __m256 a = _mm256_loadu_ps(p + f), c = _mm256_loadu_ps(q + f);
        s0 = _mm256_fmadd_ps(a, a, s0);
        t0 = _mm256_fmadd_ps(c, c, t0);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0);
        n0 = _mm256_max_ps(_mm256_and_ps(c, magnitude), n0);
    }
    finish(_mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1)),
           _mm_max_ps(_mm256_castps256_ps128(m0), _mm256_extractf128_ps(m0, 1)), p, f, n, squares, peaks);
    finish(_mm_add_ps(_mm256_castps256_ps128(t0), _mm256_extractf128_ps(t0, 1)),
           _mm_max_ps(_mm256_castps256_ps128(n0), _mm256_extractf128_ps(n0, 1)), q, f, n, squares + 1, peaks + 1);
}

__attribute__((target("avx2,fma"))) static void channels_avx2(const float *p, long stride, long channels, long n,
                                                              float *squares, float *peaks) {
    long c = 0;
    for (; c + 2 <= channels; c += 2) pair_avx2(p + c * stride, p + (c + 1) * stride, n, squares + c, peaks + c);
    if (c < channels) levels_avx2(p + c * stride, n, squares + c, peaks + c);
}

/// Two channels at once in AVX-512 registers, the tail through masked loads. The peak is an unsigned maximum of the
/// magnitudes' bits (ordered as the floats are, and cheaper here than a float maximum); a NaN's bits are above an
/// infinity's, so a channel whose maximum is a NaN is measured again by the loop that passes NaNs over.
__attribute__((target("avx512f"))) static void channels_avx512(const float *p, long stride, long channels, long n,
                                                                float *squares, float *peaks) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
    long c = 0;
    for (; c < channels; c += 2) {
        const float *a = p + c * stride, *b = c + 1 < channels ? a + stride : a;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, t0 = s0, t1 = s0;
        __m512i m0 = _mm512_setzero_si512(), m1 = m0, n0 = m0, n1 = m0;
        long f = 0;
        for (; f + 32 <= n; f += 32) {
            __m512 x0 = _mm512_loadu_ps(a + f), x1 = _mm512_loadu_ps(a + f + 16);
            __m512 y0 = _mm512_loadu_ps(b + f), y1 = _mm512_loadu_ps(b + f + 16);
            s0 = _mm512_fmadd_ps(x0, x0, s0), s1 = _mm512_fmadd_ps(x1, x1, s1);
            t0 = _mm512_fmadd_ps(y0, y0, t0), t1 = _mm512_fmadd_ps(y1, y1, t1);
            m0 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(x0), magnitude), m0);
            m1 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(x1), magnitude), m1);
            n0 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(y0), magnitude), n0);
            n1 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(y1), magnitude), n1);
        }
        for (; f < n; f += 16) {
            __mmask16 k = n - f >= 16 ? 0xffff : (__mmask16)((1u << (n - f)) - 1);
            __m512 x = _mm512_maskz_loadu_ps(k, a + f), y = _mm512_maskz_loadu_ps(k, b + f);
            s0 = _mm512_fmadd_ps(x, x, s0), t0 = _mm512_fmadd_ps(y, y, t0);
            m0 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(x), magnitude), m0);
            n0 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(y), magnitude), n0);
        }
        const unsigned infinity = 0x7f800000;
        unsigned top[2] = {_mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1)),
                           _mm512_reduce_max_epu32(_mm512_max_epu32(n0, n1))};
        float sums[2] = {_mm512_reduce_add_ps(_mm512_add_ps(s0, s1)), _mm512_reduce_add_ps(_mm512_add_ps(t0, t1))};
        for (long k = 0; k < 2 && c + k < channels; k++) {
            if (top[k] > infinity) {
                levels_sse2(k ? b : a, n, squares + c + k, peaks + c + k);
                continue;
            }
            squares[c + k] = sums[k];
            memcpy(peaks + c + k, top + k, sizeof(float));
        }
    }
}

static void channels_sse2(const float *p, long stride, long channels, long n, float *squares, float *peaks) {
    for (long c = 0; c < channels; c++) levels_sse2(p + c * stride, n, squares + c, peaks + c);
}

static void scale_add_portable(float *dst, const float *src, float gain, long n, float *squares, float *peak) {
    float sum = 0, top = *peak;
    for (long f = 0; f < n; f++) {
        float product = src[f] * gain;
        float y = dst[f] + product;
        dst[f] = y;
        sum += y * y;
        float a = y < 0 ? -y : y;
        top = a > top ? a : top;
    }
    *squares += sum;
    *peak = top;
}

/// dst += src · gain, multiplied then added (never fused, so the sum is the one the mixer makes without a meter),
/// measuring dst as it is written.
__attribute__((target("avx2,fma"))) static void scale_add_avx2(float *dst, const float *src, float gain, long n,
                                                               float *squares, float *peak) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), g = _mm256_set1_ps(gain);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, m0 = s0, m1 = s0;
    long f = 0;
    for (; f + 16 <= n; f += 16) {
        __m256 a = _mm256_add_ps(_mm256_loadu_ps(dst + f), _mm256_mul_ps(_mm256_loadu_ps(src + f), g));
        __m256 b = _mm256_add_ps(_mm256_loadu_ps(dst + f + 8), _mm256_mul_ps(_mm256_loadu_ps(src + f + 8), g));
        _mm256_storeu_ps(dst + f, a), _mm256_storeu_ps(dst + f + 8, b);
        s0 = _mm256_fmadd_ps(a, a, s0), s1 = _mm256_fmadd_ps(b, b, s1);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0), m1 = _mm256_max_ps(_mm256_and_ps(b, magnitude), m1);
    }
    s0 = _mm256_add_ps(s0, s1);
    m0 = _mm256_max_ps(m0, m1);
    float sums[8], tops[8];
    _mm256_storeu_ps(sums, s0), _mm256_storeu_ps(tops, m0);
    float sum = ((sums[0] + sums[4]) + (sums[1] + sums[5])) + ((sums[2] + sums[6]) + (sums[3] + sums[7]));
    float top = *peak;
    for (int j = 0; j < 8; j++) top = tops[j] > top ? tops[j] : top;
    *squares += sum;
    *peak = top;
    scale_add_portable(dst + f, src + f, gain, n - f, squares, peak);
}

typedef void (*scale_adder)(float *, const float *, float, long, float *, float *);

static scale_adder chosen_scale_add = scale_add_portable;

void gh_meter_scale_add(float *dst, const float *src, float gain, long count, float *squares, float *peak) {
    chosen_scale_add(dst, src, gain, count, squares, peak);
}

static void deinterleave_portable(const float *source, float *left, float *right, long frames, float *squares,
                                  float *peaks) {
    for (long f = 0; f < frames; f++) {
        float x[2] = {source[2 * f], source[2 * f + 1]};
        left[f] = x[0], right[f] = x[1];
        for (int c = 0; c < 2; c++) {
            float a = x[c] < 0 ? -x[c] : x[c];
            squares[c] += x[c] * x[c];
            peaks[c] = a > peaks[c] ? a : peaks[c];
        }
    }
}

/// Splits interleaved stereo into two channels, measuring each as it is copied. The sums and maxima run over the
/// interleaved vectors (even lanes left, odd lanes right) and are split at the end.
__attribute__((target("avx2,fma"))) static void deinterleave_avx2(const float *source, float *left, float *right,
                                                                  long frames, float *squares, float *peaks) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, m0 = s0, m1 = s0;
    long f = 0;
    for (; f + 8 <= frames; f += 8) {
        __m256 a = _mm256_loadu_ps(source + 2 * f), b = _mm256_loadu_ps(source + 2 * f + 8);
        s0 = _mm256_fmadd_ps(a, a, s0), s1 = _mm256_fmadd_ps(b, b, s1);
        m0 = _mm256_max_ps(_mm256_and_ps(a, magnitude), m0), m1 = _mm256_max_ps(_mm256_and_ps(b, magnitude), m1);
        // [L0 L1 L4 L5 | L2 L3 L6 L7], then the middle 64-bit pairs swapped into order.
        __m256 l = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), r = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(left + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(l), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(right + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(r), _MM_SHUFFLE(3, 1, 2, 0))));
    }
    float sums[8], tops[8];
    _mm256_storeu_ps(sums, _mm256_add_ps(s0, s1)), _mm256_storeu_ps(tops, _mm256_max_ps(m0, m1));
    float sum[2] = {(sums[0] + sums[4]) + (sums[2] + sums[6]), (sums[1] + sums[5]) + (sums[3] + sums[7])};
    float top[2] = {peaks[0], peaks[1]};
    for (int j = 0; j < 8; j++) top[j & 1] = tops[j] > top[j & 1] ? tops[j] : top[j & 1];
    for (int c = 0; c < 2; c++) squares[c] += sum[c], peaks[c] = top[c];
    deinterleave_portable(source + 2 * f, left + f, right + f, frames - f, squares, peaks);
}

typedef void (*stereo_splitter)(const float *, float *, float *, long, float *, float *);

static stereo_splitter chosen_deinterleave = deinterleave_portable;

void gh_meter_deinterleave_stereo(const float *source, float *left, float *right, long frames, float *squares,
                                  float *peaks) {
    chosen_deinterleave(source, left, right, frames, squares, peaks);
}

typedef void (*run_levels)(const float *, long, long, long, float *, float *);

static run_levels chosen = channels_sse2;

/// Chooses the AVX2 loops before main runs, so the render world never asks (nor races on the choice).
__attribute__((constructor)) static void choose_run_levels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen = channels_avx2;
        chosen_scale_add = scale_add_avx2;
        chosen_deinterleave = deinterleave_avx2;
    }
    if (__builtin_cpu_supports("avx512f")) chosen = channels_avx512;
}

void gh_meter_run_levels_sse2(const float *samples, long stride, long channels, long count, float *squares,
                              float *peaks) {
    channels_sse2(samples, stride, channels, count, squares, peaks);
}

void gh_meter_run_levels(const float *samples, long stride, long channels, long count, float *squares,
                         float *peaks) {
    chosen(samples, stride, channels, count, squares, peaks);
}
