#ifndef GH_FILTER_BANK_GLUE_H
#define GH_FILTER_BANK_GLUE_H

/// Up to ten second-order sections in parallel, y = d·x + Σ (c0 + c1·z⁻¹) / (1 + a1·z⁻¹ + a2·z⁻²), rendered a
/// block of frames at a time from a state-space form (GH_FILTER_BANK_WIDE frames with AVX-512, eight with AVX2):
/// each section with complex poles in coupled (rotation) coordinates, which keep the low bands' state well
/// conditioned in single precision. `design` fills it from the coefficients; `gh_filter_bank_run` renders with it.
#define GH_FILTER_BANK_SECTIONS 10
/// The sections' two states, interleaved, then zeros to a whole vector.
#define GH_FILTER_BANK_LANES 24
/// Floats of state per channel: the sections' states where the block under way began (0–19), the frames of that
/// block so far (20), and its inputs (from 21 with AVX-512, from 24 otherwise).
#define GH_FILTER_BANK_STATE 48
/// Frames of a block with AVX-512: they and the twenty states fill three vectors of sixteen.
#define GH_FILTER_BANK_WIDE 28

/// A block's tables with AVX-512: rows[i] is input frame i → output frames 0…27 (h[j − i] for j ≥ i, else 0), then
/// → the states at the block's end in floats 28…47 (A²⁷⁻ⁱ·B), the lanes the states are carried in; states[m][j] is
/// state m → output frame j (C·Aʲ; floats 28…31 zero); A²⁸ of each section, its diagonal and off-diagonal, in
/// floats 28…47.
typedef struct {
    float rows[GH_FILTER_BANK_WIDE][48];
    float states[2 * GH_FILTER_BANK_SECTIONS][32];
    float diagonal[48], offDiagonal[48];
} gh_filter_bank_wide;

typedef struct {
    /// hcol[i][j]: the impulse response h[j − i] for j ≥ i (the block's input → its output), else 0.
    float hcol[8][8];
    /// ccol[2k + r][j]: state r of section k → output frame j of the block (C·Aʲ).
    float ccol[2 * GH_FILTER_BANK_SECTIONS][8];
    /// A⁸ of each section: its diagonal and its off-diagonal, pair by pair.
    float diagonal[GH_FILTER_BANK_LANES], offDiagonal[GH_FILTER_BANK_LANES];
    /// g[i][2k + r]: input frame i of the block → state r of section k at the block's end (A⁷⁻ⁱ·B).
    float g[8][GH_FILTER_BANK_LANES];
    /// One frame at a time (a slice's last frames): A, B, C of each section, pair by pair, and the direct gain.
    float a[GH_FILTER_BANK_SECTIONS][4], b[GH_FILTER_BANK_LANES], c[GH_FILTER_BANK_LANES];
    float direct;
    /// The wide tables (`gh_filter_bank_wide`) lie `wideAt` bytes into `wideRoom`, on a 64-byte boundary so that each
    /// row is whole cache lines (a vector split over two lines costs a second load); a copy of the bank may leave
    /// them off one, and the next run moves them back.
    long wideAt;
    float wideRoom[sizeof(gh_filter_bank_wide) / sizeof(float) + 16];
} gh_filter_bank;

/// Fills `bank` for `sections` (≤ 10) sections; `lanes` holds c0, c1, a1 and a2, 16 floats each, section k in
/// float k of each. Arithmetic only: the render world may call it.
void gh_filter_bank_design(gh_filter_bank *bank, float d, const float *lanes, int sections);

/// Renders `frames` frames of one channel (`x1`, `y1`, `state1` null) or two, with the processor's widest vectors
/// (chosen once, when the program loads); each state holds GH_FILTER_BANK_STATE floats, zero to start from rest.
/// The output does not depend on how the frames are sliced into calls. Input and output may be the same memory. No
/// allocation, no lock; the bank is written only to move its wide tables back onto a 64-byte boundary.
void gh_filter_bank_run(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                        const float *x1, float *y1, long frames);

/// The same, and adds the output's sum of squares and largest |y| (a NaN never raises it) to `squares[0]` and
/// `peaks[0]` (channel 0) and `squares[1]` and `peaks[1]` (channel 1): a level meter's measurement, made as the
/// output is written.
void gh_filter_bank_run_measured(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                                 const float *x1, float *y1, long frames, float *squares, float *peaks);

/// The same, eight frames a turn with AVX2 (as a processor without AVX-512 runs it), or the portable loop where
/// AVX2 is missing too: the tests compare it with the widest.
void gh_filter_bank_run_eight(gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                              const float *x1, float *y1, long frames);

/// The same, one frame at a time in plain C, as a processor without AVX2 and FMA runs it (the tests compare them;
/// a state is used by one of the two only).
void gh_filter_bank_run_portable(const gh_filter_bank *bank, float *state0, const float *x0, float *y0,
                                 float *state1, const float *x1, float *y1, long frames);

#endif
