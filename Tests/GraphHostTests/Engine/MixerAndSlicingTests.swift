import XCTest

@testable import GraphHost

/// Mixer sums and volumes, smoothing, and slice-size independence of the whole render.
final class MixerAndSlicingTests: XCTestCase {
    func twoStreamGraph(volumes: String, volume: Double = 1) throws -> (path: String, a: String, b: String) {
        let a = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let b = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 1)
        let path = TestSupport.graph(
            """
            { "nodes": [
                { "id": "a", "type": "stream", "url": "\(a)" },
                { "id": "b", "type": "stream", "url": "\(b)" },
                { "id": "mix", "type": "mixer", "inputs": 3, "volumes": \(volumes), "volume": \(volume) },
                { "id": "out", "type": "output" } ],
              "links": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:2" }, \
            { "from": "mix", "to": "out" } ] }
            """)
        return (path, a, b)
    }

    func testMixerSumsWithVolumes() throws {
        let (path, a, b) = try twoStreamGraph(volumes: "[0.5, 1.0, 0.25]", volume: 2)
        let mixed = try TestSupport.render(path).samples
        let sa = try TestSupport.renderStream(a)
        let sb = try TestSupport.renderStream(b)
        XCTAssertEqual(mixed.count, max(sa.count, sb.count))
        var worst: Float = 0
        for i in 0..<mixed.count {
            let expected = 2 * (0.5 * (i < sa.count ? sa[i] : 0) + 0.25 * (i < sb.count ? sb[i] : 0))
            worst = max(worst, abs(mixed[i] - expected))
        }
        XCTAssertLessThan(worst, 1e-6)
    }

    /// A volume jump glides over about 10 ms: no step larger than the ramp allows.
    func testVolumeChangeIsSmoothed() throws {
        let (path, a, _) = try twoStreamGraph(volumes: "[1, 1, 0]")
        let at = 24000
        let out = try TestSupport.render(
            path, events: [TimedCommand(frame: at, command: try NodeRequest.parse("set mix volume.0 0"))]
        ).samples
        let sa = try TestSupport.renderStream(a)
        // Before the command: unchanged; 10 ms after: silent; in between: gain falls monotonically from 1 to 0.
        XCTAssertEqual(Array(out[0..<(2 * at)]), Array(sa[0..<(2 * at)]))
        XCTAssertEqual(out[(2 * (at + 480))..<(2 * (at + 2000))].map(abs).max()!, 0)
        var previousGain: Float = 1
        for f in at..<(at + 480) where abs(sa[2 * f]) > 0.05 {
            let gain = out[2 * f] / sa[2 * f]
            XCTAssertLessThanOrEqual(gain, previousGain + 1e-4)
            XCTAssertGreaterThan(gain, 0 - 1e-4)
            previousGain = gain
        }
        XCTAssertLessThan(previousGain, 0.9)
    }

    /// Rendering with frame counts that vary call to call gives bit-identical output, commands included.
    func testVariableSliceSizesGiveIdenticalOutput() throws {
        let demo = TestSupport.root.appendingPathComponent("Graphs/demo.json").path
        let events = [
            TimedCommand(frame: 30000, command: try NodeRequest.parse("preset eq Dance")),
            TimedCommand(frame: 50001, command: try NodeRequest.parse("set mix volume 0.5")),
            TimedCommand(frame: 60000, request: .pause), TimedCommand(frame: 66000, request: .play),
            TimedCommand(frame: 70000, command: try NodeRequest.parse("set eq preamp -3")),
        ]
        let seconds = 2 * 48000
        let fixed = try TestSupport.render(demo, durationFrames: seconds, events: events).samples
        let varied = try TestSupport.render(
            demo, durationFrames: seconds, events: events,
            frameSizes: [1, 17, 256, 4096, 5000, 9000, 33, 128, 8192]
        ).samples
        XCTAssertEqual(fixed.count, seconds * 2)
        XCTAssertEqual(fixed, varied)
        XCTAssertGreaterThan(TestSupport.peak(fixed), 0.05)
    }
}

extension MixerAndSlicingTests {
    /// `pause` fades out over 20 ms and then nothing runs (the stream does not advance); `play` fades back in
    /// and the music continues from where it paused.
    func testPauseAndPlay() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let path = TestSupport.streamGraph(mp3)
        let dry = try TestSupport.renderStream(mp3)
        let (pauseAt, playAt, fade) = (24000, 48000, 960)
        let out = try TestSupport.render(
            path, durationFrames: 96000,
            events: [
                TimedCommand(frame: pauseAt, request: .pause), TimedCommand(frame: playAt, request: .play),
            ]
        ).samples
        XCTAssertEqual(Array(out[0..<(2 * pauseAt)]), Array(dry[0..<(2 * pauseAt)]))
        XCTAssertEqual(out[(2 * (pauseAt + fade))..<(2 * playAt)].map(abs).max()!, 0)
        // After the fade-in, the output is the music that followed the pause point (the stream waited).
        let resumed = pauseAt + fade
        for f in (playAt + fade)..<(playAt + fade + 4000) {
            XCTAssertEqual(out[2 * f], dry[2 * (f - (playAt - resumed))], "frame \(f)")
        }
        // Fades are monotonic ramps, never louder than the music.
        for f in pauseAt..<(pauseAt + fade) { XCTAssertLessThanOrEqual(abs(out[2 * f]), abs(dry[2 * f]) + 1e-6) }
    }
}

extension MixerAndSlicingTests {
    /// `bypass NODE on` crossfades to the node's input (EQ 30 ms, LV2 20 ms); `off` crossfades back, and because the
    /// filter (or plugin) kept running meanwhile, the output is then as if it had never been bypassed
    /// (to float rounding: the EQ differs by an ulp now and then).
    func testBypassOnAndOff() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        for fx in [
            #"{ "id": "fx", "type": "ipod-eq", "preset": "Rock" }"#,
            #"{ "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/amp", "#
                + #""controls": { "gain": -6 } }"#,
        ] {
            let path = TestSupport.graph(
                """
                { "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" }, \
                \(fx), { "id": "out", "type": "output" } ],
                  "links": [ { "from": "s", "to": "fx" }, { "from": "fx", "to": "out" } ] }
                """)
            let dry = try TestSupport.renderStream(mp3)
            let wet = try TestSupport.render(path, durationFrames: 72000).samples
            let out = try TestSupport.render(
                path, durationFrames: 72000,
                events: [
                    TimedCommand(frame: 24000, command: try NodeRequest.parse("bypass fx on")),
                    TimedCommand(frame: 48000, command: try NodeRequest.parse("bypass fx off")),
                ]
            ).samples
            let early = (0..<48000).first { out[$0] != wet[$0] }
            XCTAssertNil(
                early, "\(fx): differs before the bypass at frame \((early ?? 0) / 2) channel \((early ?? 0) % 2)")
            XCTAssertEqual(Array(out[(2 * 25440)..<(2 * 48000)]), Array(dry[(2 * 25440)..<(2 * 48000)]), fx)
            let worst = ((2 * 49440)..<(2 * 72000)).map { abs(out[$0] - wet[$0]) }.max()!
            XCTAssertLessThan(worst, 1e-6, "\(fx): differs from the never-bypassed output")
        }
        let graph = try CompiledGraph(
            try GraphDocument.load(path: TestSupport.root.appendingPathComponent("Graphs/demo.json").path))
        defer { graph.close() }
        XCTAssertThrowsError(try graph.check(NodeRequest.parse("bypass mix on"))) {
            XCTAssertTrue("\($0)".contains("cannot be bypassed"), "\($0)")
        }
        XCTAssertThrowsError(try NodeRequest.parse("bypass eq maybe"))
    }
}
