import Foundation
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// `"isolate": true`: the plugin runs in a `graphhost plugin-host` process. Offline renders through the command line
/// (the helper is the same binary): the node sounds as in process one block later, latency compensation aligns it, and
/// a plugin that crashes, aborts or hangs is heard dry for a block, named, and restarted with its last control values.
final class PluginIsolationTests: XCTestCase {
    static let block = 256

    static let abortLoad = TestPlugins.fixtures + "/abort-load.lv2"

    override class func setUp() {
        super.setUp()
        try? TestPlugins.compile(
            PluginFaultTests.bundle + "/faults.so", PluginFaultTests.bundle + "/faults.c", libraries: ["-lm"])
        try? TestPlugins.compile(abortLoad + "/abort_load.so", abortLoad + "/abort_load.c")
    }

    /// Renders `json` with `arguments` (the fixture bundles on the LV2 path); returns the stereo samples and stderr.
    func render(_ json: String, _ arguments: [String] = [], seconds: Double = 2) throws -> (
        samples: [Float], err: String
    ) {
        let graph = TestSupport.graph(json)
        let output = TestSupport.directory.appendingPathComponent("isolation-\(UUID().uuidString).wav").path
        let result = try TestSupport.execute(
            TestSupport.executable,
            ["render", graph, "-o", output, "--duration", "\(seconds)", "--block", "\(Self.block)"] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 })
        let err = String(decoding: result.err, as: UTF8.self)
        XCTAssertEqual(result.status, 0, err)
        return (try SoundFile(path: output).samples, err)
    }

    func chain(_ mp3: String, fx: String) -> String {
        """
        { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \(fx),
                     { "id": "out", "type": "output" } ],
          "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
        """
    }

    /// Three seconds of a song through an isolated fault fixture set to segfault after `after` runs, with `after`
    /// set to `then` by a command at `at` seconds; returns the song through a flat EQ beside it, and stderr.
    func crashing(_ uri: String, after: Int, at: Double, then: Int) throws -> (
        song: [Float], out: [Float], err: String
    ) {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let song = try render(chain(mp3, fx: #"{ "id": "fx", "type": "ipod-eq" }"#), seconds: 3).samples
        let fx =
            #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)", "isolate": true, "#
            + #""controls": { "fault": 1, "after": \#(after) } }"#
        let (out, err) = try render(chain(mp3, fx: fx), ["--at", "\(at)", "set fx after \(then)"], seconds: 3)
        return (song, out, err)
    }

    /// The largest difference between `late` and `early` delayed by one block.
    func blockLateDifference(_ late: [Float], _ early: [Float]) -> Float {
        let shift = 2 * Self.block
        return zip(late[shift...], early[..<(early.count - shift)]).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    /// Debian's mda Ambience (a reverb, with a live `set` and bypass), mda Detune and x42's dpl (a look-ahead limiter
    /// driven 12 dB into its threshold).
    func testDebianPluginsSoundAsInProcessOneBlockLaterWithTheirCommands() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let plugins = [
            (
                #""uri": "http://drobilla.net/plugins/mda/Ambience", "controls": { "mix": 0.5 }"#,
                ["--at", "1", "set fx mix 0.9", "--at", "1.5", "bypass fx on"]
            ),
            (#""uri": "http://drobilla.net/plugins/mda/Detune", "controls": { "detune": 0.6 }"#, []),
            (#""uri": "http://gareus.org/oss/lv2/dpl#stereo", "controls": { "threshold": -12 }"#, []),
        ]
        for (settings, commands) in plugins {
            let fx = #"{ "id": "fx", "type": "lv2", "# + settings
            let inProcess = try render(chain(mp3, fx: fx + " }"), commands).samples
            let isolated = try render(chain(mp3, fx: fx + #", "isolate": true }"#), commands).samples
            let dry = try render(chain(mp3, fx: fx + #", "bypass": true }"#)).samples
            XCTAssertEqual(isolated.count, inProcess.count)
            XCTAssertEqual(TestSupport.peak(Array(isolated[..<(2 * Self.block)])), 0, "the first block is the latency")
            XCTAssertLessThan(blockLateDifference(isolated, inProcess), 1e-6, settings)
            XCTAssertGreaterThan(
                zip(inProcess, dry).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }, 0.05,
                "the plugin changes the sound: \(settings)")
        }
    }

    /// A plugin that crashes on one branch: the other branch, on an output of its own, is sample-identical to a
    /// render without the faulty plugin.
    func testTheOtherBranchIsUntouchedByACrash() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        func graph(_ faulty: Bool) -> String {
            let fx =
                faulty
                ? #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:crash", "isolate": true, "#
                    + #""controls": { "fault": 1, "after": 40 } }"#
                : #"{ "id": "fx", "type": "ipod-eq" }"#
            return """
                { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \(fx),
                             { "id": "eq", "type": "ipod-eq", "preset": "Rock" },
                             { "id": "a", "type": "output" }, { "id": "b", "type": "output" } ],
                  "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "a" },
                             { "from": "song", "to": "eq" }, { "from": "eq", "to": "b" } ] }
                """
        }
        var branches: [[Float]] = []
        for faulty in [false, true] {
            let path = TestSupport.graph(graph(faulty))
            let files = ["a", "b"].map {
                TestSupport.directory.appendingPathComponent("branch-\(faulty)-\($0).wav").path
            }
            let result = try TestSupport.execute(
                TestSupport.executable,
                ["render", path, "-o", "a=\(files[0])", "-o", "b=\(files[1])", "--duration", "2", "--block", "256"],
                environment: ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 })
            let err = String(decoding: result.err, as: UTF8.self)
            XCTAssertEqual(result.status, 0, err)
            XCTAssertEqual(err.contains("SIGSEGV"), faulty, err)
            branches.append(try SoundFile(path: files[1]).samples)
        }
        XCTAssertEqual(branches[0].count, 2 * 96000)
        XCTAssertTrue(branches[0] == branches[1], "the other branch changed")
    }

    /// Debian's synthv1, isolated, plays a MIDI file's notes in a headless live run (no display: Qt runs offscreen in
    /// its helper): the recording of graphhost's own output sounds during each note, from the first at 0 s (while the
    /// helper takes its first blocks) to the last, and its helper never faults.
    func testSynthv1PlaysNotesIsolatedInAHeadlessLiveRun() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let quiet = try TestSupport.floatSine(amplitude: 0, seconds: 4)
        // A4 and C5 from 0 s, again from 1 s, each 0.5 s (format 0, 120 bpm, 480 ticks a quarter).
        let notes = TestSupport.directory.appendingPathComponent("four-notes-from-0s.mid").path
        let pair: [UInt8] = [
            0x00, 0x90, 69, 100, 0x83, 0x60, 0x80, 69, 0, 0x00, 0x90, 72, 100, 0x83, 0x60, 0x80, 72, 0,
        ]
        let track = pair + pair + [0x00, 0xFF, 0x2F, 0x00]
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        FileManager.default.createFile(
            atPath: notes, contents: Data(header + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track))
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "quiet", "type": "stream", "url": "\(quiet)" },
                         { "id": "keys", "type": "midi", "file": "\(notes)" },
                         { "id": "synth", "type": "lv2", "uri": "http://synthv1.sourceforge.net/lv2", "isolate": true },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "quiet", "to": "synth" }, { "from": "keys", "to": "synth" },
                         { "from": "synth", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("isolation-synth-\(getpid()).sock").path
        let record = TestSupport.directory.appendingPathComponent("isolation-synth-\(getpid()).wav").path
        var environment = TestPlugins.lv2Path
        (environment["DISPLAY"], environment["WAYLAND_DISPLAY"]) = ("", "")
        let run = try pw.graphhost(
            ["run", graph, "--socket", socket, "--record", record], extraEnvironment: environment)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try control.position() >= 2.5 }, "the run did not play 2.5 s")
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertFalse(result.err.contains("restarts"), result.err)
        let recorded = try SoundFile(path: record).samples
        XCTAssertTrue(recorded.allSatisfy(\.isFinite))
        // Each note (0.5 s, from 0 s, 0.5 s, 1 s and 1.5 s) sounds in the middle of its half second.
        for note in 0..<4 {
            let middle = (note * 24000 + 6000)..<(note * 24000 + 18000)
            XCTAssertGreaterThan(
                TestSupport.peak(Array(recorded[(2 * middle.lowerBound)..<(2 * middle.upperBound)])), 0.05,
                "note \(note + 1) is not heard")
        }
    }

    /// `status` shows what only the helper can read of an isolated plugin: the property values the file-gain fixture
    /// reports (patch:Set on its notify port) and the latency x42's dpl writes to its control output.
    func testStatusShowsTheControlOutputsAndPropertiesOfIsolatedPlugins() throws {
        try LV2HostTests.loadFixture("file-gain.lv2", source: "file_gain.c", binary: "file_gain.so")
        setenv("GRAPHHOST_EXECUTABLE", TestSupport.executable.path, 1)
        setenv("LV2_PATH", try XCTUnwrap(TestPlugins.lv2Path["LV2_PATH"]), 1)
        let half = TestSupport.directory.appendingPathComponent("isolated-status-half.txt").path
        try "0.5\n".write(toFile: half, atomically: true, encoding: .utf8)
        let dpl = "http://gareus.org/oss/lv2/dpl#stereo"
        let latencySymbol = try XCTUnwrap(LV2World.shared.plugin(dpl)?.latencyPort?.symbol)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let session = try TestSupport.session(
            TestSupport.graph(
                """
                { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" },
                             { "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:file-gain", "isolate": true,
                               "properties": { "gainFile": "\(half)" } },
                             { "id": "lim", "type": "lv2", "uri": "\(dpl)", "isolate": true },
                             { "id": "out", "type": "output" } ],
                  "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "lim" },
                             { "from": "lim", "to": "out" } ] }
                """))
        defer { session.close() }
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1024)
        defer { buffer.deallocate() }
        for _ in 0..<8 { session.render(frames: 1024, interleaved: buffer) }
        XCTAssertEqual(session.graph.pluginProperties["fx"], ["gainFile": half, "gain": "0.5"])
        XCTAssertGreaterThan(try XCTUnwrap(session.graph.pluginOutputs["lim"]?[latencySymbol]), 0)
    }

    /// The plugin's own state (its state interface) survives a crash: the fixture fades its halved input in over its
    /// first 200 runs, a count it saves and restores. The helper saves it after a command at 1.5 s (and every 2 s);
    /// restarted after the crash near its 400th run, the plugin gets it back and plays on at full gain instead of
    /// fading in again.
    func testARestartedPluginGetsBackTheStateItHadSaved() throws {
        let (song, out, err) = try crashing("urn:graphhost:test:stateful", after: 100000, at: 1.5, then: 400)
        XCTAssertTrue(err.contains("SIGSEGV"), err)
        XCTAssertTrue(err.contains("runs again in a new process, with the state it had saved"), err)
        let frames = out.count / 2
        let crash = try XCTUnwrap(
            (72000..<frames).first { difference(out, song, $0..<($0 + 1), gain: 0.5) > 1e-6 }, "no crash")
        XCTAssertLessThan(crash, frames - 24000, "the crash came late")
        XCTAssertLessThan(difference(out, song, (crash + Self.block + 960)..<(crash + 24000), gain: 0.5), 1e-6)
    }

    /// MIDI, musical time and ports linked by name cross to the helper: Debian's synthv1 (audio inputs and a MIDI
    /// input; it starts Qt from its audio code, which aborts without a display unless Qt is offscreen) and mda Piano (a
    /// MIDI input alone) play a MIDI file's notes, lv2-examples' fifths (a MIDI processor) adds a fifth to each note
    /// for a piano, its MIDI gate opens on a note linked to its `control` port, its metronome clicks on the graph's
    /// beats, and swh's crossover gives its bands by port name to a mixer:
    /// each sounds as in process, one block later. The instruments hear their notes only while the helper's URID map
    /// numbers MIDI events as the host's does.
    func testMIDITimeAndPortsLinkedByNameWorkIsolated() throws {
        let notes = try TestSupport.twoNotes()
        let quiet = try TestSupport.floatSine(amplitude: 0, seconds: 2)
        let tone = try TestSupport.sine(seconds: 2)
        let bands = try TestSupport.tones([100, 6000])
        let gate = try LV2EventInputTests.noteFromHalfASecond()
        func fx(_ uri: String, _ isolate: Bool) -> String {
            #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)", "isolate": \#(isolate) }"#
        }
        let cases: [(String, (Bool) -> String)] = [
            (
                "synthv1",
                {
                    """
                    { "nodes": [ { "id": "quiet", "type": "stream", "url": "\(quiet)" },
                                 { "id": "keys", "type": "midi", "file": "\(notes)" },
                                 \(fx("http://synthv1.sourceforge.net/lv2", $0)), { "id": "out", "type": "output" } ],
                      "links": [ { "from": "quiet", "to": "fx" }, { "from": "keys", "to": "fx" },
                                 { "from": "fx", "to": "out" } ] }
                    """
                }
            ),
            (
                "mda Piano",
                {
                    """
                    { "nodes": [ { "id": "keys", "type": "midi", "file": "\(notes)" },
                                 \(fx("http://drobilla.net/plugins/mda/Piano", $0)),
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "keys", "to": "fx" }, { "from": "fx", "to": "out" } ] }
                    """
                }
            ),
            (
                "MIDI gate",
                {
                    """
                    { "nodes": [ { "id": "tone", "type": "stream", "url": "\(tone)" },
                                 { "id": "keys", "type": "midi", "file": "\(gate)" },
                                 \(fx(LV2EventInputTests.gate, $0)), { "id": "out", "type": "output" } ],
                      "links": [ { "from": "tone", "to": "fx" }, { "from": "keys", "to": "fx:control" },
                                 { "from": "fx", "to": "out" } ] }
                    """
                }
            ),
            (
                "MIDI processor",
                {
                    """
                    { "nodes": [ { "id": "keys", "type": "midi", "file": "\(notes)" },
                                 \(fx("http://lv2plug.in/plugins/eg-fifths", $0)),
                                 { "id": "piano", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" },
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "keys", "to": "fx" }, { "from": "fx", "to": "piano" },
                                 { "from": "piano", "to": "out" } ] }
                    """
                }
            ),
            (
                "metronome",
                {
                    """
                    { "transport": { "bpm": 240 },
                      "nodes": [ \(fx("http://lv2plug.in/plugins/eg-metro", $0)), { "id": "out", "type": "output" } ],
                      "links": [ { "from": "fx", "to": "out" } ] }
                    """
                }
            ),
            (
                "crossover",
                {
                    """
                    { "nodes": [ { "id": "music", "type": "stream", "url": "\(bands)" },
                                 { "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/bwxover_iir",
                                   "controls": { "cutoff": 1000 }, "isolate": \($0) },
                                 { "id": "mix", "type": "mixer", "inputs": 2, "volumes": [1, 0.5] },
                                 { "id": "out", "type": "output" } ],
                      "links": [ { "from": "music", "to": "fx" }, { "from": "fx:lpoutput", "to": "mix:0" },
                                 { "from": "fx:hpoutput", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
                    """
                }
            ),
        ]
        for (name, graph) in cases {
            let inProcess = try render(graph(false)).samples
            let isolated = try render(graph(true)).samples
            XCTAssertGreaterThan(TestSupport.peak(inProcess), 0.05, "\(name): silent in process")
            XCTAssertEqual(isolated.count, inProcess.count, name)
            XCTAssertLessThan(blockLateDifference(isolated, inProcess), 1e-6, name)
        }
    }

    /// In the helper a plugin has its worker, its URID map and its properties (a gain read from a file through the
    /// worker), and a LADSPA plugin is isolated the same way: both sound as in process, one block later.
    func testWorkerPropertiesAndLADSPAWorkInTheHelper() throws {
        try LV2HostTests.loadFixture("file-gain.lv2", source: "file_gain.c", binary: "file_gain.so")
        let half = TestSupport.directory.appendingPathComponent("isolated-gain-half.txt").path
        try "0.5\n".write(toFile: half, atomically: true, encoding: .utf8)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let nodes = [
            #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:file-gain", "#
                + #""properties": { "gainFile": "\#(half)" }"#,
            #"{ "id": "fx", "type": "ladspa", "plugin": "amp_1181", "label": "amp", "#
                + #""controls": { "amps_gain_db": -6 }"#,
        ]
        for fx in nodes {
            let commands = ["--at", "0.5", "bypass fx on", "--at", "1", "bypass fx off"]
            let inProcess = try render(chain(mp3, fx: fx + " }"), commands).samples
            let isolated = try render(chain(mp3, fx: fx + #", "isolate": true }"#), commands).samples
            XCTAssertLessThan(blockLateDifference(isolated, inProcess), 1e-6, fx)
            let dry = try render(chain(mp3, fx: #"{ "id": "fx", "type": "ipod-eq" }"#)).samples
            XCTAssertEqual(inProcess[40000], dry[40000] * 0.5, accuracy: 0.002, "the gain applies: \(fx)")
        }
    }

    func testLatencyCompensationAlignsAnIsolatedPluginWithADryPath() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        func graph(_ isolate: Bool) -> String {
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" },
                         { "id": "fx", "type": "lv2", "uri": "\(TestPlugins.amp)", "isolate": \(isolate) },
                         { "id": "mix", "type": "mixer", "inputs": 2, "volumes": [0.5, 0.5] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "mix:0" },
                         { "from": "song", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
            """
        }
        let inProcess = try render(graph(false)).samples
        let isolated = try render(graph(true)).samples
        XCTAssertLessThan(blockLateDifference(isolated, inProcess), 1e-6)
        XCTAssertGreaterThan(TestSupport.peak(inProcess), 0.1)
    }

    /// The largest difference over frames `range` between `samples` and `song` one block earlier, scaled by `gain`.
    func difference(_ samples: [Float], _ song: [Float], _ range: Range<Int>, gain: Float) -> Float {
        var worst: Float = 0
        for i in (2 * range.lowerBound)..<(2 * range.upperBound) {
            worst = max(worst, abs(samples[i] - gain * song[i - 2 * Self.block]))
        }
        return worst
    }

    /// A crash on run 301 (the `after` control was raised from 100 by a command): that block is heard dry, the fault
    /// names the node, the plugin and the signal, and the restarted helper plays again with `after` at 300, so it
    /// does not crash again within the render.
    func testACrashingPluginIsHeardDryForABlockNamedAndRestartedWithItsControls() throws {
        let (song, out, err) = try crashing("urn:graphhost:test:crash", after: 100, at: 0.1, then: 300)
        XCTAssertTrue(err.contains("node 'fx' (urn:graphhost:test:crash)"), err)
        XCTAssertTrue(err.contains("SIGSEGV"), err)
        XCTAssertTrue(err.contains("restarts (1 of 5 within 60 s)"), err)
        XCTAssertTrue(err.contains("runs again"), err)
        XCTAssertTrue(out.allSatisfy(\.isFinite))
        let frames = out.count / 2
        XCTAssertEqual(frames, 3 * 48000)
        // The helper runs the plugin on silence before it serves (a warm-up), so the crash comes near run 300; a
        // timed command splits a render call, so blocks need not start at multiples of the block length.
        let crash = try XCTUnwrap(
            (Self.block..<frames).first { difference(out, song, $0..<($0 + 1), gain: 0.5) > 1e-6 })
        XCTAssertTrue((290 * Self.block...301 * Self.block).contains(crash), "the first frame not wet is \(crash)")
        // The dry block, once the step from the last wet frame has decayed (64 frames).
        XCTAssertLessThan(difference(out, song, (crash + 64)..<(crash + Self.block), gain: 1), 1e-6)
        // The restarted plugin fades in over 20 ms and plays to the end without crashing again at run 100.
        XCTAssertLessThan(difference(out, song, (crash + Self.block + 960)..<frames, gain: 0.5), 1e-6)
        // No jump: the largest step between frames stays near the song's own.
        func largestStep(_ x: [Float]) -> Float {
            stride(from: 2, to: x.count, by: 1).reduce(0) { max($0, abs(x[$1] - x[$1 - 2])) }
        }
        XCTAssertLessThan(largestStep(out), largestStep(song) * 1.05)
    }

    /// An abort, a hang and writes past the output buffer.
    func testAnAbortAHangAndAScribbleAreNamedAndTheRenderGoesOn() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        for (fault, named) in [(2, "SIGABRT"), (3, "did not answer"), (4, "SIGSEGV")] {
            let fx =
                #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:crash", "isolate": true, "#
                + #""controls": { "fault": \#(fault), "after": 50 } }"#
            let (out, err) = try render(chain(mp3, fx: fx), seconds: 0.5)
            XCTAssertTrue(err.contains(named) && err.contains("node 'fx'"), err)
            XCTAssertTrue(out.allSatisfy(\.isFinite))
            XCTAssertEqual(out.count, 2 * 24000)
        }
    }

    func testAPluginThatCannotBeHostedRefusesTheGraphNamingIt() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let graph = TestSupport.graph(
            chain(mp3, fx: #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:fail", "isolate": true }"#))
        let result = try TestSupport.execute(
            TestSupport.executable,
            ["render", graph, "-o", TestSupport.directory.appendingPathComponent("fail.wav").path, "--duration", "1"],
            environment: ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 })
        let err = String(decoding: result.err, as: UTF8.self)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(err.contains("node 'fx' (urn:graphhost:test:fail)"), err)
        XCTAssertTrue(err.contains("instantiate"), err)
    }

    /// Live: the helper's crash and its restart are events naming the node, the plugin and the signal; the run goes on
    /// and what it plays is safe to hear.
    func testALiveCrashIsAnEventAndTheRunGoesOn() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        // A crash, then a hang: the supervisor kills a helper that misses 16 blocks in a row.
        for (fault, named) in [(1, "SIGSEGV"), (3, "did not answer for")] {
            let fx =
                #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:crash", "isolate": true, "#
                + #""controls": { "fault": \#(fault), "after": 200 } }"#
            let socket = TestSupport.directory.appendingPathComponent("isolation-\(getpid())-\(fault).sock").path
            let record = TestSupport.directory.appendingPathComponent("isolation-\(getpid())-\(fault).wav").path
            let run = try pw.graphhost(
                ["run", TestSupport.graph(chain(mp3, fx: fx)), "--socket", socket, "--record", record],
                extraEnvironment: TestPlugins.lv2Path)
            let control = pw.control(socket)
            XCTAssertTrue(control.waitForSocket())
            let events = try HeadlessPipeWire.SocketClient.subscriber(socket)
            XCTAssertTrue(events.waitForLine(containing: "runs again in a new process"), events.text)
            let said = events.text.split(separator: "\n").first { $0.contains("\"event\":\"pluginProcess\"") } ?? ""
            XCTAssertTrue(said.contains("\"node\":\"fx\"") && said.contains(named), events.text)
            XCTAssertTrue(said.contains("urn:graphhost:test:crash"), String(said))
            XCTAssertEqual(try control.ctl(["set", "fx", "after", "5000"]).status, 0, "the new helper takes commands")
            XCTAssertEqual(try control.ctl(["quit"]).status, 0)
            let result = run.wait(timeout: 20)
            XCTAssertEqual(result.status, 0, result.err)
            let recorded = try SoundFile(path: record).samples
            XCTAssertGreaterThan(recorded.count, 2 * 48000)
            XCTAssertTrue(recorded.allSatisfy(\.isFinite))
            XCTAssertLessThanOrEqual(TestSupport.peak(recorded), 1)
        }
    }

    /// A crash loop: a plugin that faults every 100 blocks is restarted five times, then its sixth fault within the
    /// minute leaves it off (the node plays dry) and no helper starts again.
    func testAPluginCrashingSixTimesWithinAMinuteStaysOff() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let fx =
            #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:crash", "isolate": true, "#
            + #""controls": { "fault": 1, "after": 100 } }"#
        let socket = TestSupport.directory.appendingPathComponent("isolation-loop-\(getpid()).sock").path
        let record = TestSupport.directory.appendingPathComponent("isolation-loop-\(getpid()).wav").path
        // The song loops: the run plays until it is told to quit.
        let looping = chain(mp3, fx: fx).replacingOccurrences(
            of: #""type": "stream","#, with: #""type": "stream", "loop": true,"#)
        let run = try pw.graphhost(
            ["run", TestSupport.graph(looping), "--socket", socket, "--record", record],
            extraEnvironment: TestPlugins.lv2Path)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let events = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(events.waitForLine(containing: "it stays off", timeout: 60), events.text)
        XCTAssertTrue(events.text.contains("(5 of 5 within 60 s)"), events.text)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(events.readToEnd(), "the host did not hang up")
        let restarts = events.text.components(separatedBy: "runs again in a new process").count - 1
        XCTAssertEqual(restarts, 5, events.text)
        let recorded = try SoundFile(path: record).samples
        XCTAssertTrue(recorded.allSatisfy(\.isFinite))
        XCTAssertLessThanOrEqual(TestSupport.peak(recorded), 1)
    }

    /// Plugins that abort while their library loads (a static constructor) or in instantiate: loading a graph with
    /// one isolated is refused naming the plugin and the signal, and the run goes on playing the graph it had.
    func testAPluginThatAbortsWhenLoadedIsRefusedWhileTheRunPlaysOn() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let socket = TestSupport.directory.appendingPathComponent("isolation-load-\(getpid()).sock").path
        let record = TestSupport.directory.appendingPathComponent("isolation-load-\(getpid()).wav").path
        let playing = TestSupport.graph(chain(mp3, fx: #"{ "id": "fx", "type": "lv2", "uri": "\#(TestPlugins.amp)" }"#))
        let run = try pw.graphhost(
            ["run", playing, "--socket", socket, "--record", record, "--duration", "2.5"],
            extraEnvironment: TestPlugins.lv2Path)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.5))
        for uri in ["urn:graphhost:test:abort-load", "urn:graphhost:test:abort"] {
            let other = TestSupport.graph(
                chain(mp3, fx: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)", "isolate": true }"#))
            let reply = try HeadlessPipeWire.execute(
                TestSupport.executable, ["ctl", "--socket", socket, "load", other], environment: control.environment
            )
            let said = reply.out + reply.err
            XCTAssertNotEqual(reply.status, 0, said)
            XCTAssertTrue(said.contains("node 'fx' (\(uri))") && said.contains("SIGABRT"), said)
        }
        let result = run.wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        // The song plays to the end of the run: its last half second is as loud as its first.
        let frames = recorded.count / 2
        XCTAssertGreaterThan(frames, 2 * 48000)
        func rms(_ range: Range<Int>) -> Double {
            let values = recorded[(2 * range.lowerBound)..<(2 * range.upperBound)]
            return (values.reduce(0) { $0 + Double($1 * $1) } / Double(values.count)).squareRoot()
        }
        XCTAssertGreaterThan(rms((frames - 24000)..<frames), 0.5 * rms(24000..<48000))
    }
}
