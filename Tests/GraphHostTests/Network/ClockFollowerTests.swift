import Foundation
import XCTest

@testable import GraphHost

/// A sender whose clock runs apart from the graph's, simulated: packets of 4 ms of a 1 kHz tone by the sender's clock
/// come in, a jitter buffer is played at the graph's rate. Followed, the buffer stays near where it settled and comes
/// back to it, and the tone goes on without a click; a sender on the graph's clock is barely corrected.
final class ClockFollowerTests: XCTestCase {
    /// Plays `seconds` of a sender whose clock runs `ppm` parts per million fast; returns the buffer's average level
    /// (seconds) over each simulated second, where the follower saw it settle, what came in and what was emitted.
    func simulate(ppm: Double, seconds: Int, follow: Bool) throws -> (
        levels: [Double], settled: Double?, output: [Float], input: [Float]
    ) {
        let rate = 48000
        let follower = ClockFollower(channels: 1, rate: rate)
        let packet = 192
        // The sender's packets arrive every 4 ms of its own clock: 4 ms / (1 + ppm) of the graph's.
        let interval = Double(packet) / Double(rate) / (1 + ppm / 1e6)
        let start = 0.1  // the jitter buffer asked for
        var emitted = 0
        var output: [Float] = []
        var input: [Float] = []
        var levels: [Double] = []
        var sum = 0.0
        var count = 0
        var k = 0
        var samples = [Float](repeating: 0, count: packet)
        while Double(k) * interval < Double(seconds) {
            let now = Double(k) * interval
            // Played from `start` on, at the graph's rate.
            let played = max(0, (now - start) * Double(rate))
            let buffered = (Double(emitted) - played) / Double(rate)
            for i in 0..<packet {
                samples[i] = Float(0.5 * sin(2 * Double.pi * 1000 * Double(k * packet + i) / Double(rate)))
            }
            input += samples
            if follow {
                try samples.withUnsafeBufferPointer { s in
                    try follower.pass(s.baseAddress!, frames: packet, bufferedSeconds: buffered) { out, n in
                        output += UnsafeBufferPointer(start: out, count: n)
                        emitted += n
                    }
                }
            } else {
                output += samples
                emitted += packet
            }
            sum += buffered
            count += 1
            if Int(now + interval) > Int(now) {
                levels.append(sum / Double(count))
                sum = 0
                count = 0
            }
            k += 1
        }
        return (levels, follower.reference, output, input)
    }

    /// The largest jump of the tone's second difference after its first 10 ms (where it starts from silence): 0.0086
    /// for a clean 1 kHz tone at 0.5, a click far more.
    func roughness(_ x: [Float]) -> Float {
        (480..<(x.count - 1)).map { abs(x[$0 + 1] - 2 * x[$0] + x[$0 - 1]) }.max() ?? 0
    }

    func testAFastSenderIsFollowedAndTheBufferHeld() throws {
        let run = try simulate(ppm: 1000, seconds: 120, follow: true)
        let drifting = try simulate(ppm: 1000, seconds: 120, follow: false)
        // Unfollowed, the buffer grows by a millisecond a second.
        XCTAssertGreaterThan(drifting.levels.last! - drifting.levels[5], 0.1)
        // Followed, it leaves where it settled by a few milliseconds at most, and comes back to it.
        let settled = try XCTUnwrap(run.settled)
        XCTAssertLessThan(run.levels.dropFirst(4).map { abs($0 - settled) }.max()!, 0.004)
        for level in run.levels.suffix(20) { XCTAssertEqual(level, settled, accuracy: 0.0005) }
        XCTAssertLessThan(roughness(run.output), 0.012, "a click")
    }

    func testASlowSenderIsFollowedToo() throws {
        let run = try simulate(ppm: -700, seconds: 120, follow: true)
        let settled = try XCTUnwrap(run.settled)
        XCTAssertLessThan(run.levels.dropFirst(4).map { abs($0 - settled) }.max()!, 0.004)
        for level in run.levels.suffix(20) { XCTAssertEqual(level, settled, accuracy: 0.0005) }
        XCTAssertLessThan(roughness(run.output), 0.012)
    }

    /// On the graph's own clock the buffer stays where it settled, and the tone comes out clean at its level.
    func testASenderOnTheGraphsClockIsBarelyCorrected() throws {
        let run = try simulate(ppm: 0, seconds: 30, follow: true)
        let settled = try XCTUnwrap(run.settled)
        for level in run.levels.dropFirst(4) { XCTAssertEqual(level, settled, accuracy: 0.0003) }
        XCTAssertLessThan(roughness(run.output), 0.012)
        XCTAssertEqual(
            ToneMeasure.amplitude(run.output.flatMap { [$0, $0] }, 1000, start: 10, seconds: 10), 0.5, accuracy: 0.005)
    }
}
