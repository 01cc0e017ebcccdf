import CFilterBankGlue
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// The iPod EQ's filter bank (a block of frames a turn from the sections' state-space form, coupled coordinates for
/// complex poles) against the parallel form computed in double precision: within 2e-6 for every preset, on noise and
/// on a loud 40 Hz sine (where the low bands' states are largest), whatever the slice sizes.
final class FilterBankTests: XCTestCase {
    static let rate = 48000

    /// Noise at −6 dBFS for half a second, then a 40 Hz sine at 0.9; the second channel is the first turned over.
    static func input(frames: Int) -> [[Float]] {
        var seed: UInt32 = 1
        let first = (0..<frames).map { i -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return i < frames / 2
                ? Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.5
                : 0.9 * Float(sin(2 * Double.pi * 40 * Double(i) / Double(rate)))
        }
        return [first, first.map { -$0 }]
    }

    /// y = d·x + Σ (c0 + c1·z⁻¹) / (1 + a1·z⁻¹ + a2·z⁻²) in double precision, from the same single-precision
    /// coefficients.
    static func reference(_ k: ParallelEQCoefficients, _ x: [Float]) -> [Double] {
        var s1 = [Double](repeating: 0, count: 10)
        var s2 = [Double](repeating: 0, count: 10)
        return x.map { sample in
            let x = Double(sample)
            var y = Double(k.d) * x
            for s in 0..<10 {
                let t = Double(k.c1[s]) * x + s2[s]
                let v = Double(k.c0[s]) * x + s1[s]
                s1[s] = t - Double(k.a1[s]) * v
                s2[s] = -Double(k.a2[s]) * v
                y += v
            }
            return y
        }
    }

    func testEveryPresetFollowsADoublePrecisionReference() {
        let frames = Self.rate
        let x = Self.input(frames: frames)
        let slices = [1, 7, 8, 13, 256, 4093, 4096]
        var worst: Float = 0
        for preset in IPodEQPreset.all {
            let k = IPodEQSettings(gains: preset.gains, preamp: 0).coefficients(sampleRate: Self.rate)
            let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
            state.initialize(repeating: SIMD16(), count: 2 * IPodEQKernel.stateVectors)
            defer { state.deallocate() }
            var kernel = IPodEQKernel(state: state, coefficients: k, rampSamples: 0)
            var bus = x[0] + x[1]
            bus.withUnsafeMutableBufferPointer { bus in
                var done = 0
                var turn = 0
                while done < frames {
                    let n = min(slices[turn % slices.count], frames - done)
                    kernel.process(
                        input: bus.baseAddress! + done, output: bus.baseAddress! + done, channelStride: frames,
                        channels: 2, frames: n)
                    done += n
                    turn += 1
                }
            }
            let expected = Self.reference(k, x[0])
            for c in 0..<2 {
                let sign: Double = c == 0 ? 1 : -1
                let error = (0..<frames).map { Float(abs(Double(bus[c * frames + $0]) - sign * expected[$0])) }.max()!
                XCTAssertLessThanOrEqual(error, 2e-6, "\(preset.name), channel \(c)")
                worst = max(worst, error)
            }
        }
        print("filter bank: largest difference from double precision \(worst)")
    }

    /// The vector loops and the portable one (processors without AVX2) both follow the reference.
    func testThePortableLoopAgrees() {
        let frames = 9000
        let x = Self.input(frames: frames)[0]
        let k = IPodEQSettings(gains: IPodEQPreset.named("Bass Booster")!.gains, preamp: 0).coefficients(
            sampleRate: Self.rate)
        var bank = FilterBank.designed(k)
        var vectorState = [Float](repeating: 0, count: FilterBank.stateFloats)
        var portableState = vectorState
        var vector = [Float](repeating: 0, count: frames)
        var portable = vector
        gh_filter_bank_run(&bank, &vectorState, x, &vector, nil, nil, nil, frames)
        gh_filter_bank_run_portable(&bank, &portableState, x, &portable, nil, nil, nil, frames)
        let expected = Self.reference(k, x)
        for (name, y) in [("vector", vector), ("portable", portable)] {
            let error = zip(y, expected).map { abs(Double($0) - $1) }.max()!
            XCTAssertLessThanOrEqual(error, 2e-6, name)
        }
        XCTAssertGreaterThan(vector.map(abs).max()!, 0.1)
    }

    /// The widest loop (AVX-512's 28-frame blocks where the processor has it) renders what the eight-frame one (AVX2,
    /// the loop before it) does within 1e-6, for every preset, in slices of every phase, on both channels.
    func testTheWideLoopAgreesWithTheEightFrameLoop() {
        let frames = Self.rate
        let x = Self.input(frames: frames)
        let slices = [1, 27, 28, 5, 256, 4093, 4096, 13]
        var worst: Float = 0
        for preset in IPodEQPreset.all {
            let k = IPodEQSettings(gains: preset.gains, preamp: 0).coefficients(sampleRate: Self.rate)
            var bank = FilterBank.designed(k)
            var outputs: [[Float]] = []
            let input = x[0] + x[1]
            for run in [gh_filter_bank_run, gh_filter_bank_run_eight] {
                var state = [Float](repeating: 0, count: 2 * FilterBank.stateFloats)
                var y = [Float](repeating: 0, count: 2 * frames)
                var done = 0
                var turn = 0
                input.withUnsafeBufferPointer { x in
                    state.withUnsafeMutableBufferPointer { s in
                        y.withUnsafeMutableBufferPointer { y in
                            while done < frames {
                                let n = min(slices[turn % slices.count], frames - done)
                                run(
                                    &bank, s.baseAddress!, x.baseAddress! + done, y.baseAddress! + done,
                                    s.baseAddress! + FilterBank.stateFloats, x.baseAddress! + frames + done,
                                    y.baseAddress! + frames + done, n)
                                done += n
                                turn += 1
                            }
                        }
                    }
                }
                outputs.append(y)
            }
            let difference = zip(outputs[0], outputs[1]).map { abs($0 - $1) }.max()!
            XCTAssertLessThanOrEqual(difference, 1e-6, preset.name)
            worst = max(worst, difference)
        }
        print("filter bank: largest difference between the wide and the eight-frame loops \(worst)")
    }

    /// A NaN sample spoils the bank's state (its output stays NaN, which the output guard silences) but must not spoil
    /// the block phase kept beside it: slices that end on a block's edge, then odd ones, go on without a crash.
    func testANaNSampleLeavesTheBlockPhaseAlone() {
        let k = IPodEQSettings(gains: IPodEQPreset.named("Rock")!.gains, preamp: 0).coefficients(sampleRate: Self.rate)
        var bank = FilterBank.designed(k)
        var state = [Float](repeating: 0, count: 2 * FilterBank.stateFloats)
        var x = [Float](repeating: 0.25, count: 64)
        x[3] = .nan
        var y = [Float](repeating: 0, count: 128)
        for frames in [16, 3, 5, 13, 8, 1] {
            state.withUnsafeMutableBufferPointer { s in
                y.withUnsafeMutableBufferPointer { y in
                    gh_filter_bank_run(
                        &bank, s.baseAddress!, x, y.baseAddress!, s.baseAddress! + FilterBank.stateFloats, x,
                        y.baseAddress! + 64, frames)
                }
            }
            x[3] = 0.25
            XCTAssertTrue(
                (0..<Int(GH_FILTER_BANK_WIDE)).contains(Int(exactly: state[20]) ?? -1),
                "phase \(state[20]) after \(frames)")
        }
    }
}
