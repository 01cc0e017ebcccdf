import Foundation
import XCTest

@testable import GraphHost

/// Faults under load: with both cores busy (stress-ng), at quantum 256, an HTTP stream through the EQ and an LV2
/// plugin plays while the PipeWire daemon restarts and the HTTP server drops the connection. Playback resumes
/// after each, the gaps are reported, and xruns are counted (not hidden). CI runs 30 s; `scripts/reliability`
/// sets GRAPHHOST_STRESS_SECONDS=300.
final class SystemFaultTests: XCTestCase {
    func testDaemonRestartAndServerDropUnderLoad() throws {
        let seconds = Int(ProcessInfo.processInfo.environment["GRAPHHOST_STRESS_SECONDS"] ?? "") ?? 30
        let pw = try HeadlessPipeWire(quantum: 256)
        let dir = pw.directory
        let server = try HTTPTestServer()
        defer { server.stop() }
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: Double(seconds + 10))
        // 160 kbit/s = 20 kB/s: served at 3x, dropped at 60 % of the run.
        let url = try server.serve(mp3, as: "long.mp3", query: "rate=60000&drop=\(20000 * seconds * 6 / 10)")
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(url)", "bufferSeconds": 1 }, \
            { "id": "eq", "type": "ipod-eq", "preset": "Rock" },
                         { "id": "amp", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/amp", \
            "controls": { "gain": -3 } }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "eq" }, { "from": "eq", "to": "amp" }, \
            { "from": "amp", "to": "out" } ] }
            """)
        let stress = Process()
        stress.executableURL = URL(fileURLWithPath: "/usr/bin/stress-ng")
        stress.arguments = ["--cpu", "2", "--timeout", "\(seconds + 20)s", "--quiet"]
        try stress.run()
        defer {
            if stress.isRunning {
                stress.terminate()
                stress.waitUntilExit()
            }
        }
        let socket = TestSupport.directory.appendingPathComponent("faults-\(getpid())/faults.sock").path
        let run = try pw.graphhost(["run", path, "--duration", "\(seconds)", "--latency", "256", "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(Double(seconds / 3), timeout: Double(seconds + 30)))
        pw.stop()
        let again = try HeadlessPipeWire(quantum: 256, directory: dir)
        defer { again.stop() }
        let result = run.wait(timeout: Double(seconds + 60))
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("daemon went away"), result.err)
        XCTAssertTrue(
            result.err.contains("reconnected to PipeWire") && result.err.contains("after a gap of"), result.err)
        XCTAssertTrue(result.err.contains("reconnecting from byte"), result.err)
        XCTAssertTrue(result.out.contains("played \(seconds)."), result.out)
        let gap = result.err.components(separatedBy: "after a gap of ").last?.split(separator: " ").first ?? "?"
        print("under load for \(seconds) s: \(result.out.split(separator: "\n").last ?? ""); daemon gap \(gap) s")
    }
}
