import Foundation
import XCTest

@testable import GraphHost

/// A `midi` node's live input: a PipeWire MIDI port that another client (pw-cat playing a MIDI file) links to, in a
/// private daemon. What graphhost plays is judged on its `--record` output.
final class LiveMIDITests: XCTestCase {
    func graph(_ instrument: String) -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "keys", "type": "midi", "port": "keys" },
                         { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/\(instrument)" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "keys", "to": "synth" }, { "from": "synth", "to": "out" } ] }
            """)
    }

    /// Plays the two-note file into graphhost's MIDI port through pw-cat; returns the recording's left channel.
    func playLive(_ instrument: String, name: String) throws -> [Float] {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let record = TestSupport.directory.appendingPathComponent("\(name).wav").path
        let run = try pw.graphhost([
            "run", graph(instrument), "--duration", "4", "--latency", "256", "--name", name, "--record", record,
        ])
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("\(name).keys") }, "no MIDI input node \(name).keys")
        let cat = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-cat"),
            ["--midi", "--playback", try TestSupport.twoNotes(), "--target", "\(name).keys"],
            environment: pw.environment)
        XCTAssertEqual(cat.status, 0, cat.err)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("underruns 0"), result.out)
        let recorded = try SoundFile(path: record).samples
        return stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }
    }

    /// mda Piano from the live port: A4, then C5 half a second later, each at its pitch; before the first note the
    /// output is silent.
    func testAnInstrumentPlaysFromAPipeWireMIDIPort() throws {
        let left = try playLive("Piano", name: "livepiano")
        let onset = try XCTUnwrap(left.firstIndex { abs($0) > 0.01 }, "the piano never played")
        XCTAssertEqual(
            Double(ToneMeasure.period(left[(onset + 4800)..<(onset + 9600)], shortest: 60, longest: 240)), 48000 / 440,
            accuracy: 1)
        XCTAssertEqual(
            Double(ToneMeasure.period(left[(onset + 28800)..<(onset + 33600)], shortest: 60, longest: 240)),
            48000 / 523.25, accuracy: 1)
        XCTAssertTrue(left.allSatisfy { $0.isFinite && abs($0) < 1 })
    }

    /// mda JX10 from the live port sounds while the notes are held.
    func testJX10PlaysFromAPipeWireMIDIPort() throws {
        let left = try playLive("JX10", name: "livejx10")
        let onset = try XCTUnwrap(left.firstIndex { abs($0) > 0.01 }, "JX10 never played")
        XCTAssertGreaterThan(TestSupport.peak(Array(left[onset..<(onset + 24000)])), 0.05)
    }

    /// Two midi nodes cannot share a port (one queue, one reader); a midi node needs a file or a port.
    func testAPortBelongsToOneMIDINode() throws {
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "a", "type": "midi", "port": "keys" }, \
                    { "id": "b", "type": "midi", "port": "keys" },
                                 { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" }, \
                    { "id": "out", "type": "output" } ],
                      "links": [ { "from": "a", "to": "synth" }, { "from": "b", "to": "out" } ] }
                    """))
        ) { XCTAssertTrue("\($0)".contains("MIDI port 'keys' is already the port of 'a'"), "\($0)") }
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "a", "type": "midi" }, \
                    { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" },
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "a", "to": "synth" }, { "from": "synth", "to": "out" } ] }
                    """))
        ) { XCTAssertTrue("\($0)".contains("missing \"file\" (a Standard MIDI File) or \"port\""), "\($0)") }
    }
}
