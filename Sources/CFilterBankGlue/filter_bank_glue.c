#include "filter_bank_glue.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define S GH_FILTER_BANK_SECTIONS
#define N GH_FILTER_BANK_LANES

/// A section's realization (A, B, C, D = c0): coupled coordinates when its poles are complex (the state turns by
/// the poles' angle and shrinks by their radius), the direct form's when they are real.
static void realize(double c0, double c1, double a1, double a2, double A[2][2], double B[2], double C[2]) {
    double b1 = c1 - a1 * c0, b2 = -a2 * c0;
    double disc = a2 - a1 * a1 / 4;
    if (disc > 1e-30) {
        double re = -a1 / 2, im = sqrt(disc);
        A[0][0] = re, A[0][1] = -im, A[1][0] = im, A[1][1] = re;
        C[0] = b1, C[1] = (b2 + b1 * re) / im;
        // Input and output weights of like size, so neither state is much larger than the signal it carries.
        double scale = sqrt(sqrt(C[0] * C[0] + C[1] * C[1]));
        if (scale == 0) scale = 1;
        B[0] = scale, B[1] = 0;
        C[0] /= scale, C[1] /= scale;
    } else {
        A[0][0] = -a1, A[0][1] = 1, A[1][0] = -a2, A[1][1] = 0;
        B[0] = b1, B[1] = b2;
        C[0] = 1, C[1] = 0;
    }
}

/// Where the wide tables belong in the bank's room: its first 64-byte boundary, in bytes from the room's start.
static long wide_offset(const gh_filter_bank *bank) {
    uintptr_t room = (uintptr_t)bank->wideRoom;
    return (long)(((room + 63) & ~(uintptr_t)63) - room);
}

/// The bank's wide tables, moved first onto the 64-byte boundary in its room when a copy of the bank left them off
/// it.
static gh_filter_bank_wide *wide_tables(gh_filter_bank *bank) {
    char *room = (char *)bank->wideRoom;
    long at = wide_offset(bank);
    if (at != bank->wideAt) {
        memmove(room + at, room + bank->wideAt, sizeof(gh_filter_bank_wide));
        bank->wideAt = at;
    }
    return (gh_filter_bank_wide *)(void *)(room + at);
}

void gh_filter_bank_design(gh_filter_bank *bank, float d, const float *lanes, int sections) {
    const float *c0 = lanes, *c1 = lanes + 16, *a1 = lanes + 32, *a2 = lanes + 48;
    memset(bank, 0, sizeof *bank);
    bank->wideAt = wide_offset(bank);
    gh_filter_bank_wide *W = (gh_filter_bank_wide *)(void *)((char *)bank->wideRoom + bank->wideAt);
    // h[m]: the impulse response's first taps
    double h[GH_FILTER_BANK_WIDE] = {d};
    bank->direct = d;
    for (int k = 0; k < sections && k < S; k++) {
        double A[2][2], B[2], C[2];
        realize(c0[k], c1[k], a1[k], a2[k], A, B, C);
        // powers[j] = Aʲ for j = 0…28
        double powers[GH_FILTER_BANK_WIDE + 1][2][2] = {{{1, 0}, {0, 1}}};
        for (int j = 1; j <= GH_FILTER_BANK_WIDE; j++)
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 2; c++)
                    powers[j][r][c] = powers[j - 1][r][0] * A[0][c] + powers[j - 1][r][1] * A[1][c];
        // state r → output j (C·Aʲ), and input i of a block of n frames → state r at its end (Aⁿ⁻¹⁻ⁱ·B)
        for (int j = 0; j < GH_FILTER_BANK_WIDE; j++)
            for (int r = 0; r < 2; r++) {
                double weight = C[0] * powers[j][0][r] + C[1] * powers[j][1][r];
                if (j < 8) bank->ccol[2 * k + r][j] = (float)weight;
                W->states[2 * k + r][j] = (float)weight;
            }
        for (int i = 0; i < GH_FILTER_BANK_WIDE; i++)
            for (int r = 0; r < 2; r++) {
                double (*P)[2] = powers[GH_FILTER_BANK_WIDE - 1 - i];
                W->rows[i][GH_FILTER_BANK_WIDE + 2 * k + r] = (float)(P[r][0] * B[0] + P[r][1] * B[1]);
                if (i < 8) {
                    P = powers[7 - i];
                    bank->g[i][2 * k + r] = (float)(P[r][0] * B[0] + P[r][1] * B[1]);
                }
            }
        bank->diagonal[2 * k] = (float)powers[8][0][0], bank->diagonal[2 * k + 1] = (float)powers[8][1][1];
        bank->offDiagonal[2 * k] = (float)powers[8][0][1], bank->offDiagonal[2 * k + 1] = (float)powers[8][1][0];
        double (*E)[2] = powers[GH_FILTER_BANK_WIDE];
        float *diagonal = W->diagonal + GH_FILTER_BANK_WIDE + 2 * k, *off = W->offDiagonal + GH_FILTER_BANK_WIDE + 2 * k;
        diagonal[0] = (float)E[0][0], diagonal[1] = (float)E[1][1], off[0] = (float)E[0][1], off[1] = (float)E[1][0];
        h[0] += c0[k];
        for (int m = 1; m < GH_FILTER_BANK_WIDE; m++) {
            double (*P)[2] = powers[m - 1];
            h[m] += C[0] * (P[0][0] * B[0] + P[0][1] * B[1]) + C[1] * (P[1][0] * B[0] + P[1][1] * B[1]);
        }
        bank->a[k][0] = (float)A[0][0], bank->a[k][1] = (float)A[0][1];
        bank->a[k][2] = (float)A[1][0], bank->a[k][3] = (float)A[1][1];
        bank->b[2 * k] = (float)B[0], bank->b[2 * k + 1] = (float)B[1];
        bank->c[2 * k] = (float)C[0], bank->c[2 * k + 1] = (float)C[1];
        bank->direct += c0[k];
    }
    for (int i = 0; i < GH_FILTER_BANK_WIDE; i++)
        for (int j = i; j < GH_FILTER_BANK_WIDE; j++) {
            if (j < 8) bank->hcol[i][j] = (float)h[j - i];
            W->rows[i][j] = (float)h[j - i];
        }
}

/// One frame of one channel: y = D·x + Σ C·s, then s ← A·s + B·x.
static inline float frame(const gh_filter_bank *bank, float *s, float x) {
    float y = bank->direct * x;
    for (int k = 0; k < S; k++) {
        float s0 = s[2 * k], s1 = s[2 * k + 1];
        y += bank->c[2 * k] * s0 + bank->c[2 * k + 1] * s1;
        s[2 * k] = bank->a[k][0] * s0 + bank->a[k][1] * s1 + bank->b[2 * k] * x;
        s[2 * k + 1] = bank->a[k][2] * s0 + bank->a[k][3] * s1 + bank->b[2 * k + 1] * x;
    }
    return y;
}

static void frames_portable(const gh_filter_bank *bank, float *state, const float *x, float *y, long n) {
    for (long f = 0; f < n; f++) y[f] = frame(bank, state, x[f]);
}

void gh_filter_bank_run_portable(const gh_filter_bank *bank, float *state0, const float *x0, float *y0,
                                 float *state1, const float *x1, float *y1, long frames) {
    frames_portable(bank, state0, x0, y0, frames);
    if (state1) frames_portable(bank, state1, x1, y1, frames);
}

/// Eight frames of one channel at `f`: the output from the input (hcol) and from the state the block starts in
/// (ccol), and the state it ends in: A⁸ applied pair by pair, plus the input's share (g).
#define BLOCK(bank, x, y, v0, v1, v2, scratch)                                                                       \
    do {                                                                                                              \
        _mm256_storeu_ps(scratch, v0), _mm256_storeu_ps(scratch + 8, v1), _mm256_storeu_ps(scratch + 16, v2);        \
        __m256 o0 = _mm256_setzero_ps(), o1 = _mm256_setzero_ps();                                                    \
        __m256 u0 = _mm256_setzero_ps(), u1 = _mm256_setzero_ps(), u2 = _mm256_setzero_ps();                          \
        __m256 w0 = _mm256_setzero_ps(), w1 = _mm256_setzero_ps(), w2 = _mm256_setzero_ps();                          \
        for (int i = 0; i < 8; i += 2) {                                                                              \
            __m256 xi = _mm256_broadcast_ss((x) + i), xj = _mm256_broadcast_ss((x) + i + 1);                          \
            o0 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(bank->hcol[i]), o0);                                             \
            o1 = _mm256_fmadd_ps(xj, _mm256_loadu_ps(bank->hcol[i + 1]), o1);                                         \
            u0 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(bank->g[i]), u0);                                                \
            u1 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(bank->g[i] + 8), u1);                                            \
            u2 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(bank->g[i] + 16), u2);                                           \
            w0 = _mm256_fmadd_ps(xj, _mm256_loadu_ps(bank->g[i + 1]), w0);                                            \
            w1 = _mm256_fmadd_ps(xj, _mm256_loadu_ps(bank->g[i + 1] + 8), w1);                                        \
            w2 = _mm256_fmadd_ps(xj, _mm256_loadu_ps(bank->g[i + 1] + 16), w2);                                       \
        }                                                                                                             \
        for (int m = 0; m < 2 * S; m += 2) {                                                                          \
            o0 = _mm256_fmadd_ps(_mm256_broadcast_ss(scratch + m), _mm256_loadu_ps(bank->ccol[m]), o0);               \
            o1 = _mm256_fmadd_ps(_mm256_broadcast_ss(scratch + m + 1), _mm256_loadu_ps(bank->ccol[m + 1]), o1);       \
        }                                                                                                             \
        _mm256_storeu_ps(y, _mm256_add_ps(o0, o1));                                                                   \
        v0 = _mm256_fmadd_ps(off0, _mm256_permute_ps(v0, 0xB1), _mm256_fmadd_ps(diag0, v0, _mm256_add_ps(u0, w0)));  \
        v1 = _mm256_fmadd_ps(off1, _mm256_permute_ps(v1, 0xB1), _mm256_fmadd_ps(diag1, v1, _mm256_add_ps(u1, w1)));  \
        v2 = _mm256_fmadd_ps(off2, _mm256_permute_ps(v2, 0xB1), _mm256_fmadd_ps(diag2, v2, _mm256_add_ps(u2, w2)));  \
    } while (0)

/// A channel's state (GH_FILTER_BANK_STATE floats): the sections' states where the block under way began (floats
/// 0–19, 21–23 zero), the frames of that block so far (float 20) and its inputs so far (floats 24–31). Every output
/// frame comes from the same arithmetic whatever the slices, so the output does not depend on how it is sliced.
#define PHASE 20
#define INPUTS 24

/// Frames `from`…`to` − 1 of the block under way in `state`, whose inputs so far are in its floats 24–31 (zero
/// past them); when `to` is 8, the block ends and the state moves on to the next.
#define PARTIAL(bank, state, y, from, to)                                                                             \
    do {                                                                                                              \
        float out[8];                                                                                                 \
        __m256 v0 = _mm256_loadu_ps(state), v1 = _mm256_loadu_ps((state) + 8);                                       \
        __m256 v2 = _mm256_blend_ps(_mm256_loadu_ps((state) + 16), _mm256_setzero_ps(), 0xF0);                       \
        float scratch[N];                                                                                             \
        BLOCK(bank, (state) + INPUTS, out, v0, v1, v2, scratch);                                                      \
        for (int j = (from); j < (to); j++) (y)[j - (from)] = out[j];                                                 \
        if ((to) == 8) {                                                                                              \
            _mm256_storeu_ps(state, v0), _mm256_storeu_ps((state) + 8, v1), _mm256_storeu_ps((state) + 16, v2);     \
            memset((state) + INPUTS, 0, 8 * sizeof(float));                                                           \
        }                                                                                                             \
        (state)[PHASE] = (float)((to) & 7);                                                                           \
    } while (0)

/// One channel's frames before the first whole block (the block under way) and after the last one (a block begun).
#define EDGES_BODY(first)                                                                                             \
    int phase = (int)state[PHASE];                                                                                    \
    if (first) {                                                                                                      \
        if (phase == 0) return 0;                                                                                     \
        long m = frames < 8 - phase ? frames : 8 - phase;                                                             \
        memcpy(state + INPUTS + phase, x, (size_t)m * sizeof(float));                                                 \
        PARTIAL(bank, state, y, phase, phase + (int)m);                                                               \
        return m;                                                                                                     \
    }                                                                                                                 \
    if (frames == 0) return 0;                                                                                        \
    memcpy(state + INPUTS, x, (size_t)frames * sizeof(float));                                                        \
    PARTIAL(bank, state, y, 0, (int)frames);                                                                          \
    return frames;

/// Adds frames `from`…`to` − 1 of `y0` (and `y1`, when not null) to the sums of squares and peaks at `squares` and
/// `peaks` (one channel each): the frames outside whole blocks. A NaN never raises a peak.
static void edge_levels(const float *y0, const float *y1, long from, long to, float *squares, float *peaks) {
    for (int k = 0; k < 2; k++) {
        const float *y = k ? y1 : y0;
        if (!y) break;
        for (long f = from; f < to; f++) {
            float a = fabsf(y[f]);
            squares[k] += y[f] * y[f];
            if (a > peaks[k]) peaks[k] = a;
        }
    }
}

/// Adds a channel's vector of sums of squares and of peaks to its `squares` and `peaks`.
__attribute__((target("avx2,fma"))) static inline void add_levels(__m256 sums, __m256 tops, float *squares,
                                                                  float *peaks) {
    float s[8], m[8];
    _mm256_storeu_ps(s, sums), _mm256_storeu_ps(m, tops);
    float sum = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
    float top = peaks[0];
    for (int j = 0; j < 8; j++) top = m[j] > top ? m[j] : top;
    squares[0] += sum;
    peaks[0] = top;
}

/// Whole blocks, both channels in one loop (their recursions overlap), between the edges. A block's input is read
/// before its output is written, so the two may share memory.
#define BLOCKS_BODY(edges, measured)                                                                                   \
    long f = edges(bank, state0, x0, y0, frames, 1);                                                                  \
    if (state1) edges(bank, state1, x1, y1, frames, 1);                                                               \
    if ((measured) && squares) edge_levels(y0, state1 ? y1 : 0, 0, f, squares, peaks);                                 \
    if (f == frames) return;                                                                                          \
    const long head = f;                                                                                              \
    float scratch[2 * N];                                                                                             \
    const __m256 diag0 = _mm256_loadu_ps(bank->diagonal), diag1 = _mm256_loadu_ps(bank->diagonal + 8);               \
    const __m256 diag2 = _mm256_loadu_ps(bank->diagonal + 16), off0 = _mm256_loadu_ps(bank->offDiagonal);            \
    const __m256 off1 = _mm256_loadu_ps(bank->offDiagonal + 8), off2 = _mm256_loadu_ps(bank->offDiagonal + 16);      \
    const __m256 low = _mm256_setzero_ps();                                                                           \
    __m256 a0 = _mm256_loadu_ps(state0), a1 = _mm256_loadu_ps(state0 + 8);                                           \
    __m256 a2 = _mm256_blend_ps(_mm256_loadu_ps(state0 + 16), low, 0xF0);                                            \
    __m256 b0 = low, b1 = low, b2 = low;                                                                              \
    if (state1) {                                                                                                     \
        b0 = _mm256_loadu_ps(state1), b1 = _mm256_loadu_ps(state1 + 8);                                              \
        b2 = _mm256_blend_ps(_mm256_loadu_ps(state1 + 16), low, 0xF0);                                               \
    }                                                                                                                 \
    if ((measured) && squares) {                                                                                       \
        /* The blocks' output, measured as it is written (read back from the store just made). */                    \
        const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));                                  \
        __m256 s0 = low, s1 = low, m0 = low, m1 = low;                                                                \
        if (state1) {                                                                                                 \
            for (; f + 8 <= frames; f += 8) {                                                                         \
                BLOCK(bank, x0 + f, y0 + f, a0, a1, a2, scratch);                                                     \
                BLOCK(bank, x1 + f, y1 + f, b0, b1, b2, scratch + N);                                                 \
                __m256 v = _mm256_loadu_ps(y0 + f), w = _mm256_loadu_ps(y1 + f);                                      \
                s0 = _mm256_fmadd_ps(v, v, s0), m0 = _mm256_max_ps(_mm256_and_ps(v, magnitude), m0);                 \
                s1 = _mm256_fmadd_ps(w, w, s1), m1 = _mm256_max_ps(_mm256_and_ps(w, magnitude), m1);                 \
            }                                                                                                         \
        } else {                                                                                                      \
            for (; f + 8 <= frames; f += 8) {                                                                         \
                BLOCK(bank, x0 + f, y0 + f, a0, a1, a2, scratch);                                                     \
                __m256 v = _mm256_loadu_ps(y0 + f);                                                                   \
                s0 = _mm256_fmadd_ps(v, v, s0), m0 = _mm256_max_ps(_mm256_and_ps(v, magnitude), m0);                 \
            }                                                                                                         \
        }                                                                                                             \
        add_levels(s0, m0, squares, peaks);                                                                           \
        if (state1) add_levels(s1, m1, squares + 1, peaks + 1);                                                       \
    } else if (state1) {                                                                                              \
        for (; f + 8 <= frames; f += 8) {                                                                             \
            BLOCK(bank, x0 + f, y0 + f, a0, a1, a2, scratch);                                                         \
            BLOCK(bank, x1 + f, y1 + f, b0, b1, b2, scratch + N);                                                     \
        }                                                                                                             \
    } else {                                                                                                          \
        for (; f + 8 <= frames; f += 8) BLOCK(bank, x0 + f, y0 + f, a0, a1, a2, scratch);                            \
    }                                                                                                                 \
    /* Lanes 20-23 hold the phase and zeros: a NaN sample makes the blocks' (zero-weighted) lanes NaN. */           \
    a2 = _mm256_blend_ps(a2, low, 0xF0), b2 = _mm256_blend_ps(b2, low, 0xF0);                                          \
    _mm256_storeu_ps(state0, a0), _mm256_storeu_ps(state0 + 8, a1), _mm256_storeu_ps(state0 + 16, a2);               \
    edges(bank, state0, x0 + f, y0 + f, frames - f, 0);                                                              \
    if (state1) {                                                                                                     \
        _mm256_storeu_ps(state1, b0), _mm256_storeu_ps(state1 + 8, b1), _mm256_storeu_ps(state1 + 16, b2);           \
        edges(bank, state1, x1 + f, y1 + f, frames - f, 0);                                                          \
    }                                                                                                                 \
    if ((measured) && squares) edge_levels(y0, state1 ? y1 : 0, f, frames, squares, peaks);                            \
    (void)head;

__attribute__((target("avx2,fma"))) static long edges_avx2(const gh_filter_bank *bank, float *state, const float *x,
                                                           float *y, long frames, int first) {
    const __m256 diag0 = _mm256_loadu_ps(bank->diagonal), diag1 = _mm256_loadu_ps(bank->diagonal + 8);
    const __m256 diag2 = _mm256_loadu_ps(bank->diagonal + 16), off0 = _mm256_loadu_ps(bank->offDiagonal);
    const __m256 off1 = _mm256_loadu_ps(bank->offDiagonal + 8), off2 = _mm256_loadu_ps(bank->offDiagonal + 16);
    EDGES_BODY(first)
}

__attribute__((target("avx2,fma"))) static void run_avx2(gh_filter_bank *bank, float *state0, const float *x0,
                                                          float *y0, float *state1, const float *x1, float *y1,
                                                          long frames, float *squares, float *peaks) {
    BLOCKS_BODY(edges_avx2, 0)
}

/// The same, measuring the output (`gh_filter_bank_run_measured`): a function of its own, so the plain one's loop
/// stays as it was.
__attribute__((target("avx2,fma"))) static void run_avx2_measured(gh_filter_bank *bank, float *state0,
                                                                   const float *x0, float *y0, float *state1,
                                                                   const float *x1, float *y1, long frames,
                                                                   float *squares, float *peaks) {
    BLOCKS_BODY(edges_avx2, 1)
}

/// Vectors of sixteen lanes in a wide block's rows: frames 0…27, then the sections' states.
#define WIDE_VECTORS 3

/// One wide block of one channel at `x`: frames 0…15 into `first`, 16…27 into lanes 0…11 of `second`, from the
/// states in lanes 12…15 of `v[1]` and all of `v[2]` (lanes 28…47 of the block's rows), left at the block's end.
/// Lanes 0…11 of `v[1]` carry the inputs' share of frames 16…27 from block to block, where A²⁸ is zero: a state
/// that is not finite makes them so, as it makes every frame after it.
__attribute__((target("avx512f"), always_inline)) static inline void wide_block(const gh_filter_bank_wide *w,
                                                                             const float *x, __m512 *v,
                                                                             __m512 *first, __m512 *second) {
    __m512 p[WIDE_VECTORS], q[WIDE_VECTORS], o = _mm512_setzero_ps(), u = o;
    for (int k = 0; k < WIDE_VECTORS; k++) p[k] = q[k] = o;
    // The inputs' share (frames 16… reach no output before them); the recursion from one block's states to the next
    // then waits on two FMAs only.
    _Pragma("clang loop unroll(full)") for (int i = 0; i < GH_FILTER_BANK_WIDE; i += 2) {
        __m512 xi = _mm512_set1_ps(x[i]), xj = _mm512_set1_ps(x[i + 1]);
        _Pragma("clang loop unroll(full)") for (int k = i / 16; k < WIDE_VECTORS; k++) {
            p[k] = _mm512_fmadd_ps(xi, _mm512_load_ps(w->rows[i] + 16 * k), p[k]);
            q[k] = _mm512_fmadd_ps(xj, _mm512_load_ps(w->rows[i + 1] + 16 * k), q[k]);
        }
    }
    // The states' share: each state spread over the lanes by one permutation, its index kept from the compiler, which
    // would otherwise make it two shuffles (and a store read back at another offset waits for the store to retire).
    _Pragma("clang loop unroll(full)") for (int m = 0; m < 2 * S; m += 2) {
        int l = GH_FILTER_BANK_WIDE + m;
        __m512i lm = _mm512_set1_epi32(l & 15), ln = _mm512_set1_epi32((l + 1) & 15);
        __asm__("" : "+v"(lm), "+v"(ln));
        __m512 sm = _mm512_permutexvar_ps(lm, v[l / 16]), sn = _mm512_permutexvar_ps(ln, v[(l + 1) / 16]);
        p[0] = _mm512_fmadd_ps(sm, _mm512_load_ps(w->states[m]), p[0]);
        q[0] = _mm512_fmadd_ps(sn, _mm512_load_ps(w->states[m + 1]), q[0]);
        o = _mm512_fmadd_ps(sm, _mm512_load_ps(w->states[m] + 16), o);
        u = _mm512_fmadd_ps(sn, _mm512_load_ps(w->states[m + 1] + 16), u);
    }
    __m512 n1 = _mm512_fmadd_ps(_mm512_load_ps(w->diagonal + 16), v[1], _mm512_add_ps(p[1], q[1]));
    n1 = _mm512_fmadd_ps(_mm512_load_ps(w->offDiagonal + 16), _mm512_permute_ps(v[1], 0xB1), n1);
    __m512 n2 = _mm512_fmadd_ps(_mm512_load_ps(w->diagonal + 32), v[2], _mm512_add_ps(p[2], q[2]));
    n2 = _mm512_fmadd_ps(_mm512_load_ps(w->offDiagonal + 32), _mm512_permute_ps(v[2], 0xB1), n2);
    *first = _mm512_add_ps(p[0], q[0]);
    *second = _mm512_add_ps(n1, _mm512_add_ps(o, u));
    v[1] = n1, v[2] = n2;
}

/// The wide layout of a channel's state: the sections' states in floats 0–19, the frames of the block under way in
/// float 20 (PHASE), its inputs so far from float 21.
#define WIDE_INPUTS 21
#define WIDE_OUTPUT 0x0FFF

/// The states of `state` into lanes 28…47 of `v`, and back.
#define WIDE_LOAD(state, v) (v[1] = _mm512_maskz_expandloadu_ps(0xF000, state), v[2] = _mm512_loadu_ps((state) + 4))
#define WIDE_STORE(state, v)                                                                                          \
    (_mm512_mask_compressstoreu_ps(state, 0xF000, v[1]), _mm512_storeu_ps((state) + 4, v[2]))

/// Frames `from`…`to` − 1 of the block under way in `state` (its inputs so far from float 21, the new ones at `x`):
/// the same arithmetic as a whole block; when `to` is a whole block, the state moves on to the next.
__attribute__((target("avx512f"))) static void wide_partial(const gh_filter_bank_wide *w, float *state,
                                                            const float *x, float *y, int from, int to) {
    const int length = GH_FILTER_BANK_WIDE;
    float in[GH_FILTER_BANK_WIDE] = {0}, out[32];
    memcpy(in, state + WIDE_INPUTS, (size_t)from * sizeof(float));
    memcpy(in + from, x, (size_t)(to - from) * sizeof(float));
    if (to < length) memcpy(state + WIDE_INPUTS + from, x, (size_t)(to - from) * sizeof(float));
    __m512 v[WIDE_VECTORS], first, second;
    WIDE_LOAD(state, v);
    wide_block(w, in, v, &first, &second);
    _mm512_storeu_ps(out, first), _mm512_storeu_ps(out + 16, second);
    memcpy(y, out + from, (size_t)(to - from) * sizeof(float));
    if (to == length) {
        WIDE_STORE(state, v);
        memset(state + WIDE_INPUTS, 0, (length - 1) * sizeof(float));
    }
    state[PHASE] = (float)(to % length);
}

/// One channel's frames before the first whole block (`first`: finishing the block under way) or after the last one
/// (beginning a block); returns the frames done.
__attribute__((target("avx512f"))) static long wide_edges(const gh_filter_bank_wide *w, float *state, const float *x,
                                                          float *y, long frames, int first) {
    int phase = (int)state[PHASE];
    if (first) {
        if (phase == 0) return 0;
        long m = frames < GH_FILTER_BANK_WIDE - phase ? frames : GH_FILTER_BANK_WIDE - phase;
        wide_partial(w, state, x, y, phase, phase + (int)m);
        return m;
    }
    if (frames > 0) wide_partial(w, state, x, y, 0, (int)frames);
    return frames;
}

/// Adds a channel's vector of sums of squares and of peaks to its `squares` and `peaks`.
__attribute__((target("avx512f"))) static void wide_add_levels(__m512 sums, __m512 tops, float *squares,
                                                               float *peaks) {
    float s[16], m[16];
    _mm512_storeu_ps(s, sums), _mm512_storeu_ps(m, tops);
    float sum = 0, top = peaks[0];
    for (int j = 0; j < 16; j++) sum += s[j], top = m[j] > top ? m[j] : top;
    squares[0] += sum;
    peaks[0] = top;
}

/// Writes a wide block's output at `y` and, with `measured`, adds it to a channel's vectors of sums of squares and
/// peaks. A NaN never raises a peak.
#define WIDE_WRITE(y, first, second, measured, sums, tops)                                                            \
    do {                                                                                                              \
        _mm512_storeu_ps(y, first), _mm512_mask_storeu_ps((y) + 16, WIDE_OUTPUT, second);                            \
        if (measured) {                                                                                               \
            __m512 rest = _mm512_maskz_mov_ps(WIDE_OUTPUT, second);                                                   \
            sums = _mm512_fmadd_ps(rest, rest, _mm512_fmadd_ps(first, first, sums));                                  \
            tops = _mm512_max_ps(_mm512_abs_ps(rest), _mm512_max_ps(_mm512_abs_ps(first), tops));                      \
        }                                                                                                             \
    } while (0)

/// Whole wide blocks, both channels in one loop, between the edges; with `measured`, the output's levels as it is
/// written. A block's input is read before its output is written, so the two may share memory.
__attribute__((target("avx512f"), always_inline)) static inline void wide_run(
    gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1, const float *x1, float *y1,
    long frames, float *squares, float *peaks, int measured) {
    const long length = GH_FILTER_BANK_WIDE;
    const gh_filter_bank_wide *w = wide_tables(bank);
    long f = wide_edges(w, state0, x0, y0, frames, 1);
    if (state1) wide_edges(w, state1, x1, y1, frames, 1);
    if (measured) edge_levels(y0, state1 ? y1 : 0, 0, f, squares, peaks);
    if (f == frames) return;
    const __m512 low = _mm512_setzero_ps();
    __m512 a[WIDE_VECTORS], b[WIDE_VECTORS], s0 = low, s1 = low, m0 = low, m1 = low, first, second;
    WIDE_LOAD(state0, a);
    if (state1) {
        WIDE_LOAD(state1, b);
        for (; f + length <= frames; f += length) {
            wide_block(w, x0 + f, a, &first, &second);
            WIDE_WRITE(y0 + f, first, second, measured, s0, m0);
            wide_block(w, x1 + f, b, &first, &second);
            WIDE_WRITE(y1 + f, first, second, measured, s1, m1);
        }
    } else {
        for (; f + length <= frames; f += length) {
            wide_block(w, x0 + f, a, &first, &second);
            WIDE_WRITE(y0 + f, first, second, measured, s0, m0);
        }
    }
    if (measured) {
        wide_add_levels(s0, m0, squares, peaks);
        if (state1) wide_add_levels(s1, m1, squares + 1, peaks + 1);
    }
    WIDE_STORE(state0, a);
    wide_edges(w, state0, x0 + f, y0 + f, frames - f, 0);
    if (state1) {
        WIDE_STORE(state1, b);
        wide_edges(w, state1, x1 + f, y1 + f, frames - f, 0);
    }
    if (measured) edge_levels(y0, state1 ? y1 : 0, f, frames, squares, peaks);
}

__attribute__((target("avx512f"))) static void run_avx512(gh_filter_bank *bank, float *state0, const float *x0,
                                                          float *y0, float *state1, const float *x1, float *y1,
                                                          long frames, float *squares, float *peaks) {
    wide_run(bank, state0, x0, y0, state1, x1, y1, frames, squares, peaks, 0);
}

/// The same, measuring the output: a function of its own, so the plain one's loop stays as it is.
__attribute__((target("avx512f"))) static void run_avx512_measured(gh_filter_bank *bank, float *state0,
                                                                   const float *x0, float *y0, float *state1,
                                                                   const float *x1, float *y1, long frames,
                                                                   float *squares, float *peaks) {
    wide_run(bank, state0, x0, y0, state1, x1, y1, frames, squares, peaks, 1);
}

typedef void (*bank_runner)(gh_filter_bank *, float *, const float *, float *, float *, const float *, float *, long,
                            float *, float *);

static void run_portable(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                         const float *x1, float *y1, long frames, float *squares, float *peaks) {
    gh_filter_bank_run_portable(bank, state0, x0, y0, state1, x1, y1, frames);
    if (squares) edge_levels(y0, state1 ? y1 : 0, 0, frames, squares, peaks);
}

static bank_runner chosen = run_portable, chosen_measured = run_portable, eight = run_portable;

/// Chooses the loops before main runs, so the render world never asks (nor races on the choice).
__attribute__((constructor)) static void choose_bank_runner(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen = eight = run_avx2, chosen_measured = run_avx2_measured;
        if (__builtin_cpu_supports("avx512f")) chosen = run_avx512, chosen_measured = run_avx512_measured;
    }
}

void gh_filter_bank_run(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                        const float *x1, float *y1, long frames) {
    chosen(bank, state0, x0, y0, state1, x1, y1, frames, 0, 0);
}

void gh_filter_bank_run_measured(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                                 const float *x1, float *y1, long frames, float *squares, float *peaks) {
    (squares ? chosen_measured : chosen)(bank, state0, x0, y0, state1, x1, y1, frames, squares, peaks);
}

void gh_filter_bank_run_eight(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                              const float *x1, float *y1, long frames) {
    eight(bank, state0, x0, y0, state1, x1, y1, frames, 0, 0);
}
