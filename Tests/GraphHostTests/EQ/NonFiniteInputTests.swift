import GraphHostDSP
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// A NaN or infinity in an equalizer's input stays in a recursive filter's state for good; the iPod EQ and `peq`
/// start again from rest after the slice that brought it, so what follows is heard: from then on their output equals
/// that of a kernel that never saw it and started on the same slices, sample for sample.
final class NonFiniteInputTests: XCTestCase {
    static let slice = 256, stride = 256, slices = 12

    /// Slice `k` of planar stereo noise; slice 0 holds `bad` in its right channel when given.
    static func slice(_ k: Int, bad: Float? = nil) -> [Float] {
        var seed = UInt32(77 + k)
        var samples = (0..<(2 * stride)).map { _ -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return 0.5 * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
        if let bad { samples[stride + 37] = bad }
        return samples
    }

    /// Runs `render` over slice 0 (with `bad`) then slices 1…, and a fresh kernel over slices 1… only: the two agree
    /// from slice 1 on, and nothing they play there is NaN.
    func assertRecovers(
        bad: Float, _ name: String, make: () -> (inout [Float], inout [Float]) -> Void, line: UInt = #line
    ) {
        let hit = make()
        let fresh = make()
        var input = Self.slice(0, bad: bad)
        var output = [Float](repeating: 0, count: 2 * Self.stride)
        hit(&input, &output)
        XCTAssertTrue(output.contains { !$0.isFinite }, "\(name): the bad slice is not finite", line: line)
        for k in 1..<Self.slices {
            var a = Self.slice(k)
            var b = a
            var outA = [Float](repeating: 0, count: 2 * Self.stride)
            var outB = outA
            hit(&a, &outA)
            fresh(&b, &outB)
            XCTAssertEqual(outA.map(\.bitPattern), outB.map(\.bitPattern), "\(name): slice \(k)", line: line)
            XCTAssertFalse(outA.contains { !$0.isFinite }, "\(name): slice \(k)", line: line)
        }
    }

    func testTheIPodEQStartsAgainFromRestAfterANaNOrInfinity() throws {
        let k = IPodEQSettings(gains: try XCTUnwrap(IPodEQPreset.named("Rock")).gains, preamp: 0)
            .coefficients(sampleRate: 48000)
        var states: [UnsafeMutablePointer<SIMD16<Float>>] = []
        defer { states.forEach { $0.deallocate() } }
        for bad in [Float.nan, .infinity] {
            assertRecovers(bad: bad, "iPod EQ, \(bad)") {
                let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
                state.initialize(repeating: SIMD16(), count: 2 * IPodEQKernel.stateVectors)
                states.append(state)
                var kernel = IPodEQKernel(state: state, coefficients: k, rampSamples: 0)
                return { input, output in
                    kernel.process(
                        input: &input, output: &output, channelStride: Self.stride, channels: 2, frames: Self.slice)
                }
            }
        }
    }

    func testThePEQStartsAgainFromRestAfterANaNOrInfinity() {
        var kernels: [PEQWarmUpTests.Kernel] = []
        for bad in [Float.nan, -.infinity] {
            assertRecovers(bad: bad, "peq, \(bad)") {
                // One peaking band at 30 Hz, +6 dB, Q 10: a long ring, the state far from rest after a slice.
                let memory = PEQWarmUpTests.Kernel(gain: 6)
                kernels.append(memory)
                return { input, output in
                    memory.kernel.process(
                        input: &input, output: &output, channelStride: Self.stride, channels: 2, frames: Self.slice)
                }
            }
        }
    }
}
