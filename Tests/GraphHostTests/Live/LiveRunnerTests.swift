import Foundation
import Logging
import XCTest

@testable import GraphHost

/// `run`'s live loop without a daemon: a stand-in stream and a clock the test advances, with the real session,
/// control socket and graph files.
final class LiveRunnerTests: XCTestCase {
    /// A stream that plays `framesPerTick` frames each time the clock moves, and goes away or comes back on cue.
    final class StandInPlayback: LivePlayback {
        let counters = PlaybackCounters.create()
        var streamError: String?
        var disconnected = false
        var noSink = false
        var streaming = false
        var connects = 0
        /// Clock readings at each `reconnect()`; it succeeds once `reconnectsFailing` is used up.
        var reconnectTimes: [Double] = []
        var reconnectsFailing = 0
        /// What `stopStream()` found: the socket file still there, the session still open.
        var atStop: (socketExists: Bool, sessionClosed: Bool)?
        var socketPath = ""
        /// Whether the runner's session is closed.
        var sessionClosed: () -> Bool = { true }
        var clock: StandInClock?

        func setRecordTap(_ tap: RecordTap?) {}
        /// Whether a connection plays at once (else the stream waits unanswered until `reconnect()`).
        var streamsOnConnect = true
        func connect() throws {
            connects += 1
            streaming = streamsOnConnect
        }
        func reconnect() -> Bool {
            reconnectTimes.append(clock?.elapsed ?? 0)
            guard reconnectsFailing == 0 else {
                reconnectsFailing -= 1
                return false
            }
            (disconnected, noSink, streaming) = (false, false, true)
            return true
        }
        func stopStream() {
            if atStop == nil { atStop = (FileManager.default.fileExists(atPath: socketPath), sessionClosed()) }
            streaming = false
        }
        deinit { counters.destroy() }
    }

    /// Time that passes only when the runner sleeps; `onTick` runs after each step with the seconds elapsed.
    final class StandInClock: LiveClock {
        let start = Date(timeIntervalSince1970: 1_000_000)
        var elapsed = 0.0
        var onTick: (Double) -> Void = { _ in }
        var now: Date { start.addingTimeInterval(elapsed) }
        func sleep(seconds: Double) {
            elapsed += seconds
            onTick(elapsed)
        }
    }

    /// A runner on a graph file with an EQ, a stand-in stream that plays while connected, and a stand-in clock.
    func makeRunner(graphPath: String? = nil, watch: Bool = false, durationSeconds: Double? = nil)
        throws -> (runner: LiveRunner, player: StandInPlayback, clock: StandInClock)
    {
        let path = try graphPath ?? TestSupport.graph(TestSupport.eqGraph(preset: "Rock"))
        let session = try TestSupport.session(path)
        let player = StandInPlayback()
        let clock = StandInClock()
        let socket = TestSupport.directory.appendingPathComponent("runner-\(UUID().uuidString.prefix(8)).sock").path
        player.socketPath = socket
        player.clock = clock
        let rate = session.format.sampleRate
        let runner = LiveRunner(
            session: session, player: player, socketPath: socket, recorder: nil,
            options: .init(
                graphPath: path, watch: watch, durationFrames: durationSeconds.map { Int($0 * Double(rate)) }),
            logger: Logger(label: "test"), clock: clock)
        player.sessionClosed = { [weak runner] in runner?.control.withSession { $0.closed } ?? true }
        // A playing stream advances by the time slept.
        var slept = 0.0
        clock.onTick = { elapsed in
            if player.streaming {
                player.counters.frames.wrappingIncrement(
                    by: Int(((elapsed - slept) * Double(rate)).rounded()), ordering: .relaxed)
            }
            slept = elapsed
        }
        return (runner, player, clock)
    }

    func testDurationEndsThePlayAfterThatMuchAudio() throws {
        let (runner, player, clock) = try makeRunner(durationSeconds: 1.5)
        defer { runner.close() }
        try runner.start()
        XCTAssertEqual(runner.play(), .durationReached)
        XCTAssertEqual(player.counters.frames.load(ordering: .relaxed), 72000)
        XCTAssertEqual(clock.elapsed, 1.5, accuracy: 1e-6)
    }

    /// The daemon goes away at 1 s and is back on the fourth attempt: attempts 0.1 s after the loss, then 0.2, 0.4
    /// and 0.8 s apart; play goes on and a `reconnected` event tells the gap.
    func testReconnectsWithBackoffAndReportsTheGap() throws {
        let (runner, player, clock) = try makeRunner(durationSeconds: 4)
        defer { runner.close() }
        try runner.start()
        let events = try HeadlessPipeWire.SocketClient.subscriber(runner.server.path)
        XCTAssertTrue(events.waitForLine(containing: "\"subscribed\""), events.text)
        var lostAt: Double?
        let playing = clock.onTick
        clock.onTick = { t in
            playing(t)
            if lostAt == nil && t >= 1 {
                lostAt = t
                (player.disconnected, player.streaming, player.reconnectsFailing) = (true, false, 3)
            }
        }
        XCTAssertEqual(runner.play(), .durationReached)
        let lost = try XCTUnwrap(lostAt)
        let attempts = player.reconnectTimes.map { $0 - lost }
        XCTAssertEqual(attempts.count, 4, "\(attempts)")
        for (attempt, expected) in zip(attempts, [0.1, 0.3, 0.7, 1.5]) {
            XCTAssertEqual(attempt, expected, accuracy: 0.015, "\(attempts)")
        }
        XCTAssertTrue(events.waitForLine(containing: "\"reconnected\""), events.text)
        XCTAssertTrue(events.text.contains("\"gapSeconds\":1.5"), events.text)
    }

    /// A stream the session manager neither links nor refuses is made again after `unansweredSeconds`, and plays
    /// once linked.
    func testAnUnansweredStreamIsMadeAgain() throws {
        let (runner, player, clock) = try makeRunner(durationSeconds: 1)
        defer { runner.close() }
        player.streamsOnConnect = false
        try runner.start()
        XCTAssertFalse(player.streaming)
        XCTAssertEqual(runner.play(), .durationReached)
        XCTAssertEqual(player.reconnectTimes.count, 1)
        XCTAssertEqual(player.reconnectTimes.first ?? 0, LiveRunner.unansweredSeconds, accuracy: 0.015)
        XCTAssertGreaterThan(clock.elapsed, LiveRunner.unansweredSeconds)
    }

    /// A daemon without a sink is asked again with backoff, and given up on after `Reconnection.noSinkLimit`.
    func testAMissingSinkIsWaitedForThenReported() throws {
        let (runner, player, clock) = try makeRunner()
        defer { runner.close() }
        try runner.start()
        (player.noSink, player.streaming, player.reconnectsFailing) = (true, false, .max)
        guard case .failed(let message) = runner.play() else { return XCTFail("the run did not fail") }
        XCTAssertTrue(message.contains("no sink appeared within 30 s"), message)
        XCTAssertEqual(clock.elapsed, Reconnection.noSinkLimit, accuracy: 0.05)
        XCTAssertGreaterThan(player.reconnectTimes.count, 10)
        XCTAssertEqual(
            zip(player.reconnectTimes, player.reconnectTimes.dropFirst()).map { $1 - $0 }.max() ?? 0, 2, accuracy: 0.015
        )
    }

    /// `--watch`: a saved edit is swapped in, a broken one is reported and the previous version keeps playing.
    func testWatchSwapsInEditsAndKeepsPlayingThroughABrokenOne() throws {
        let path = TestSupport.graph(try TestSupport.eqGraph(preset: "Rock"))
        let (runner, _, clock) = try makeRunner(graphPath: path, watch: true, durationSeconds: 3)
        defer { runner.close() }
        try runner.start()
        let events = try HeadlessPipeWire.SocketClient.subscriber(runner.server.path)
        XCTAssertTrue(events.waitForLine(containing: "\"subscribed\""), events.text)
        var presetAfterEdit: String?
        let jazz = try TestSupport.eqGraph(preset: "Jazz")
        let playing = clock.onTick
        clock.onTick = { t in
            playing(t)
            if abs(t - 1) < 0.005 { FileManager.default.createFile(atPath: path, contents: Data(jazz.utf8)) }
            if abs(t - 2) < 0.005 {
                // The reload runs on a thread of its own: its event says it is done.
                XCTAssertTrue(events.waitForLine(containing: "\"reload\""), events.text)
                presetAfterEdit = runner.control.withSession { Self.preset($0) }
                FileManager.default.createFile(atPath: path, contents: Data("{ \"nodes\": [ ".utf8))
            }
        }
        XCTAssertEqual(runner.control.withSession { Self.preset($0) }, "Rock")
        XCTAssertEqual(runner.play(), .durationReached)
        XCTAssertEqual(presetAfterEdit, "Jazz")
        XCTAssertEqual(runner.control.withSession { Self.preset($0) }, "Jazz")
        XCTAssertTrue(events.waitForLine(containing: "\"ok\":false"), events.text)
        XCTAssertEqual(events.text.components(separatedBy: "\"reload\"").count - 1, 2, events.text)
    }

    static func preset(_ session: GraphSession) -> String? {
        (session.graph.document.node("eq")?.definition as? IPodEQNode)?.preset.name
    }

    /// Stopping: the stream stops while the socket is up and the session's memory still there; then the socket goes,
    /// then the session is freed.
    func testShutdownStopsTheStreamFirstAndFreesTheSessionLast() throws {
        let (runner, player, clock) = try makeRunner()
        try runner.start()
        let playing = clock.onTick
        clock.onTick = { t in
            playing(t)
            if t >= 0.5 { runner.requestStop() }
        }
        XCTAssertEqual(runner.play(), .stopped)
        runner.close()
        let atStop = try XCTUnwrap(player.atStop)
        XCTAssertTrue(atStop.socketExists, "the socket was gone before the stream stopped")
        XCTAssertFalse(atStop.sessionClosed, "the session was freed before the stream stopped")
        XCTAssertFalse(FileManager.default.fileExists(atPath: runner.server.path))
        XCTAssertTrue(runner.control.withSession { $0.closed })
    }

    /// A socket another run holds: `start` fails naming it before any stream is connected; that run's socket stays.
    func testASocketInUseFailsBeforeTheStreamStarts() throws {
        let (first, _, _) = try makeRunner()
        defer { first.close() }
        try first.start()
        let path = first.server.path
        let session = try TestSupport.session(TestSupport.graph(try TestSupport.eqGraph(preset: "Pop")))
        let player = StandInPlayback()
        let second = LiveRunner(
            session: session, player: player, socketPath: path, recorder: nil,
            options: .init(graphPath: "unused.json"), logger: Logger(label: "test"), clock: StandInClock())
        XCTAssertThrowsError(try second.start()) { error in
            XCTAssertTrue("\(error)".contains(path), "\(error)")
        }
        second.close()
        XCTAssertEqual(player.connects, 0)
        XCTAssertTrue(second.control.withSession { $0.closed })
        XCTAssertEqual(
            try CommandServer.connectClient(path).nonNegative(), true, "the first run's socket no longer answers")
    }
}

extension Int32 {
    fileprivate func nonNegative() throws -> Bool {
        defer { if self >= 0 { close(self) } }
        return self >= 0
    }
}
