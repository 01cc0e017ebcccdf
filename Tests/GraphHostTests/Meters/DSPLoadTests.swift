import Foundation
import XCTest

@testable import GraphHost

/// The DSP load's arithmetic on calls whose times the test gives: buckets, averages, percentiles, windows, shares,
/// a fresh start when the slots run out, and the once-per-episode naming of a dominating node.
final class DSPLoadTests: XCTestCase {
    let a = UnsafeMutableRawPointer(bitPattern: 0x1000)!
    let b = UnsafeMutableRawPointer(bitPattern: 0x2000)!
    var names: [(id: String, kernel: Int)] { [("a", 0x1000), ("b", 0x2000), ("c", 0x3000)] }

    func testBucketsAreQuarterOctavesThatHoldTheirTimes() {
        XCTAssertEqual(DSPLoadRecorder.bucket(0), 0)
        XCTAssertEqual(DSPLoadRecorder.bucket(127), 0)
        XCTAssertEqual(DSPLoadRecorder.bucket(128), 1)
        XCTAssertEqual(DSPLoadRecorder.bucketStart(1), 128)
        XCTAssertEqual(DSPLoadRecorder.bucketStart(2), 160)
        XCTAssertEqual(DSPLoadRecorder.bucketStart(5), 256)
        for nanos in stride(from: 128, to: 1_000_000_000, by: 997) {
            let b = DSPLoadRecorder.bucket(nanos)
            XCTAssertLessThanOrEqual(DSPLoadRecorder.bucketStart(b), Double(nanos), "\(nanos)")
            XCTAssertGreaterThan(DSPLoadRecorder.bucketStart(b + 1), Double(nanos), "\(nanos)")
        }
        XCTAssertEqual(DSPLoadRecorder.bucket(Int.max), DSPLoadRecorder.bucketCount - 1)
    }

    func testReadingGivesAveragesPercentilesMaximaAndSharesPerWindow() throws {
        var recorder = DSPLoadRecorder()
        defer { recorder.deallocate() }
        // 100 calls of 480 frames at 48 kHz (10 ms budget): a runs twice a call (two slices) for 1 µs each, b 3 µs
        // once, except for one call of 50 µs.
        for i in 0..<100 {
            recorder.note(1000, kernel: a)
            recorder.note(1000, kernel: a)
            recorder.note(i == 50 ? 50_000 : 3000, kernel: b)
            recorder.finishCall(nanos: 6000, frames: 480)
        }
        let first = try XCTUnwrap(recorder.snapshot())
        recorder.startWindow()
        let load = DSPLoad(from: nil, to: first, sampleRate: 48000, names: names)
        XCTAssertEqual(load.seconds, 1, accuracy: 1e-12)
        XCTAssertEqual(load.budgetMicros, 10_000, accuracy: 1e-9)
        XCTAssertEqual(load.callback.calls, 100)
        XCTAssertEqual(load.callback.averageMicros, 6, accuracy: 1e-9)
        XCTAssertEqual(load.callback.share, 0.0006, accuracy: 1e-12)
        XCTAssertEqual(load.nodes.map(\.id), ["a", "b"], "c never ran")
        let fa = load.nodes[0].figure
        let fb = load.nodes[1].figure
        XCTAssertEqual(fa.calls, 100)
        XCTAssertEqual(fa.averageMicros, 2, accuracy: 1e-9, "a's two slices add up per call")
        XCTAssertEqual(fa.maxMicros, 2, accuracy: 1e-9)
        XCTAssertEqual(fa.p99Micros, 2, accuracy: 1e-9, "a bucket's edge is capped by the largest time")
        XCTAssertEqual(fa.p50Micros, 2, accuracy: 1e-9)
        XCTAssertEqual(fb.averageMicros, 3.47, accuracy: 1e-9)
        XCTAssertEqual(fb.maxMicros, 50, accuracy: 1e-9)
        XCTAssertEqual(fb.p99Micros, 3.072, accuracy: 1e-9, "the upper edge of 3 µs's bucket, [2.56, 3.072) µs")
        XCTAssertEqual(fb.p50Micros, 3.072, accuracy: 1e-9)
        XCTAssertEqual(load.nodesMicros, 5.47, accuracy: 1e-9)

        // The next window holds only the calls after the first snapshot, its maximum too.
        for _ in 0..<10 {
            recorder.note(4000, kernel: b)
            recorder.finishCall(nanos: 5000, frames: 240)
        }
        let second = try XCTUnwrap(recorder.snapshot())
        let window = DSPLoad(from: first, to: second, sampleRate: 48000, names: names)
        XCTAssertEqual(window.callback.calls, 10)
        XCTAssertEqual(window.budgetMicros, 5000, accuracy: 1e-9)
        XCTAssertEqual(window.seconds, 0.05, accuracy: 1e-12)
        XCTAssertEqual(window.nodes.map(\.id), ["b"])
        XCTAssertEqual(window.nodes[0].figure.averageMicros, 4, accuracy: 1e-9)
        XCTAssertEqual(window.nodes[0].figure.maxMicros, 4, accuracy: 1e-9)
        XCTAssertEqual(window.callback.maxMicros, 5, accuracy: 1e-9)
    }

    func testPercentilesAreTheUpperEdgesOfTheirBuckets() throws {
        var recorder = DSPLoadRecorder()
        defer { recorder.deallocate() }
        // 1, 2, … 100 µs: the median 50 µs lies in [49.152, 57.344) µs, the 99th percentile (99 µs) in a bucket whose
        // edge lies beyond the largest time.
        for i in 1...100 {
            recorder.note(i * 1000, kernel: a)
            recorder.finishCall(nanos: i * 1000, frames: 48)
        }
        let load = DSPLoad(from: nil, to: try XCTUnwrap(recorder.snapshot()), sampleRate: 48000, names: names)
        let figure = try XCTUnwrap(load.nodes.first?.figure)
        XCTAssertEqual(figure.p50Micros, 57.344, accuracy: 1e-9)
        XCTAssertEqual(figure.p99Micros, 100, accuracy: 1e-9)
        XCTAssertEqual(figure.averageMicros, 50.5, accuracy: 1e-9)
        XCTAssertEqual(load.callback.p50Micros, 57.344, accuracy: 1e-9)
    }

    func testSlotsStartAfreshWhenThreeQuartersAreTaken() throws {
        var recorder = DSPLoadRecorder()
        defer { recorder.deallocate() }
        let many = DSPLoadRecorder.slotCount * 3 / 4
        for k in 1...many { recorder.note(100, kernel: UnsafeMutableRawPointer(bitPattern: k * 64)) }
        recorder.finishCall(nanos: 1000, frames: 64)
        let afresh = try XCTUnwrap(recorder.snapshot())
        XCTAssertEqual(afresh.generation, 1)
        XCTAssertTrue(afresh.kernels.isEmpty)
        XCTAssertEqual(afresh.call.count, 1)
        recorder.note(100, kernel: a)
        recorder.finishCall(nanos: 1000, frames: 64)
        let next = try XCTUnwrap(recorder.snapshot())
        let load = DSPLoad(from: afresh, to: next, sampleRate: 48000, names: names)
        XCTAssertEqual(load.nodes.map(\.id), ["a"])
        XCTAssertEqual(load.nodes[0].figure.calls, 1)
    }

    func testADominatingNodeIsNamedOncePerEpisode() throws {
        var recorder = DSPLoadRecorder()
        defer { recorder.deallocate() }
        let monitor = DSPLoadMonitor()
        /// Ten calls of 48 frames (1 ms budget), then the monitor's reading of them.
        func window(call: Int, a nanosA: Int, b nanosB: Int) throws -> (DSPLoad, dominated: String?)? {
            for _ in 0..<10 {
                recorder.note(nanosA, kernel: a)
                recorder.note(nanosB, kernel: b)
                recorder.finishCall(nanos: call, frames: 48)
            }
            let snapshot = try XCTUnwrap(recorder.snapshot())
            recorder.startWindow()
            return monitor.update(snapshot, names: names, sampleRate: 48000, pipeWire: .unavailable("test"))
        }
        XCTAssertNil(try window(call: 600_000, a: 400_000, b: 100_000), "the first snapshot only starts the window")
        let first = try XCTUnwrap(try window(call: 600_000, a: 400_000, b: 100_000))
        XCTAssertEqual(first.dominated, "a")
        XCTAssertEqual(first.0.callback.share, 0.6, accuracy: 1e-9)
        XCTAssertEqual(monitor.latest?.pipeWireProblem, "test")
        XCTAssertNil(try window(call: 600_000, a: 400_000, b: 100_000)?.dominated, "the same episode")
        XCTAssertNil(try window(call: 400_000, a: 300_000, b: 50_000)?.dominated, "the call within half the budget")
        XCTAssertNil(try window(call: 600_000, a: 250_000, b: 250_000)?.dominated, "no node above half the call")
        XCTAssertEqual(try window(call: 600_000, a: 100_000, b: 400_000)?.dominated, "b")
        XCTAssertEqual(try window(call: 600_000, a: 400_000, b: 100_000)?.dominated, "a", "another node: a new episode")
    }
}
