import Foundation
import Logging
import XCTest

@testable import GraphHost

/// Loudness watched while a graph plays into a private PipeWire daemon in this process: the analysis taps, the drain
/// thread, the watch counts, `status`, and a swap the watches survive.
final class LiveLoudnessTests: XCTestCase {
    /// A stream of a stereo 1 kHz sine at `dBFS` straight to the output.
    func sineGraph(dBFS: Double) throws -> String {
        let sine = try TestSupport.floatSine(amplitude: pow(10, dBFS / 20), seconds: 60)
        return TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(sine)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
    }

    func testWatchedLoudnessReadsTheStreamLiveAndFollowsASwap() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        setenv("PIPEWIRE_REMOTE", pw.environment["PIPEWIRE_REMOTE"]!, 1)
        defer { unsetenv("PIPEWIRE_REMOTE") }
        let session = try TestSupport.session(try sineGraph(dBFS: -23))
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        session.rendersConcurrently = true
        let player = try PipeWirePlayer(
            engine: session.engine, format: session.format,
            options: PlaybackOptions(name: "graphhost_loudness", latencyFrames: 256), logger: logger)
        let status = PlaybackStatus(counters: player.counters, recorder: nil, sampleRate: 48000)
        session.graph.start()
        try player.connect()
        func loudness(_ node: String) -> RunStatus.Loudness? { session.analysis.loudness.first { $0.node == node } }
        /// Waits until `node`'s momentary loudness reads `lufs` (a sine's steady state).
        func reads(_ node: String, _ lufs: Double) -> Bool {
            TestSupport.waitUntil { loudness(node).map { abs($0.momentary - lufs) <= 0.1 } ?? false }
        }

        XCTAssertEqual(status.snapshot(session).loudness, [], "nothing is measured until watched")
        try session.watch(.loudness, node: nil, on: true)
        XCTAssertTrue(reads("out", -23), "out: \(String(describing: loudness("out")))")
        try session.watch(.loudness, node: "s", on: true)
        try session.watch(.loudness, node: "s", on: true)
        XCTAssertTrue(reads("s", -23), "s: \(String(describing: loudness("s")))")
        // Watched afresh once the sine plays, the integrated loudness starts over and leaves out the start.
        try session.watch(.loudness, node: nil, on: false)
        XCTAssertNil(loudness("out"))
        try session.watch(.loudness, node: nil, on: true)
        XCTAssertTrue(
            TestSupport.waitUntil { loudness("out").map { abs($0.integrated + 23) <= 0.1 } ?? false },
            "out: \(String(describing: loudness("out")))")
        let reading = try XCTUnwrap(status.snapshot(session).loudness.first { $0.node == "out" })
        XCTAssertEqual(reading.truePeak, -23, accuracy: 0.2)
        XCTAssertEqual(status.snapshot(session).loudness.map(\.node), ["s", "out"])
        let json = status.snapshot(session).json.compact
        XCTAssertNotNil(
            json.range(
                of: #""loudness":\[\{"integrated":-2[23]\.[0-9]+,"momentary":-2[23]\.[0-9]+,"node":"s""#,
                options: .regularExpression), json)

        // Two watchers of s: the first to go leaves it measured, the second turns its tap off.
        try session.watch(.loudness, node: "s", on: false)
        XCTAssertNotNil(loudness("s"))
        try session.watch(.loudness, node: "s", on: false)
        XCTAssertNil(loudness("s"))
        XCTAssertFalse(session.graph.meters.taps["s"]!.pointee.isOn.load(ordering: .relaxed))
        XCTAssertThrowsError(try session.watch(.loudness, node: "s", on: false))
        XCTAssertThrowsError(try session.watch(.loudness, node: "nope", on: true))

        // A swap to the same stream 10 dB quieter: the watch moves to the new graph's output.
        let old = session.graph
        try session.apply(.load(path: try sineGraph(dBFS: -33), swap: nil))
        XCTAssertFalse(old === session.graph)
        XCTAssertTrue(reads("out", -33), "out after the swap: \(String(describing: loudness("out")))")
        XCTAssertTrue(session.graph.meters.taps["out"]!.pointee.isOn.load(ordering: .relaxed))
        XCTAssertFalse(old.meters.taps["out"]!.pointee.isOn.load(ordering: .relaxed))
        XCTAssertNil(session.graph.meters.taps["s"]!.pointee.ring, "a tap never watched holds no ring")
        XCTAssertEqual(session.analysis.droppedFrames["out"], 0)

        try session.watch(.loudness, node: nil, on: false)
        XCTAssertEqual(status.snapshot(session).loudness, [])
        XCTAssertFalse(session.graph.meters.taps["out"]!.pointee.isOn.load(ordering: .relaxed))
        player.stop()
        session.close()
    }
}
