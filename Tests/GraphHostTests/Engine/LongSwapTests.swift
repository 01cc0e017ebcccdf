import Foundation
import XCTest

@testable import GraphHost

/// A swap whose new stream takes long to buffer is built without holding the session: while it warms up, other
/// clients get `status` (which names the graph being built), their commands apply, events flow and a second swap is
/// refused with the reason; `quit` ends the run at once.
final class LongSwapTests: XCTestCase {
    /// A 1 kHz sine into a mixer; the graph to swap to plays `url` instead.
    func graph(_ url: String) -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(url)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """)
    }

    func testTheSocketAnswersWhileASwapWarmsUp() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let server = try HTTPTestServer()
        defer { server.stop() }
        let first = graph(try TestSupport.sine(seconds: 40))
        let held = graph(
            try server.serve(try TestSupport.tones([300], seconds: 20), as: "held.mp3", query: "hold=gate"))
        let socket = TestSupport.directory.appendingPathComponent("live/long-swap.sock").path
        let recording = TestSupport.directory.appendingPathComponent("long-swap.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", first, "--socket", socket, "--latency", "256", "--record", recording])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.5))
        let events = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(events.waitForLine(containing: "\"subscribed\":true"))

        let loader = try HeadlessPipeWire.SocketClient(socket: socket)
        loader.send(Array("load \(held)\n".utf8))
        // The server holds the new stream's first byte until the gate exists: the swap is warming up.
        XCTAssertTrue(TestSupport.waitUntil { FileManager.default.fileExists(atPath: server.root + "/gate.waiting") })
        XCTAssertTrue(
            try TestSupport.waitUntil { try control.status()["building"] as? String == held },
            "status does not name the swap being built")

        let other = try HeadlessPipeWire.SocketClient(socket: socket)
        other.send(Array("set mix volume 0.5\n".utf8))
        XCTAssertTrue(other.waitForLine(containing: "\"ok\":true"), other.text)
        XCTAssertTrue(events.waitForLine(containing: "set mix volume 0.5"), events.text)
        other.send(Array("load \(first)\n".utf8))
        XCTAssertTrue(other.waitForLine(containing: "another swap is being built"), other.text)
        XCTAssertEqual(loader.text, "", "the load answered before its stream could buffer")

        FileManager.default.createFile(atPath: server.root + "/gate", contents: Data())
        XCTAssertTrue(loader.waitForLine(containing: "\"ok\":true"), loader.text)
        XCTAssertNil(try control.status()["building"])
        let swappedAt = try control.position()
        XCTAssertTrue(try control.waitForPosition(swappedAt + 1))

        // A second slow swap, then quit: the run ends without waiting for it, and the swap is refused.
        let again = graph(
            try server.serve(try TestSupport.tones([300], seconds: 20), as: "held2.mp3", query: "hold=gate2"))
        loader.send(Array("load \(again)\n".utf8))
        XCTAssertTrue(TestSupport.waitUntil { FileManager.default.fileExists(atPath: server.root + "/gate2.waiting") })
        XCTAssertTrue(try TestSupport.waitUntil { try control.status()["building"] as? String == again })
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(loader.waitForLine(containing: "was cancelled"), loader.text)
        FileManager.default.createFile(atPath: server.root + "/gate2", contents: Data())

        // Heard: the sine at half volume while the swap was built, then the new stream's 300 Hz.
        let samples = try SoundFile(path: recording).samples
        let seconds = Double(samples.count / 2) / 48000
        XCTAssertGreaterThan(
            ToneMeasure.amplitude(samples, 300, start: seconds - 0.8, seconds: 0.5),
            10 * ToneMeasure.amplitude(samples, 1000, start: seconds - 0.8, seconds: 0.5),
            "the new stream is not heard at the end")
    }
}
