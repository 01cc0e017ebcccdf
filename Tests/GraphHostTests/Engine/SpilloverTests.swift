import XCTest

@testable import GraphHost

/// Spillover swaps: the old chain stops taking input at the switch, its tail rings out (to −80 dBFS or the bound)
/// while the new chain takes over; a crossfade cuts the tail.
final class SpilloverTests: XCTestCase {
    static let reverb = "http://plugin.org.uk/swh-plugins/gverb"
    static let rate = 48000.0

    /// A 1 kHz burst at 0.1 s and a 3 kHz burst at 1.0 s, 0.15 s each, in 4 s.
    static func bursts() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("bursts.mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", wav + ".a.wav", "synth", "0.15", "sine", "1000", "gain", "-n",
            "-6", "pad", "0.1", "0.75",
        ])
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", wav + ".b.wav", "synth", "0.15", "sine", "3000", "gain", "-n",
            "-6", "pad", "0", "2.85",
        ])
        try TestSupport.run(["sox", "-q", wav + ".a.wav", wav + ".b.wav", wav])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// The bursts through a chain node: `echo` (a reverb, 1.5 s) or `dry`.
    static func graph(swap: String = "", tail: String = "") throws -> String {
        TestSupport.graph(
            """
            { \(swap) \(tail) "crossfadeSeconds": 0.03,
              "chains": { "echo": [ { "id": "verb", "type": "lv2", "uri": "\(reverb)",
                                      "controls": { "roomsize": 40, "revtime": 1.5, "drylevel": 0, "earlylevel": -10, \
            "taillevel": -10 } } ],
                          "dry": [] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(try bursts())" }, \
            { "id": "fx", "type": "chain", "chain": "echo" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
    }

    func render(_ path: String, switchAt seconds: Double = 0.5, _ line: String = "chain fx dry") throws -> [Float] {
        let events = [TimedCommand(frame: Int(seconds * Self.rate), request: try Command.parse(line))]
        return try TestSupport.render(path, durationFrames: Int(3.5 * Self.rate), events: events).samples
    }

    func level(_ x: [Float], _ f: Double, _ start: Double, _ seconds: Double) -> Double {
        ToneMeasure.dB(ToneMeasure.amplitude(x, f, start: start, seconds: seconds, rate: Self.rate))
    }

    func testTheTailRingsOutAndTheOldChainHearsNothingNew() throws {
        let graph = try Self.graph()
        let spill = try render(graph, "chain fx dry spillover")
        let cut = try render(graph)
        // The echoes of the first burst go on after the switch with spillover; a crossfade cuts them.
        let spillEchoes = level(spill, 1000, 0.6, 0.35)
        let cutEchoes = level(cut, 1000, 0.6, 0.35)
        print("echoes after the switch: spillover \(spillEchoes) dB, crossfade \(cutEchoes) dB")
        XCTAssertGreaterThan(spillEchoes, -40)
        XCTAssertLessThan(cutEchoes, -90)
        // The second burst reaches the new (dry) chain only: heard once, never echoed by the old chain.
        XCTAssertGreaterThan(level(spill, 3000, 1.0, 0.15), -20)
        XCTAssertLessThan(level(spill, 3000, 1.25, 0.8), -90, "the old chain took input after the switch")
        // The tail rings until it is below −80 dBFS; then the old chain is gone.
        let session = try TestSupport.session(graph)
        defer { session.close() }
        let renderer = OfflineRenderer(
            session: session, events: [TimedCommand(frame: 24000, request: try Command.parse("chain fx dry spillover"))]
        )
        var frames = 0
        var retiredAt: Int?
        _ = try renderer.render(durationFrames: Int(10 * Self.rate), frameSizes: [512]) { _, n in
            frames += n
            if frames > 24000 && retiredAt == nil && session.collectRetired() == 0 { retiredAt = frames }
        }
        let ended = Double(try XCTUnwrap(retiredAt, "the spillover never ended")) / Self.rate
        print("the spillover ended at \(ended) s")
        XCTAssertGreaterThan(ended, 1.0, "the tail was cut before it faded")
        XCTAssertLessThan(ended, 9.0, "the tail did not end at −80 dBFS")
    }

    /// `"swap": "spillover"` makes every swap of the graph spill; `"tailSeconds"` bounds the tail, and a command's
    /// own mode wins over the graph's.
    func testGraphModeBoundAndCommandOverride() throws {
        let bounded = try Self.graph(swap: "\"swap\": \"spillover\",", tail: "\"tailSeconds\": 0.2,")
        let byGraph = try render(bounded)
        XCTAssertGreaterThan(level(byGraph, 1000, 0.55, 0.15), -40, "the graph's spillover mode was not used")
        XCTAssertLessThan(level(byGraph, 1000, 0.9, 0.5), -90, "the tail rang beyond its bound")
        let overridden = try render(bounded, "chain fx dry crossfade")
        XCTAssertLessThan(level(overridden, 1000, 0.6, 0.35), -90)
        XCTAssertThrowsError(
            try GraphDocument.parse(
                text: try String(contentsOfFile: Self.graph(swap: "\"swap\": \"spill\","), encoding: .utf8),
                file: URL(fileURLWithPath: "/tmp/x.json"))
        ) {
            XCTAssertTrue("\($0)".contains("unknown swap mode 'spill'; valid: crossfade or spillover"), "\($0)")
        }
    }

    /// At the switch and at the end of the tail, no click: every 10 ms window within 1.5x the steady slope.
    func testSpilloverIsClickFree() throws {
        let sine = try TestSupport.sine(seconds: 4)
        let path = TestSupport.graph(
            try String(contentsOfFile: try Self.graph(tail: "\"tailSeconds\": 0.5,"), encoding: .utf8)
                .replacingOccurrences(of: try Self.bursts(), with: sine))
        let out = try render(path, switchAt: 1.0, "chain fx dry spillover")
        let worst = ClickMeasure.worst(out, channels: 2, rate: 48000, start: 0.9, end: 2.5)
        print("spillover: \(worst)")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
    }
}

/// Live: `chain fx dry spillover` through the socket lets the reverb ring in the `--record` output, and `save`
/// writes the live graph (the chain switched, the mixer turned down), which renders like the same graph by hand.
final class LiveSpilloverAndSaveTests: XCTestCase {
    func testLiveSpilloverAndSave() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let graph = try String(contentsOfFile: try SpilloverTests.graph(), encoding: .utf8)
            .replacingOccurrences(
                of: "{ \"from\": \"song\", \"to\": \"fx\" }",
                with: "{ \"from\": \"song\", \"to\": \"mix\" }, { \"from\": \"mix\", \"to\": \"fx\" }"
            )
            .replacingOccurrences(
                of: "{ \"id\": \"fx\", \"type\": \"chain\"",
                with: "{ \"id\": \"mix\", \"type\": \"mixer\", \"inputs\": 1 }, { \"id\": \"fx\", \"type\": \"chain\"")
        let path = TestSupport.graph(graph)
        let socket = TestSupport.directory.appendingPathComponent("live/spill.sock").path
        let recording = TestSupport.directory.appendingPathComponent("spill.wav").path
        let saved = TestSupport.directory.appendingPathComponent("spill-saved.json").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", path, "--socket", socket, "--latency", "256", "--record", recording])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.45))
        XCTAssertEqual(try control.ctl(["chain", "fx", "dry", "spillover"]).status, 0)
        let switched = try control.position()
        XCTAssertEqual(try control.ctl(["set", "mix", "volume", "0.5"]).status, 0)
        XCTAssertEqual(try control.ctl(["save", saved]).status, 0)
        XCTAssertTrue(try control.waitForPosition(switched + 1.5))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)

        let samples = try SoundFile(path: recording).samples
        let onset = Double(try XCTUnwrap(SignalMatch.firstSound(samples)) / 2) / 48000 - 0.1
        let tail = ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: onset + switched + 0.1, seconds: 0.2))
        print("live spillover tail: \(tail) dB at \(switched) s")
        XCTAssertGreaterThan(tail, -50, "the reverb's tail was cut at the switch")

        let byHand = TestSupport.graph(
            graph.replacingOccurrences(of: "\"chain\": \"echo\"", with: "\"chain\": \"dry\"")
                .replacingOccurrences(of: "\"inputs\": 1 }", with: "\"inputs\": 1, \"volume\": 0.5 }"))
        let text = try String(contentsOfFile: saved, encoding: .utf8)
        XCTAssertTrue(
            try TestSupport.render(saved, durationFrames: 96000).samples
                == TestSupport.render(byHand, durationFrames: 96000).samples, text)
    }
}
