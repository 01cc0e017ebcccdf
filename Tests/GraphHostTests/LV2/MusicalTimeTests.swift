import Foundation
import XCTest

@testable import GraphHost

/// The graph's transport (tempo, meter, rolling) reaches plugins that follow the host through time:Position. x42's
/// MIDI delay line, set to delay by a quarter note with the host as its tempo source, delays a MIDI file's first note
/// into mda Piano by one beat at the graph's tempo.
final class MusicalTimeTests: XCTestCase {
    func graph(transport: String?) throws -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 }, \(transport.map { "\"transport\": \($0)," } ?? "")
              "nodes": [ { "id": "keys", "type": "midi", "file": "\(try TestSupport.twoNotes())" },
                         { "id": "delay", "type": "lv2", "uri": "http://gareus.org/oss/lv2/midifilter#mididelay",
                           "controls": { "bpmsrc": "Plugin Host (if available)", "delayBeats": "Quarter", \
            "delayBPM": 120 } },
                         { "id": "piano", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "keys", "to": "delay" }, { "from": "delay", "to": "piano" }, \
            { "from": "piano", "to": "out" } ] }
            """)
    }

    /// Seconds until the first sound.
    func onset(_ path: String, events: [TimedCommand] = []) throws -> Double {
        let out = try TestSupport.render(path, durationFrames: 2 * 48000, events: events).samples
        return Double(try XCTUnwrap(out.firstIndex { abs($0) > 0.01 }, "silent") / 2) / 48000
    }

    func testPluginsFollowTheGraphsTempo() throws {
        XCTAssertEqual(
            try onset(graph(transport: #"{ "bpm": 60, "beatsPerBar": 3, "beatUnit": 4 }"#)), 1, accuracy: 0.01)
        XCTAssertEqual(try onset(graph(transport: #"{ "bpm": 240 }"#)), 0.25, accuracy: 0.01)
        // Without a transport the plugin keeps its own tempo control (120 bpm: half a second).
        XCTAssertEqual(try onset(graph(transport: nil)), 0.5, accuracy: 0.01)
        // `tempo` changes it while playing.
        XCTAssertEqual(
            try onset(graph(transport: #"{ "bpm": 60 }"#), events: [TimedCommand(frame: 0, request: .tempo(240))]),
            0.25, accuracy: 0.01)
        let document = try GraphDocument.load(path: graph(transport: #"{ "bpm": 90, "rolling": false }"#))
        XCTAssertEqual(
            document.musicalTime, MusicalTime.Settings(beatsPerMinute: 90, beatsPerBar: 4, beatUnit: 4, rolling: false))
        XCTAssertThrowsError(try GraphDocument.load(path: graph(transport: #"{ "bpm": 0, "swing": 1 }"#))) {
            XCTAssertTrue("\($0)".contains("transport.bpm"), "\($0)")
            XCTAssertTrue("\($0)".contains("swing"), "\($0)")
        }
        let session = try TestSupport.session(graph(transport: nil))
        defer { session.close() }
        XCTAssertThrowsError(try session.check(.tempo(100))) {
            XCTAssertTrue("\($0)".contains("the graph has no transport"), "\($0)")
        }
    }

    /// The render world's time:Position object, as a plugin reads it: 1.5 bars into a 3/4 bar at 90 bpm, rolling.
    func testThePositionObjectCarriesBarBeatAndTempo() throws {
        var time = MusicalTime(sampleRate: 48000)
        time.apply(.settings(MusicalTime.Settings(beatsPerMinute: 90, beatsPerBar: 3, beatUnit: 4, rolling: true)))
        time.advance(48000 * 3)  // 3 s at 90 bpm: 4.5 beats
        XCTAssertEqual(time.revision, 1)
        XCTAssertEqual(time.beats, 4.5, accuracy: 1e-9)
        time.apply(.playing(false))
        XCTAssertEqual(time.speed, 0)
        XCTAssertEqual(time.revision, 2)
        time.advance(48000)
        XCTAssertEqual(time.frame, 48000 * 3, "a paused transport does not move")
    }
}
