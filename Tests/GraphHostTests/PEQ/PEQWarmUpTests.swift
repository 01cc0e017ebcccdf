import Atomics
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// How the `peq` kernel takes a bank the control world warmed on the input history: caught up on the frames since,
/// heard at once; too old a warm, or none, warms on the live input.
final class PEQWarmUpTests: XCTestCase {
    static let slice = 256, rate = 48000, channels = 2

    /// Planar stereo: (seeded) noise plus a 30 Hz tone, `frames` per channel.
    static func input(frames: Int) -> [Float] {
        var seed: UInt32 = 4321
        return (0..<channels * frames).map { i in
            let f = i % frames
            let c = i / frames
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return 0.3 * sinf(2 * .pi * 30 * Float(f) / Float(rate) + Float(c)) + 0.1
                * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
    }

    static func section(gain: Double) -> PEQSection {
        ParametricBand(shape: .peaking, frequency: 30, gain: gain, q: 10).section(sampleRate: rate)
    }

    /// A one-band kernel with its own memory.
    final class Kernel {
        let sections = UnsafeMutablePointer<PEQSection>.allocate(capacity: PEQKernel.sectionCount(bands: 1))
        let state = UnsafeMutablePointer<SIMD2<Double>>.allocate(
            capacity: PEQKernel.stateCount(bands: 1, channels: PEQWarmUpTests.channels))
        let workspace = PEQWorkspace.allocate(channels: PEQWarmUpTests.channels, bands: 1)
        var kernel: PEQKernel
        var output: [[Float]] = Array(repeating: [], count: PEQWarmUpTests.channels)

        init(gain: Double) {
            kernel = PEQKernel(
                bank: [PEQWarmUpTests.section(gain: gain)], channels: PEQWarmUpTests.channels, preamp: 1,
                rampFrames: Int(PEQKernel.rampSeconds * Double(PEQWarmUpTests.rate)), sections: sections, state: state,
                workspace: workspace)
        }

        /// Renders slice `k` of `input` (planar, `total` frames per channel).
        func process(_ input: [Float], slice k: Int, total: Int) {
            let n = PEQWarmUpTests.slice
            var slice = (0..<PEQWarmUpTests.channels * n).map { input[($0 / n) * total + k * n + $0 % n] }
            var out = [Float](repeating: 0, count: slice.count)
            slice.withUnsafeMutableBufferPointer { i in
                out.withUnsafeMutableBufferPointer {
                    kernel.process(
                        input: i.baseAddress!, output: $0.baseAddress!, channelStride: n,
                        channels: PEQWarmUpTests.channels, frames: n)
                }
            }
            for c in 0..<PEQWarmUpTests.channels { output[c] += out[(c * n)..<((c + 1) * n)] }
        }

        deinit {
            sections.deallocate()
            state.deallocate()
            workspace.deallocate()
        }
    }

    /// The largest difference between two kernels' outputs over frames `range`, relative to `b`'s peak there.
    static func difference(_ a: Kernel, _ b: Kernel, _ range: Range<Int>) -> Double {
        var worst: Float = 0
        var peak: Float = 0
        for c in 0..<channels {
            for f in range {
                worst = max(worst, abs(a.output[c][f] - b.output[c][f]))
                peak = max(peak, abs(b.output[c][f]))
            }
        }
        return Double(worst / peak)
    }

    /// Renders `slices` slices through `changed` (which takes a bank warmed `since` slices earlier at slice `changeAt`)
    /// and through kernels that play the old and the new bank all along.
    static func render(since: Int, changeAt: Int, slices: Int) -> (changed: Kernel, old: Kernel, new: Kernel) {
        let total = slices * slice
        let input = input(frames: total)
        let changed = Kernel(gain: -6)
        let old = Kernel(gain: -6)
        let new = Kernel(gain: 12)
        var warmed: (slot: Int, through: Int)?
        for k in 0..<slices {
            if k == changeAt - since { warmed = changed.workspace.warm([section(gain: 12)]) }
            if k == changeAt, let warmed { changed.kernel.apply(.warmed(slot: warmed.slot, through: warmed.through)) }
            for kernel in [changed, old, new] { kernel.process(input, slice: k, total: total) }
        }
        XCTAssertNotNil(warmed)
        XCTAssertEqual(changed.workspace.slots.inUse.load(ordering: .relaxed), 0, "the slot is given back")
        return (changed, old, new)
    }

    /// A bank warmed a few slices before the render world takes it is the new bank's steady output as soon as the
    /// 30 ms crossfade ends (within −60 dB), however long the band takes to settle from rest (1.4 s here).
    func testAWarmedBankIsHeardOnceTheCrossfadeEnds() {
        let changeAt = 400
        let ramp = Int(PEQKernel.rampSeconds * Double(Self.rate))
        let (changed, old, new) = Self.render(since: 4, changeAt: changeAt, slices: 480)
        let at = changeAt * Self.slice
        XCTAssertEqual(Self.difference(changed, old, 0..<at), 0, "unchanged before")
        XCTAssertLessThan(Self.difference(changed, new, (at + ramp)..<(480 * Self.slice)), 1e-3)
    }

    /// A warm older than `maxCatchUpFrames` when the render world takes it is not caught up (no callback carries that
    /// burst): the bank warms on the live input, so the old one is still heard after the crossfade's length.
    func testAWarmTooOldWarmsOnTheLiveInput() {
        let changeAt = 400
        let since = PEQKernel.maxCatchUpFrames / Self.slice + 1
        let ramp = Int(PEQKernel.rampSeconds * Double(Self.rate))
        let (changed, old, _) = Self.render(since: since, changeAt: changeAt, slices: 480)
        let at = changeAt * Self.slice
        XCTAssertEqual(Self.difference(changed, old, 0..<(at + 2 * ramp)), 0)
    }

    /// With every slot waiting to be taken a warm fails (the change then goes band by band); taking changes gives
    /// their slots back, the replaced ones included.
    func testSlotsAreGivenBack() {
        let k = Kernel(gain: 0)
        let input = Self.input(frames: Self.slice)
        let warms = (0..<PEQWorkspace.warmedSlots).compactMap { k.workspace.warm([Self.section(gain: Double($0))]) }
        XCTAssertEqual(warms.count, PEQWorkspace.warmedSlots)
        XCTAssertNil(k.workspace.warm([Self.section(gain: 12)]))
        for w in warms { k.kernel.apply(.warmed(slot: w.slot, through: w.through)) }
        XCTAssertEqual(
            k.workspace.slots.inUse.load(ordering: .relaxed), 1 << warms.last!.slot, "replaced changes gave theirs back"
        )
        k.process(input, slice: 0, total: Self.slice)
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 0)
        XCTAssertNotNil(k.workspace.warm([Self.section(gain: 12)]))
    }
}
