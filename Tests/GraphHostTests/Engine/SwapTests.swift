import Foundation
import XCTest

@testable import GraphHost

/// Chains and whole-graph swaps: what is kept, what is faded, what is refused, and that nothing clicks.
final class SwapTests: XCTestCase {
    func graph(_ mp3: String, chains: String = "", nodes: String, links: String, crossfade: Double = 0.03) -> String {
        TestSupport.graph(
            """
            { "crossfadeSeconds": \(crossfade), \(chains.isEmpty ? "" : "\"chains\": { \(chains) },")
              "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \
            \(nodes), { "id": "out", "type": "output" } ],
              "links": [ \(links) ] }
            """)
    }

    func at(_ seconds: Double, _ line: String) throws -> TimedCommand {
        TimedCommand(frame: Int(seconds * 48000), request: try Command.parse(line))
    }

    /// Loading the running graph again keeps every node: the output is bit-identical to no swap at all.
    func testLoadingTheSameGraphKeepsEverything() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let path = graph(
            mp3,
            nodes:
                #"{ "id": "mix", "type": "mixer", "inputs": 1 }, { "id": "eq", "type": "ipod-eq", "preset": "Rock" }"#,
            links: #"{ "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "out" }"#)
        let plain = try TestSupport.render(path).samples
        let swapped = try TestSupport.render(path, events: [try at(0.5, "load \(path)"), try at(1.2, "load \(path)")])
            .samples
        XCTAssertEqual(plain.count, swapped.count)
        XCTAssertEqual(plain, swapped)
    }

    /// Swapping between two pass-through chains crossfades identical signals: the kept stream plays on with no gap
    /// and no repeat, so the output equals the plain decode.
    func testChainSwapKeepsTheStreamPlaying() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let path = graph(
            mp3, chains: #""a": [], "b": [ { "id": "m", "type": "mixer", "inputs": 1 } ]"#,
            nodes: #"{ "id": "fx", "type": "chain", "chain": "a" }"#,
            links: #"{ "from": "song", "to": "fx" }, { "from": "fx", "to": "out" }"#)
        let dry = try TestSupport.renderStream(mp3)
        let out = try TestSupport.render(
            path, events: [try at(0.3, "chain fx b"), try at(0.9, "chain fx a"), try at(1.5, "chain fx b")]
        ).samples
        XCTAssertEqual(out.count, dry.count)
        XCTAssertEqual(out, dry)
    }

    /// A kept effect whose input changes hears its input cross over (its state goes on): after the fade the output
    /// is the new input through the same, continuing EQ.
    func testKeptEffectHearsItsInputCrossfade() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let before = graph(
            mp3, nodes: #"{ "id": "eq", "type": "ipod-eq", "preset": "Rock" }"#,
            links: #"{ "from": "song", "to": "eq" }, { "from": "eq", "to": "out" }"#)
        let after = graph(
            mp3,
            nodes:
                #"{ "id": "half", "type": "mixer", "inputs": 1, "volume": 0.5 }, "#
                + #"{ "id": "eq", "type": "ipod-eq", "preset": "Rock" }"#,
            links: #"{ "from": "song", "to": "half" }, { "from": "half", "to": "eq" }, { "from": "eq", "to": "out" }"#)
        let plain = try TestSupport.render(before).samples
        let out = try TestSupport.render(before, events: [try at(1, "load \(after)")]).samples
        let swap = 48000 * 2
        let settled = swap + 48000 * 2 * 6 / 10
        XCTAssertEqual(Array(out[0..<swap]), Array(plain[0..<swap]))
        // The EQ goes on from its state: the fade's first frames continue the unswapped output (a fresh EQ would not).
        for i in swap..<(swap + 32) { XCTAssertEqual(out[i], plain[i], accuracy: 1e-4) }
        // Once the EQ's tail of the fade has died away: the same EQ on half the input.
        var worst: Float = 0
        for i in settled..<out.count { worst = max(worst, abs(out[i] - 0.5 * plain[i])) }
        XCTAssertLessThan(worst, 1e-4)
    }

    /// A swap that cannot be built (missing file, broken JSON, other format) is refused with the reason; the
    /// running graph plays on untouched.
    func testAFailedSwapChangesNothing() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let path = graph(
            mp3, nodes: #"{ "id": "eq", "type": "ipod-eq", "preset": "Rock" }"#,
            links: #"{ "from": "song", "to": "eq" }, { "from": "eq", "to": "out" }"#)
        let broken = TestSupport.graph(#"{ "nodes": [ { "id": "x" "#)
        let mono = TestSupport.graph(
            """
            { "format": { "channels": 1 }, "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "out" } ] }
            """)
        let session = try TestSupport.session(path)
        defer { session.close() }
        let running = session.graph
        for (line, reason) in [
            ("load /nonexistent/graph.json", "no such file"), ("load \(broken)", "malformed JSON"),
            ("load \(mono)", "differs from the running graph's"), ("chain eq warm", "'eq' is not a chain node"),
        ] {
            XCTAssertThrowsError(try session.apply(Command.parse(line)), line) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(line): \(error)")
            }
            XCTAssertTrue(session.graph === running)
            XCTAssertNil(session.engine.pointee.messages.peek(), "nothing was sent to the render world")
        }
    }

    /// An LV2 node with the same id and plugin keeps its instance across a load; its new preset applies live.
    /// A plugin whose library fails to load refuses the swap, and the running graph plays on.
    func testLV2InstancesAreKeptAndAFailingPluginRefusesTheSwap() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        func lv2Graph(_ preset: String?, uri: String = "urn:graphhost:ipod-eq") -> String {
            let presetSetting = preset.map { #", "preset": "\#($0)""# } ?? ""
            return graph(
                mp3,
                nodes: #"{ "id": "lv", "type": "lv2", "uri": "\#(uri)" \#(presetSetting) }"#,
                links: #"{ "from": "song", "to": "lv" }, { "from": "lv", "to": "out" }"#)
        }
        let session = try TestSupport.session(lv2Graph("Rock"))
        defer { session.close() }
        let plugin = session.graph.instances["lv"]
        try session.apply(Command.parse("load \(lv2Graph("Pop"))"))
        XCTAssertTrue(session.graph.instances["lv"] === plugin)
        XCTAssertEqual(session.graph.keptIDs, ["song", "lv", "out"])

        let dir = TestPlugins.fixtures + "/bad-binary.lv2"
        try TestPlugins.compile(
            dir + "/bad_binary.so", dir + "/bad_binary.c", flags: ["-Wl,--allow-shlib-undefined"])
        LV2World.shared.loadBundle(dir)
        let running = session.graph
        XCTAssertThrowsError(
            try session.apply(Command.parse("load \(lv2Graph(nil, uri: "urn:graphhost:test:bad-binary"))"))
        ) { error in
            XCTAssertTrue("\(error)".contains("failed to instantiate"), "\(error)")
        }
        XCTAssertTrue(session.graph === running)
        XCTAssertFalse(running.isClosed)
    }

    /// The replaced graph is freed on the control side once the render world has finished its fade.
    func testTheOldGraphIsFreedAfterTheFade() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let path = graph(
            mp3,
            chains:
                #""a": [ { "id": "eq", "type": "ipod-eq" } ], "#
                + #""b": [ { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq" } ]"#,
            nodes: #"{ "id": "fx", "type": "chain", "chain": "a" }"#,
            links: #"{ "from": "song", "to": "fx" }, { "from": "fx", "to": "out" }"#)
        let session = try TestSupport.session(path)
        defer { session.close() }
        let first = session.graph
        first.start()
        try session.apply(Command.parse("chain fx b"))
        XCTAssertFalse(first.isClosed)
        XCTAssertEqual(session.collectRetired(), 1, "still fading: nothing rendered yet")
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
        defer { buffer.deallocate() }
        while !session.graph.streams[0].canRender(frames: 4096) { session.graph.streams[0].wakeup.waitForData() }
        session.render(frames: 4096, interleaved: buffer)
        XCTAssertEqual(session.collectRetired(), 0)
        XCTAssertTrue(first.isClosed)
        XCTAssertFalse(session.graph.isClosed)
        XCTAssertTrue(session.graph.instances["song"] === first.instances["song"], "the stream was kept")
        XCTAssertEqual(session.graph.keptIDs, ["song", "out"])
    }

    /// Preset changes, parameter jumps, chain swaps and whole-graph loads on a 1 kHz sine at -6 dBFS: inside each
    /// transition the second difference stays within 1.5x steady state and no peak exceeds the louder steady level.
    func testTransitionsAreClickFree() throws {
        let sine = try TestSupport.sine(seconds: 12)
        let path = graph(
            sine,
            chains: """
                "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" }, \
                { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq", "preset": "Vocal Booster" } ],
                "dry": []
                """,
            nodes: #"{ "id": "mix", "type": "mixer", "inputs": 1 }, { "id": "fx", "type": "chain", "chain": "warm" }"#,
            links: #"{ "from": "song", "to": "mix" }, { "from": "mix", "to": "fx" }, { "from": "fx", "to": "out" }"#)
        let other = graph(
            sine,
            nodes:
                #"{ "id": "mix", "type": "mixer", "inputs": 1, "volume": 0.7 }, "#
                + #"{ "id": "eq", "type": "ipod-eq", "preset": "Loudness" }"#,
            links: #"{ "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "out" }"#)
        let transitions: [(Double, String)] = [
            (1, "preset fx/eq Treble Booster"), (2, "set mix volume 0.4"), (3, "set fx/eq preamp 6"),
            (4, "chain fx bright"),
            (5, "preset fx/lv Bass Reducer"), (6, "chain fx dry"), (7, "set mix volume 1"), (8, "chain fx warm"),
            (9, "load \(other)"), (10, "preset eq Spoken Word"), (11, "bypass eq on"),
        ]
        let out = try TestSupport.render(
            path, durationFrames: 12 * 48000, events: transitions.map { try at($0.0, $0.1) }
        ).samples
        for (time, line) in transitions {
            let r = ClickMeasure.window(out, channels: 2, rate: 48000, time: time, seconds: 0.1)
            XCTAssertLessThanOrEqual(r.slopeRatio, 1.5, "\(line): \(r)")
            XCTAssertLessThanOrEqual(r.peakRatio, 1.0005, "\(line): \(r)")
            print("click", line, r)
        }
        let worst = ClickMeasure.worst(out, channels: 2, rate: 48000, start: 0.5, end: 11.5)
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
    }
}
