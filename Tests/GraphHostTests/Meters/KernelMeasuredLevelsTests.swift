import GraphHostDSP
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// Kernels that measure their output as they write it (the iPod EQ's filter bank, the mixer's last input, a stream's
/// read from its ring, the engine's output guard): the levels
/// they leave equal the meter's own pass over the same output, at slice sizes that split the EQ's blocks;
/// the output is the same sample for sample whether a meter is on or not; and while a glide or crossfade changes the
/// output after the measuring pass, the kernel says it did not measure, so the meter reads the bus itself.
final class KernelMeasuredLevelsTests: XCTestCase {
    static let stride = 4096
    static let slices = [1, 7, 8, 13, 256, 1000, 4093]

    /// Two channels of noise with a sample past full scale in the first, and a NaN when `nan` (an EQ's output stays
    /// NaN after one, so only the last slice has it).
    static func noise(_ frames: Int, seed start: UInt32, nan: Bool = false) -> [Float] {
        var seed = start
        var samples = (0..<(2 * stride)).map { _ -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return 0.8 * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
        samples[frames / 3] = 1.25
        if nan { samples[frames / 2] = .nan }
        return samples
    }

    /// A stereo meter at 48 kHz, freed with the object.
    final class Meter {
        let meter = LevelMeter.allocate(channels: 2, sampleRate: 48000, on: true)
        deinit { LevelMeter.deallocate(meter) }
    }

    /// The meter's own pass over `frames` frames of `bus`: sums of squares, then peaks.
    static func separatePass(_ bus: UnsafeMutablePointer<Float>, frames: Int) -> [Float] {
        var levels = [Float](repeating: 0, count: 4)
        levels.withUnsafeMutableBufferPointer {
            SampleRunLevels.measure(
                bus, channelStride: stride, channels: 2, count: frames, squares: $0.baseAddress!,
                peaks: $0.baseAddress! + 2)
        }
        return levels
    }

    static func assertLevels(
        _ levels: LevelMeter.RunLevels, equal expected: [Float], _ message: String, line: UInt = #line
    ) {
        for c in 0..<2 {
            XCTAssertEqual(levels.peaks[c], expected[2 + c], "peak, channel \(c), \(message)", line: line)
            let squares = expected[c]
            if squares.isFinite {
                XCTAssertEqual(
                    levels.squares[c], squares, accuracy: squares * 1e-5, "squares, channel \(c), \(message)",
                    line: line)
            } else {
                XCTAssertEqual(levels.squares[c].isNaN, squares.isNaN, "squares, channel \(c), \(message)", line: line)
            }
        }
    }

    func testTheEQsLevelsEqualTheMetersPassAndLeaveTheOutputAsItIs() throws {
        let meter = Meter()
        let k = IPodEQSettings(gains: try XCTUnwrap(IPodEQPreset.named("Rock")).gains, preamp: 0)
            .coefficients(sampleRate: 48000)
        let states = (0..<2).map { _ in
            UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
        }
        defer { states.forEach { $0.deallocate() } }
        states.forEach { $0.initialize(repeating: SIMD16(), count: 2 * IPodEQKernel.stateVectors) }
        var measuredKernel = IPodEQKernel(state: states[0], coefficients: k, rampSamples: 0)
        var plainKernel = IPodEQKernel(state: states[1], coefficients: k, rampSamples: 0)
        for (turn, frames) in Self.slices.enumerated() {
            let input = Self.noise(frames, seed: UInt32(turn + 1), nan: turn == Self.slices.count - 1)
            var measuredOut = [Float](repeating: 0, count: 2 * Self.stride)
            var plainOut = measuredOut
            var source = input
            try source.withUnsafeMutableBufferPointer { x in
                try measuredOut.withUnsafeMutableBufferPointer { y in
                    let levels = try XCTUnwrap(meter.meter.pointee.runLevels(channels: 2))
                    XCTAssertTrue(
                        measuredKernel.process(
                            input: x.baseAddress!, output: y.baseAddress!, channelStride: Self.stride, channels: 2,
                            frames: frames, levels: levels))
                    Self.assertLevels(
                        levels, equal: Self.separatePass(y.baseAddress!, frames: frames), "EQ, \(frames) frames")
                }
                plainOut.withUnsafeMutableBufferPointer { y in
                    plainKernel.process(
                        input: x.baseAddress!, output: y.baseAddress!, channelStride: Self.stride, channels: 2,
                        frames: frames)
                }
            }
            for c in 0..<2 {
                let range = c * Self.stride..<(c * Self.stride + frames)
                XCTAssertEqual(
                    measuredOut[range].map(\.bitPattern), plainOut[range].map(\.bitPattern),
                    "the same output, \(frames) frames")
            }
        }
    }

    func testTheEQDoesNotClaimASliceWhoseOutputTheBypassGlideChanges() throws {
        let meter = Meter()
        let k = IPodEQSettings(gains: try XCTUnwrap(IPodEQPreset.named("Rock")).gains, preamp: 0)
            .coefficients(sampleRate: 48000)
        let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
        defer { state.deallocate() }
        state.initialize(repeating: SIMD16(), count: 2 * IPodEQKernel.stateVectors)
        var kernel = IPodEQKernel(state: state, coefficients: k, rampSamples: 480)
        kernel.apply(.bypass(true))
        var x = Self.noise(256, seed: 9)
        var y = [Float](repeating: 0, count: 2 * Self.stride)
        let levels = try XCTUnwrap(meter.meter.pointee.runLevels(channels: 2))
        XCTAssertFalse(
            kernel.process(
                input: &x, output: &y, channelStride: Self.stride, channels: 2, frames: 256, levels: levels))
    }

    func testTheMixersLevelsEqualTheMetersPassAndLeaveTheOutputAsItIs() throws {
        let meter = Meter()
        let gains = UnsafeMutablePointer<SmoothedGain>.allocate(capacity: 3)
        defer { gains.deallocate() }
        gains.initialize(from: [SmoothedGain(0.7), SmoothedGain(0.5), SmoothedGain(1)], count: 3)
        let mixer = MixerKernel(inputCount: 2, gains: gains, rampSamples: 480)
        for (turn, frames) in Self.slices.enumerated() {
            var first = Self.noise(frames, seed: UInt32(2 * turn + 1), nan: true)
            var second = Self.noise(frames, seed: UInt32(2 * turn + 2))
            var measuredOut = [Float](repeating: 0, count: 2 * Self.stride)
            var plainOut = measuredOut
            try first.withUnsafeMutableBufferPointer { a in
                try second.withUnsafeMutableBufferPointer { b in
                    var inputs = [a.baseAddress!, b.baseAddress!]
                    try inputs.withUnsafeMutableBufferPointer { inputs in
                        try measuredOut.withUnsafeMutableBufferPointer { y in
                            let levels = try XCTUnwrap(meter.meter.pointee.runLevels(channels: 2))
                            XCTAssertTrue(
                                mixer.process(
                                    inputs: inputs.baseAddress!, output: y.baseAddress!, channelStride: Self.stride,
                                    channels: 2, frames: frames, levels: levels))
                            Self.assertLevels(
                                levels, equal: Self.separatePass(y.baseAddress!, frames: frames),
                                "mixer, \(frames) frames")
                        }
                        plainOut.withUnsafeMutableBufferPointer { y in
                            mixer.process(
                                inputs: inputs.baseAddress!, output: y.baseAddress!, channelStride: Self.stride,
                                channels: 2, frames: frames)
                        }
                    }
                }
            }
            XCTAssertEqual(
                measuredOut.map(\.bitPattern), plainOut.map(\.bitPattern), "the same output, \(frames) frames")
        }
        // A master gain that glides changes the output after the last input's pass: not measured there.
        mixer.apply(.master(gain: 0.5))
        var silent = [Float](repeating: 0, count: 2 * Self.stride)
        var y = silent
        try silent.withUnsafeMutableBufferPointer { s in
            var inputs = [s.baseAddress!, s.baseAddress!]
            let levels = try XCTUnwrap(meter.meter.pointee.runLevels(channels: 2))
            XCTAssertFalse(
                mixer.process(
                    inputs: &inputs, output: &y, channelStride: Self.stride, channels: 2, frames: 64, levels: levels))
        }
    }

    /// A stream's read: across the ring's end (two runs), the same planar samples as a plain read, and the levels of
    /// the meter's own pass over them.
    func testTheStreamsRingReadCopiesAsItDidAndMeasuresWhatItCopied() throws {
        let meter = Meter()
        let measured = PCMRing.allocate(minimumFrames: 4096, channels: 2)
        let plain = PCMRing.allocate(minimumFrames: 4096, channels: 2)
        defer {
            measured.deallocate()
            plain.deallocate()
        }
        let capacity = measured.index.capacity
        for (turn, frames) in Self.slices.enumerated() where frames < capacity {
            var interleaved = Self.noise(frames, seed: UInt32(turn + 40), nan: true)
            XCTAssertEqual(measured.write(&interleaved, frames: frames), frames)
            XCTAssertEqual(plain.write(&interleaved, frames: frames), frames)
            var measuredOut = [Float](repeating: 0, count: 2 * Self.stride)
            var plainOut = measuredOut
            try measuredOut.withUnsafeMutableBufferPointer { y in
                let levels = try XCTUnwrap(meter.meter.pointee.runLevels(channels: 2))
                XCTAssertEqual(
                    measured.readPlanar(
                        into: y.baseAddress!, channelStride: Self.stride, frames: frames, levels: levels),
                    frames)
                Self.assertLevels(
                    levels, equal: Self.separatePass(y.baseAddress!, frames: frames), "stream, \(frames) frames")
            }
            XCTAssertEqual(plain.readPlanar(into: &plainOut, channelStride: Self.stride, frames: frames), frames)
            XCTAssertEqual(
                measuredOut.map(\.bitPattern), plainOut.map(\.bitPattern), "the same output, \(frames) frames")
        }
        XCTAssertGreaterThan(Self.slices.filter { $0 < capacity }.reduce(0, +), capacity, "the reads wrapped")
    }

    /// The output guard's one pass: a bus is unsafe with a NaN, an infinity or a sample past +24 dBFS, as
    /// `Bus.isSafe` has it, and the meter takes the pass's levels (silence for a bus the guard silences).
    func testTheOutputGuardJudgesAsBusIsSafeDoesAndMeasuresForTheMeter() throws {
        let meter = Meter()
        let cases: [(name: String, at: Int, value: Float, safe: Bool)] = [
            ("noise", 0, 0.5, true), ("NaN", 700, .nan, false), ("infinity", 5, -.infinity, false),
            ("a burst", 999, -16, false), ("just within", 1000, 15.8, true),
        ]
        for (name, at, value, safe) in cases {
            var bus = Self.noise(1001, seed: 5)
            bus[Self.stride + at] = value
            bus.withUnsafeMutableBufferPointer { bus in
                let p = bus.baseAddress!
                XCTAssertEqual(Bus.isSafe(p, channelStride: Self.stride, channels: 2, frames: 1001), safe, name)
                XCTAssertEqual(
                    RenderEngine.guardOutput(
                        p, channelStride: Self.stride, channels: 2, frames: 1001, meter: meter.meter, measures: true),
                    safe, name)
                let m = meter.meter.pointee
                XCTAssertTrue(m.runTaken, name)
                let expected = safe ? Self.separatePass(p, frames: 1001) : [0, 0, 0, 0]
                Self.assertLevels(LevelMeter.RunLevels(squares: m.runSquares, peaks: m.runPeaks), equal: expected, name)
            }
            meter.meter.pointee.runTaken = false
        }
        // A meter that is off takes nothing; the guard still judges.
        meter.meter.pointee.isOn.store(false, ordering: .relaxed)
        var bus = Self.noise(64, seed: 6)
        bus[3] = .nan
        XCTAssertFalse(
            RenderEngine.guardOutput(
                &bus, channelStride: Self.stride, channels: 2, frames: 64, meter: meter.meter, measures: true))
        XCTAssertFalse(meter.meter.pointee.runTaken)
    }
}
