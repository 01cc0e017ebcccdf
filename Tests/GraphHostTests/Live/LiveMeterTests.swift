import Foundation
import XCTest

@testable import GraphHost

/// Level meters while `run` plays into a private PipeWire daemon, read through the control socket.
final class LiveMeterTests: XCTestCase {
    func testStatusShowsTheLevelsAndMeterTurnsANodesMeterOnAndOff() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let sine = try TestSupport.floatSine(amplitude: 0.5, seconds: 60)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(sine)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("outputs/meters.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        /// Each metered node's first channel: peak and RMS in dBFS (nil: silence).
        func levels() throws -> [String: (peak: Double?, rms: Double?)] {
            let meters = try control.status()["meters"] as? [[String: Any]] ?? []
            var result: [String: (peak: Double?, rms: Double?)] = [:]
            for meter in meters {
                guard let node = meter["node"] as? String,
                    let channel = (meter["channels"] as? [[String: Any]])?.first
                else { continue }
                result[node] = (channel["peak"] as? Double, channel["rms"] as? Double)
            }
            return result
        }
        func reads(_ node: String) throws -> Bool {
            guard let level = try levels()[node], let peak = level.peak, let rms = level.rms else { return false }
            return abs(peak + 6.02) <= 0.05 && abs(rms + 9.03) <= 0.05
        }
        XCTAssertTrue(try TestSupport.waitUntil { try reads("out") }, "out: \(String(describing: try? levels()))")
        XCTAssertNil(try levels()["s"], "only outputs are metered unless asked")
        XCTAssertEqual(try control.ctl(["meter", "s", "on"]).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil { try reads("s") }, "s: \(String(describing: try? levels()))")
        XCTAssertEqual(try control.ctl(["meter", "s", "off"]).status, 0)
        XCTAssertNil(try levels()["s"])
        XCTAssertNotEqual(try control.ctl(["meter", "nope", "on"]).status, 0)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }
}
