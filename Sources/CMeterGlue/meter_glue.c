#include "meter_glue.h"

#include <immintrin.h>

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

static void channels_sse2(const float *p, long stride, long channels, long n, float *squares, float *peaks) {
    for (long c = 0; c < channels; c++) levels_sse2(p + c * stride, n, squares + c, peaks + c);
}

typedef void (*run_levels)(const float *, long, long, long, float *, float *);

static run_levels chosen = channels_sse2;

/// Chooses the AVX2 loops before main runs, so the render world never asks (nor races on the choice).
__attribute__((constructor)) static void choose_run_levels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) chosen = channels_avx2;
}

void gh_meter_run_levels_sse2(const float *samples, long stride, long channels, long count, float *squares,
                              float *peaks) {
    channels_sse2(samples, stride, channels, count, squares, peaks);
}

void gh_meter_run_levels(const float *samples, long stride, long channels, long count, float *squares,
                         float *peaks) {
    chosen(samples, stride, channels, count, squares, peaks);
}
