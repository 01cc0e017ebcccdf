import Foundation
import XCTest

@testable import GraphHost

/// `capture` and `sink` nodes: offline fed from files (`render --input`), live from a private PipeWire daemon, where
/// pw-play plays into a null sink the capture node records the monitor of, and into graphhost's own virtual sink.
final class LiveInputTests: XCTestCase {
    static let karaoke = TestSupport.root.appendingPathComponent("Graphs/karaoke.json").path

    /// A WAV of the 1 kHz test tone at -12 dBFS, for pw-play.
    static func toneWAV(_ frequency: Int) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("tone-\(frequency).wav").path
        if !FileManager.default.fileExists(atPath: path) {
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "8", "sine", "\(frequency)",
                "gain", "-n", "-12",
            ])
        }
        return path
    }

    /// The karaoke example offline, its microphone fed from a file: the output is the song at its mixer volume plus
    /// the voice chain at its own (the mixer is linear), and halving the voice's volume lowers the voice 6 dB.
    func testKaraokeRendersOfflineWithTheMicrophoneFromAFile() throws {
        let voice = try TestSupport.tones([1000])
        let base = try GraphDocument.load(path: Self.karaoke)
        XCTAssertTrue(base.nodes.contains { $0.definition is CaptureNode })
        let frames = 3 * 48000
        func render(_ document: GraphDocument, volumes: [Float]? = nil) throws -> [Float] {
            let events =
                volumes.map { v in
                    v.enumerated().map {
                        TimedCommand(
                            frame: 0,
                            request: .node(try! NodeRequest.parse("set mix volume.\($0.offset) \($0.element)")))
                    }
                } ?? []
            return try TestSupport.render(document: document, durationFrames: frames, events: events).samples
        }
        let fed = try base.feeding([("mic", voice)])
        let full = try render(fed)
        let songOnly = try render(base)
        let voiceOnly = try render(fed, volumes: [0, 1])
        let halfVoice = try render(fed, volumes: [0, 0.5])
        XCTAssertEqual(full.count, songOnly.count)
        // Volumes set at frame 0 glide over 10 ms; compare from 0.1 s on.
        let worst = zip(full, zip(songOnly, voiceOnly)).dropFirst(9600).map { abs($0 - ($1.0 + $1.1)) }.max() ?? 1
        XCTAssertLessThan(worst, 1e-5, "the output is not song + voice")
        XCTAssertGreaterThan(TestSupport.peak(songOnly), 0.05, "no song")
        XCTAssertGreaterThan(ToneMeasure.dB(ToneMeasure.amplitude(voiceOnly, 1000)), -40, "no voice")
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(halfVoice, 1000) / ToneMeasure.amplitude(voiceOnly, 1000)), -6.02,
            accuracy: 0.05)
        XCTAssertThrowsError(try base.feeding([("song", voice)])) {
            XCTAssertTrue(
                "\($0)".contains("'song' is a stream node; only capture and sink nodes take an input file"), "\($0)")
        }
        XCTAssertThrowsError(try base.feeding([("mic", "/no/such.mp3")])) {
            XCTAssertTrue("\($0)".contains("--input mic=/no/such.mp3"), "\($0)")
        }
        let cli = try TestSupport.execute(
            TestSupport.executable,
            [
                "render", Self.karaoke, "--input", "mic=\(voice)", "--duration", "1", "-o",
                TestSupport.directory.appendingPathComponent("karaoke.wav").path,
            ])
        XCTAssertEqual(cli.status, 0, String(decoding: cli.err, as: UTF8.self))
    }

    /// Live: a capture node records a null sink's monitor (pw-play plays a 1 kHz tone into it) and a sink node takes
    /// a second pw-play (300 Hz) directly, as applications play into a device. The sink shows in `wpctl status` under
    /// its description. Both reach the output at their mixer volumes (1 and 0.5): -12 and -18 dBFS.
    func testCaptureAndSinkNodesTakeLiveSound() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        _ = try pw.script(["add-sink", pw.directory, "mic_sink"])
        let graph = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "mic", "type": "capture", "target": "mic_sink", "monitor": true },
                         { "id": "apps", "type": "sink", "name": "gh_apps", "description": "graphhost test input" },
                         { "id": "mix", "type": "mixer", "inputs": 2, "volumes": [1.0, 0.5] }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "mic", "to": "mix:0" }, { "from": "apps", "to": "mix:1" }, \
            { "from": "mix", "to": "out" } ] }
            """)
        let record = TestSupport.directory.appendingPathComponent("live-inputs.wav").path
        let socket = TestSupport.directory.appendingPathComponent("livein-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--duration", "5", "--latency", "256", "--name", "livein", "--record", record, "--socket",
            socket,
        ])
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("gh_apps") && pw.hasNode("livein.mic") })
        let status = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/wpctl"), ["status"], environment: pw.environment)
        XCTAssertTrue(status.out.contains("graphhost test input"), status.out)
        let mic = try pw.play(try Self.toneWAV(1000), sink: "mic_sink", latency: 256)
        let app = try pw.play(try Self.toneWAV(300), sink: "gh_apps", latency: 256)
        // `status` lists each input with the level of its latest slice (the tones peak at -12 dBFS) and its dropouts.
        var inputs: [[String: Any]] = []
        XCTAssertTrue(
            try TestSupport.waitUntil {
                inputs = (try control.status()["inputs"] as? [[String: Any]]) ?? []
                return inputs.count == 2 && inputs.allSatisfy { abs(($0["levelDBFS"] as? Double ?? -120) + 12) < 0.5 }
            }, "\(inputs)")
        XCTAssertEqual(Set(inputs.compactMap { $0["id"] as? String }), ["mic", "apps"])
        XCTAssertTrue(inputs.allSatisfy { $0["dropouts"] is Int })
        let result = run.wait()
        mic.interrupt()
        app.interrupt()
        _ = mic.wait()
        _ = app.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        let end = Double(recorded.count / 2) / 48000
        XCTAssertEqual(Self.steadyLevel(recorded, 1000, from: end - 2, to: end - 0.3), -12, accuracy: 0.2)
        XCTAssertEqual(Self.steadyLevel(recorded, 300, from: end - 2, to: end - 0.3), -18, accuracy: 0.2)
    }

    static let systemEffects = TestSupport.root.appendingPathComponent("Graphs/system-effects.json").path

    /// The system-effects example, live: two applications (pw-play) play into its two virtual sinks, Music (1 kHz,
    /// made the default sink with wpctl, so the player names no target) and Voice (300 Hz); each output, sent to a null
    /// sink of its own, carries only its own application. Output 0 is
    /// judged on `--record`, output 1 on its null sink's monitor. The Music path's level is the offline render's. The
    /// inputs drop out only in cycles pw-profiler saw an application (the peers) finish late: a sink gets nothing
    /// then. graphhost's own sinks' and outputs' lateness excuses nothing.
    func testSystemEffectsGiveEachApplicationItsOwnChainAndOutput() throws {
        guard let run = try PeerJudgement.measure("system effects", { try systemEffectsRun() }) else { return }
        let late = run.applications.reduce(0) { $0 + $1.late }
        let offline = try TestSupport.render(
            document: try GraphDocument.load(path: Self.systemEffects)
                .feeding([("music", try TestSupport.tones([1000])), ("voice", try TestSupport.tones([300]))]),
            durationFrames: 3 * 48000
        ).samples
        let expected = ToneMeasure.dB(ToneMeasure.amplitude(offline, 1000, start: 1.5, seconds: 1))
        let end = Double(run.speakers.count / 2) / 48000
        // Levels and routing by the median of ten windows; a dropout (an application woken late) is judged below.
        XCTAssertEqual(
            ToneMeasure.medianLevel(run.speakers, 1000, from: end - 1.5, to: end - 0.5), expected, accuracy: 0.3)
        XCTAssertLessThan(
            ToneMeasure.medianLevel(run.speakers, 300, from: end - 1.5, to: end - 0.5), -80,
            "the voice reached the speakers")
        // The headset is heard through a recorder of the null sink, which also carries the machine's timer slips.
        let heardEnd = Double(run.heard.count / 2) / 48000
        XCTAssertGreaterThan(
            ToneMeasure.medianLevel(run.heard, 300, from: heardEnd - 1.5, to: heardEnd - 0.5), -30,
            "no voice on the headset")
        XCTAssertLessThan(
            ToneMeasure.medianLevel(run.heard, 1000, from: heardEnd - 1.5, to: heardEnd - 0.5), -80,
            "the music reached the headset")
        let underruns = try XCTUnwrap(run.out.firstMatch(of: /underruns (\d+)/).flatMap { Int($0.1) }, run.out)
        print("system effects: underruns \(underruns); \(run.applications)")
        XCTAssertLessThanOrEqual(
            underruns, late,
            "\(run.out); inputs dropped out in cycles the applications finished in time: "
                + "\(run.applications)")
    }

    /// One run of the system-effects example with both applications profiled: graphhost's summary, the speakers'
    /// recording, the headset's and the applications' cycles over graphhost's run.
    private func systemEffectsRun() throws -> (
        (out: String, speakers: [Float], heard: [Float], applications: [ProfiledCycles]), peers: [ProfiledCycles]
    ) {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("out_speakers")
        try pw.addSink("out_headset")
        let text = try String(contentsOfFile: Self.systemEffects, encoding: .utf8)
            .replacingOccurrences(
                of: #"{ "id": "speakers", "type": "output" }"#,
                with: #"{ "id": "speakers", "type": "output", "target": "out_speakers" }"#
            )
            .replacingOccurrences(
                of: #"{ "id": "headset",  "type": "output" }"#,
                with: #"{ "id": "headset", "type": "output", "target": "out_headset" }"#)
        XCTAssertTrue(
            text.contains("out_headset") && text.contains("out_speakers"),
            "the example's outputs changed; update this test")
        let graph = TestSupport.graph(text)
        let record = TestSupport.directory.appendingPathComponent("system-effects.wav").path
        let headset = TestSupport.directory.appendingPathComponent("system-effects-headset.wav").path
        let headsetRecorder = try pw.record(to: headset, sink: "out_headset")
        let socket = TestSupport.directory.appendingPathComponent("live/sysfx.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--latency", "256", "--name", "sysfx", "--record", record, "--socket", socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(
            try TestSupport.waitUntil {
                try pw.hasNode("graphhost.music") && pw.hasNode("graphhost.voice") && pw.hasNode("sysfx.headset")
            })
        let status = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/wpctl"), ["status"], environment: pw.environment)
        XCTAssertTrue(
            status.out.contains("Music (graphhost: Rock)") && status.out.contains("Voice (graphhost: compressed)"),
            status.out)
        // The Music sink is made the default (as a user would in pavucontrol); the music player then names no target.
        let line = try XCTUnwrap(status.out.split(separator: "\n").first { $0.contains("Music (graphhost: Rock)") })
        let id = try XCTUnwrap(line.split(whereSeparator: { !$0.isNumber }).first.map(String.init))
        XCTAssertEqual(
            try HeadlessPipeWire.execute(
                URL(fileURLWithPath: "/usr/bin/wpctl"), ["set-default", id], environment: pw.environment
            ).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil {
                try HeadlessPipeWire.execute(
                    URL(fileURLWithPath: "/usr/bin/wpctl"), ["status"], environment: pw.environment
                ).out
                    .split(separator: "\n").contains { $0.contains("*") && $0.contains("Music (graphhost: Rock)") }
            }, "the Music sink did not become the default")
        // The applications are profiled: a cycle one of them finishes late is one its sink gets nothing from.
        _ = try pw.script(["xrun-start", pw.directory])
        let music = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"),
            [
                "--latency", "256", "-P", "{ node.name = sysfx_music_app }",
                try Self.toneWAV(1000),
            ], environment: pw.environment)
        let voice = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"),
            [
                "--target", "graphhost.voice", "--latency", "256",
                "-P", "{ node.name = sysfx_voice_app }", try Self.toneWAV(300),
            ],
            environment: pw.environment)
        // Three and a half seconds of both applications, then the run is stopped as a user would. Asked rarely: each
        // `ctl` is a process, and many would make the applications late.
        let started = try control.position()
        XCTAssertTrue(try control.waitForPosition(started + 3.5, every: 0.25))
        run.interrupt()
        let result = run.wait()
        // Late cycles are counted over graphhost's run, before the applications lose their sinks.
        let applications = try pw.profiledCycles(["sysfx_music_app", "sysfx_voice_app"])
        for player in [music, voice, headsetRecorder] {
            player.interrupt()
            _ = player.wait()
        }
        XCTAssertEqual(result.status, 0, result.err)
        let speakers = try SoundFile(path: record).samples
        let heard = try SoundFile(path: headset).samples
        return ((result.out, speakers, heard, applications), applications)
    }

    /// A chain swap on the live path: pw-play plays a steady tone into graphhost's sink, which runs through a chain
    /// node; `chain fx bright` while it plays crossfades without a click in the `--record` output (judged from just
    /// before the command to just after the crossfade). The input drops out only in cycles pw-play itself finished
    /// late (the sink gets nothing then); graphhost's own lateness excuses nothing.
    func testAChainSwapOnALiveInputIsClickFree() throws {
        guard let run = try PeerJudgement.measure("chain swap", { try chainSwapRun() }) else { return }
        XCTAssertLessThanOrEqual(
            run.dropouts, run.peer.late, "input dropouts in cycles pw-play finished in time (\(run.peer))")
        // The recording starts with the first callback, where the position starts: the swap is inside
        // [before, after + crossfade].
        let worst = ClickMeasure.worst(
            run.recorded, channels: 2, rate: 48000, start: run.before - 0.05, end: run.after + 0.1)
        let judged = "\(worst); the command from \(run.before) s to \(run.after) s; \(run.peer)"
        print("chain swap: \(run.dropouts) input dropouts; \(judged)")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, judged)
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.05, judged)
    }

    /// One run of the chain swap: the input's dropouts and pw-play's cycles (profiled) until the swap has crossfaded,
    /// the recording, and the positions just before and just after the command.
    private func chainSwapRun() throws -> (
        (dropouts: Int, peer: ProfiledCycles, recorded: [Float], before: Double, after: Double), peers: [ProfiledCycles]
    ) {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let graph = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                          "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" } ] },
              "nodes": [ { "id": "apps", "type": "sink", "name": "gh_chain_in" }, \
            { "id": "fx", "type": "chain", "chain": "warm" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "apps", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
        let record = TestSupport.directory.appendingPathComponent("live-chain.wav").path
        let socket = TestSupport.directory.appendingPathComponent("livechain-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--duration", "5", "--latency", "256", "--name", "livechain", "--record", record, "--socket",
            socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("gh_chain_in") })
        _ = try pw.script(["xrun-start", pw.directory])
        let app = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"),
            [
                "--target", "gh_chain_in", "--latency", "256", "-P", "{ node.name = livechain_app }",
                try Self.toneWAV(1000),
            ], environment: pw.environment)
        defer {
            app.interrupt()
            _ = app.wait()
        }
        XCTAssertTrue(
            try TestSupport.waitUntil {
                ((try control.status()["inputs"] as? [[String: Any]])?.first?["levelDBFS"] as? Double ?? -120) > -20
            })
        let position = try control.position()
        XCTAssertTrue(try control.waitForPosition(position + 1))
        let before = try control.position()
        let swap = try control.ctl(["chain", "fx", "bright"])
        XCTAssertEqual(swap.status, 0, swap.out)
        let after = try control.position()
        XCTAssertTrue(try control.waitForPosition(after + 0.5))
        // The dropouts and pw-play's cycles over the same seconds: the profiler stops as the dropouts are read.
        let dropouts = try XCTUnwrap(
            (try control.status()["inputs"] as? [[String: Any]])?.first?["dropouts"] as? Int, "no input in status")
        let peer = try XCTUnwrap(try pw.profiledCycles(["livechain_app"]).first)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        return ((dropouts, peer, try SoundFile(path: record).samples, before, after), [peer])
    }

    /// The karaoke example live: its microphone is a null sink's monitor that pw-play plays a 2.5 kHz tone into, and
    /// its song the demo MP3. In the `--record` output the song plays from the start, and the voice chain (Spoken Word,
    /// mda Ambience) brings the tone at the level the offline render gives it at the same mixer volume, in the
    /// steadiest 0.2 s of the last seconds (the peer playing the voice is woken late now and then, as the input hears).
    func testKaraokeExamplePlaysLive() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("mic_sink")
        let media = TestSupport.root.appendingPathComponent("Graphs/media/demo.mp3").path
        let text = try String(contentsOfFile: Self.karaoke, encoding: .utf8)
            .replacingOccurrences(
                of: #"{ "id": "mic",    "type": "capture" }"#,
                with: #"{ "id": "mic", "type": "capture", "target": "mic_sink", "monitor": true }"#
            )
            .replacingOccurrences(of: "media/demo.mp3", with: media)
        XCTAssertTrue(text.contains("mic_sink") && text.contains(media), "the example changed; update this test")
        let graph = TestSupport.graph(text)
        let record = TestSupport.directory.appendingPathComponent("karaoke-live.wav").path
        let socket = TestSupport.directory.appendingPathComponent("karaoke-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--duration", "6", "--latency", "256", "--name", "karaoke", "--record", record, "--socket",
            socket,
        ])
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(1.5))
        let singer = try pw.play(try Self.toneWAV(2500), sink: "mic_sink", latency: 256)
        let result = run.wait()
        singer.interrupt()
        _ = singer.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let live = try SoundFile(path: record).samples
        let document = try GraphDocument.load(path: graph)
        let songOnly = try TestSupport.render(document: document, durationFrames: 3 * 48000).samples
        let voiceOnly = try TestSupport.render(
            document: try document.feeding([("mic", try TestSupport.tones([2500]))]), durationFrames: 3 * 48000,
            events: [TimedCommand(frame: 0, request: .node(try NodeRequest.parse("set mix volume.0 0")))]
        ).samples
        func rms(_ x: [Float], from: Int, frames: Int) -> Double {
            LiveInputTests.rms(Array(x[(2 * from)..<(2 * (from + frames))]))
        }
        let liveOnset = try XCTUnwrap(live.firstIndex { abs($0) > 1e-3 }) / 2
        let offlineOnset = try XCTUnwrap(songOnly.firstIndex { abs($0) > 1e-3 }) / 2
        XCTAssertEqual(
            ToneMeasure.dB(
                rms(live, from: liveOnset + 4800, frames: 24000)
                    / rms(songOnly, from: offlineOnset + 4800, frames: 24000)), 0,
            accuracy: 0.5, "the song's level differs from the offline render")
        let end = Double(live.count / 2) / 48000
        XCTAssertEqual(
            Self.steadyLevel(live, 2500, from: end - 2.5, to: end - 0.3),
            Self.steadyLevel(voiceOnly, 2500, from: 1.5, to: 2.8), accuracy: 1, "the voice's level")
    }

    /// The level (dBFS) of `frequency` in the steadiest 0.2 s of [from, to]: the largest of its windows, so that a
    /// quantum the peer (pw-play) delivered late, which the input hears as a gap, does not lower the figure.
    static func steadyLevel(_ stereo: [Float], _ frequency: Double, from: Double, to: Double) -> Double {
        stride(from: from, through: to - 0.2, by: 0.2).map {
            ToneMeasure.dB(ToneMeasure.amplitude(stereo, frequency, start: $0, seconds: 0.2))
        }.max() ?? -240
    }

    static func rms(_ x: [Float]) -> Double {
        (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    /// A looping 300 Hz song into a mixer and the output, and a virtual sink named `sink` into its second input.
    static func songGraph(sink: String?) -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(try! TestSupport.tones([300], seconds: 8))",
                           "loop": true },
                         \(sink.map { #"{ "id": "voice", "type": "sink", "name": "\#($0)" },"# } ?? "")
                         { "id": "mix", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix:0" }, \
            \(sink == nil ? "" : #"{ "from": "voice", "to": "mix:1" },"#) { "from": "mix", "to": "out" } ] }
            """)
    }

    /// A live input a `load` adds gets its PipeWire stream while playing: the graph starts with a song only, the loaded
    /// graph adds a virtual sink into the mixer, and a tone played into that sink reaches the `--record` output.
    func testALoadedGraphOpensItsNewLiveInputs() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        func graph(withSink: Bool) -> String { Self.songGraph(sink: withSink ? "gh_late" : nil) }
        let record = TestSupport.directory.appendingPathComponent("late-input.wav").path
        let socket = TestSupport.directory.appendingPathComponent("late-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph(withSink: false), "--latency", "256", "--name", "late", "--record", record, "--socket", socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertFalse(try pw.hasNode("gh_late"))
        let load = try control.ctl(["load", graph(withSink: true)])
        XCTAssertEqual(load.status, 0, load.out)
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("gh_late") }, "the loaded graph's sink did not appear")
        let started = try control.position()
        let app = try pw.play(try Self.toneWAV(1000), sink: "gh_late", latency: 256)
        // Two and a half seconds of the application (asked rarely: each `ctl` is a process), then stopped.
        XCTAssertTrue(try control.waitForPosition(started + 2.5, every: 0.25))
        run.interrupt()
        let result = run.wait()
        app.interrupt()
        _ = app.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        let end = Double(recorded.count / 2) / 48000
        // Levels by the median of 0.2 s windows: an application woken late drops a cycle now and then.
        XCTAssertEqual(ToneMeasure.medianLevel(recorded, 1000, from: end - 1.5, to: end - 0.5), -12, accuracy: 0.3)
        XCTAssertEqual(ToneMeasure.medianLevel(recorded, 300, from: end - 1.5, to: end - 0.5), -12, accuracy: 0.3)
    }

    /// The output runs after the live inputs in their cycle (`CycleGate`), so it must not stop with them: the song goes
    /// on after the application playing into the sink stops (the sink still runs in every cycle, unlinked), and after
    /// a `load` takes the sink away (the streams are connected again, for PipeWire to run by themselves). Position
    /// moves on throughout, and the `--record` output ends with the song at its level.
    func testTheOutputKeepsPlayingWhenItsInputsStop() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        func graph(withSink: Bool) -> String { Self.songGraph(sink: withSink ? "gh_stopping" : nil) }
        let record = TestSupport.directory.appendingPathComponent("stopping-inputs.wav").path
        let socket = TestSupport.directory.appendingPathComponent("stopping-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph(withSink: true), "--latency", "256", "--name", "stopping", "--record", record, "--socket",
            socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("gh_stopping") }, "the sink did not appear")
        let app = try pw.play(try Self.toneWAV(1000), sink: "gh_stopping", latency: 256)
        XCTAssertTrue(try control.waitForPosition(try control.position() + 1.5, every: 0.25))
        app.interrupt()
        _ = app.wait()
        XCTAssertTrue(
            try control.waitForPosition(try control.position() + 2, every: 0.25),
            "the output stopped when the application playing into its sink stopped")
        let load = try control.ctl(["load", graph(withSink: false)])
        XCTAssertEqual(load.status, 0, load.out)
        XCTAssertTrue(try TestSupport.waitUntil { try !pw.hasNode("gh_stopping") }, "the sink stayed")
        XCTAssertTrue(
            try control.waitForPosition(try control.position() + 2, every: 0.25),
            "the output stopped when the graph lost its last live input")
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("no live input left"), result.err)
        let recorded = try SoundFile(path: record).samples
        let end = Double(recorded.count / 2) / 48000
        XCTAssertEqual(ToneMeasure.medianLevel(recorded, 300, from: end - 1.5, to: end - 0.5), -12, accuracy: 0.3)
        XCTAssertLessThan(ToneMeasure.medianLevel(recorded, 1000, from: end - 1.5, to: end - 0.5), -60)
    }

    /// An input at another rate than the graph's is converted by PipeWire's adapter: a 44.1 kHz graph's virtual sink
    /// takes a 48 kHz application, and the tone comes out at its pitch and level; `status` reports the frames the
    /// input's resampler holds.
    func testAnInputAtAnotherRateIsResampled() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let graph = TestSupport.graph(
            """
            { "format": { "sampleRate": 44100, "channels": 2 },
              "nodes": [ { "id": "apps", "type": "sink", "name": "gh_44k" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "apps", "to": "out" } ] }
            """)
        let record = TestSupport.directory.appendingPathComponent("resampled-input.wav").path
        let socket = TestSupport.directory.appendingPathComponent("rate-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--duration", "4", "--latency", "256", "--name", "rate", "--record", record, "--socket",
            socket,
        ])
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("gh_44k") })
        let app = try pw.play(try Self.toneWAV(1000), sink: "gh_44k", latency: 256)
        var resampler = 0
        XCTAssertTrue(
            try TestSupport.waitUntil {
                let input = (try control.status()["inputs"] as? [[String: Any]])?.first
                resampler = input?["resamplerFrames"] as? Int ?? 0
                return (input?["levelDBFS"] as? Double ?? -120) > -20 && resampler > 0
            }, "no level or no resampler delay reported (\(resampler))")
        let result = run.wait()
        app.interrupt()
        _ = app.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record)
        XCTAssertEqual(recorded.sampleRate, 44100)
        let end = Double(recorded.frames) / 44100
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(recorded.samples, 1000, start: end - 1.5, seconds: 1, rate: 44100)),
            -12, accuracy: 0.3)
    }

    /// A `load` that points a capture node at another source gets a new stream there: before it, the output carries
    /// the first null sink's tone (1 kHz); after it, only the second's (300 Hz).
    func testALoadThatChangesACaptureTargetRecordsTheNewSource() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("src_a")
        try pw.addSink("src_b")
        func graph(_ target: String) -> String {
            TestSupport.graph(
                """
                { "format": { "sampleRate": 48000, "channels": 2 },
                  "nodes": [ { "id": "mic", "type": "capture", "target": "\(target)", "monitor": true }, \
                { "id": "out", "type": "output" } ],
                  "links": [ { "from": "mic", "to": "out" } ] }
                """)
        }
        let record = TestSupport.directory.appendingPathComponent("retarget.wav").path
        let socket = TestSupport.directory.appendingPathComponent("retarget-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph("src_a"), "--duration", "6", "--latency", "256", "--name", "retarget", "--record", record,
            "--socket", socket,
        ])
        XCTAssertTrue(control.waitForSocket())
        let a = try pw.play(try Self.toneWAV(1000), sink: "src_a", latency: 256)
        let b = try pw.play(try Self.toneWAV(300), sink: "src_b", latency: 256)
        XCTAssertTrue(
            try TestSupport.waitUntil {
                ((try control.status()["inputs"] as? [[String: Any]])?.first?["levelDBFS"] as? Double ?? -120) > -20
            })
        let position = try control.position()
        XCTAssertTrue(try control.waitForPosition(position + 1))
        let load = try control.ctl(["load", graph("src_b")])
        XCTAssertEqual(load.status, 0, load.out)
        let result = run.wait()
        a.interrupt()
        b.interrupt()
        _ = a.wait()
        _ = b.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        let end = Double(recorded.count / 2) / 48000
        XCTAssertEqual(
            Self.steadyLevel(recorded, 1000, from: position + 0.2, to: position + 0.8), -12, accuracy: 0.3,
            "the first source before the load")
        XCTAssertEqual(
            Self.steadyLevel(recorded, 300, from: end - 2, to: end - 0.3), -12, accuracy: 0.3,
            "the second source after the load")
        // The median of the windows: a capture dropout (a late wake of this VM) spreads a click's energy over every
        // frequency of its window, while a source that still plays is in all of them.
        XCTAssertLessThan(
            ToneMeasure.medianLevel(recorded, 1000, from: end - 2, to: end - 0.3), -60, "the first source still plays")
        XCTAssertLessThan(
            Self.steadyLevel(recorded, 1000, from: end - 2, to: end - 0.3), -40, "the first source plays in some window"
        )
    }
}
