import XCTest

@testable import GraphHost

/// MIDI into a plugin that also has audio inputs: lv2-examples' MIDI gate (audio in and out, a MIDI input designated
/// lv2:control) passes its input only while a note is held.
final class LV2EventInputTests: XCTestCase {
    static let gate = "http://lv2plug.in/plugins/eg-midigate"

    /// A format-0 file at 120 bpm (480 ticks a quarter): one note held from 0.5 s to 1 s.
    static func noteFromHalfASecond() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("note-0.5-1.mid").path
        let track: [UInt8] = [0x83, 0x60, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        bytes += Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func graph(to target: String, channels: Int = 2) throws -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": \(channels) },
              "nodes": [ { "id": "tone", "type": "stream", "url": "\(try TestSupport.sine(seconds: 2))" },
                         { "id": "keys", "type": "midi", "file": "\(try Self.noteFromHalfASecond())" },
                         { "id": "gate", "type": "lv2", "uri": "\(Self.gate)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "tone", "to": "gate" }, { "from": "keys", "to": "\(target)" }, \
            { "from": "gate", "to": "out" } ] }
            """)
    }

    static func rms(_ x: [Float], from: Double, to: Double, channels: Int = 2) -> Double {
        let slice = x[Int(from * 48000) * channels..<Int(to * 48000) * channels]
        return (slice.reduce(0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
    }

    /// A `midi` node linked to the gate (or to its MIDI port by name) opens it on the tone exactly while the note is
    /// held; the gate runs once per channel on a stereo bus, and every copy gets the events. eg-midigate takes an
    /// event's new state from the start of the run holding it, so the render runs 960-frame slices, which the note's
    /// frames (24000, 48000) begin.
    func testAMIDINodeOpensAGateOnAnAudioInput() throws {
        let tone = Self.rms(try TestSupport.renderStream(try TestSupport.sine(seconds: 2)), from: 0.5, to: 1)
        for target in ["gate", "gate:control"] {
            let path = try graph(to: target)
            let out = try TestSupport.render(path, durationFrames: 72000, frameSizes: [960]).samples
            XCTAssertTrue(out.allSatisfy(\.isFinite))
            XCTAssertEqual(Self.rms(out, from: 0, to: 0.5), 0, "\(target): the gate is open before the note")
            XCTAssertEqual(
                Self.rms(out, from: 0.5, to: 1), tone, accuracy: tone * 0.001,
                "\(target): the tone does not pass while the note is held")
            XCTAssertEqual(Self.rms(out, from: 1, to: 1.5), 0, "\(target): the gate stays open after the note")
            let right = stride(from: 1, to: out.count, by: 2).map { out[$0] }
            XCTAssertGreaterThan(
                TestSupport.peak(Array(right[24000..<48000])), 0.3, "\(target): the right channel's copy got no events")
            XCTAssertTrue(GraphPrinter.text(try GraphDocument.load(path: path)).contains("keys:0 -> gate:control"))
        }
    }

    /// Audio linked to the MIDI port, and a second event link to the same plugin, are refused with the reason.
    func testTheMIDIInputTakesOnlyEvents() throws {
        let tone = try TestSupport.sine(seconds: 1)
        let midi = try Self.noteFromHalfASecond()
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "tone", "type": "stream", "url": "\(tone)" }, \
                    { "id": "gate", "type": "lv2", "uri": "\(Self.gate)" },
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "tone", "to": "gate" }, { "from": "tone", "to": "gate:control" }, \
                    { "from": "gate", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue(
                "\($0)".contains(
                    "'gate:control' takes MIDI events (a midi node's or a MIDI processor's), not the audio of 'tone'"),
                "\($0)")
        }
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "tone", "type": "stream", "url": "\(tone)" }, \
                    { "id": "keys", "type": "midi", "file": "\(midi)" },
                                 { "id": "more", "type": "midi", "file": "\(midi)" }, \
                    { "id": "gate", "type": "lv2", "uri": "\(Self.gate)" },
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "tone", "to": "gate" }, { "from": "keys", "to": "gate" }, \
                    { "from": "more", "to": "gate:control" },
                                 { "from": "gate", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue(
                "\($0)".contains("'gate' takes events on one MIDI input and 'control' is linked already"), "\($0)")
        }
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "tone", "type": "stream", "url": "\(tone)" }, \
                    { "id": "keys", "type": "midi", "file": "\(midi)" },
                                 { "id": "amp", "type": "lv2", "uri": "\(TestPlugins.amp)" }, \
                    { "id": "out", "type": "output" } ],
                      "links": [ { "from": "tone", "to": "amp" }, { "from": "keys", "to": "amp" }, \
                    { "from": "amp", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue(
                "\($0)".contains(
                    "'keys' sends MIDI events: link it to an instrument, a MIDI processor or a plugin's MIDI input"),
                "\($0)")
        }
    }
}
