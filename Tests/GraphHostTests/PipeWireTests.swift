import AllocationCounter
import Logging
import XCTest
@testable import GraphHost

/// `graphhost run` against a real, private PipeWire daemon (started by each test; never skipped).
final class PipeWireTests: XCTestCase {
    var demo: String { HeadlessPipeWire.root.appendingPathComponent("Graphs/demo.json").path }

    func summaryNumbers(_ out: String) -> (underruns: Int, xruns: Int)? {
        guard let line = out.split(separator: "\n").last(where: { $0.hasPrefix("played ") }) else { return nil }
        let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ")
        guard let u = words.firstIndex(of: "underruns"), let x = words.firstIndex(of: "xruns") else { return nil }
        return (Int(words[u + 1]) ?? -1, Int(words[x + 1]) ?? -1)
    }

    /// 10 s of the demo at quantum 256, recorded from the sink monitor, matches the offline render, with no
    /// xruns or underruns. This 2-vCPU VM now and then wakes a node late (see docs/design.md), which shows up as
    /// an xrun, and pw-record (not a real-time client) occasionally shifts a quantum in the recording; so up to
    /// three attempts are made and one must be clean.
    func testDemoPlaysLikeTheOfflineRender() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let reference = SignalMatch.mono(try TestSupport.render(demo, durationFrames: 10 * 48000).samples)
        var attempts: [String] = []
        var clean = false
        for attempt in 1...3 where !clean {
            let recording = TestSupport.directory.appendingPathComponent("q256-\(attempt).wav").path
            let recorder = try pw.record(to: recording)
            let run = try pw.graphhost(["run", demo, "--duration", "10", "--latency", "256"]).wait()
            usleep(200_000)
            recorder.interrupt()
            _ = recorder.wait()
            XCTAssertEqual(run.status, 0, run.err)
            let numbers = try XCTUnwrap(summaryNumbers(run.out), run.out)
            XCTAssertEqual(numbers.underruns, 0, run.out)
            let recorded = SignalMatch.mono(try SoundFile(path: recording).samples)
            let match = try XCTUnwrap(SignalMatch.align(recording: recorded, reference: reference, trimEnd: 4800), "recording is silent")
            attempts.append("attempt \(attempt): xruns \(numbers.xruns), correlation \(match.correlation) at lag \(match.lag)")
            clean = numbers.xruns == 0 && match.correlation >= 0.999
        }
        print(attempts.joined(separator: "; "))
        XCTAssertTrue(clean, "no clean attempt: \(attempts)")
    }

    /// The quantum changes while playing (256 → 8192 → 512): every size is rendered and the output stays continuous.
    /// (Smaller quanta are covered by the quantum-64 test: pw-record itself drops or inserts quanta at 128 and below.)
    func testQuantumChangesWhilePlaying() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let recording = TestSupport.directory.appendingPathComponent("changing.wav").path
        let recorder = try pw.record(to: recording)
        let run = try pw.graphhost(["run", demo, "--duration", "8"])
        sleep(2)
        _ = try pw.script(["quantum", pw.directory, "8192"])
        sleep(3)
        _ = try pw.script(["quantum", pw.directory, "512"])
        let result = run.wait()
        usleep(300_000)
        recorder.interrupt()
        _ = recorder.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("largest quantum 8192 frames"), result.out)
        XCTAssertTrue(result.out.contains("underruns 0"), result.out)
        // The capture side (null sink and pw-record) shifts by up to a quantum when the quantum changes; PipeWire's
        // own pw-play shows the same shifts there. So every half second is matched on its own: all but the
        // two that straddle a change, and one for pw-record's own occasional shift (it is not a real-time
        // client), must match the offline render.
        let recorded = SignalMatch.mono(try SoundFile(path: recording).samples)
        let reference = SignalMatch.mono(try TestSupport.render(demo, durationFrames: 8 * 48000).samples)
        let r0 = try XCTUnwrap(SignalMatch.firstSound(recorded), "recording is silent")
        var mismatched: [Double] = []
        var lastLag = r0 - (SignalMatch.firstSound(reference) ?? 0)
        for start in stride(from: 0, to: 7 * 48000, by: 24000) {
            let segment = Array(reference[start..<(start + 24000)])
            func matches(_ lag: Int) -> Bool {
                start + lag >= 0 && start + lag + 24000 <= recorded.count
                    && SignalMatch.correlation(recorded, start + lag, segment, count: 24000) >= 0.999
            }
            // The lag of the previous half second first, then every lag within ±9000 frames (above a quantum of 8192).
            if let lag = ([lastLag] + Array((lastLag - 9000)...(lastLag + 9000))).first(where: matches) {
                lastLag = lag
            } else {
                mismatched.append(Double(start) / 48000)
            }
        }
        XCTAssertLessThanOrEqual(mismatched.count, 3, "half-seconds not found in the recording: \(mismatched)")
    }

    /// Two private daemons run side by side, each with its own socket and sink, and stop leaves nothing behind.
    func testTwoHeadlessDaemonsSideBySide() throws {
        let a = try HeadlessPipeWire(), b = try HeadlessPipeWire()
        XCTAssertNotEqual(a.environment["PIPEWIRE_REMOTE"], b.environment["PIPEWIRE_REMOTE"])
        XCTAssertEqual(try a.script(["status", a.directory]), "")
        XCTAssertEqual(try b.script(["status", b.directory]), "")
        let pids = try String(contentsOfFile: a.directory + "/pipewire.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        a.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: a.directory))
        let state = (try? String(contentsOfFile: "/proc/\(pids)/stat", encoding: .utf8))?.split(separator: " ")[2]
        XCTAssertTrue(state == nil || state == "Z", "pipewire \(pids) still running")
        XCTAssertEqual(try b.script(["status", b.directory]), "")
        b.stop()
    }

    /// At quantum 64 for 10 s every callback is served (no missed buffer, every quantum 64 frames) and the profiler
    /// sees the cycles. Callback time is a benchmark figure (BENCHMARKS.md), not asserted here: on a VM a preempted
    /// callback's wall time includes the preemption (one took 11 ms under CI load). Xruns are counted and printed:
    /// on this 2-vCPU VM the daemon itself sometimes signals a node milliseconds late (the profiler shows the
    /// node woken late, then finishing in tens of µs), so a zero count is not something this test can demand.
    func testQuantum64StaysInsideItsBudget() throws {
        let pw = try HeadlessPipeWire(quantum: 64)
        defer { pw.stop() }
        _ = try pw.script(["xrun-start", pw.directory])
        let run = try pw.graphhost(["run", demo, "--duration", "10", "--latency", "64", "--name", "graphhost_q64"]).wait()
        let profile = try pw.script(["xrun-count", pw.directory, "graphhost_q64"]).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertTrue(run.out.contains("largest quantum 64 frames"), run.out)
        XCTAssertTrue(run.out.contains("missed buffers 0"), run.out)
        XCTAssertEqual(profile.count, 2)
        XCTAssertGreaterThan(profile[0], 5000, "profiler cycles")
        print("quantum 64: \(run.out.split(separator: "\n").last ?? ""); profiler cycles \(profile[0]), errors \(profile[1])")
    }

    /// The daemon dies mid-run and comes back: graphhost says so and goes on playing.
    func testReconnectsWhenTheDaemonReturns() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        let dir = pw.directory
        let run = try pw.graphhost(["run", demo, "--duration", "6", "--latency", "256"])
        sleep(2)
        pw.stop()
        usleep(500_000)
        let again = try HeadlessPipeWire(quantum: 256, directory: dir)
        defer { again.stop() }
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("daemon went away"), result.err)
        XCTAssertTrue(result.err.contains("reconnected to PipeWire"), result.err)
        XCTAssertTrue(result.out.contains("played 6."), result.out)
    }

    /// SIGINT and SIGTERM fade out, disconnect and exit 0 within 200 ms; a missing --target falls back with a warning.
    func testSignalsStopCleanlyAndMissingTargetFallsBack() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        for signal in [SIGINT, SIGTERM] {
            let run = try pw.graphhost(["run", demo, "--target", "no_such_sink"])
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, !((try? String(contentsOf: run.errURL, encoding: .utf8)) ?? "").contains("format:") { usleep(20_000) }
            usleep(500_000)
            let sent = Date()
            kill(run.process.processIdentifier, signal)
            let result = run.wait(timeout: 5)
            let elapsed = Date().timeIntervalSince(sent)
            XCTAssertEqual(result.status, 0, result.err)
            XCTAssertLessThan(elapsed, 0.2, "signal \(signal) took \(elapsed) s")
            XCTAssertTrue(result.err.contains("target 'no_such_sink' not found; playing to the default sink"), result.err)
            XCTAssertTrue(result.out.contains("played 0."), result.out)
        }
    }

    /// On a terminal `run` keeps one status line up to date; elsewhere it writes log lines only.
    func testStatusLineOnlyOnATerminal() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let command = "\(HeadlessPipeWire.graphhost.path) run \(demo) --duration 1.5"
        let tty = try HeadlessPipeWire.execute(URL(fileURLWithPath: "/usr/bin/script"), ["-q", "-e", "-c", command, "/dev/null"], environment: pw.environment)
        XCTAssertEqual(tty.status, 0, tty.err)
        XCTAssertTrue(tty.out.contains("\r\u{1B}[K"), tty.out)
        XCTAssertTrue(tty.out.contains("| buffer "), tty.out)
        XCTAssertTrue(tty.out.contains("| underruns 0 | xruns "), tty.out)
        XCTAssertTrue(tty.out.contains("of 256-frame quantum"), tty.out)
        let plain = try pw.graphhost(["run", demo, "--duration", "1"]).wait()
        XCTAssertEqual(plain.status, 0)
        XCTAssertFalse(plain.out.contains("| buffer "), plain.out)
        XCTAssertTrue(plain.err.contains("info graphhost"), plain.err)
    }

    func testNoDaemonIsAClearError() throws {
        let missing = TestSupport.directory.appendingPathComponent("no-daemon/pipewire-0").path
        let process = try HeadlessPipeWire.Running(HeadlessPipeWire.graphhost, ["run", demo],
                                                   environment: ProcessInfo.processInfo.environment.merging(["PIPEWIRE_REMOTE": missing]) { $1 })
        let result = process.wait()
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("cannot reach a PipeWire daemon at \(missing)"), result.err)
        XCTAssertTrue(result.err.contains("scripts/pipewire-headless start"), result.err)
    }

    /// 10 s of real-time rendering in this process: the process callback makes no heap allocation.
    func testProcessCallbackMakesNoAllocations() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        setenv("PIPEWIRE_REMOTE", pw.environment["PIPEWIRE_REMOTE"]!, 1)
        defer { unsetenv("PIPEWIRE_REMOTE") }
        let session = GraphSession(graph: try CompiledGraph(try GraphDocument.load(path: demo)))
        defer { session.close() }
        let graph = session.graph
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let player = try PipeWirePlayer(session: session, options: PlaybackOptions(name: "graphhost_alloc", latencyFrames: 256), logger: logger)
        player.setProbe(allocation_counter_probe)
        graph.start()
        try player.connect()
        try session.apply(Command.parse("preset eq Dance"))
        sleep(5)
        try session.apply(Command.parse("set mix volume 0.5"))
        sleep(5)
        let callbacks = player.counters.callbacks.load(ordering: .relaxed)
        player.stop()
        XCTAssertGreaterThan(callbacks, 1500)
        XCTAssertEqual(allocation_counter_probe_total(), 0)
    }
}

extension PipeWireTests {
    /// Damaged stream data is reported while `run` plays: `status` counts the silenced frames and skipped bytes
    /// of the stream, and subscribers get `damaged` events (a looping spliced file is damaged on every pass).
    func testDamagedStreamIsReported() throws {
        let a = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)))
        let b = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.sine(seconds: 1)))
        let spliced = TestSupport.directory.appendingPathComponent("spliced-live.mp3").path
        FileManager.default.createFile(atPath: spliced, contents: a.prefix(a.count / 2 + 7) + b.suffix(from: b.count / 3 + 11))
        let graph = TestSupport.graph("""
        { "nodes": [ { "id": "s", "type": "stream", "url": "\(spliced)", "loop": true }, { "id": "out", "type": "output" } ],
          "links": [ { "from": "s", "to": "out" } ] }
        """)
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("damage-\(getpid())/s.sock").path
        let run = try pw.graphhost(["run", graph, "--socket", socket])
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        let subscriber = CommandServer.connectClient(socket)
        XCTAssertGreaterThanOrEqual(subscriber, 0)
        _ = Array("subscribe\n".utf8).withUnsafeBytes { write(subscriber, $0.baseAddress, $0.count) }
        var events: [UInt8] = []
        var byte: UInt8 = 0
        let until = Date().addingTimeInterval(10)
        while !(String(decoding: events, as: UTF8.self).contains("\"event\":\"damaged\"") && events.last == 10) && Date() < until {
            if read(subscriber, &byte, 1) == 1 { events.append(byte) } else { usleep(10_000) }
        }
        close(subscriber)
        let eventText = String(decoding: events, as: UTF8.self)
        XCTAssertTrue(eventText.contains("\"event\":\"damaged\""), eventText)
        XCTAssertTrue(eventText.contains("\"node\":\"s\""), eventText)
        let status = try HeadlessPipeWire.execute(HeadlessPipeWire.graphhost, ["ctl", "--socket", socket, "status"], environment: pw.environment)
        let out = status.out
        XCTAssertNotNil(out.range(of: #""silencedFrames":[1-9]"#, options: .regularExpression), out)
        XCTAssertNotNil(out.range(of: #""skippedBytes":[1-9]"#, options: .regularExpression), out)
        _ = try HeadlessPipeWire.execute(HeadlessPipeWire.graphhost, ["ctl", "--socket", socket, "quit"], environment: pw.environment)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("stream 's': damaged MPEG data"), result.err)
    }

    /// While `run` plays, `graphhost ctl` reaches it through the owner-only control socket: commands apply,
    /// a bad command answers with the reason and a non-zero exit, `status` and `list` answer JSON, `quit` stops.
    func testControlSocketAndCtl() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("ctl-\(getpid())/demo.sock").path
        let run = try pw.graphhost(["run", demo, "--socket", socket])
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        func ctl(_ words: [String]) throws -> (status: Int32, out: String) {
            let r = try HeadlessPipeWire.execute(HeadlessPipeWire.graphhost, ["ctl", "--socket", socket] + words, environment: pw.environment)
            return (r.status, r.out)
        }
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let dirMode = try FileManager.default.attributesOfItem(atPath: (socket as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        XCTAssertEqual(dirMode, 0o700)
        let preset = try ctl(["preset", "eq", "Bass", "Booster"])
        XCTAssertEqual(preset.status, 0, preset.out)
        XCTAssertTrue(preset.out.contains("\"ok\":true"), preset.out)
        let bad = try ctl(["set", "eq", "band.3", "40"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.out.contains("band gain 40 dB is out of range"), bad.out)
        let unknown = try ctl(["explode"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.out.contains("unknown command 'explode'"), unknown.out)
        let status = try ctl(["status"])
        XCTAssertEqual(status.status, 0)
        XCTAssertTrue(status.out.contains("\"position\""), status.out)
        let list = try ctl(["list"])
        XCTAssertTrue(list.out.contains("\"presets\":[\"Flat\",\"Acoustic\""), list.out)
        XCTAssertTrue(list.out.contains("\"name\":\"volume.1\""), list.out)
        // A line longer than the bound is refused and the connection keeps working for well-formed lines.
        let fd = CommandServer.connectClient(socket)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let long = Array((String(repeating: "x", count: 5000) + "\nstatus\n").utf8)
        _ = long.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var received: [UInt8] = []
        var byte: UInt8 = 0
        while received.filter({ $0 == 10 }).count < 2 && read(fd, &byte, 1) == 1 { received.append(byte) }
        close(fd)
        let replies = String(decoding: received, as: UTF8.self)
        XCTAssertTrue(replies.contains("line longer than 4096 bytes"), replies)
        XCTAssertTrue(replies.contains("\"status\""), replies)
        // A subscriber receives events: here the pause and play commands another client sends.
        let subscriber = CommandServer.connectClient(socket)
        XCTAssertGreaterThanOrEqual(subscriber, 0)
        _ = Array("subscribe\n".utf8).withUnsafeBytes { write(subscriber, $0.baseAddress, $0.count) }
        XCTAssertEqual(try ctl(["pause"]).status, 0)
        XCTAssertEqual(try ctl(["play"]).status, 0)
        var events: [UInt8] = []
        while events.filter({ $0 == 10 }).count < 3 && read(subscriber, &byte, 1) == 1 { events.append(byte) }
        close(subscriber)
        let eventText = String(decoding: events, as: UTF8.self)
        XCTAssertTrue(eventText.contains("\"subscribed\":true"), eventText)
        XCTAssertTrue(eventText.contains("\"command\":\"pause\",\"event\":\"command\""), eventText)
        XCTAssertTrue(eventText.contains("\"command\":\"play\",\"event\":\"command\""), eventText)
        XCTAssertEqual(try ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "socket left behind")
    }
}
