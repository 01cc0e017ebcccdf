import Foundation
import XCTest

@testable import GraphHost

/// Headphone corrections in Equalizer APO's and AutoEQ's formats: what a file reads as, every bad line named by its
/// number, a `peq` node built from a file, and a file changed live (crossfaded; a bad one changes nothing).
final class EqualizerAPOFileTests: XCTestCase {
    /// An AutoEQ `ParametricEQ.txt` as AutoEQ writes them.
    static let autoEQ = """
        Preamp: -6.4 dB
        Filter 1: ON LSC Fc 105 Hz Gain 5.6 dB Q 0.70
        Filter 2: ON PK Fc 158 Hz Gain -2.6 dB Q 0.61
        Filter 3: ON PK Fc 2700 Hz Gain 3.5 dB Q 1.80
        Filter 4: ON HSC Fc 10000 Hz Gain -3.0 dB Q 0.70

        """

    /// Equalizer APO's own syntax: a byte order mark, comments, two preamps, a filter switched off, kHz, a shelf
    /// given by its slope, passes without Q, a notch and a band pass.
    static let apo = """
        \u{FEFF}# Written by hand for the tests
        Preamp: -2 dB
        Filter: ON PK Fc 1 kHz Gain -3 dB Q 2

        Filter 2: OFF PK Fc 500 Hz Gain 6 dB Q 1
        Filter 3: ON LSC 6 dB Fc 80 Hz Gain 4 dB
        Filter 4: ON HP Fc 30 Hz
        Filter 5: ON NO Fc 50 Hz Q 10
        Filter 6: on bp fc 2000 hz q 0.5
        Preamp: -1.5 dB
        """

    func testReadsAnAutoEQFile() throws {
        let file = try EqualizerAPOFile.parse(Self.autoEQ)
        XCTAssertEqual(file.preamp, -6.4)
        XCTAssertEqual(
            file.bands,
            [
                ParametricBand(shape: .lowShelf, frequency: 105, gain: 5.6, q: 0.7),
                ParametricBand(shape: .peaking, frequency: 158, gain: -2.6, q: 0.61),
                ParametricBand(shape: .peaking, frequency: 2700, gain: 3.5, q: 1.8),
                ParametricBand(shape: .highShelf, frequency: 10000, gain: -3, q: 0.7),
            ])
        XCTAssertEqual(file.bandLines, [2, 3, 4, 5])
    }

    func testReadsEqualizerAPOSyntax() throws {
        let file = try EqualizerAPOFile.parse(Self.apo)
        XCTAssertEqual(file.preamp, -3.5, "preamps add up")
        // The cookbook's shelf slope S = 6/12 dB per octave for a 4 dB shelf.
        let a = pow(10, 4.0 / 40)
        let shelfQ = 1 / ((a + 1 / a) * (1 / 0.5 - 1) + 2).squareRoot()
        XCTAssertEqual(file.bands.map(\.shape), [.peaking, .lowShelf, .highPass, .notch, .bandPass])
        XCTAssertEqual(file.bands[0], ParametricBand(shape: .peaking, frequency: 1000, gain: -3, q: 2))
        XCTAssertEqual(file.bands[1].q, shelfQ, accuracy: 1e-12)
        XCTAssertEqual(file.bands[1].gain, 4)
        XCTAssertEqual(file.bands[2], ParametricBand(shape: .highPass, frequency: 30))
        XCTAssertEqual(file.bands[3], ParametricBand(shape: .notch, frequency: 50, q: 10))
        XCTAssertEqual(file.bands[4], ParametricBand(shape: .bandPass, frequency: 2000, q: 0.5))
        XCTAssertEqual(file.bandLines, [3, 6, 7, 8, 9])
    }

    func testNamesEveryBadLineByItsNumber() {
        let text = """
            Preamp: -3 dB
            Channel: L
            Filter 1: ON PK Fc abc Hz Gain 1 dB Q 1
            Filter 2: ON XYZ Fc 100 Hz
            Filter 3: ON PK Fc 100 Hz Q 1
            Filter 4: ON PK Fc 30000 Hz Gain 1 dB Q 1
            Filter 5: ON PK Fc 100 Hz Gain 1 dB Q 1
            GraphicEQ: 20 0; 40 1
            Filter 6: ON PK Fc 100 Hz Gain 1 dB BW Oct 1
            """
        XCTAssertThrowsError(try EqualizerAPOFile.parse(text)) { error in
            let problems = (error as? EqualizerAPOFile.Failure)?.problems ?? []
            XCTAssertEqual(problems.map(\.line), [2, 3, 4, 5, 6, 8, 9], "\(problems)")
            let messages = problems.map(\.message)
            for (k, part) in [
                "is a command that is not supported", "Fc is not a number", "the filter's type is not supported",
                "a PK filter needs a Gain", "Fc 30000 Hz is outside 10…20000", "is a command that is not supported",
                "a filter takes only Fc, Gain and Q",
            ].enumerated() {
                XCTAssertTrue(messages.count > k && messages[k].contains(part), "\(part) in \(messages)")
            }
        }
        let many = (1...17).map { "Filter \($0): ON PK Fc \(100 * $0) Hz Gain 1 dB Q 1" }.joined(separator: "\n")
        XCTAssertThrowsError(try EqualizerAPOFile.parse(many)) {
            XCTAssertTrue("\($0)".contains("line 17: 17 filters are on; a peq node has at most 16"), "\($0)")
        }
    }

    /// Writes `text` to a file in the tests' folder and returns its path.
    static func write(_ text: String, name: String) throws -> String {
        let path = TestSupport.directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A graph whose `peq` takes a file: the node reads it (relative to the graph's folder); a bad file fails the
    /// graph with the node's JSON path, the file and the line; `bands` and `file` together are refused.
    func testAGraphReadsAFileAndNamesItsBadLines() throws {
        _ = try Self.write(Self.autoEQ, name: "headphones.txt")
        let good = try PEQGraphTests.graph(#""file": "headphones.txt", "preamp": 1"#, name: "peq-file")
        let document = try GraphDocument.load(path: good)
        let node = try XCTUnwrap(document.nodes.first { $0.id == "eq" }?.definition as? PEQNode)
        XCTAssertEqual(node.bands.count, 4)
        XCTAssertEqual(node.preamp, -5.4, accuracy: 1e-12, "the file's preamp and the graph's")
        let bad = try Self.write("Preamp: -1 dB\nFilter 1: ON PK Fc 100 Hz Gain x dB Q 1\n", name: "bad-eq.txt")
        let failing = try PEQGraphTests.graph(#""file": "bad-eq.txt""#, name: "peq-bad-file")
        let result = try TestSupport.graphhost(["render", failing, "-o", "/dev/null"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.err.contains("nodes[1].file"), result.err)
        XCTAssertTrue(result.err.contains("\(bad) line 2: Gain is not a number"), result.err)
        _ = try Self.write("Preamp: -20 dB\nFilter 1: ON PK Fc 100 Hz Gain 1 dB Q 1\n", name: "quiet-eq.txt")
        let quiet = try PEQGraphTests.graph(#""file": "quiet-eq.txt", "preamp": -10"#, name: "peq-file-preamp")
        let tooQuiet = try TestSupport.graphhost(["render", quiet, "-o", "/dev/null"])
        XCTAssertNotEqual(tooQuiet.status, 0)
        XCTAssertTrue(tooQuiet.err.contains("add up to -30 dB, outside -24…24 dB"), tooQuiet.err)
        let both = try PEQGraphTests.graph(
            #""file": "headphones.txt", "bands": [{ "type": "notch", "frequency": 100 }]"#, name: "peq-file-bands")
        let refused = try TestSupport.graphhost(["render", both, "-o", "/dev/null"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.err.contains(#"give either "bands" or "file", not both"#), refused.err)
    }

    /// `set eq file FILE` live: a file of another band count is crossfaded to without a click, a bad file is refused
    /// naming its line and changes nothing, and `save` writes the file.
    func testAFileChangedLiveCrossfadesAndABadOneChangesNothing() throws {
        let up = try Self.write("Filter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1\n", name: "eq-up.txt")
        let down = try Self.write(
            "Preamp: -1 dB\nFilter 1: ON PK Fc 1000 Hz Gain -5 dB Q 1\nFilter 2: ON HP Fc 20 Hz\n", name: "eq-down.txt")
        let bad = try Self.write("Filter 1: ON PK Fc 1000 Hz Gain -5 dB\n", name: "eq-bad.txt")
        let sine = try TestSupport.floatSine(amplitude: 0.25, seconds: 3)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(sine)" },
                         { "id": "eq", "type": "peq", "file": "\(up)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """, name: "peq-file-live")
        let session = try TestSupport.session(graph)
        defer { session.close() }
        XCTAssertThrowsError(
            try session.apply(NodeRequest(node: "eq", action: .choose(parameter: PEQNode.fileParameter, label: bad)))
        ) { XCTAssertTrue("\($0)".contains("\(bad) line 1: a PK filter needs a Q"), "\($0)") }
        let kept = try XCTUnwrap(session.graph.document.nodes.first { $0.id == "eq" }?.definition as? PEQNode)
        XCTAssertEqual(kept.bands, [ParametricBand(shape: .peaking, frequency: 1000, gain: 6, q: 1)])
        XCTAssertEqual(kept.file?.path, up)

        let saved = TestSupport.directory.appendingPathComponent("peq-file-saved.json").path
        let wav = TestSupport.directory.appendingPathComponent("peq-file-live.wav").path
        let result = try TestSupport.graphhost([
            "render", graph, "-o", wav, "--at", "1", "set eq file \(down)", "--at", "2", "save \(saved)",
        ])
        XCTAssertEqual(result.status, 0, result.err)
        let samples = try SoundFile(path: wav).samples
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        func rmsDB(_ from: Double, _ to: Double) -> Double {
            let part = left[Int(from * 48000)..<Int(to * 48000)]
            return 10 * log10(part.reduce(0) { $0 + Double($1) * Double($1) } / Double(part.count))
        }
        let input = 20 * log10(0.25 / 2.0.squareRoot())
        XCTAssertEqual(rmsDB(0.5, 0.95), input + 6, accuracy: 0.1, "the first file: +6 dB at 1 kHz")
        XCTAssertEqual(rmsDB(1.5, 2.5), input - 6, accuracy: 0.1, "the second: -5 dB and its -1 dB preamp")
        // A click is a step between samples larger than the louder steady sine ever takes.
        func largestStep(_ range: Range<Int>) -> Float {
            range.dropFirst().reduce(0) { max($0, abs(left[$1] - left[$1 - 1])) }
        }
        let steady = largestStep(Int(0.5 * 48000)..<Int(0.95 * 48000))
        XCTAssertLessThanOrEqual(
            largestStep(Int(0.95 * 48000)..<Int(1.5 * 48000)), steady * 1.01, "no click where the file changed")
        let document = try GraphDocument.load(path: saved)
        let node = try XCTUnwrap(document.nodes.first { $0.id == "eq" }?.definition as? PEQNode)
        XCTAssertEqual(node.file?.path, down, "save writes the file")
        XCTAssertEqual(node.bands.count, 2)
        XCTAssertEqual(node.preamp, -1)
    }

    /// `eq-curve FILE` draws a file's response: its preamp far from the filters, its peak at the filter.
    func testEQCurveDrawsAFile() throws {
        let path = try Self.write("Preamp: -4 dB\nFilter 1: ON PK Fc 2000 Hz Gain 6 dB Q 2\n", name: "curve-eq.txt")
        let drawn = try TestSupport.graphhost(["eq-curve", path, "--csv", "-"])
        XCTAssertEqual(drawn.status, 0, drawn.err)
        let rows = drawn.out.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",").compactMap { Double($0) }
        }.filter { $0.count == 2 }
        XCTAssertGreaterThan(rows.count, 200)
        XCTAssertEqual(try XCTUnwrap(rows.first)[1], -4, accuracy: 0.01)
        let top = try XCTUnwrap(rows.max { $0[1] < $1[1] })
        XCTAssertEqual(top[1], 2, accuracy: 0.05)
        XCTAssertEqual(top[0], 2000, accuracy: 60)
        let bad = try Self.write("Filter 1: ON PK Fc 2000 Hz Q 2\n", name: "curve-bad.txt")
        let refused = try TestSupport.graphhost(["eq-curve", bad, "--csv", "-"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.err.contains("line 1: a PK filter needs a Gain"), refused.err)
    }
}
