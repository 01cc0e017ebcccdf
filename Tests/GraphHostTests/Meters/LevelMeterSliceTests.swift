import CMeterGlue
import XCTest

@testable import GraphHostCore

/// `LevelMeter` fed planar slices directly: clips counted exactly wherever they fall, and every reading after every
/// slice equal to a sample-by-sample reference of the meter's rules.
final class LevelMeterSliceTests: XCTestCase {
    static let rate = 48000.0, blockFrames = 480

    /// A stereo meter at 48 kHz, freed with the object.
    final class Meter {
        let meter = LevelMeter.allocate(channels: 2, sampleRate: LevelMeterSliceTests.rate, on: true)
        deinit { LevelMeter.deallocate(meter) }

        /// Measures `left` and `right` (the same length) as one slice and returns the readings (nil: off).
        func measure(_ left: ArraySlice<Float>, _ right: ArraySlice<Float>) -> [LevelMeter.Reading]? {
            var bus = Array(left) + Array(right)
            bus.withUnsafeMutableBufferPointer {
                meter.pointee.measure($0.baseAddress!, channelStride: left.count, frames: left.count)
            }
            return meter.pointee.read()
        }
    }

    /// The meter's loop, as this processor runs it and in SSE2 alone, against a scalar sum and maximum: buses of one,
    /// two and three channels (two go a turn together), runs of every length up to 100 at every offset, with NaNs,
    /// infinities and negative zeros among the samples.
    func testTheRunLoopMatchesAScalarReferenceInEachInstructionSet() {
        var seed: UInt32 = 99
        var samples = (0..<600).map { _ -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return 1.5 * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
        samples[37] = .nan
        samples[81] = -.infinity
        samples[150] = -0.0
        samples[290] = .nan
        samples[433] = .infinity
        let stride = 200
        samples.withUnsafeBufferPointer { buffer in
            for channels in 1...3 {
                for start in 0..<100 {
                    for count in 0...100 {
                        let p = buffer.baseAddress! + start
                        var chosen = [Float](repeating: -1, count: 2 * channels)
                        var sse2 = chosen
                        chosen.withUnsafeMutableBufferPointer {
                            SampleRunLevels.measure(
                                p, channelStride: stride, channels: channels, count: count,
                                squares: $0.baseAddress!, peaks: $0.baseAddress! + channels)
                        }
                        sse2.withUnsafeMutableBufferPointer {
                            gh_meter_run_levels_sse2(
                                p, stride, channels, count, $0.baseAddress!, $0.baseAddress! + channels)
                        }
                        for c in 0..<channels {
                            var squares: Float = 0
                            var peak: Float = 0
                            for x in UnsafeBufferPointer(start: p + c * stride, count: count) {
                                squares += x * x
                                if abs(x) > peak { peak = abs(x) }
                            }
                            for (name, got) in [("chosen", chosen), ("SSE2", sse2)] {
                                let at =
                                    "\(name), \(channels) channels, channel \(c), samples \(start)..<\(start + count)"
                                XCTAssertEqual(got[channels + c], peak, at)
                                if squares.isFinite {
                                    XCTAssertEqual(got[c], squares, accuracy: max(squares * 1e-5, 1e-30), at)
                                } else {
                                    XCTAssertEqual(got[c].isNaN, squares.isNaN, at)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    func testASingleClippedSampleInALongSliceIsCountedOnce() throws {
        let meter = Meter()
        // 4099 frames: eight whole blocks, then a run of 259 whose last three samples are past the vectors.
        var left = [Float](repeating: 0.5, count: 4099)
        var right = left
        left[3001] = -1
        right[4098] = 1
        let readings = try XCTUnwrap(meter.measure(left[...], right[...]))
        XCTAssertEqual(readings.map(\.clips), [1, 1])
        XCTAssertEqual(readings.map(\.peak), [1, 1])
        let quiet = [Float](repeating: 0.5, count: 4099)
        XCTAssertEqual(
            try XCTUnwrap(meter.measure(quiet[...], quiet[...])).map(\.clips), [1, 1], "clips add up, quiet adds none")
    }

    func testClipsStraddlingBlockAndSliceBoundariesAreCountedExactly() throws {
        let meter = Meter()
        // Ten blocks' worth and 200 quiet frames, so the last block (they end with the slice that fills 480 frames:
        // at every 500) is finished and read.
        let frames = 10 * Self.blockFrames + 200
        var left = [Float](repeating: 0.25, count: frames)
        var right = [Float](repeating: -0.25, count: frames)
        // Seven clipped samples across each 10 ms mark, and five across each 100-frame slice boundary between.
        for boundary in stride(from: Self.blockFrames, to: 10 * Self.blockFrames, by: Self.blockFrames) {
            for f in boundary - 3...boundary + 3 { left[f] = f.isMultiple(of: 2) ? 1 : -1.5 }
            for f in boundary - 3...boundary + 3 { right[f] = .infinity }
        }
        for boundary in stride(from: 200, to: 10 * Self.blockFrames, by: 500) {
            for f in boundary - 2...boundary + 2 { left[f] = -1 }
        }
        var readings: [LevelMeter.Reading] = []
        for start in stride(from: 0, to: frames, by: 100) {
            readings = try XCTUnwrap(meter.measure(left[start..<start + 100], right[start..<start + 100]))
        }
        XCTAssertEqual(readings.map(\.clips), [9 * 7 + 10 * 5, 9 * 7])
    }

    /// Noise, bursts past full scale, a NaN and an infinity, slices of every size, silence that empties the window
    /// and the held peak, and the meter turned off and on again (with a full window, and an empty one): each slice's
    /// readings as the reference has them.
    func testEveryReadingMatchesASampleBySampleReference() throws {
        let meter = Meter()
        var references = [Reference(), Reference()]
        var seed: UInt32 = 1234
        func noise(_ amplitude: Float) -> Float {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return amplitude * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
        let sizes = [256, 100, 1, 17, 480, 1000, 33, 4096, 7, 479, 481, 64]
        let seconds: [(length: Double, amplitude: Float)] = [(0.7, 0.5), (0.2, 1.3), (0.4, 0.3), (2.6, 0), (0.3, 0.8)]
        var signal: [[Float]] = [[], []]
        for (length, amplitude) in seconds {
            for c in 0..<2 { signal[c] += (0..<Int(length * Self.rate)).map { _ in noise(amplitude) } }
        }
        signal[0][20_000] = .nan
        signal[1][30_123] = -.infinity
        signal[1][30_500] = .nan
        let restarts = [Int(1.0 * Self.rate), Int(3.9 * Self.rate)]
        var start = 0
        var slice = 0
        var silentReadings = 0
        var clips = 0
        while start < signal[0].count {
            let end = min(start + sizes[slice % sizes.count], signal[0].count)
            if restarts.contains(where: { start <= $0 && $0 < end }) {
                meter.meter.pointee.isOn.store(false, ordering: .relaxed)
                XCTAssertNil(meter.measure(signal[0][start..<end], signal[1][start..<end]))
                meter.meter.pointee.isOn.store(true, ordering: .relaxed)
                references = [Reference(), Reference()]
            }
            let readings = try XCTUnwrap(meter.measure(signal[0][start..<end], signal[1][start..<end]))
            for c in 0..<2 {
                let expected = references[c].measure(signal[c][start..<end])
                let reading = readings[c]
                clips = max(clips, reading.clips)
                let at = "channel \(c), frames \(start)..<\(end)"
                XCTAssertEqual(reading.peak, expected.peak, at)
                XCTAssertEqual(reading.heldPeak, expected.heldPeak, at)
                XCTAssertEqual(reading.clips, expected.clips, at)
                if expected.meanSquare == 0 {
                    XCTAssertEqual(reading.meanSquare, 0, at)
                    silentReadings += 1
                } else {
                    XCTAssertEqual(reading.meanSquare, expected.meanSquare, accuracy: expected.meanSquare * 1e-5, at)
                }
            }
            start = end
            slice += 1
        }
        XCTAssertGreaterThan(silentReadings, 100, "the silence emptied the window")
        XCTAssertGreaterThan(clips, 1000, "the bursts clipped")
    }

    /// One channel of the meter, sample by sample: a block gathers whole slices until it holds 480 frames and keeps
    /// their sum of squares (in Double; a block with a non-finite sample counts as silence), peak and the clips
    /// (|x| ≥ 1) counted so far; a reading takes finished blocks only: the window is the newest blocks up to the one
    /// that makes 30 × 480 frames, the held peak the largest of those and of the blocks 2 s before them.
    struct Reference {
        var blocks: [(squares: Double, peak: Float, frames: Int, clips: Int)] = []
        var squares: Double = 0
        var finite = true
        var peak: Float = 0
        var frames = 0
        var clips = 0

        mutating func measure(_ samples: ArraySlice<Float>) -> LevelMeter.Reading {
            for x in samples {
                let a = abs(x)
                if x.isFinite { squares += Double(a * a) } else { finite = false }
                if a > peak { peak = a }
                if a >= 1 { clips += 1 }
            }
            frames += samples.count
            if frames >= LevelMeterSliceTests.blockFrames {
                blocks.append((finite ? squares : 0, peak, frames, clips))
                (squares, finite, peak, frames) = (0, true, 0, 0)
            }
            let window = LevelMeter.windowBlocks * LevelMeterSliceTests.blockFrames
            let hold = Int(LevelMeter.holdSeconds * LevelMeterSliceTests.rate)
            var reading = LevelMeter.Reading()
            var sum: Double = 0
            var count = 0
            var spanned = 0
            for block in blocks.reversed() where spanned < window + hold {
                if spanned < window {
                    sum += block.squares
                    count += block.frames
                    reading.peak = max(reading.peak, block.peak)
                }
                reading.heldPeak = max(reading.heldPeak, block.peak)
                spanned += block.frames
            }
            reading.meanSquare = count > 0 ? Float(sum / Double(count)) : 0
            reading.clips = blocks.last?.clips ?? 0
            return reading
        }
    }
}
