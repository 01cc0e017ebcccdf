import Foundation
import XCTest

@testable import GraphHost

/// Plugins are told the block graphhost runs (bufsz:nominalBlockLength): `render --block`, the PipeWire quantum live,
/// followed when it changes. The fixture (Tests/Fixtures/block-length.lv2, built here) plays the length it was told as
/// its output's level, frames / 8192: `block-length` takes a new one through the options interface,
/// `block-length-fixed` has none and is made afresh, `block-length-refusing` has one whose set() refuses the option.
final class LV2BlockLengthTests: XCTestCase {
    static let bundle = TestPlugins.fixtures + "/block-length.lv2"
    static let plugins = ["urn:graphhost:test:block-length", "urn:graphhost:test:block-length-fixed"]

    override class func setUp() {
        super.setUp()
        try? TestPlugins.compile(bundle + "/block_length.so", bundle + "/block_length.c")
        LV2World.shared.loadBundle(bundle)
    }

    /// Ten seconds of stereo silence: the plugins' input, which passes while one is paused.
    static func silence() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("silence-10.wav").path
        if !FileManager.default.fileExists(atPath: path) {
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "48000", "-c", "2", "-e", "floating-point", "-b", "32", path, "trim", "0",
                "10",
            ])
        }
        return path
    }

    /// Silence into `plugin`.
    static func graph(_ plugin: String) throws -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "quiet", "type": "stream", "url": "\(try silence())" }, \
            { "id": "probe", "type": "lv2", "uri": "\(plugin)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "quiet", "to": "probe" }, { "from": "probe", "to": "out" } ] }
            """)
    }

    /// Silence into both plugins, mixed: the level is the sum of what each was told.
    static func bothGraph() throws -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "quiet", "type": "stream", "url": "\(try silence())" },
                         { "id": "a", "type": "lv2", "uri": "\(plugins[0])" }, \
            { "id": "b", "type": "lv2", "uri": "\(plugins[1])" },
                         { "id": "mix", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "quiet", "to": "a" }, { "from": "quiet", "to": "b" }, { "from": "a", "to": "mix:0" },
                         { "from": "b", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
            """)
    }

    var binary: URL { TestSupport.executable }

    /// `graphhost render --block N` tells both plugins N (at most maxFrames, 4096, which it runs without --block).
    func testRenderTellsPluginsItsBlock() throws {
        let environment = ProcessInfo.processInfo.environment.merging(TestPlugins.lv2Path) { $1 }
        for plugin in Self.plugins {
            let path = try Self.graph(plugin)
            for (block, told) in [(1024, 1024), (512, 512), (nil, 4096), (8192, 4096)] as [(Int?, Int)] {
                let wav = TestSupport.directory.appendingPathComponent("block-\(block ?? 0).wav").path
                let cli = try TestSupport.execute(
                    binary,
                    ["render", path, "-o", wav, "--duration", "0.5"] + (block.map { ["--block", "\($0)"] } ?? []),
                    environment: environment)
                XCTAssertEqual(cli.status, 0, String(decoding: cli.err, as: UTF8.self))
                let samples = try SoundFile(path: wav).samples
                XCTAssertEqual(samples.count, 48000)
                XCTAssertTrue(
                    samples.allSatisfy { $0 == Float(told) / 8192 },
                    "\(plugin), --block \(block.map(String.init) ?? "none"): told "
                        + "\(Set(samples).map { $0 * 8192 }.sorted()), not \(told)"
                )
            }
        }
    }

    /// A plugin renewed for a new block length is built from the graph as heard, and what changes while it is being
    /// built (its controls, other nodes' settings) carries over: following the quantum changes nothing that is heard.
    func testChangesMadeWhileAPluginIsRenewedCarryOver() throws {
        let path = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "tone", "type": "stream", "url": "\(try TestSupport.sine(seconds: 2))" },
                         { "id": "amp", "type": "lv2", "uri": "\(TestPlugins.amp)", "controls": { "gain": 0 } },
                         { "id": "mix", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "tone", "to": "amp" }, { "from": "amp", "to": "mix" }, \
            { "from": "mix", "to": "out" } ] }
            """)
        let session = try TestSupport.session(path, nominalFrames: 1024)
        defer { session.close() }
        session.graph.start()
        try session.apply(Command.parse("set amp gain -3"))
        let pending = try XCTUnwrap(try session.followBlockLength(256))
        XCTAssertEqual(pending.renewing, ["amp"])
        try pending.build()
        try session.apply(Command.parse("set amp gain -6"))
        try session.apply(Command.parse("set mix volume 0.5"))
        try session.commit(pending)
        XCTAssertEqual(session.pluginBlockLengths, ["amp": 256])
        let saved = session.graph.document.savedJSON(folder: URL(fileURLWithPath: path).deletingLastPathComponent())
            .text()
        XCTAssertTrue(saved.contains("\"gain\": -6") && saved.contains("\"volume\": 0.5"), saved)
        var samples: [Float] = []
        _ = try OfflineRenderer(session: session).render(durationFrames: 48000) {
            samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: 2 * $1))
        }
        let expected =
            0.5 * Float(pow(10, -6.0 / 20))
            * TestSupport.peak(try TestSupport.renderStream(try TestSupport.sine(seconds: 2)))
        XCTAssertEqual(
            TestSupport.peak(Array(samples.suffix(24000))), expected, accuracy: expected * 0.01,
            "the changes made during the swap are heard")
    }

    /// A session told a new block length: the plugin with the options interface takes it in place, the other is made
    /// afresh by a swap; renders then play the new length, and swaps build their plugins with it.
    func testANewBlockLengthReachesEveryPlugin() throws {
        let session = try TestSupport.session(try Self.bothGraph(), nominalFrames: 1024)
        defer { session.close() }
        XCTAssertEqual(session.pluginBlockLengths, ["a": 1024, "b": 1024])
        session.graph.start()
        let kept = session.graph.instances["a"]
        let pending = try XCTUnwrap(try session.followBlockLength(256))
        XCTAssertEqual(session.pluginBlockLengths, ["a": 256, "b": 1024])
        try pending.build()
        try session.commit(pending)
        XCTAssertTrue(session.graph.instances["a"] === kept, "the plugin with the options interface was made afresh")
        XCTAssertEqual(session.pluginBlockLengths, ["a": 256, "b": 256])
        XCTAssertNil(try session.followBlockLength(256))
        var samples: [Float] = []
        _ = try OfflineRenderer(session: session).render(durationFrames: 48000) {
            samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: 2 * $1))
        }
        XCTAssertEqual(Set(samples.suffix(48000)), [2 * 256 / 8192], "once the swap's crossfade is over")
        try session.apply(Command.parse("load \(try Self.graph(Self.plugins[1]))"))
        XCTAssertEqual(session.pluginBlockLengths, ["probe": 256])
    }

    /// A plugin whose options interface refuses the new length keeps the old one and is made afresh with the new one,
    /// as one without the interface is; it is never reported as told what it refused.
    func testAPluginThatRefusesTheLengthIsMadeAfresh() throws {
        let session = try TestSupport.session(
            try Self.graph("urn:graphhost:test:block-length-refusing"), nominalFrames: 1024)
        defer { session.close() }
        session.graph.start()
        let old = session.graph.instances["probe"]
        let pending = try XCTUnwrap(try session.followBlockLength(256), "a refusing plugin is renewed")
        XCTAssertEqual(session.pluginBlockLengths, ["probe": 1024], "the refused length is not reported as told")
        try pending.build()
        try session.commit(pending)
        XCTAssertFalse(session.graph.instances["probe"] === old, "the refusing plugin was kept")
        XCTAssertEqual(session.pluginBlockLengths, ["probe": 256])
        var samples: [Float] = []
        _ = try OfflineRenderer(session: session).render(durationFrames: 48000) {
            samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: 2 * $1))
        }
        XCTAssertEqual(Set(samples.suffix(48000)), [256 / 8192], "once the swap's crossfade is over")
    }

    /// Live under a private PipeWire daemon: plugins are told the quantum (256), and the new one when it changes
    /// (1024); the recording plays each in turn and nothing else.
    func testRunFollowsTheQuantum() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("quantum/quantum.sock").path
        let record = TestSupport.directory.appendingPathComponent("quantum.wav").path
        let run = try pw.graphhost(
            ["run", try Self.bothGraph(), "--socket", socket, "--record", record], extraEnvironment: TestPlugins.lv2Path
        )
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket(), run.errorText)
        func told() -> [String: Int] { ((try? control.status())?["pluginBlockLengths"] as? [String: Int]) ?? [:] }
        XCTAssertTrue(TestSupport.waitUntil { told() == ["a": 256, "b": 256] }, "\(told())")
        XCTAssertTrue(try control.waitForPosition(try control.position() + 1))
        _ = try pw.script(["quantum", pw.directory, "1024"])
        XCTAssertTrue(
            TestSupport.waitUntil {
                ((try? control.status())?["quantum"] as? Int) == 1024 && told() == ["a": 1024, "b": 1024]
            }, "\(told())")
        XCTAssertTrue(try control.waitForPosition(try control.position() + 1))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        XCTAssertTrue(
            recorded.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= 2 * 1024 / 8192 + 1e-6 },
            "a burst or a negative sample")
        // The longest stretches at each level: a second at least of each quantum.
        func longest(_ level: Float) -> Int {
            var best = 0
            var run = 0
            for x in recorded {
                run = abs(x - level) < 1e-6 ? run + 1 : 0
                best = max(best, run)
            }
            return best / 2
        }
        XCTAssertGreaterThan(longest(2 * 256 / 8192), 48000, "no second at quantum 256")
        XCTAssertGreaterThan(longest(2 * 1024 / 8192), 48000, "no second at quantum 1024")
    }
}
