import Foundation
import XCTest

/// Loopback latency (scripts/loopback-latency): a click train played into graphhost's virtual sink with pw-play,
/// through a pass-through graph, against PipeWire's module-filter-chain doing a pass-through in the same daemon and
/// the same seconds.
final class LoopbackLatencyTests: XCTestCase {
    /// graphhost adds nothing to filter-chain's latency at quanta 64, 256 (over two minutes) and 1024, nor at 256
    /// with stress-ng keeping both cores busy; it pairs every click the peer pairs in the same seconds; and the
    /// latency at the end of the run is the one at its start: no drift. (`scripts/bench loopback` runs two minutes of
    /// each, idle and under stress.)
    func testLoopbackLatencyEqualsFilterChainsAndDoesNotDrift() throws {
        for (quantum, seconds, stress) in [(64, 20, false), (256, 120, false), (1024, 20, false), (256, 30, true)] {
            let sent = seconds * 4
            let what = "loopback at quantum \(quantum)\(stress ? " under stress" : "")"
            let measured = try PeerJudgement.measureByLosses(what) {
                let result = try TestSupport.execute(
                    TestSupport.root.appendingPathComponent("scripts/loopback-latency"),
                    ["--quantum", "\(quantum)", "--seconds", "\(seconds)", "--graphhost", TestSupport.executable.path]
                        + (stress ? ["--stress"] : []))
                XCTAssertEqual(result.status, 0, String(decoding: result.err, as: UTF8.self))
                let json = try XCTUnwrap(JSONSerialization.jsonObject(with: result.out) as? [String: Any])
                let ours = try XCTUnwrap(json["graphhost"] as? [String: Any])
                let theirs = try XCTUnwrap(json["filterChain"] as? [String: Any])
                print("\(what): \(json)")
                let paired = theirs["clicks"] as? Int ?? 0
                let loss = PeerLoss(peer: "filter-chain", lost: sent - paired, of: sent, what: "clicks not paired")
                return ((ours, theirs, json), [loss])
            }
            guard let (ours, theirs, json) = measured else { continue }
            // Every click the peer paired in the same seconds (the first and last are at the run's edges).
            let peerClicks = theirs["clicks"] as? Int ?? 0
            XCTAssertGreaterThanOrEqual(ours["clicks"] as? Int ?? 0, min(sent - 2, peerClicks), "\(json)")
            let start = try XCTUnwrap(ours["start"] as? Double)
            let end = try XCTUnwrap(ours["end"] as? Double)
            XCTAssertEqual(start, try XCTUnwrap(theirs["start"] as? Double), "\(json)")
            XCTAssertEqual(end, try XCTUnwrap(theirs["end"] as? Double), "\(json)")
            XCTAssertEqual(end, start, "the latency drifted: \(json)")
        }
    }
}
