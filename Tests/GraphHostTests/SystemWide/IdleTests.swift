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
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20) { try Self.nodeState(pw, "idle") == "idle" },
            "PipeWire never paused the graph: \((try? Self.nodeState(pw, "idle")).flatMap { $0 } ?? "no node")")
        XCTAssertEqual(try Self.nodeState(pw, "idle_music"), "idle")
        // The device it played to rests too: WirePlumber suspends it after 5 s idle.
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20) { try Self.nodeState(pw, "graphhost_test_sink") == "suspended" })

        // Nothing plays for 20 s: the process takes no CPU time and none of its threads wakes (MPRIS included).
        let pid = run.process.processIdentifier
        let before = Activity(pid)
        Thread.sleep(forTimeInterval: 20)  // The measured window, not a wait for an event.
        let after = Activity(pid)
        XCTAssertEqual(after.ticks - before.ticks, 0, "CPU ticks while resting")
        XCTAssertEqual(after.woken(since: before), [:], "threads that woke while resting")

        // An application plays 0.5 s into the sink: PipeWire starts the graph with it, and graphhost's recording holds
        // the tone whole, then the graph rests again.
        let player = try pw.play(tone, sink: "idle_music", latency: quantum)
        XCTAssertEqual(player.wait().status, 0)
        XCTAssertTrue(try TestSupport.waitUntil(timeout: 20) { try Self.nodeState(pw, "idle") == "idle" })
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
}
