import Foundation
import XCTest

@testable import GraphHost

/// Plugins that misbehave (Tests/Fixtures/faults.lv2, built here): NaN/Inf output is silenced and reported,
/// denormals are flushed, a failed instantiation refuses the graph or the swap, a slow run is an xrun with a name.
final class PluginFaultTests: XCTestCase {
    static let bundle = TestPlugins.fixtures + "/faults.lv2"

    override class func setUp() {
        super.setUp()
        try? TestPlugins.compile(bundle + "/faults.so", bundle + "/faults.c", libraries: ["-lm"])
        LV2World.shared.loadBundle(bundle)
    }

    func graph(_ mp3: String, plugin: String) -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \
            { "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:\(plugin)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
    }

    var binary: URL { TestSupport.executable }

    func testNaNAndInfAreSilencedAndReported() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(mp3, plugin: "nan")
        let dry = try TestSupport.renderStream(mp3)
        let out = try TestSupport.render(
            path, events: [TimedCommand(frame: 24000, command: try NodeRequest.parse("set fx poison 1"))]
        ).samples
        XCTAssertEqual(Array(out[0..<48000]), Array(dry[0..<48000]))
        XCTAssertTrue(out.allSatisfy { $0.isFinite })
        XCTAssertEqual(out[48000...].max(), 0)
        let wav = TestSupport.directory.appendingPathComponent("nan.wav").path
        let cli = try TestSupport.execute(
            binary, ["render", path, "-o", wav, "--at", "0.5", "set fx poison 1"],
            environment: ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 })
        XCTAssertEqual(cli.status, 0)
        XCTAssertTrue(
            String(decoding: cli.err, as: UTF8.self).contains(
                "node 'fx' (urn:graphhost:test:nan) produced NaN, Inf or a burst above +24 dBFS: silenced"),
            String(decoding: cli.err, as: UTF8.self))
    }

    /// A plugin whose output jumps to +120 dB for a quarter second (finite, so no NaN check would see it): nothing
    /// above +24 dBFS leaves the graph, the node is silenced and named, and it fades back in once its output is sane.
    func testABurstIsSilencedNamedAndFadedBackIn() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(mp3, plugin: "burst")
        let dry = try TestSupport.renderStream(mp3)
        let events = [
            TimedCommand(frame: 24000, command: try NodeRequest.parse("set fx burst 1")),
            TimedCommand(frame: 36000, command: try NodeRequest.parse("set fx burst 0")),
        ]
        let out = try TestSupport.render(path, events: events).samples
        XCTAssertLessThanOrEqual(TestSupport.peak(out), Bus.safePeak)
        XCTAssertEqual(Array(out[0..<48000]), Array(dry[0..<48000]), "before the burst the plugin passes its input")
        XCTAssertEqual(out[48000..<72000].max(), 0, "the burst is silenced")
        // After the burst the node fades back in (20 ms, 960 frames) and then passes its input again.
        let back = 2 * (36000 + 4096)
        XCTAssertEqual(Array(out[back...]), Array(dry[back...]))
        let fadeIn = (72000..<back).filter { abs(out[$0]) > abs(dry[$0]) + 1e-6 }
        XCTAssertTrue(fadeIn.isEmpty, "louder than the input while fading in at \(fadeIn.prefix(3))")
        let wav = TestSupport.directory.appendingPathComponent("burst.wav").path
        let cli = try TestSupport.execute(
            binary, ["render", path, "-o", wav, "--at", "0.5", "set fx burst 1", "--at", "0.75", "set fx burst 0"],
            environment: ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 })
        let err = String(decoding: cli.err, as: UTF8.self)
        XCTAssertEqual(cli.status, 0, err)
        XCTAssertTrue(
            err.contains("node 'fx' (urn:graphhost:test:burst) produced NaN, Inf or a burst above +24 dBFS: silenced"),
            err)
    }

    /// Live, the same burst: what `run --record` captured never exceeds +24 dBFS, and subscribers get a `silenced`
    /// event naming the node, which `status` counts.
    func testABurstWhilePlayingIsSilencedAndNamedInEventsAndStatus() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let socket = TestSupport.directory.appendingPathComponent("burst-\(getpid()).sock").path
        let record = TestSupport.directory.appendingPathComponent("burst-\(getpid()).wav").path
        let run = try pw.graphhost(
            ["run", graph(mp3, plugin: "burst"), "--socket", socket, "--record", record],
            extraEnvironment: TestPlugins.lv2Path)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let events = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(events.waitForLine(containing: "\"subscribed\":true"), events.text)
        XCTAssertEqual(try control.ctl(["set", "fx", "burst", "1"]).status, 0)
        XCTAssertTrue(events.waitForLine(containing: "\"event\":\"silenced\""), events.text)
        XCTAssertTrue(events.text.contains("\"node\":\"fx\""), events.text)
        XCTAssertTrue(try control.ctl(["status"]).out.contains("\"silencedSlices\":{\"fx\":"))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        XCTAssertGreaterThan(recorded.count, 0)
        XCTAssertLessThanOrEqual(TestSupport.peak(recorded), Bus.safePeak)
    }

    /// lv2:freeWheeling: `render` tells plugins they run offline (the fixture then passes its input), a live session
    /// that they do not (it then outputs silence); users do not see the port as a control.
    func testFreeWheelingPortsSayWhetherTheRenderIsOffline() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(mp3, plugin: "freewheel")
        XCTAssertEqual(try TestSupport.render(path).samples, try TestSupport.renderStream(mp3))
        let session = try TestSupport.session(path)
        defer { session.close() }
        XCTAssertTrue(session.graph.instances["fx"]!.parameters.isEmpty)
        session.rendersConcurrently = true
        let stream = session.graph.streams[0]
        session.graph.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
        defer { buffer.deallocate() }
        while !stream.canRender(frames: 4096) { stream.wakeup.waitForData() }
        session.render(frames: 4096, interleaved: buffer)
        XCTAssertTrue(UnsafeBufferPointer(start: buffer, count: 2 * 4096).allSatisfy { $0 == 0 })
    }

    /// The plugin multiplies by 1e-60 (two steps of 1e-30): without flush-to-zero/denormals-are-zero its output
    /// would be denormal numbers, here it is exactly zero.
    func testDenormalsAreFlushedOnTheRenderThread() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let out = try TestSupport.render(graph(mp3, plugin: "denormal")).samples
        XCTAssertGreaterThan(TestSupport.peak(try TestSupport.renderStream(mp3)), 0.1)
        XCTAssertTrue(out.allSatisfy { $0 == 0 }, "denormals passed: \(out.first { $0 != 0 } ?? 0)")
    }

    func testAPluginThatFailsToInstantiateRefusesTheGraphAndTheSwap() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let failing = graph(mp3, plugin: "fail")
        XCTAssertThrowsError(try CompiledGraph(try GraphDocument.load(path: failing))) {
            XCTAssertTrue("\($0)".contains("urn:graphhost:test:fail failed to instantiate"), "\($0)")
        }
        let session = try TestSupport.session(TestSupport.streamGraph(mp3))
        defer { session.close() }
        let running = session.graph
        XCTAssertThrowsError(try session.apply(Command.parse("load \(failing)")))
        XCTAssertTrue(session.graph === running)
        XCTAssertNil(session.engine.pointee.messages.peek())
    }

    /// A plugin whose run takes 20 ms at quantum 256 (5.3 ms): each such callback is an xrun, reported with the
    /// node's name and time; playback goes on.
    func testASlowPluginIsAnXrunNamingTheNode() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 4)
        let socket = TestSupport.directory.appendingPathComponent("slow/slow.sock").path
        let run = try pw.graphhost(
            ["run", graph(mp3, plugin: "slow"), "--socket", socket], extraEnvironment: TestPlugins.lv2Path)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(0.5))
        XCTAssertEqual(try control.ctl(["set", "fx", "delay", "20"]).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil { (try control.status()["overruns"] as? Int ?? 0) > 0 }, "no overrun counted")
        XCTAssertEqual(try control.ctl(["set", "fx", "delay", "0"]).status, 0)
        // The overrun is logged by the run loop's next status pass; playback goes on.
        XCTAssertTrue(run.waitForError(containing: "node 'fx' took"), run.errorText)
        let resumed = try control.position()
        XCTAssertTrue(try control.waitForPosition(resumed + 0.5))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("overran its quantum") && result.err.contains("node 'fx' took"), result.err)
        let xruns = result.out.components(separatedBy: "xruns ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        XCTAssertGreaterThan(xruns, 0, result.out)
    }
}
