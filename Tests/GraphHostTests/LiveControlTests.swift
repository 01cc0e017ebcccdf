import Foundation
import XCTest
@testable import GraphHost

/// Live control against a private PipeWire daemon: transitions sent through the socket are click-free in the
/// sink's recording, the console edits and completes lines, and --watch swaps in edits of the graph file.
final class LiveControlTests: XCTestCase {
    /// A 1 kHz sine at -6 dBFS through a mixer and a chain node (warm: built-in EQ; bright: EQ + our LV2 EQ; dry).
    func sineGraph(name: String) throws -> String {
        let sine = try TestSupport.sine(seconds: 40)
        return TestSupport.graph("""
        { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                      "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" }, { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq", "preset": "Vocal Booster" } ],
                      "dry": [] },
          "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)" }, { "id": "mix", "type": "mixer", "inputs": 1 },
                     { "id": "fx", "type": "chain", "chain": "warm" }, { "id": "out", "type": "output" } ],
          "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "fx" }, { "from": "fx", "to": "out" } ] }
        """, name: name)
    }

    func waitForSocket(_ path: String) {
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(20_000) }
    }

    func ctl(_ pw: HeadlessPipeWire, _ socket: String, _ words: [String]) throws -> (status: Int32, out: String) {
        let r = try HeadlessPipeWire.execute(HeadlessPipeWire.graphhost, ["ctl", "--socket", socket] + words, environment: pw.environment)
        return (r.status, r.out)
    }

    /// The transitions of the offline click test, sent through `graphhost ctl` to a playing `run` (quantum 256)
    /// and recorded from the sink monitor: every 10 ms window of the recording stays within 1.5x the steady
    /// second difference and never exceeds the steady level. On this VM the recorded monitor now and then drops or
    /// repeats a whole quantum (a 1/3-period phase jump of the 1 kHz tone at a 256-frame boundary, often with no
    /// xrun in graphhost), which is a click of its own: up to six attempts, one must be clean.
    func testTransitionsThroughTheSocketAreClickFree() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "live-sine")
        let other = TestSupport.graph(try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: "\"inputs\": 1 }", with: "\"inputs\": 1, \"volume\": 0.7 }")
            .replacingOccurrences(of: "\"chain\": \"warm\"", with: "\"chain\": \"dry\""), name: "live-sine-other")
        let commands = ["preset fx/eq Treble Booster", "set mix volume 0.4", "set fx/eq preamp 6", "chain fx bright",
                        "preset fx/lv Bass Reducer", "chain fx dry", "set mix volume 1", "chain fx warm", "load \(other)", "bypass mix/x on"]
        var attempts: [String] = []
        var clean = false
        for attempt in 1...6 where !clean {
            let socket = TestSupport.directory.appendingPathComponent("live-\(attempt)/sine.sock").path
            let recording = TestSupport.directory.appendingPathComponent("live-\(attempt).wav").path
            let recorder = try pw.record(to: recording)
            let run = try pw.graphhost(["run", path, "--socket", socket, "--latency", "256"])
            waitForSocket(socket)
            usleep(1_500_000)
            for command in commands.dropLast() {
                let reply = try ctl(pw, socket, command.split(separator: " ").map(String.init))
                XCTAssertEqual(reply.status, 0, "\(command): \(reply.out)")
                usleep(700_000)
            }
            let refused = try ctl(pw, socket, commands.last!.split(separator: " ").map(String.init))
            XCTAssertEqual(refused.status, 1, refused.out)
            usleep(1_000_000)
            XCTAssertEqual(try ctl(pw, socket, ["quit"]).status, 0)
            let result = run.wait(timeout: 20)
            usleep(200_000)
            recorder.interrupt()
            _ = recorder.wait()
            XCTAssertEqual(result.status, 0, result.err)
            let samples = try SoundFile(path: recording).samples
            let start = Double(try XCTUnwrap(SignalMatch.firstSound(samples), "silent recording") / 2) / 48000
            let end = Double(samples.count / 2) / 48000 - 0.8
            let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: start + 0.5, end: end)
            attempts.append("attempt \(attempt): \(worst), \(result.out.split(separator: "\n").last ?? "")")
            clean = worst.slopeRatio <= 1.5 && worst.peakRatio <= 1.0005
        }
        print(attempts.joined(separator: "; "))
        XCTAssertTrue(clean, "no clean attempt: \(attempts)")
    }

    /// On a terminal, `run` has a console: Tab completes commands, node ids and chains, Up recalls the last line,
    /// Ctrl-W deletes a word; each line is carried out like a socket command.
    func testConsoleEditsAndCompletes() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "console-sine")
        let socket = TestSupport.directory.appendingPathComponent("console/sine.sock").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-e", "-c", "\(HeadlessPipeWire.graphhost.path) run \(path) --socket \(socket)", "/dev/null"]
        process.environment = pw.environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        waitForSocket(socket)
        func type(_ keys: String) {
            input.fileHandleForWriting.write(Data(keys.utf8))
            usleep(300_000)
        }
        func chain() throws -> String {
            let status = try ctl(pw, socket, ["status"]).out
            return status.contains("\"fx\":\"bright\"") ? "bright" : status.contains("\"fx\":\"dry\"") ? "dry" : status.contains("\"fx\":\"warm\"") ? "warm" : status
        }
        XCTAssertEqual(try chain(), "warm")
        type("cha\tf\tbr\t\r")              // "chain fx bright"
        XCTAssertEqual(try chain(), "bright")
        type("\u{1B}[A\u{17}dry\r")          // Up, Ctrl-W, "dry"
        XCTAssertEqual(try chain(), "dry")
        type("preset fx nothing\r")          // an error is printed, nothing changes
        XCTAssertEqual(try chain(), "dry")
        type("quit\r")
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("> chain fx bright"), text)
        XCTAssertTrue(text.contains("> chain fx dry"), text)
        XCTAssertTrue(text.contains("error: no node 'fx'"), text)
        XCTAssertTrue(text.contains("| underruns 0 |"), text)
    }

    /// `run --watch` swaps in a saved edit of the graph file; a broken edit is reported and the graph plays on.
    func testWatchReloadsEditsAndIgnoresBrokenOnes() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph(name: "watched")
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let socket = TestSupport.directory.appendingPathComponent("watch/sine.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket, "--watch"])
        waitForSocket(socket)
        usleep(800_000)
        try original.replacingOccurrences(of: "\"chain\": \"warm\"", with: "\"chain\": \"bright\"").write(toFile: path, atomically: true, encoding: .utf8)
        usleep(1_500_000)
        XCTAssertTrue(try ctl(pw, socket, ["status"]).out.contains("\"fx\":\"bright\""))
        try (original + "oops").write(toFile: path, atomically: true, encoding: .utf8)
        usleep(1_500_000)
        let status = try ctl(pw, socket, ["status"])
        XCTAssertEqual(status.status, 0)
        XCTAssertTrue(status.out.contains("\"fx\":\"bright\""), status.out)
        XCTAssertEqual(try ctl(pw, socket, ["quit"]).status, 0)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("changed: swapped to the new version"), result.err)
        XCTAssertTrue(result.err.contains("was not loaded; still playing the previous version"), result.err)
        XCTAssertTrue(result.err.contains("unexpected text after the JSON value") || result.err.contains("malformed JSON"), result.err)
    }

    /// While playing, `status` shows each LV2 node's control outputs, read every cycle: here the latency that
    /// x42's look-ahead limiter reports (not compensated by the graph, as `show` says).
    func testStatusShowsPluginControlOutputs() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let uri = "http://gareus.org/oss/lv2/dpl#stereo"
        let latencySymbol = try XCTUnwrap(LV2World.shared.plugin(uri)?.latencyPort?.symbol)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 4)
        let path = TestSupport.graph("""
        { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, { "id": "fx", "type": "lv2", "uri": "\(uri)" }, { "id": "out", "type": "output" } ],
          "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
        """)
        let socket = TestSupport.directory.appendingPathComponent("outputs/dpl.sock").path
        let run = try pw.graphhost(["run", path, "--socket", socket])
        waitForSocket(socket)
        usleep(1_000_000)
        let reply = try ctl(pw, socket, ["status"])
        XCTAssertEqual(try ctl(pw, socket, ["quit"]).status, 0)
        _ = run.wait(timeout: 10)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(reply.out.utf8)) as? [String: Any], reply.out)
        let outputs = (object["status"] as? [String: Any])?["pluginOutputs"] as? [String: [String: Double]]
        let latency = try XCTUnwrap(outputs?["fx"]?[latencySymbol], reply.out)
        XCTAssertGreaterThan(latency, 0, reply.out)
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
        waitForSocket(socket)
        func send(_ fd: Int32, _ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        func position() throws -> Double {
            let out = try ctl(pw, socket, ["status"]).out
            let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            return try XCTUnwrap((object?["status"] as? [String: Any])?["position"] as? Double, out)
        }
        let before = try position()
        var rng = SplitMix64(seed: 3)
        for i in 0..<300 {
            let fd = CommandServer.connectClient(socket)
            guard fd >= 0 else { continue }
            var bytes = (0..<Int.random(in: 1...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 3 == 0 { bytes += Array("preset fx/eq \u{FF}\u{FE} Rock\n".utf8) + [0xC3, 0x28, 0x0A] }
            send(fd, bytes)
            if i % 2 == 0 { usleep(1000) }
            close(fd)          // often before the reply: the host must not take SIGPIPE
        }
        let huge = CommandServer.connectClient(socket)
        send(huge, [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + Array("\nstatus\n".utf8))
        let silent = CommandServer.connectClient(socket)
        send(silent, Array("subscribe\n".utf8))
        for _ in 0..<2000 { send(silent, Array("status\n".utf8)) }
        var crowd: [Int32] = []
        for _ in 0..<(CommandServer.maxClients + 6) { crowd.append(CommandServer.connectClient(socket)) }
        usleep(300_000)
        var refusal = [UInt8](repeating: 0, count: 256)
        let refused = recv(crowd.last!, &refusal, refusal.count, Int32(MSG_DONTWAIT))
        XCTAssertTrue(refused > 0 && String(decoding: refusal[0..<refused], as: UTF8.self).contains("too many clients"))
        crowd.forEach { close($0) }
        usleep(200_000)
        let flood = CommandServer.connectClient(socket)
        send(flood, Array(String(repeating: "nope\n", count: 300).utf8))
        usleep(500_000)
        var replies = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(flood, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n <= 0 { break }
            replies.append(contentsOf: chunk[0..<n])
        }
        XCTAssertTrue(String(decoding: replies, as: UTF8.self).contains("too many commands"))
        [huge, silent, flood].forEach { close($0) }
        usleep(1_000_000)
        let after = try position()
        XCTAssertGreaterThan(after - before, 1.0, "playback went on")
        XCTAssertEqual(try ctl(pw, socket, ["preset", "fx/eq", "Rock"]).status, 0)
        XCTAssertEqual(try ctl(pw, socket, ["quit"]).status, 0)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("underruns 0"), result.out)
    }
}
