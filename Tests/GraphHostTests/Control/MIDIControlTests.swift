import Foundation
import XCTest

@testable import GraphHost

/// MIDI control: a graph's `midiControl` port takes control changes (mapped to parameters with a range and curve) and
/// program changes (chains, presets) from another PipeWire client; `learn` binds the next controller.
final class MIDIControlTests: XCTestCase {
    /// A 1 kHz sine through a mixer and a chain node (`a`: flat EQ; `b`: EQ with −12 dB preamp), with a MIDI control
    /// port.
    func graph(_ midiControl: String) throws -> String {
        TestSupport.graph(
            """
            { "chains": { "a": [ { "id": "eq", "type": "ipod-eq" } ], \
            "b": [ { "id": "eq", "type": "ipod-eq", "preamp": -12 } ] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 40))" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "fx", "type": "chain", "chain": "a" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "fx" }, \
            { "from": "fx", "to": "out" } ],
              "midiControl": \(midiControl) }
            """)
    }

    static let mapping = """
        { "port": "control", "cc": [ { "cc": 7, "node": "mix", "param": "volume", "min": 0, "max": 1 } ],
          "program": [ { "program": 1, "node": "fx", "chain": "b" }, \
        { "program": 2, "channel": 3, "node": "fx/eq", "preset": "Rock" } ] }
        """

    /// A format-0 MIDI file (480 ticks a quarter, 120 bpm: 960 ticks a second) of `events` (delta ticks as a
    /// variable-length quantity, then the message), ending half a second after the last.
    static func midiFile(_ name: String, _ events: [[UInt8]]) -> String {
        let path = TestSupport.directory.appendingPathComponent(name).path
        let track: [UInt8] = events.flatMap { $0 } + [0x83, 0x60, 0xFF, 0x2F, 0x00]
        var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        bytes += Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func testMappingsAreCheckedWithTheirPaths() throws {
        func refused(_ map: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertThrowsError(try GraphDocument.load(path: try graph(map)), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(expected), "\($0)", file: file, line: line)
            }
        }
        try refused(
            #"{ "port": "control", "cc": [ { "cc": 7, "node": "mix", "param": "vol" } ] }"#,
            "midiControl.cc[0].param: 'mix' has no parameter 'vol'; parameters: volume, volume.0")
        try refused(
            #"{ "port": "control", "cc": [ { "cc": 200, "node": "mix", "param": "volume" } ] }"#,
            "midiControl.cc[0].cc: 200 is out of range")
        try refused(
            #"{ "port": "control", "cc": [ { "cc": 7, "node": "mix", "param": "volume", "curve": "log" } ] }"#,
            "midiControl.cc[0].curve: a log curve needs min and max above 0")
        try refused(
            #"{ "port": "control", "cc": [ { "cc": 7, "node": "mix", "param": "volume", "max": 20 } ] }"#,
            "midiControl.cc[0].max: 20 is out of range 0…16")
        try refused(
            #"{ "port": "control", "program": [ { "program": 1, "node": "fx", "chain": "c" } ] }"#,
            "midiControl.program[0].chain: no chain 'c'; chains: a, b")
        try refused(
            #"{ "port": "control", "program": [ { "program": 1, "node": "mix", "chain": "a" } ] }"#,
            "midiControl.program[0].node: 'mix' is not a chain node")
        try refused(
            #"{ "port": "control", "program": [ { "program": 1, "node": "fx/eq", "preset": "Loud" } ] }"#,
            "midiControl.program[0].preset: 'fx/eq' has no preset 'Loud'")
        try refused(#"{ "cc": [] }"#, "midiControl: missing \"port\"")
        let document = try GraphDocument.load(path: try graph(Self.mapping))
        XCTAssertEqual(document.midiControl?.controls.first?.maximum, 1)
        XCTAssertEqual(document.midiControl?.programs.map(\.line), ["chain fx b", "preset fx/eq Rock"])
    }

    func testCurves() {
        var m = MIDIControlMap.ControlMapping(
            channel: nil, controller: 1, node: "n", parameter: ParameterID("p"), minimum: 20, maximum: 20000,
            curve: .linear)
        XCTAssertEqual(m.value(0), 20)
        XCTAssertEqual(m.value(127), 20000)
        XCTAssertEqual(m.value(64), 20 + 19980 * 64 / 127, accuracy: 1e-9)
        m.curve = .log
        XCTAssertEqual(m.value(127), 20000, accuracy: 1e-9)
        XCTAssertEqual(m.value(0), 20, accuracy: 1e-9)
        XCTAssertEqual(m.value(127 / 2), 20 * pow(1000, 63.0 / 127), accuracy: 1e-9)
        m = MIDIControlMap.ControlMapping(
            channel: nil, controller: 1, node: "n", parameter: ParameterID("p"), minimum: 0, maximum: 1, curve: .db)
        XCTAssertEqual(m.value(0), 0)
        XCTAssertEqual(m.value(127), 1)
        XCTAssertEqual(20 * log10(m.value(107)), -10, accuracy: 1e-9)
    }

    /// Live: a MIDI file played into GRAPHNAME.control by pw-cat turns the volume down (CC 7 = 64) and switches the
    /// chain (program 1); after `learn mix volume.0`, controller 20 on channel 2 moves that volume; `status` and
    /// `save` show the mappings. Levels are read from the `--record` output.
    func testControlChangesProgramChangesAndLearnFromAPipeWireClient() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let name = "midictl"
        let socket = TestSupport.directory.appendingPathComponent("live/midictl.sock").path
        let recording = TestSupport.directory.appendingPathComponent("midictl.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", try graph(Self.mapping), "--name", name, "--socket", socket, "--latency", "256", "--record",
            recording,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(
            try TestSupport.waitUntil { try pw.hasNode("\(name).control") }, "no MIDI control node \(name).control")
        XCTAssertTrue(try control.waitForPosition(1))
        func play(_ file: String) throws {
            let cat = try HeadlessPipeWire.execute(
                URL(fileURLWithPath: "/usr/bin/pw-cat"), ["--midi", "--playback", file, "--target", "\(name).control"],
                environment: pw.environment)
            XCTAssertEqual(cat.status, 0, cat.err)
        }
        // CC 7 = 64 on channel 1 after 200 ms (pw-cat plays from its first cycle, which may come before its link to the
        // control port carries data), then a second later program 1.
        try play(Self.midiFile("cc-pc.mid", [[0x81, 0x40, 0xB0, 7, 64], [0x87, 0x40, 0xC0, 1]]))
        XCTAssertTrue(
            try TestSupport.waitUntil { try (control.status()["chains"] as? [String: String])?["fx"] == "b" },
            "the program change did not switch the chain")
        XCTAssertEqual(try control.ctl(["learn", "mix", "volume.0"]).status, 0)
        XCTAssertEqual((try control.status()["midiControl"] as? [String: Any])?["learning"] as? String, "mix volume.0")
        try play(Self.midiFile("learn.mid", [[0x81, 0x40, 0xB1, 20, 4]]))
        XCTAssertTrue(
            try TestSupport.waitUntil {
                let cc = (try control.status()["midiControl"] as? [String: Any])?["cc"] as? [[String: Any]] ?? []
                return cc.contains {
                    $0["cc"] as? Int == 20 && $0["channel"] as? Int == 2 && $0["param"] as? String == "volume.0"
                }
            }, "the learned mapping is not in status")
        let saved = TestSupport.directory.appendingPathComponent("midictl-saved.json").path
        XCTAssertEqual(try control.ctl(["save", saved]).status, 0)
        let learned = try GraphDocument.load(path: saved).midiControl?.controls.last
        XCTAssertEqual(learned?.controller, 20)
        XCTAssertEqual(learned?.channel, 2)
        // With no messages coming, the surface's thread sleeps on its queue: no timer wakes it.
        let wakeups = try XCTUnwrap(ProcessThreads.wakeups(run.process.processIdentifier, named: "graphhost-midi-"))
        let end = try control.position()
        XCTAssertTrue(try control.waitForPosition(end + 1))
        XCTAssertEqual(
            ProcessThreads.wakeups(run.process.processIdentifier, named: "graphhost-midi-"), wakeups,
            "the idle MIDI surface woke")
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
        XCTAssertEqual(try control.ctl(["learn", "mix", "volume"]).status, 1)

        let samples = try SoundFile(path: recording).samples
        let levels = stride(from: 0, to: samples.count / 2 - 2400, by: 2400).map { start -> Double in
            ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: Double(start) / 48000, seconds: 0.05))
        }
        let onset = try XCTUnwrap(levels.firstIndex { $0 > -30 })
        let reference = levels[onset + 4]
        func held(_ dB: Double) -> Bool {
            (0..<(levels.count - 10)).contains { i in
                levels[i..<(i + 10)].allSatisfy { abs($0 - (reference + dB)) < 0.3 }
            }
        }
        let volume = 20 * log10(64.0 / 127)
        let learnedVolume = 20 * log10(4.0 / 127 * 16)
        XCTAssertTrue(held(volume), "no half second at the CC 7 volume (\(volume) dB): \(levels)")
        XCTAssertTrue(held(volume - 12), "no half second on chain b (\(volume - 12) dB): \(levels)")
        XCTAssertTrue(
            held(volume - 12 + learnedVolume),
            "no half second at the learned volume (\(volume - 12 + learnedVolume) dB): \(levels)")
    }
}
