import Foundation
import XCTest

@testable import GraphHost

/// The DSP load in `status` while `run` plays amp and four Detunes into a private PipeWire daemon: per-node figures
/// that rank Detune above amp and add up to the render call, and PipeWire's own figure for graphhost's node beside it.
final class LiveLoadTests: XCTestCase {
    func testStatusShowsTheLoadPerNodeAndPipeWiresFigure() throws {
        // A quantum of 2048 frames: per-sample work outweighs what a wake-up with cold caches adds to every step
        // (at 1024 an mda Detune and the amp plugin are often one 1.024 µs bucket apart, or none).
        let pw = try HeadlessPipeWire(quantum: 2048)
        defer { pw.stop() }
        let graph = try LV2LoadTests.ampAndDetunes()
        let socket = TestSupport.directory.appendingPathComponent("outputs/load.sock").path
        let run = try pw.graphhost(["run", graph, "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        var load: [String: Any] = [:]
        XCTAssertTrue(
            try TestSupport.waitUntil {
                let status = try control.status()
                load = status["load"] as? [String: Any] ?? [:]
                // A window after the first two seconds: past the plugins' and caches' warm-up.
                return load["pipeWire"] is [String: Any] && status["position"] as? Double ?? 0 >= 3
            }, "no load with PipeWire's figure: \(load)")
        print(load)
        let nodes = Dictionary(
            uniqueKeysWithValues: (load["nodes"] as? [[String: Any]] ?? []).compactMap { entry in
                (entry["node"] as? String).flatMap { id in (entry["figure"] as? [String: Any]).map { (id, $0) } }
            })
        func micros(_ figure: [String: Any]?, _ key: String) -> Double { figure?[key] as? Double ?? .nan }
        let callback = load["callback"] as? [String: Any]
        let ids = ["s", "amp", "detune1", "detune2", "detune3", "detune4", "out"]
        XCTAssertEqual(Set(nodes.keys), Set(ids), "\(load)")
        for k in 1...4 {
            XCTAssertGreaterThan(
                micros(nodes["detune\(k)"], "p50Micros"), micros(nodes["amp"], "p50Micros"), "detune\(k): \(load)")
        }
        let sum = ids.reduce(0) { $0 + micros(nodes[$1], "averageMicros") }
        let call = micros(callback, "averageMicros")
        XCTAssertEqual(sum, call, accuracy: 0.1 * call, "the nodes' sum against the call: \(load)")
        XCTAssertEqual(load["budgetMicros"] as? Double ?? 0, 2048e6 / 48000, accuracy: 1, "\(load)")
        let pipeWire = load["pipeWire"] as? [String: Any]
        XCTAssertGreaterThan(micros(pipeWire, "averageMicros"), 0, "\(load)")
        XCTAssertGreaterThan(micros(pipeWire, "share"), 0, "\(load)")
        XCTAssertGreaterThan(pipeWire?["cycles"] as? Int ?? 0, 0, "\(load)")
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }
}
