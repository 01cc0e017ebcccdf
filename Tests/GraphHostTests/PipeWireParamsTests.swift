import Foundation
import XCTest
@testable import GraphHost

/// The graph's parameters as the playback node's PipeWire params: `pw-dump` shows them, `pw-cli set-param` changes
/// them (judged on the `--record` output), and changes made through the socket are published back.
final class PipeWireParamsTests: XCTestCase {
    /// The Props params (name to value) pw-dump shows on the node `name`, and the node's id.
    static func props(_ pw: HeadlessPipeWire, node name: String) throws -> (id: Int, values: [String: Double])? {
        let out = try HeadlessPipeWire.execute(URL(fileURLWithPath: "/usr/bin/pw-dump"), [], environment: pw.environment).out
        guard let objects = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]] else { return nil }
        for object in objects {
            guard let info = object["info"] as? [String: Any], (info["props"] as? [String: Any])?["node.name"] as? String == name,
                  let id = object["id"] as? Int else { continue }
            let props = ((info["params"] as? [String: Any])?["Props"] as? [[String: Any]]) ?? []
            var values: [String: Double] = [:]
            for entry in props {
                guard let list = entry["params"] as? [Any] else { continue }
                for i in stride(from: 0, to: list.count - 1, by: 2) {
                    guard let key = list[i] as? String else { continue }
                    if let v = list[i + 1] as? Double { values[key] = v } else if let b = list[i + 1] as? Bool { values[key] = b ? 1 : 0 }
                }
            }
            return (id, values)
        }
        return nil
    }

    func testParamsArePublishedSetAndPublishedBack() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let name = "params"
        let path = TestSupport.graph("""
        { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 40))" }, { "id": "mix", "type": "mixer", "inputs": 1 },
                     { "id": "eq", "type": "ipod-eq" }, { "id": "amp", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/amp" },
                     { "id": "out", "type": "output" } ],
          "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "amp" }, { "from": "amp", "to": "out" } ] }
        """)
        let socket = TestSupport.directory.appendingPathComponent("live/params.sock").path
        let recording = TestSupport.directory.appendingPathComponent("params.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", path, "--name", name, "--socket", socket, "--latency", "256", "--record", recording])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        var node: (id: Int, values: [String: Double])?
        XCTAssertTrue(try TestSupport.waitUntil { node = try Self.props(pw, node: name); return node?.values["mix:volume"] != nil })
        let values = try XCTUnwrap(node).values
        XCTAssertEqual(values["mix:volume"], 1)
        XCTAssertEqual(values["mix:volume.0"], 1)
        XCTAssertEqual(values["eq:preset"], 0)
        XCTAssertEqual(values["eq:band.3"], 0)
        XCTAssertEqual(values["eq:preamp"], 0)
        XCTAssertEqual(values["eq:bypass"], 0)
        XCTAssertEqual(values["amp:gain"], 0)
        let id = "\(try XCTUnwrap(node).id)"
        XCTAssertTrue(try control.waitForPosition(1))
        func setParam(_ pod: String) throws {
            let r = try HeadlessPipeWire.execute(URL(fileURLWithPath: "/usr/bin/pw-cli"), ["set-param", id, "Props", pod], environment: pw.environment)
            XCTAssertEqual(r.status, 0, r.err)
        }
        try setParam(#"{ params = [ "mix:volume" 0.25 ] }"#)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.props(pw, node: name)?.values["mix:volume"] == 0.25 }, "the change was not applied and published back")
        let first = try control.position()
        XCTAssertTrue(try control.waitForPosition(first + 1))
        // Through the socket: published back.
        XCTAssertEqual(try control.ctl(["set", "amp", "gain", "-6"]).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.props(pw, node: name)?.values["amp:gain"] == -6 })
        let second = try control.position()
        XCTAssertTrue(try control.waitForPosition(second + 1))
        // A preset by index and a bypass; an unknown name and a value out of range change nothing.
        try setParam(#"{ params = [ "eq:preset" 16 "eq:bypass" true "nope:x" 1 "mix:volume.0" 99.0 ] }"#)
        XCTAssertTrue(try TestSupport.waitUntil { let v = try Self.props(pw, node: name)?.values; return v?["eq:preset"] == 16 && v?["eq:bypass"] == 1 })
        XCTAssertEqual(try Self.props(pw, node: name)?.values["mix:volume.0"], 1)
        let third = try control.position()
        XCTAssertTrue(try control.waitForPosition(third + 1))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("no node 'nope'"), result.err)
        XCTAssertTrue(result.err.contains("out of range"), result.err)

        let samples = try SoundFile(path: recording).samples
        let levels = stride(from: 0, to: samples.count / 2 - 2400, by: 2400).map {
            LV2PortLinkTests.dB(LV2PortLinkTests.amplitude(samples, 1000, start: Double($0) / 48000, seconds: 0.05))
        }
        let onset = try XCTUnwrap(levels.firstIndex { $0 > -30 })
        let reference = levels[onset + 4]
        func held(_ dB: Double) -> Bool {
            (0..<(levels.count - 10)).contains { i in levels[i..<(i + 10)].allSatisfy { abs($0 - (reference + dB)) < 0.3 } }
        }
        XCTAssertTrue(held(-12.04), "no half second at mix:volume 0.25: \(levels)")
        XCTAssertTrue(held(-18.04), "no half second with amp:gain -6: \(levels)")
        // The changes made through PipeWire are click-free (swh amp's gain, set through the socket, steps: the plugin
        // does not smooth its control, so its change is left out).
        let end = Double(samples.count / 2) / 48000 - 0.8
        for (from, to) in [(Double(onset) * 0.05 + 0.5, second - 0.2), (third - 0.2, end)] {
            let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: from, end: to)
            XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        }
    }
}
