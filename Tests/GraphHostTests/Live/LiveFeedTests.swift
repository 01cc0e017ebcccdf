import Foundation
import XCTest

@testable import GraphHost

/// Feeds of readings while `run` plays into a private PipeWire daemon: the socket's `subscribe FEED RATE`, OSC's
/// `/graphhost/meter`, and the console's `top` and status-line meter.
final class LiveFeedTests: XCTestCase {
    /// A −6 dBFS 1 kHz sine through a stream node `s` to `out`.
    static func sineGraph() throws -> String {
        let sine = try TestSupport.floatSine(amplitude: 0.5, seconds: 60)
        return TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(sine)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
    }

    /// The feed updates a client has read: each line's JSON whose `event` is `name`.
    static func updates(_ client: HeadlessPipeWire.SocketClient, _ name: String) -> [[String: Any]] {
        client.text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == name
            else { return nil }
            return object
        }
    }

    /// `subscribe meters 30` delivers 30 updates a second (± 2, by graphhost's own send times, in every whole second)
    /// carrying the output's levels, while a client subscribed at 60 that never reads has its updates dropped
    /// rather than holding up the others; `unsubscribe` ends a feed; bad subscriptions are refused with the usage.
    func testSubscribedMetersArriveAtTheAskedRateAndASlowSubscriberIsDroppedNotWaitedFor() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("outputs/feeds.sock").path
        let run = try pw.graphhost(["run", try Self.sineGraph(), "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.5))

        // The slow client reads nothing: its socket fills and its updates are dropped.
        let slow = try HeadlessPipeWire.SocketClient(socket: socket)
        var small: Int32 = 4096
        setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        slow.send(Array("subscribe meters 60\n".utf8))

        let client = try HeadlessPipeWire.SocketClient(socket: socket)
        client.send(Array("subscribe meters 30\n".utf8))
        XCTAssertTrue(client.waitForLine(containing: #""feed":"meters""#), client.text)
        XCTAssertTrue(client.text.contains(#""rate":30"#), client.text)
        XCTAssertTrue(client.waitFor(timeout: 60) { _ in Self.updates(client, "meters").count >= 5 * 30 }, client.text)

        let updates = Self.updates(client, "meters")
        let times = updates.compactMap { $0["time"] as? Double }
        XCTAssertEqual(times.count, updates.count)
        let first = times[0]
        let seconds = Int((times.last! - first).rounded(.down))
        XCTAssertGreaterThanOrEqual(seconds, 4)
        for k in 0..<seconds {
            let count = times.filter { $0 >= first + Double(k) && $0 < first + Double(k + 1) }.count
            XCTAssertTrue((28...32).contains(count), "second \(k): \(count) updates (30 asked)")
        }
        let out = try XCTUnwrap((updates.last?["meters"] as? [[String: Any]])?.first { $0["node"] as? String == "out" })
        let channel = try XCTUnwrap((out["channels"] as? [[String: Any]])?.first)
        XCTAssertEqual(try XCTUnwrap(channel["peak"] as? Double), -6.02, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(channel["rms"] as? Double), -9.03, accuracy: 0.05)

        // The slow client was sent less than it asked for while the other kept its rate; commands are answered.
        XCTAssertEqual(try control.ctl(["status"]).status, 0)
        XCTAssertTrue(slow.waitFor { _ in Self.updates(slow, "meters").count >= 10 }, slow.text)
        let slowCount = Self.updates(slow, "meters").count
        XCTAssertLessThan(slowCount, 60 * seconds / 2, "the slow client's updates were not dropped")

        client.send(Array("unsubscribe meters\nsubscribe meters 90\nsubscribe noise 10\nunsubscribe meters\n".utf8))
        XCTAssertTrue(client.waitForLine(containing: #""subscribed":false"#), client.text)
        XCTAssertTrue(client.waitForLine(containing: "usage: subscribe [FEED RATE]"), client.text)
        XCTAssertTrue(client.waitForLine(containing: "unknown feed 'noise'"), client.text)
        XCTAssertTrue(client.waitForLine(containing: "not subscribed to meters"), client.text)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }

    /// `subscribe loudness 10` and `subscribe spectrum out 30` while a −6 dBFS 1 kHz sine plays: the output reads
    /// −6.0 LUFS momentary and short-term (a stereo 1 kHz sine at L dBFS reads L LUFS by EBU R128) with a true peak
    /// near −6 dBTP, and the spectrum's loudest 1/6-octave band is the 1 kHz one; a node that is not there is refused.
    func testLoudnessAndSpectrumFeedsReadTheOutput() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("outputs/analysis-feeds.sock").path
        let run = try pw.graphhost(["run", try Self.sineGraph(), "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let client = try HeadlessPipeWire.SocketClient(socket: socket)
        client.send(
            Array(
                "subscribe loudness 10\nsubscribe spectrum out 30\nsubscribe spectrum nope 30\nsubscribe load 1\n".utf8)
        )
        XCTAssertTrue(client.waitForLine(containing: "no node 'nope'"), client.text)
        /// The latest loudness of `out` once its short-term window (3 s) is full of the sine.
        var loudness: [String: Any] = [:]
        XCTAssertTrue(
            client.waitFor(timeout: 60) { _ in
                guard let last = Self.updates(client, "loudness").last,
                    let out = (last["loudness"] as? [[String: Any]])?.first(where: { $0["node"] as? String == "out" }),
                    let shortTerm = out["shortTerm"] as? Double, abs(shortTerm + 6.0) < 0.1
                else { return false }
                loudness = out
                return true
            }, client.text.suffix(2000).description)
        XCTAssertEqual(try XCTUnwrap(loudness["momentary"] as? Double), -6.0, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(loudness["integrated"] as? Double), -6.0, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(loudness["truePeak"] as? Double), -6.0, accuracy: 0.3)

        let spectrum = try XCTUnwrap(Self.updates(client, "spectrum").last?["spectrum"] as? [String: Any])
        XCTAssertEqual(spectrum["node"] as? String, "out")
        let bands = try XCTUnwrap(spectrum["bands"] as? [[String: Any]])
        XCTAssertEqual(bands.count, 61)
        let loudest = try XCTUnwrap(bands.max { ($0["level"] as? Double ?? -999) < ($1["level"] as? Double ?? -999) })
        XCTAssertEqual(try XCTUnwrap(loudest["center"] as? Double), 1000, accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(loudest["level"] as? Double), -6.0, accuracy: 0.2)

        // The load feed: each second, the render call and every node, the stream's and the output's figures.
        XCTAssertTrue(
            client.waitFor { _ in
                ((Self.updates(client, "load").last?["load"] as? [String: Any])?["nodes"] as? [[String: Any]])?.count
                    == 2
            }, client.text.suffix(2000).description)
        let load = try XCTUnwrap(Self.updates(client, "load").last?["load"] as? [String: Any])
        XCTAssertEqual((load["nodes"] as? [[String: Any]])?.compactMap { $0["node"] as? String }, ["s", "out"])
        XCTAssertGreaterThan(try XCTUnwrap((load["callback"] as? [String: Any])?["averageMicros"] as? Double), 0)

        // While subscribed, `status` carries the loudness; unsubscribed (or gone), nothing is measured.
        XCTAssertEqual((try control.status()["loudness"] as? [[String: Any]])?.count, 1)
        client.send(Array("unsubscribe loudness\n".utf8))
        XCTAssertTrue(client.waitForLine(containing: #""feed":"loudness","ok":true,"subscribed":false"#), client.text)
        XCTAssertEqual((try control.status()["loudness"] as? [[String: Any]])?.count, 0)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }

    /// The console's status line shows the output's peak as a bar; `top` fills the screen with a row per node and the
    /// output's levels, redraws in place, and a key brings back the prompt.
    func testConsoleTopShowsTheNodesAndLevelsAndAKeyLeavesIt() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let folder = TestSupport.directory.appendingPathComponent("console-top")
        let socket = folder.appendingPathComponent("top.sock").path
        let environment = pw.environment.merging([
            "XDG_STATE_HOME": folder.appendingPathComponent("state").path, "LC_ALL": "C.UTF-8",
        ]) { $1 }
        let control = pw.control(socket)
        let terminal = try TmuxTerminal(
            [TestSupport.executable.path, "run", try Self.sineGraph(), "--socket", socket],
            environment: environment, width: 140, height: 30)
        defer { terminal.close() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(
            terminal.waitForScreen { $0.contains { $0.contains("| out ▕") && $0.contains("-6.0 dBFS") } },
            terminal.text())

        try terminal.type("top")
        try terminal.press("Enter")
        /// The `out` row's cells once `top` shows it.
        var row: [String] = []
        XCTAssertTrue(
            terminal.waitForScreen { screen in
                guard screen.first?.hasPrefix("graphhost top: playing") == true,
                    screen.contains(where: { $0.contains("NODE") && $0.contains("LEVEL") }),
                    let line = screen.first(where: { $0.hasPrefix("  out ") })
                else { return false }
                row = line.split(separator: " ").map(String.init)
                return row.count > 6 && row[6] == "-9.0" && row[2] != "-"
            }, terminal.text())
        XCTAssertEqual(Array(row.prefix(2)) + row[5...7], ["out", "output", "-6.0", "-9.0", "0"], "\(row)")
        XCTAssertNotNil(Double(row[2]), "the output's average µs a call: \(row)")
        XCTAssertTrue(row[4].hasSuffix("%"), "the output's share of the budget: \(row)")
        XCTAssertTrue(terminal.text().contains("  s "), terminal.text())
        // Redrawn in place: the position in the first line moves on while the screen stays one screen.
        let head = try terminal.screen().first ?? ""
        XCTAssertTrue(
            terminal.waitForScreen { ($0.first ?? "") != head && $0.first?.hasPrefix("graphhost top") == true })

        try terminal.press("q")
        XCTAssertTrue(
            terminal.waitForScreen { screen in
                !screen.contains { $0.hasPrefix("graphhost top") } && screen.contains { $0.contains("| out ▕") }
            }, terminal.text())
        try terminal.type("status")
        try terminal.press("Enter")
        XCTAssertTrue(terminal.waitForScreen { $0.contains { $0.contains("meters (dBFS):") } }, terminal.text())
        try terminal.press("C-c")
        XCTAssertTrue(TestSupport.waitUntil { terminal.exitStatus() != nil }, terminal.text())
        XCTAssertEqual(terminal.exitStatus(), 0, terminal.text())
    }
}
