import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// Live control against a private PipeWire daemon: transitions sent through the socket are click-free in the
/// sink's recording, the console edits and completes lines, and --watch swaps in edits of the graph file.
final class LiveControlTests: XCTestCase {
    /// A 1 kHz sine at -6 dBFS through a mixer and a chain node (warm: built-in EQ; bright: EQ + our LV2 EQ; dry).
    func sineGraph(name: String) throws -> String {
        let sine = try TestSupport.sine(seconds: 40)
        return TestSupport.graph(
            """
            { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                          "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" }, \
            { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq", "preset": "Vocal Booster" } ],
                          "dry": [] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "fx", "type": "chain", "chain": "warm" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "fx" }, \
            { "from": "fx", "to": "out" } ] }
            """, name: name)
    }

    /// The transitions of the offline click test, sent through `graphhost ctl` to a playing `run` (quantum 256) half
    /// a second of audio apart, judged on the `--record` output (what the process callback handed to PipeWire): every
    /// 10 ms window stays within 1.5x the steady second difference and never exceeds the steady level.
    func testTransitionsThroughTheSocketAreClickFree() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "live-sine")
        let other = TestSupport.graph(
            try String(contentsOfFile: path, encoding: .utf8)
                .replacingOccurrences(of: "\"inputs\": 1 }", with: "\"inputs\": 1, \"volume\": 0.7 }")
                .replacingOccurrences(of: "\"chain\": \"warm\"", with: "\"chain\": \"dry\""), name: "live-sine-other")
        let commands = [
            "preset fx/eq Treble Booster", "set mix volume 0.4", "set fx/eq preamp 6", "chain fx bright",
            "preset fx/lv Bass Reducer", "chain fx dry", "set mix volume 1", "chain fx warm", "load \(other)",
        ]
        let socket = TestSupport.directory.appendingPathComponent("live/sine.sock").path
        let recording = TestSupport.directory.appendingPathComponent("live-record.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", path, "--socket", socket, "--latency", "256", "--record", recording])
        XCTAssertTrue(control.waitForSocket())
        var at = 1.5
        for command in commands {
            XCTAssertTrue(try control.waitForPosition(at))
            let reply = try control.ctl(command.split(separator: " ").map(String.init))
            XCTAssertEqual(reply.status, 0, "\(command): \(reply.out)")
            at += 0.7
        }
        let refused = try control.ctl(["bypass", "mix/x", "on"])
        XCTAssertEqual(refused.status, 1, refused.out)
        XCTAssertTrue(try control.waitForPosition(at + 0.3))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("dropped frames 0"), result.out)
        let samples = try SoundFile(path: recording).samples
        let start = Double(try XCTUnwrap(SignalMatch.firstSound(samples), "silent recording") / 2) / 48000
        // The last 0.8 s hold the stop fade and the steady state the measure needs after a window.
        let end = Double(samples.count / 2) / 48000 - 0.8
        XCTAssertGreaterThan(end - start, Double(commands.count) * 0.7)
        let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: start + 0.5, end: end)
        print("live transitions: \(worst); \(result.out.split(separator: "\n").last ?? "")")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.0005, "\(worst)")
    }

    /// On a terminal, `run` has a console: Tab completes commands, node ids and chains, Up recalls the last line,
    /// Ctrl-W deletes a word, Ctrl-D on an empty line stops; each line is carried out like a socket command. The
    /// terminal here (script's) has no size: the console takes 80 columns.
    func testConsoleEditsAndCompletes() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "console-sine")
        let socket = TestSupport.directory.appendingPathComponent("console/sine.sock").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = [
            "-q", "-e", "-c", "\(TestSupport.executable.path) run \(path) --socket \(socket)", "/dev/null",
        ]
        process.environment = pw.environment.merging([
            "XDG_STATE_HOME": TestSupport.directory.appendingPathComponent("console/state").path
        ]) { $1 }
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        // What the console printed so far, read as it comes.
        let printed = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        func shown(_ text: String) -> Bool { printed.withLock { $0.contains(text) } }
        try process.run()
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        func type(_ keys: String) { input.fileHandleForWriting.write(Data(keys.utf8)) }
        func chain() throws -> String { try (control.status()["chains"] as? [String: String])?["fx"] ?? "none" }
        XCTAssertEqual(try chain(), "warm")
        type("cha\tf\tbr\t\r")  // "chain fx bright"
        XCTAssertTrue(try TestSupport.waitUntil { try chain() == "bright" })
        type("\u{1B}[A\u{17}dry\r")  // Up, Ctrl-W, "dry"
        XCTAssertTrue(try TestSupport.waitUntil { try chain() == "dry" })
        type("preset fx nothing\r")  // an error is printed, nothing changes
        XCTAssertTrue(TestSupport.waitUntil { shown("error: no node 'fx'") && shown("| underruns 0 |") })
        type("\u{4}")  // Ctrl-D on an empty line
        XCTAssertTrue(TestSupport.waitUntil { !process.isRunning })
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        let text =
            printed.withLock { $0 } + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("> chain fx bright"), text)
        XCTAssertTrue(text.contains("> chain fx dry"), text)
        XCTAssertTrue(text.contains("error: no node 'fx'"), text)
        XCTAssertTrue(text.contains("| underruns 0 |"), text)
    }

    /// The console on a real terminal (tmux, 80x24, UTF-8): Tab completion, a line with wide characters edited in
    /// the middle (the cursor lands where the text is), a log line printed above while a line is being edited, a
    /// resize to 50 columns (the status line is cut to fit, the line being edited survives, status updates land above
    /// a line wrapped over two rows), and the history file that a second run recalls with Up; `quit` ends the first
    /// run, Ctrl-C the second.
    func testConsoleInATerminal() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "terminal-sine")
        let folder = TestSupport.directory.appendingPathComponent("terminal")
        let socket = folder.appendingPathComponent("sine.sock").path
        let state = folder.appendingPathComponent("state").path
        let environment = pw.environment.merging(["XDG_STATE_HOME": state, "LC_ALL": "C.UTF-8"]) { $1 }
        let command = [TestSupport.executable.path, "run", path, "--socket", socket, "--watch"]
        let control = pw.control(socket)
        func chain() throws -> String { try (control.status()["chains"] as? [String: String])?["fx"] ?? "none" }
        /// The line being edited: the last one starting with the prompt (lines run above it start so too).
        func promptLine(_ screen: [String]) -> String? { screen.last { $0.hasPrefix(">") } }
        /// The status line, when there is one, directly above the line being edited, which reads `line`.
        func status(above line: String, _ screen: [String]) -> String? {
            let rows = screen.indices.filter { screen[$0].contains("| buffer ") }
            guard rows.count == 1, let row = rows.first, row + 1 < screen.count, screen[row + 1] == line else {
                return nil
            }
            return screen[row]
        }

        let terminal = try TmuxTerminal(command, environment: environment)
        defer { terminal.close() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(
            terminal.waitForScreen { promptLine($0) == ">" && $0.contains { $0.contains("| buffer ") } },
            terminal.text())
        XCTAssertEqual(try chain(), "warm")

        try terminal.type("cha")
        try terminal.press("Tab")
        try terminal.type("f")
        try terminal.press("Tab")
        try terminal.type("br")
        try terminal.press("Tab")
        XCTAssertTrue(terminal.waitForScreen { promptLine($0) == "> chain fx bright" }, terminal.text())
        try terminal.press("Enter")
        XCTAssertTrue(try TestSupport.waitUntil { try chain() == "bright" }, terminal.text())

        // 日, 本, 語 and 🎵 take two columns each: the cursor after "X" is at 2 + 13 + 4 + 1.
        try terminal.type("preset fx/eq 日本語🎵")
        try terminal.press("Left", "Left")
        try terminal.type("X")
        XCTAssertTrue(terminal.waitForScreen { promptLine($0) == "> preset fx/eq 日本X語🎵" }, terminal.text())
        XCTAssertEqual(try terminal.cursor().x, 20, terminal.text())
        try terminal.press("Enter")
        XCTAssertTrue(
            terminal.waitForScreen { $0.contains { $0.hasPrefix("error: unknown preset '日本X語🎵'") } }, terminal.text())

        // A log line (standard error: --watch reloading the edited graph file) prints above the status line; the
        // line being edited stays.
        try terminal.type("list")
        let graph = try String(contentsOfFile: path, encoding: .utf8)
        try graph.replacingOccurrences(of: "\"chain\": \"warm\"", with: "\"chain\": \"dry\"").write(
            toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(
            terminal.waitForScreen { screen in
                guard let log = screen.lastIndex(where: { $0.contains("changed: swapped to the new version") }),
                    let status = screen.lastIndex(where: { $0.contains("| buffer ") })
                else { return false }
                return log < status && screen.dropFirst(status + 1).first == "> list"
            }, terminal.text())
        XCTAssertEqual(try terminal.cursor().x, 6, terminal.text())
        try terminal.press("C-u")

        // The status line (about 80 columns) is cut to 50; no piece of the previous one is left behind.
        try terminal.type("set mix volume 0.50")
        try terminal.resize(width: 50)
        XCTAssertTrue(
            terminal.waitForScreen { (status(above: "> set mix volume 0.50", $0)?.count ?? 99) <= 50 }, terminal.text())
        XCTAssertEqual(try terminal.cursor().x, 21, terminal.text())
        // Two rows of input, the second starting with the 15th wide character: the next status update lands above both.
        let long = "> set mix volume 0.50 " + String(repeating: "日本", count: 8)
        try terminal.type(" " + String(repeating: "日本", count: 8))
        var shown: String?
        XCTAssertTrue(
            terminal.waitForScreen {
                shown = status(above: long, $0)
                return shown != nil
            }, terminal.text())
        XCTAssertTrue(
            terminal.waitForScreen { screen in
                status(above: long, screen).map { $0 != shown && $0.count <= 50 } ?? false
            },
            terminal.text())
        let (x, y) = try terminal.cursor()
        XCTAssertEqual(x, 4, terminal.text())
        XCTAssertEqual(
            try terminal.screen(rows: true).firstIndex(of: String(long.prefix(36))).map { $0 + 1 }, y, terminal.text())
        try terminal.press("C-u")
        try terminal.type("quit")
        try terminal.press("Enter")
        XCTAssertTrue(TestSupport.waitUntil { terminal.exitStatus() != nil }, terminal.text())
        XCTAssertEqual(terminal.exitStatus(), 0, terminal.text())
        XCTAssertTrue(terminal.text().contains(", underruns 0,"), terminal.text())

        let historyFolder = state + "/graphhost"
        let mode = try FileManager.default.attributesOfItem(atPath: historyFolder)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o700)
        // libedit's format: a header line, then one line each with blanks written as octal escapes.
        let saved = try String(contentsOfFile: historyFolder + "/history", encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.replacingOccurrences(of: "\\040", with: " ") }
        XCTAssertEqual(saved, ["chain fx bright", "preset fx/eq 日本X語🎵", "quit"])

        let second = try TmuxTerminal(command, environment: environment)
        defer { second.close() }
        XCTAssertTrue(
            second.waitForScreen { promptLine($0) == ">" && $0.contains { $0.contains("| buffer ") } }, second.text())
        try second.press("Up")
        XCTAssertTrue(second.waitForScreen { promptLine($0) == "> quit" }, second.text())
        try second.press("Up")
        XCTAssertTrue(second.waitForScreen { promptLine($0) == "> preset fx/eq 日本X語🎵" }, second.text())
        XCTAssertEqual(try second.cursor().x, 24, second.text())
        try second.press("C-c")
        XCTAssertTrue(TestSupport.waitUntil { second.exitStatus() != nil }, second.text())
        XCTAssertEqual(second.exitStatus(), 0, second.text())
    }

    /// The console on a real terminal (tmux, 100x60): `help` lists the commands, `help preset` shows its usage and an
    /// example, `status` and `list` print tables in words with units and paths as they are, `status --json` the JSON.
    func testConsoleHelpStatusAndList() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let song = try TestSupport.sine(seconds: 40)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(song)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "eq", "type": "ipod-eq", "preset": "Rock" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, \
            { "from": "eq", "to": "out" } ] }
            """, name: "console-help")
        let folder = TestSupport.directory.appendingPathComponent("console-help")
        let socket = folder.appendingPathComponent("help.sock").path
        let environment = pw.environment.merging([
            "XDG_STATE_HOME": folder.appendingPathComponent("state").path, "LC_ALL": "C.UTF-8",
        ]) { $1 }
        let control = pw.control(socket)
        let terminal = try TmuxTerminal(
            [TestSupport.executable.path, "run", path, "--socket", socket], environment: environment,
            width: 100, height: 60)
        defer { terminal.close() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.5))
        /// What the console printed for `line`: the lines between its echo and the status line drawn below them.
        func reply(to line: String) throws -> [String] {
            try terminal.press("C-u")
            try terminal.type(line)
            try terminal.press("Enter")
            var shown: [String] = []
            let printed = terminal.waitForScreen { screen in
                guard let echo = screen.lastIndex(of: "> " + line),
                    let status = screen[echo...].firstIndex(where: { $0.contains("| buffer ") })
                else { return false }
                shown = Array(screen[(echo + 1)..<status])
                return !shown.isEmpty
            }
            XCTAssertTrue(printed, "\(line): \(terminal.text())")
            return shown
        }

        let help = try reply(to: "help")
        XCTAssertEqual(help.first, "commands:", help.joined(separator: "\n"))
        for command in CommandHelp.all {
            XCTAssertTrue(
                help.contains { $0.hasPrefix("  " + command.synopsis + " ") },
                "\(command.verb): \(help.joined(separator: "\n"))")
        }
        let preset = try reply(to: "help preset")
        XCTAssertEqual(preset.first, "usage: preset NODE NAME|INDEX", preset.joined(separator: "\n"))
        XCTAssertEqual(preset.last, "example: preset eq Bass Booster", preset.joined(separator: "\n"))

        let status = try reply(to: "status")
        let statusText = status.joined(separator: "\n")
        XCTAssertFalse(statusText.contains("{") || statusText.contains("\\/"), statusText)
        XCTAssertNotNil(status.first?.firstMatch(of: /^playing at \d+\.\d\d s \| quantum 256 frames/), statusText)
        let row = try XCTUnwrap(status.first { $0.hasPrefix("  song ") }, statusText)
        XCTAssertTrue(row.hasSuffix(song), statusText)
        XCTAssertNotNil(row.firstMatch(of: /\d+\.\d\d s .* \d+ %/), statusText)

        let list = try reply(to: "list")
        let listText = list.joined(separator: "\n")
        XCTAssertFalse(listText.contains("{"), listText)
        XCTAssertTrue(
            list.contains { $0.hasPrefix("  eq ") && $0.contains("ipod-eq") && $0.hasSuffix("band.0…9 -12…12 dB") },
            listText)

        let json = try reply(to: "status --json").joined()
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
        XCTAssertEqual(object["ok"] as? Bool, true, json)
        XCTAssertTrue(json.contains("\"url\":\"file://\(song)\""), json)

        try terminal.type("quit")
        try terminal.press("Enter")
        XCTAssertTrue(TestSupport.waitUntil { terminal.exitStatus() != nil }, terminal.text())
        XCTAssertEqual(terminal.exitStatus(), 0, terminal.text())
    }

    /// `run --watch` swaps in a saved edit of the graph file; a broken edit is reported and the graph plays on.
    func testWatchReloadsEditsAndIgnoresBrokenOnes() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "watched")
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let socket = TestSupport.directory.appendingPathComponent("watch/sine.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket, "--watch"])
        let control = pw.control(socket)
        XCTAssertTrue(run.waitForError(containing: "watching \(path) for changes"), run.errorText)
        func chain() throws -> String? { try (control.status()["chains"] as? [String: String])?["fx"] }
        try original.replacingOccurrences(of: "\"chain\": \"warm\"", with: "\"chain\": \"bright\"").write(
            toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(try TestSupport.waitUntil { try chain() == "bright" })
        try (original + "oops").write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(run.waitForError(containing: "was not loaded; still playing the previous version"), run.errorText)
        XCTAssertEqual(try chain(), "bright")
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("changed: swapped to the new version"), result.err)
        XCTAssertTrue(result.err.contains("was not loaded; still playing the previous version"), result.err)
        XCTAssertTrue(
            result.err.contains("unexpected text after the JSON value") || result.err.contains("malformed JSON"),
            result.err)
    }

    /// While playing, `status` shows each LV2 node's control outputs, read every cycle: here the latency that
    /// x42's look-ahead limiter reports, and the latency the graph adds.
    func testStatusShowsPluginControlOutputs() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let uri = "http://gareus.org/oss/lv2/dpl#stereo"
        let latencySymbol = try XCTUnwrap(LV2World.shared.plugin(uri)?.latencyPort?.symbol)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 4)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \
            { "id": "fx", "type": "lv2", "uri": "\(uri)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("outputs/dpl.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        func latency() throws -> Double? {
            ((try control.status()["pluginOutputs"] as? [String: [String: Double]])?["fx"]?[latencySymbol])
        }
        XCTAssertTrue(try TestSupport.waitUntil { (try latency() ?? 0) > 0 }, "no latency output")
        let added = (try control.status()["latency"] as? [String: Any])?["frames"] as? Int
        XCTAssertEqual(added.map(Double.init), try latency())
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }

    /// The control socket under abuse: random bytes, invalid UTF-8, a 1 MB line, half-written lines, clients that
    /// hang up at once, one that never reads its replies, more clients than allowed, and a command flood. The host
    /// keeps playing and answers a well-formed client.
    func testSocketAbuseLeavesThePlaybackAndOtherClientsAlone() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "abuse")
        let socket = TestSupport.directory.appendingPathComponent("abuse/sine.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        typealias Client = HeadlessPipeWire.SocketClient
        let before = try control.position()
        var rng = SplitMix64(seed: 3)
        for i in 0..<300 {
            guard let client = try? Client(socket: socket) else { continue }
            var bytes = (0..<Int.random(in: 1...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 3 == 0 { bytes += Array("preset fx/eq \u{FF}\u{FE} Rock\n".utf8) + [0xC3, 0x28, 0x0A] }
            client.send(bytes)
            // Every other client hangs up at once, often before the reply: the host must not take SIGPIPE.
            if i % 2 == 0 { XCTAssertTrue(client.readToEnd(), "client \(i) was not answered") }
        }
        let huge = try Client(socket: socket)
        huge.send([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + Array("\nstatus\n".utf8))
        let silent = try Client.subscriber(socket)
        for _ in 0..<2000 { silent.send(Array("status\n".utf8)) }
        var crowd: [Client] = []
        for _ in 0..<(CommandServer.maxClients + 6) {
            if let client = try? Client(socket: socket) { crowd.append(client) }
        }
        XCTAssertTrue(try XCTUnwrap(crowd.last).waitForLine(containing: "too many clients"), crowd.last?.text ?? "")
        crowd.removeAll()
        XCTAssertTrue(
            TestSupport.waitUntil { (try? control.ctl(["status"]).status) == 0 }, "the crowd's places were not freed")
        let flood = try Client(socket: socket)
        flood.send(Array(String(repeating: "nope\n", count: 300).utf8))
        XCTAssertTrue(flood.waitForLine(containing: "too many commands"), flood.text)
        withExtendedLifetime((huge, silent)) {}
        XCTAssertTrue(try TestSupport.waitUntil { try control.position() - before > 1.0 }, "playback went on")
        XCTAssertEqual(try control.ctl(["preset", "fx/eq", "Rock"]).status, 0)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("underruns 0"), result.out)
    }
}
