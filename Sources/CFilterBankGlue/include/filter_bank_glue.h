#ifndef GH_FILTER_BANK_GLUE_H
#define GH_FILTER_BANK_GLUE_H

/// Up to ten second-order sections in parallel, y = d·x + Σ (c0 + c1·z⁻¹) / (1 + a1·z⁻¹ + a2·z⁻²), rendered eight
/// frames at a time from a state-space form: each section with complex poles in coupled (rotation) coordinates, which
/// keep the low bands' state well conditioned in single precision. `design` fills it from the coefficients;
/// `gh_filter_bank_run` renders with it.
#define GH_FILTER_BANK_SECTIONS 10
/// The sections' two states, interleaved, then zeros to a whole vector.
#define GH_FILTER_BANK_LANES 24
/// Floats of state per channel: the sections' states where the block under way began, the frames of that block so
/// far, and its inputs.
#define GH_FILTER_BANK_STATE 32

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
} gh_filter_bank;

/// Fills `bank` for `sections` (≤ 10) sections; `lanes` holds c0, c1, a1 and a2, 16 floats each, section k in
/// float k of each. Arithmetic only: the render world may call it.
void gh_filter_bank_design(gh_filter_bank *bank, float d, const float *lanes, int sections);

/// Renders `frames` frames of one channel (`x1`, `y1`, `state1` null) or two, with the processor's widest vectors
/// (chosen once, when the program loads); each state holds GH_FILTER_BANK_STATE floats, zero to start from rest.
/// The output does not depend on how the frames are sliced into calls. Input and output may be the same memory. No
/// allocation, no lock.
void gh_filter_bank_run(const gh_filter_bank *bank, float *state0, const float *x0, float *y0, float *state1,
                        const float *x1, float *y1, long frames);

/// The same, and adds the output's sum of squares and largest |y| (a NaN never raises it) to `squares[0]` and
/// `peaks[0]` (channel 0) and `squares[1]` and `peaks[1]` (channel 1): a level meter's measurement, made as the
/// output is written.
void gh_filter_bank_run_measured(const gh_filter_bank *bank, float *state0, const float *x0, float *y0,
                                 float *state1, const float *x1, float *y1, long frames, float *squares,
                                 float *peaks);
/// The same, one frame at a time in plain C, as a processor without AVX2 and FMA runs it (the tests compare them;
/// a state is used by one of the two only).
void gh_filter_bank_run_portable(const gh_filter_bank *bank, float *state0, const float *x0, float *y0,
                                 float *state1, const float *x1, float *y1, long frames);

#endif
