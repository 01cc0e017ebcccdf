import CFilterBankGlue

/// A `ParallelEQCoefficients` bank in the form the render loop runs (`filter_bank_glue.h`): a block of frames a turn
/// (28 with AVX-512, 8 with AVX2) from the sections' state-space matrices, each section with complex poles in coupled
/// coordinates, whose states stay well conditioned in single precision (the low bands' direct-form states do not).
/// Made in either world: arithmetic only.
typealias FilterBank = gh_filter_bank

extension FilterBank {
    /// Floats of state per channel.
    static var stateFloats: Int { @_noLocks get { Int(GH_FILTER_BANK_STATE) } }

    /// The bank of `k`.
    @_noLocks
    static func designed(_ k: ParallelEQCoefficients) -> FilterBank {
        // The imported zero initializer: it stores zeros, nothing more.
        var bank = _unsafePerformance { FilterBank() }
        var lanes = (k.c0, k.c1, k.a1, k.a2)
        let sections = Int32(GH_FILTER_BANK_SECTIONS)
        withUnsafeBytes(of: &lanes) { lanes in
            // filter_bank_glue.c: arithmetic on the coefficients and a memset of the bank, no allocation, lock or other
            // call out.
            _unsafePerformance {
                gh_filter_bank_design(&bank, k.d, lanes.baseAddress!.assumingMemoryBound(to: Float.self), sections)
            }
        }
        return bank
    }

    /// Renders `frames` frames of a channel through `bank`, and of a `second` one beside it; `state` holds
    /// `stateFloats` floats per channel. Input and output may be the same memory. With `levels`, adds the output's
    /// levels to theirs: the first channel's at index 0, the second's at 1.
    @_noLocks @inline(__always)
    static func run(
        _ bank: UnsafeMutablePointer<FilterBank>, state: UnsafeMutablePointer<Float>, input: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>,
        second: (state: UnsafeMutablePointer<Float>, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>)?,
        frames: Int, levels: LevelMeter.RunLevels? = nil
    ) {
        // filter_bank_glue.c: arithmetic on the samples, and a memmove of the bank's own tables back onto a cache-line
        // boundary after a copy of the bank; no allocation, lock or other call out.
        _unsafePerformance {
            gh_filter_bank_run_measured(
                bank, state, input, output, second?.state, second?.input, second?.output, frames, levels?.squares,
                levels?.peaks)
        }
    }
}
