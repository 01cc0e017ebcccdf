import Foundation
import XCTest

@testable import GraphHost

/// `run --idle-after`: a sink → iPod EQ → output graph rests like a sink while nothing plays into it (no CPU and no
/// wake-ups of the process, from /proc), and an application that starts playing into its sink is heard from its first
/// block, in a private PipeWire with WirePlumber.
final class IdleTests: XCTestCase {
    /// CPU ticks (utime + stime) of the process and the context switches of each of its threads.
    struct Activity {
        var ticks: Int
        var switches: [String: Int]

        init(_ pid: Int32) {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // The fields after the command's closing parenthesis: state is the 3rd field, utime the 14th.
            let fields = stat.split(separator: ")").last?.split(separator: " ").map(String.init) ?? []
            ticks = fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : -1
            switches = [:]
            let tasks = "/proc/\(pid)/task"
            for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
                guard let status = try? String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8) else {
                    continue
                }
                let comm =
                    (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                let count = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }.compactMap {
                    Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
                }.reduce(0, +)
                switches["\(comm)/\(task)"] = count
            }
        }

        /// The threads that switched since `earlier`, with how often.
        func woken(since earlier: Activity) -> [String: Int] {
            switches.reduce(into: [:]) { woken, thread in
                let delta = thread.value - (earlier.switches[thread.key] ?? 0)
                if delta != 0 { woken[thread.key] = delta }
            }
        }
    }

    /// The PipeWire state (info.state: "running", "idle", "suspended", ...) of the node named `name`.
    static func nodeState(_ pw: HeadlessPipeWire, _ name: String) throws -> String? {
        let out = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-dump"), [], environment: pw.environment
        )
        .out
        let objects = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]] ?? []
        for object in objects {
            guard let info = object["info"] as? [String: Any], let props = info["props"] as? [String: Any],
                props["node.name"] as? String == name
            else { continue }
            return info["state"] as? String
        }
        return nil
    }

    /// Waits until PipeWire paused `node` and its sink and suspended the device, then asserts that the process takes
    /// no CPU time and that none of its threads wakes for `seconds`.
    static func assertRests(
        _ pw: HeadlessPipeWire, node: String, sink: String, pid: Int32, seconds: Double, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20, every: 0.25) { try nodeState(pw, node) == "idle" },
            "PipeWire never paused the graph: \((try? nodeState(pw, node)).flatMap { $0 } ?? "no node")",
            file: file, line: line)
        XCTAssertEqual(try nodeState(pw, sink), "idle", file: file, line: line)
        // The device it played to rests too: WirePlumber suspends it after 5 s idle.
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20, every: 0.25) {
                try nodeState(pw, "graphhost_test_sink") == "suspended"
            },
            file: file, line: line)
        let before = Activity(pid)
        Thread.sleep(forTimeInterval: seconds)  // The measured window, not a wait for an event.
        let after = Activity(pid)
        XCTAssertEqual(after.ticks - before.ticks, 0, "CPU ticks while resting", file: file, line: line)
        XCTAssertEqual(after.woken(since: before), [:], "threads that woke while resting", file: file, line: line)
    }

    /// Nothing plays for 20 s: the process takes no CPU time and none of its threads wakes (MPRIS included). Then an
    /// application plays into the sink: PipeWire starts the graph with it, graphhost's recording holds its tone whole,
    /// and the graph rests again.
    func testTheGraphRestsWithNothingPlayingAndHearsAnApplicationFromItsFirstBlock() throws {
        let quantum = 1024
        let pw = try HeadlessPipeWire(quantum: quantum)
        defer { pw.stop() }
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "music", "type": "sink", "name": "idle_music" },
                         { "id": "eq", "type": "ipod-eq", "preset": "Flat" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "music", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        let tone = TestSupport.directory.appendingPathComponent("idle-tone.wav").path
        // Whole quanta: pw-play drops a last partial block, whoever it plays to.
        let toneFrames = 24 * quantum
        try TestSupport.run([
            "sox", "-n", "-r", "48000", "-c", "2", "-b", "16", tone, "synth", "\(toneFrames)s", "sine", "1000", "vol",
            "0.5",
        ])
        let socket = TestSupport.directory.appendingPathComponent("live/idle.sock").path
        let record = TestSupport.directory.appendingPathComponent("idle.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", graph, "--name", "idle", "--latency", "\(quantum)", "--idle-after", "1", "--socket", socket,
            "--record", record,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        try Self.assertRests(pw, node: "idle", sink: "idle_music", pid: run.process.processIdentifier, seconds: 20)

        let player = try pw.play(tone, sink: "idle_music", latency: quantum)
        XCTAssertEqual(player.wait().status, 0)
        XCTAssertTrue(try TestSupport.waitUntil(timeout: 20, every: 0.25) { try Self.nodeState(pw, "idle") == "idle" })
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)

        let samples = try SoundFile(path: record).samples
        let frames = samples.count / 2
        let loud = (0..<frames).filter { abs(samples[2 * $0]) > 1e-3 }
        let first = try XCTUnwrap(loud.first, "the tone is not in the recording")
        let last = loud.last!
        let heard = last - first + 1
        print("idle: the recording holds \(heard) frames of the \(toneFrames)-frame tone from frame \(first)")
        XCTAssertLessThanOrEqual(abs(heard - toneFrames), 48, "the tone is not whole (a block lost: \(quantum) frames)")
        let level = ToneMeasure.dB(
            ToneMeasure.amplitude(samples, 1000, start: Double(first) / 48000 + 0.1, seconds: 0.2))
        XCTAssertEqual(level, 20 * log10(0.5), accuracy: 0.5)
        XCTAssertTrue(samples.allSatisfy(\.isFinite))
    }

    /// `service run --idle-after`: the service rests as a run does (its configuration watch included), and a saved
    /// configuration wakes it and loads the graph it now names.
    func testTheServiceRestsAndReloadsItsConfigurationWhileResting() throws {
        let pw = try HeadlessPipeWire(quantum: 1024)
        defer { pw.stop() }
        let folder = TestSupport.directory.appendingPathComponent("idle-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, preset) in [("flat.json", "Flat"), ("rock.json", "Rock")] {
            ServiceTests.write(
                folder.appendingPathComponent(name).path,
                """
                { "nodes": [ { "id": "music", "type": "sink", "name": "svc_music" },
                             { "id": "eq", "type": "ipod-eq", "preset": "\(preset)" },
                             { "id": "out", "type": "output" } ],
                  "links": [ { "from": "music", "to": "eq" }, { "from": "eq", "to": "out" } ] }
                """)
        }
        let config = folder.appendingPathComponent("service.json").path
        ServiceTests.write(config, #"{ "devices": [], "fallback": "flat.json" }"#)
        let socket = TestSupport.directory.appendingPathComponent("live/idle-service.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "service", "run", config, "--name", "svcidle", "--latency", "1024", "--idle-after", "1", "--socket", socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        try Self.assertRests(pw, node: "svcidle", sink: "svc_music", pid: run.process.processIdentifier, seconds: 10)

        ServiceTests.write(config, #"{ "devices": [], "fallback": "rock.json" }"#)
        let rock = folder.appendingPathComponent("rock.json").path
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 10, every: 0.25) { try control.status()["graph"] as? String == rock },
            "the saved configuration was not loaded while resting")
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20, every: 0.25) { try Self.nodeState(pw, "svcidle") == "idle" })
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
    }

    /// A resting run notices the daemon going away (nothing else wakes it) and, once it is back, plays and rests again.
    func testARestingRunReconnectsWhenTheDaemonReturns() throws {
        let pw = try HeadlessPipeWire(quantum: 1024)
        let dir = pw.directory
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "music", "type": "sink", "name": "rest_music" },
                         { "id": "eq", "type": "ipod-eq", "preset": "Flat" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "music", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        let run = try pw.graphhost(["run", graph, "--name", "rest", "--latency", "1024", "--idle-after", "1"])
        defer { run.interrupt() }
        XCTAssertTrue(try TestSupport.waitUntil(timeout: 20, every: 0.25) { try Self.nodeState(pw, "rest") == "idle" })
        pw.stop()
        XCTAssertTrue(run.waitForError(containing: "daemon went away"), run.errorText)
        let again = try HeadlessPipeWire(quantum: 1024, directory: dir)
        defer { again.stop() }
        XCTAssertTrue(run.waitForError(containing: "reconnected to PipeWire"), run.errorText)
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20, every: 0.25) { try Self.nodeState(again, "rest") == "idle" },
            "the run did not rest again")
        run.interrupt()
        XCTAssertEqual(run.wait().status, 0, run.errorText)
    }
}
