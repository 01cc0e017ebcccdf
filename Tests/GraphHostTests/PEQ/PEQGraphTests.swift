import Foundation
import XCTest

@testable import GraphHost

/// `peq` settings in graph files: errors name the JSON path and the range, live errors change nothing, and `save`
/// writes the live state.
final class PEQGraphTests: XCTestCase {
    static func graph(_ eq: String, rate: Int = 48000, name: String) throws -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": \(rate), "channels": 2 },
              "nodes": [ { "id": "s", "type": "stream", "url": "\(try TestSupport.sine(seconds: 3))" },
                         { "id": "eq", "type": "peq", \(eq) },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """, name: name)
    }

    func testInvalidSettingsNameTheirPathAndRange() throws {
        let band = #"{ "type": "peaking", "frequency": 1000, "gain": -3, "q": 1 }"#
        let cases: [(settings: String, rate: Int, expected: [String])] = [
            (
                #""bands": [\#(band), { "type": "peaking", "frequency": 500, "q": 30 }]"#, 48000,
                ["nodes[1].bands[1].q", "30 is out of range 0.1…20"]
            ),
            (
                #""bands": [{ "type": "peaking", "frequency": 5, "gain": 30 }]"#, 48000,
                [
                    "nodes[1].bands[0].frequency", "5 is out of range 10…20000", "nodes[1].bands[0].gain",
                    "30 is out of range -24…24",
                ]
            ),
            (
                #""bands": [{ "type": "shelf", "frequency": 100 }]"#, 48000,
                [
                    "nodes[1].bands[0].type", "unknown band type 'shelf'",
                    "peaking, low-shelf, high-shelf, low-pass, high-pass, band-pass, notch",
                ]
            ),
            (
                #""bands": [{ "gain": 3 }]"#, 48000,
                ["nodes[1].bands[0].type: missing", "nodes[1].bands[0].frequency: missing"]
            ),
            (
                #""bands": [{ "type": "notch", "frequency": 100, "width": 2 }]"#, 48000,
                ["nodes[1].bands[0].width", "unknown setting 'width'"]
            ),
            (
                #""bands": [\#(Array(repeating: band, count: 17).joined(separator: ", "))]"#, 48000,
                ["nodes[1].bands", "17 bands; a peq node has at most 16"]
            ),
            (
                #""bands": [{ "type": "low-pass", "frequency": 16000 }]"#, 32000,
                ["nodes[1].bands[0].frequency", "must be below 15680 Hz"]
            ),
            (#""bands": { "type": "notch" }"#, 48000, ["nodes[1].bands", "expected an array of bands"]),
            (#""bands": [3]"#, 48000, ["nodes[1].bands[0]", "expected a band object"]),
            (#""bands": [], "preamp": 40"#, 48000, ["nodes[1].preamp", "40 is out of range -24…24"]),
        ]
        for (k, c) in cases.enumerated() {
            let result = try TestSupport.graphhost([
                "validate", try Self.graph(c.settings, rate: c.rate, name: "peq-invalid-\(k)"),
            ])
            XCTAssertNotEqual(result.status, 0, c.settings)
            for expected in c.expected {
                XCTAssertTrue(result.err.contains(expected), "\(c.settings): expected '\(expected)' in \(result.err)")
            }
        }
        let valid = try TestSupport.graphhost([
            "validate", try Self.graph(#""bands": [\#(band)], "preamp": -2, "bypass": false"#, name: "peq-valid"),
        ])
        XCTAssertEqual(valid.status, 0, valid.err)
    }

    /// A live command that does not fit is refused with the reason and leaves the node as it was.
    func testRefusedLiveChangesLeaveTheNodeAsItWas() throws {
        let path = try Self.graph(
            #""bands": [{ "type": "peaking", "frequency": 1000, "gain": -3, "q": 1 }]"#, name: "peq-live-errors")
        let session = try TestSupport.session(path)
        defer { session.close() }
        let refused: [(NodeRequest, String)] = [
            (
                NodeRequest(node: "eq", action: .set(parameter: .band(0, .q), value: 50)),
                "band.0.q 50 is out of range 0.1…20"
            ),
            (
                NodeRequest(node: "eq", action: .set(parameter: .band(1, .gain), value: 1)),
                "'eq' has no parameter 'band.1.gain'"
            ),
            (
                NodeRequest(node: "eq", action: .choose(parameter: .band(0, .type), label: "shelf")),
                "has no value named 'shelf'; valid types"
            ),
            (
                NodeRequest(node: "eq", action: .set(parameter: .band(0, .type), value: 7)),
                "band.0.type 7 is out of range 0…6"
            ),
            (
                NodeRequest(node: "eq", action: .set(parameter: .band(0, .frequency), value: 0)),
                "band.0.frequency 0 Hz is out of range 10…20000"
            ),
            (NodeRequest(node: "eq", action: .preset("Rock")), "'eq' has no presets"),
        ]
        for (command, reason) in refused {
            XCTAssertThrowsError(try session.apply(command), "\(command)") {
                XCTAssertTrue("\($0)".contains(reason), "\($0)")
            }
        }
        let node = try XCTUnwrap(session.graph.document.nodes.first { $0.id == "eq" }?.definition as? PEQNode)
        XCTAssertEqual(node.bands, [ParametricBand(shape: .peaking, frequency: 1000, gain: -3, q: 1)])
    }

    /// `save` writes the live bands, preamp and bypass; the saved graph parses to the live definition and sounds like
    /// the live one once its changes have settled.
    func testSaveWritesTheLiveState() throws {
        let bands =
            #"{ "type": "peaking", "frequency": 1000, "gain": -3, "q": 1 }, { "type": "low-pass", "frequency": 8000 }"#
        let path = try Self.graph(#""bands": [\#(bands)]"#, name: "peq-save")
        let saved = TestSupport.directory.appendingPathComponent("peq-saved.json").path
        let live = TestSupport.directory.appendingPathComponent("peq-save-live.wav").path
        let commands = [
            "set eq band.0.gain 4.5", "set eq band.1.type high-shelf", "set eq band.1.gain -6", "set eq band.0.q 2.5",
            "set eq preamp -2", "save \(saved)",
        ]
        let at = commands.enumerated().flatMap { ["--at", "\(0.5 + 0.1 * Double($0.offset))", $0.element] }
        let result = try TestSupport.graphhost(["render", path, "-o", live] + at)
        XCTAssertEqual(result.status, 0, result.err)
        let document = try GraphDocument.load(path: saved)
        let node = try XCTUnwrap(document.nodes.first { $0.id == "eq" }?.definition as? PEQNode)
        XCTAssertEqual(
            node.bands,
            [
                ParametricBand(shape: .peaking, frequency: 1000, gain: 4.5, q: 2.5),
                ParametricBand(shape: .highShelf, frequency: 8000, gain: -6, q: 0.7071067811865476),
            ])
        XCTAssertEqual(node.preamp, -2)
        XCTAssertFalse(node.bypass)
        let reloaded = TestSupport.directory.appendingPathComponent("peq-save-reloaded.wav").path
        XCTAssertEqual(try TestSupport.graphhost(["render", saved, "-o", reloaded]).status, 0)
        let a = try SoundFile(path: live).samples
        let b = try SoundFile(path: reloaded).samples
        XCTAssertEqual(a.count, b.count)
        let tail = (48000 * 2 * 2)..<min(a.count, b.count)
        let difference = tail.reduce(Float(0)) { max($0, abs(a[$1] - b[$1])) }
        XCTAssertGreaterThan(TestSupport.peak(Array(a[tail])), 0.1)
        XCTAssertLessThan(difference, 1e-5, "the saved graph sounds like the live one after its changes")
    }

    /// `eq-curve --graph FILE --node ID` draws a node that has a frequency response and says why it cannot draw others.
    func testEQCurveDrawsAPEQNode() throws {
        let path = try Self.graph(
            #""bands": [{ "type": "notch", "frequency": 1000, "q": 4 }], "preamp": -3"#, name: "peq-curve")
        let svg = TestSupport.directory.appendingPathComponent("peq-curve.svg").path
        try? FileManager.default.removeItem(atPath: svg)
        let drawn = try TestSupport.graphhost(["eq-curve", "--graph", path, "--node", "eq", "--svg", svg, "--csv", "-"])
        XCTAssertEqual(drawn.status, 0, drawn.err)
        let rows = drawn.out.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",").compactMap { Double($0) }
        }.filter { $0.count == 2 }
        XCTAssertGreaterThan(rows.count, 200)
        let low = try XCTUnwrap(rows.first)
        let deepest = try XCTUnwrap(rows.min { $0[1] < $1[1] })
        XCTAssertEqual(low[1], -3, accuracy: 0.01, "the preamp, far from the notch")
        XCTAssertEqual(deepest[0], 1000, accuracy: 30, "the notch")
        XCTAssertTrue(try String(contentsOfFile: svg, encoding: .utf8).contains("<polyline class=\"curve\""))
        let output = try TestSupport.graphhost(["eq-curve", "--graph", path, "--node", "out", "--csv", "-"])
        XCTAssertNotEqual(output.status, 0)
        XCTAssertTrue(output.err.contains("node 'out' (output) has no fixed frequency response"), output.err)
        let missing = try TestSupport.graphhost(["eq-curve", "--graph", path, "--node", "nope", "--csv", "-"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.err.contains("has no node 'nope'; nodes: s, eq, out"), missing.err)
    }
}
