import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// Level meters on graphhost's own output: peak and RMS of a known sine, clips, silence, and `meter NODE on|off`.
final class LevelMeterTests: XCTestCase {
    /// A graph playing `file` through a stream node `s` to `out`; `meter` is the stream node's `"meter"` member.
    static func graph(_ file: String, meter: String? = nil) -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(file)"\(meter.map { ", \"meter\": \($0)" } ?? "") },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
    }

    static func render(_ session: GraphSession, seconds: Double) throws {
        _ = try OfflineRenderer(session: session).render(durationFrames: Int(seconds * 48000)) { _, _ in }
    }

    static func status(_ session: GraphSession) -> RunStatus {
        TestSupport.offlineStatus().snapshot(session)
    }

    func testASineAtMinus6dBFSReadsItsPeakAndRMSAtTheOutputAndAMeteredNode() throws {
        let session = try TestSupport.session(
            Self.graph(try TestSupport.floatSine(amplitude: 0.5, seconds: 3), meter: "true"))
        defer { session.close() }
        try Self.render(session, seconds: 1)
        let status = Self.status(session)
        XCTAssertEqual(status.meters.map(\.node), ["s", "out"])
        for meter in status.meters {
            XCTAssertEqual(meter.channels.count, 2)
            for level in meter.channels {
                XCTAssertEqual(level.peak, -6.02, accuracy: 0.05, meter.node)
                XCTAssertEqual(level.heldPeak, -6.02, accuracy: 0.05, meter.node)
                XCTAssertEqual(level.rms, -9.03, accuracy: 0.05, meter.node)
                XCTAssertEqual(level.clips, 0, meter.node)
            }
        }
        let text = ReplyText.statusText(status)
        XCTAssertTrue(text.contains("meters (dBFS):"), text)
        let row = text.split(separator: "\n").map { $0.split(separator: " ") }.first { $0.first == "out" }
        XCTAssertEqual(row, ["out", "1", "-6.0", "-6.0", "-9.0", "0"], text)
        let json = try JSONSerialization.jsonObject(with: Data(status.json.compact.utf8)) as? [String: Any]
        let meters = try XCTUnwrap(json?["meters"] as? [[String: Any]])
        XCTAssertEqual(meters.compactMap { $0["node"] as? String }, ["s", "out"])
        let channel = try XCTUnwrap((meters[1]["channels"] as? [[String: Any]])?.first)
        XCTAssertEqual(try XCTUnwrap(channel["peak"] as? Double), -6.02, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(channel["rms"] as? Double), -9.03, accuracy: 0.05)
        XCTAssertEqual(channel["clips"] as? Int, 0)
    }

    func testASineAtPlus1dBFSCountsClips() throws {
        let session = try TestSupport.session(Self.graph(try TestSupport.floatSine(amplitude: 1.122, seconds: 3)))
        defer { session.close() }
        try Self.render(session, seconds: 1)
        let levels = try XCTUnwrap(Self.status(session).meters.first { $0.node == "out" }).channels
        for level in levels {
            XCTAssertEqual(level.peak, 1.0, accuracy: 0.05)
            // |sin| ≥ 1/1.122 from 63° to 117° of each half period: 7 of its 24 samples, 14 000 in a second.
            XCTAssertEqual(Double(level.clips), 14_000, accuracy: 300)
        }
    }

    /// A second of sine then silence: the window empties 300 ms after the sine ends, the held peak stays 2 s longer.
    func testTheHeldPeakStaysTwoSecondsAfterTheWindowEmpties() throws {
        let path = try TestSupport.floatSine(amplitude: 0.5, seconds: 5, gate: "not(floor(t))")
        let session = try TestSupport.session(Self.graph(path))
        defer { session.close() }
        func out() throws -> RunStatus.Level { try XCTUnwrap(Self.status(session).meters.first?.channels.first) }
        try Self.render(session, seconds: 1.5)
        XCTAssertEqual(try out().peak, -.infinity)
        XCTAssertEqual(try out().rms, -.infinity)
        XCTAssertEqual(try out().heldPeak, -6.02, accuracy: 0.05)
        try Self.render(session, seconds: 1.7)  // 3.2 s: 1.9 s after the window emptied
        XCTAssertEqual(try out().heldPeak, -6.02, accuracy: 0.05)
        try Self.render(session, seconds: 0.2)  // 3.4 s
        XCTAssertEqual(try out().heldPeak, -.infinity)
    }

    func testSilenceReadsMinusInfinityNeverNaN() throws {
        let session = try TestSupport.session(
            Self.graph(try TestSupport.floatSine(amplitude: 0, seconds: 3), meter: "true"))
        defer { session.close() }
        try Self.render(session, seconds: 0.5)
        let status = Self.status(session)
        XCTAssertEqual(status.meters.count, 2)
        for level in status.meters.flatMap(\.channels) {
            XCTAssertEqual(level.peak, -.infinity)
            XCTAssertEqual(level.heldPeak, -.infinity)
            XCTAssertEqual(level.rms, -.infinity)
            XCTAssertEqual(level.clips, 0)
        }
        let json = status.json.compact
        XCTAssertTrue(json.contains(#"{"clips":0,"heldPeak":null,"peak":null,"rms":null}"#), json)
        XCTAssertNil(json.range(of: #"\bnan\b"#, options: [.regularExpression, .caseInsensitive]), json)
        let text = ReplyText.statusText(status)
        XCTAssertTrue(text.contains("-inf"), text)
        XCTAssertNil(text.range(of: #"\bnan\b"#, options: [.regularExpression, .caseInsensitive]), text)
    }

    func testMeterTurnsANodesMeterOnAndOffLive() throws {
        let path = Self.graph(try TestSupport.floatSine(amplitude: 0.5, seconds: 3))
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: try TestSupport.session(path), status: { status.snapshot($0) }, quit: {})
        defer { control.withSession { $0.close() } }
        func meters() throws -> [RunStatus.Meter] {
            guard case .status(let status) = try control.perform(.status) else {
                XCTFail("status answers the status")
                return []
            }
            return status.meters
        }
        func render() throws { try control.withSession { try Self.render($0, seconds: 0.5) } }

        try render()
        XCTAssertEqual(try meters().map(\.node), ["out"], "outputs are metered, other nodes only when asked")
        guard case .done = try control.perform(Command.parse("meter s on")) else { return XCTFail("meter changes") }
        try render()
        let levels = try XCTUnwrap(try meters().first { $0.node == "s" }).channels
        XCTAssertEqual(levels.map(\.peak).max()!, -6.02, accuracy: 0.05)
        XCTAssertEqual(levels.map(\.rms).max()!, -9.03, accuracy: 0.05)
        let saved = TestSupport.directory.appendingPathComponent("metered-\(UUID().uuidString).json").path
        _ = try control.perform(.save(path: saved))
        XCTAssertEqual(try GraphDocument.load(path: saved).node("s")?.meter, true, "save writes the meter")
        _ = try control.perform(Command.parse("meter s off"))
        _ = try control.perform(Command.parse("meter out off"))
        try render()
        XCTAssertEqual(try meters().map(\.node), [])

        XCTAssertThrowsError(try control.perform(Command.parse("meter nope on"))) {
            XCTAssertEqual("\($0)", "no node 'nope'; nodes: s, out")
        }
        XCTAssertThrowsError(try Command.parse("meter s loud")) {
            XCTAssertEqual("\($0)", "usage: meter NODE on|off")
        }
    }

    func testAMeterThatIsNotABooleanIsRejectedWithItsPath() throws {
        let file = try TestSupport.floatSine(amplitude: 0.5, seconds: 3)
        XCTAssertThrowsError(try GraphDocument.load(path: Self.graph(file, meter: "\"yes\""))) {
            XCTAssertTrue("\($0)".contains("nodes[0].meter: expected true or false, found a string"), "\($0)")
        }
    }
}
