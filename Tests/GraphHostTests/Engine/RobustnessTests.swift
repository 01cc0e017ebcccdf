import AllocationCounter
import XCTest

@testable import GraphHost

/// Damaged media plays without crashing or loud garbage; the render path never allocates.
final class RobustnessTests: XCTestCase {
    /// The corrupt-block guard mutes a 576-frame block holding a NaN, an infinity or a sample beyond ±2.0, wherever it
    /// lies in the block (the vector part or the scalar tail), and keeps blocks within ±2.0.
    func testTheCorruptBlockGuardMutesImplausibleBlocksOnly() {
        let channels = 2
        let frames = 3 * CorruptAudioGuard.blockFrames + 3
        for (bad, at) in [
            (Float.nan, 5), (Float.infinity, 700), (-2.5, 1151), (2.001, 2 * 576 * 2 + 3), (-.infinity, frames * 2 - 1),
        ] {
            var samples = [Float](repeating: 0.5, count: frames * channels)
            samples[0] = 2
            samples[1] = -2
            samples[at] = bad
            let muted = samples.withUnsafeMutableBufferPointer {
                CorruptAudioGuard.muteImplausibleBlocks($0.baseAddress!, frames: frames, channels: channels)
            }
            XCTAssertEqual(muted, 1, "\(bad) at \(at)")
            let block = at / (CorruptAudioGuard.blockFrames * channels)
            for (i, v) in samples.enumerated() {
                let inBlock = i / (CorruptAudioGuard.blockFrames * channels) == block
                if inBlock {
                    XCTAssertEqual(v, 0, "\(bad) at \(at): sample \(i) not muted")
                } else {
                    XCTAssertNotEqual(v, 0, "\(bad) at \(at): sample \(i) muted")
                }
            }
        }
    }

    func damaged(_ name: String, _ change: (inout [UInt8]) -> Void) throws -> String {
        var bytes = Array(
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3))))
        change(&bytes)
        let path = TestSupport.directory.appendingPathComponent(name).path
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func testCorruptAndTruncatedMP3RenderQuietly() throws {
        let clean = try TestSupport.renderStream(try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3))
        let cleanPeak = TestSupport.peak(clean)
        var generator = SplitMix64(seed: 20_261_121)
        let corrupt = try damaged("corrupt.mp3") { bytes in
            for _ in 0..<400 {
                bytes[Int.random(in: 2000..<(bytes.count - 1000), using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            for i in 20000..<21000 { bytes[i] = 0xFF }
        }
        let truncated = try damaged("truncated.mp3") { bytes in bytes.removeLast(bytes.count / 2 + 77) }
        func rms(_ x: [Float]) -> Double {
            (x.reduce(0.0) { $0 + Double($1 * $1) } / Double(max(x.count, 1))).squareRoot()
        }
        for path in [corrupt, truncated] {
            let out = try TestSupport.renderStream(path)
            print("\(path): peak \(TestSupport.peak(out)) rms \(rms(out)) vs clean peak \(cleanPeak) rms \(rms(clean))")
            XCTAssertTrue(out.allSatisfy(\.isFinite), path)
            XCTAssertGreaterThan(out.count, clean.count / 4, path)
            // Damaged frames that decode to wild values are muted; what passes stays near the music's level.
            XCTAssertLessThanOrEqual(TestSupport.peak(out), CorruptAudioGuard.ceiling, path)
            XCTAssertLessThanOrEqual(
                rms(out), rms(clean) * 1.19, "\(path): more than 1.5 dB louder than the clean decode")
        }
        XCTAssertEqual(
            Double(try TestSupport.renderStream(truncated).count), Double(clean.count) / 2,
            accuracy: Double(clean.count) / 20)
    }

    /// The render entry point makes no heap allocation, counted at run time by an allocator interposer.
    func testRenderPathMakesNoAllocations() throws {
        try Self.withDemoSession { session, stream, buffer in
            // Sanity check that the counter works on this thread (a build under a sanitizer counts nothing: the
            // sanitizer owns the allocator, and its own reports cover the render path).
            gh_allocation_counter_begin()
            let probe = [Int](repeating: 1, count: 100)
            let counted = gh_allocation_counter_end()
            if gh_allocation_counter_available() != 0 {
                XCTAssertGreaterThan(counted, 0)
            } else {
                print("allocations not counted under a sanitizer")
            }
            XCTAssertEqual(probe.count, 100)
            try session.apply(NodeRequest.parse("preset eq Dance"))
            try session.apply(NodeRequest.parse("set mix volume.0 0.7"))
            XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
            // A seek's crossfade (old audio read, new audio peeked) allocates nothing either.
            try session.apply(NodeRequest.parse("seek \(stream.id) 1.5"))
            XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
            XCTAssertEqual(stream.counters.seekHandled.load(ordering: .acquiring), 1, "the seek was crossed")
        }
    }

    /// Metering every node of the demo graph (`meter NODE on`) allocates nothing on the render path either.
    func testMeteredRenderPathMakesNoAllocations() throws {
        try Self.withDemoSession { session, stream, buffer in
            let metered = session.graph.document.nodes.map(\.id).filter { session.graph.meters.byNode[$0] != nil }
            XCTAssertGreaterThan(metered.count, 2)
            for id in metered { try session.apply(Command.parse("meter \(id) on")) }
            XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
            let readings = session.graph.meterReadings
            XCTAssertEqual(readings.map(\.node), metered)
            XCTAssertTrue(readings.allSatisfy { $0.channels.allSatisfy { $0.peak.isFinite } }, "every meter measured")
        }
    }

    /// Timing every step and call for the DSP load (`DSPLoadRecorder`), across a new window of largest times, allocates
    /// nothing, and every node of the demo graph is timed in every call.
    func testTimedRenderPathMakesNoAllocations() throws {
        try Self.withDemoSession { session, stream, buffer in
            let recorder = session.engine.pointee.timing.pointee.load
            let before = try XCTUnwrap(recorder.snapshot())
            recorder.startWindow()
            XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
            let after = try XCTUnwrap(recorder.snapshot())
            XCTAssertEqual(after.call.count - before.call.count, 100)
            let load = DSPLoad(from: before, to: after, sampleRate: 48000, names: session.graph.kernelNames)
            XCTAssertEqual(load.nodes.map(\.id), session.graph.kernelNames.map(\.id))
            XCTAssertTrue(load.nodes.allSatisfy { $0.figure.calls == 100 }, "\(load.lines.joined(separator: "\n"))")
        }
    }

    /// Runs `body` on a started session of the demo graph, with its first stream and an interleaved buffer of 8192
    /// stereo frames.
    static func withDemoSession(
        _ body: (GraphSession, StreamInstance, UnsafeMutablePointer<Float>) throws -> Void
    ) throws {
        let session = try TestSupport.session(TestSupport.root.appendingPathComponent("Graphs/demo.json").path)
        defer { session.close() }
        session.graph.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 8192)
        defer { buffer.deallocate() }
        try body(session, session.graph.streams[0], buffer)
    }

    /// Heap allocations made while `session` renders `slices` slices of varied sizes, waiting for `stream` between
    /// them.
    static func allocations(
        rendering session: GraphSession, stream: StreamInstance, into buffer: UnsafeMutablePointer<Float>,
        slices: Int
    ) -> Int {
        var total = 0
        for sizeIndex in 0..<slices {
            let frames = [64, 4096, 8192, 1, 999][sizeIndex % 5]
            while !stream.canRender(frames: frames) { stream.wakeup.waitForData() }
            gh_allocation_counter_begin()
            session.render(frames: frames, interleaved: buffer)
            total += gh_allocation_counter_end()
            stream.wakeup.signalSpace()
        }
        return total
    }
}

extension RobustnessTests {
    /// The newer render paths make no heap allocation either: a midi node through a MIDI processor into an
    /// instrument, a sidechain fed by name, a look-ahead limiter whose latency the mixer compensates, and live
    /// changes to them.
    func testEventAndPortPathsMakeNoAllocations() throws {
        let midi = try TestSupport.twoNotes()
        let song = try TestSupport.sine(seconds: 4)
        let path = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "keys", "type": "midi", "file": "\(midi)" },
                         { "id": "up", "type": "lv2", "uri": "http://gareus.org/oss/lv2/midifilter#miditranspose", \
            "controls": { "transpose": 12 } },
                         { "id": "piano", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" },
                         { "id": "song", "type": "stream", "url": "\(song)" },
                         { "id": "lim", "type": "lv2", "uri": "http://gareus.org/oss/lv2/dpl#stereo" },
                         { "id": "duck", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/sc3", \
            "controls": { "chain_bal": 1 } },
                         { "id": "mix", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "keys", "to": "up" }, { "from": "up", "to": "piano" }, \
            { "from": "piano", "to": "mix:0" },
                         { "from": "song", "to": "lim" }, { "from": "lim", "to": "duck" }, \
            { "from": "song", "to": "duck:sidechain" },
                         { "from": "duck", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
            """)
        let session = try TestSupport.session(path)
        defer { session.close() }
        XCTAssertGreaterThan(session.graph.compensation.delays["mix"]?.first ?? 0, 0, "the piano path is not delayed")
        session.graph.start()
        let stream = session.graph.streams[0]
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 8192)
        defer { buffer.deallocate() }
        try session.apply(NodeRequest.parse("set lim threshold -3"))
        try session.apply(NodeRequest.parse("bypass up on"))
        XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
    }
}

/// A small deterministic random generator, so damaged test media is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RobustnessTests {
    /// A socket file left by a crashed run is replaced; one a live run listens on is left alone with a clear error.
    /// The socket is owner-only; a folder the server makes is owner-only, one that exists keeps its mode.
    func testStaleSocketIsReplacedAndALiveOneIsKept() throws {
        let dir = TestSupport.directory.appendingPathComponent("stale-\(UUID().uuidString)").path
        let path = dir + "/x.sock"
        try FileManager.default.createDirectory(
            atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = CommandServer.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        close(stale)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        let first = CommandServer(path: path) { _ in #"{"ok":true}"# }
        try first.start()
        defer { first.stop() }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(
            try FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int, 0o755,
            "an existing folder's mode changed")
        let made = dir + "/made/y.sock"
        let third = CommandServer(path: made) { _ in #"{"ok":true}"# }
        try third.start()
        defer { third.stop() }
        XCTAssertEqual(
            try FileManager.default.attributesOfItem(atPath: dir + "/made")[.posixPermissions] as? Int, 0o700)
        let second = CommandServer(path: path) { _ in #"{"ok":true}"# }
        XCTAssertThrowsError(try second.start()) {
            XCTAssertTrue("\($0)".contains("another graphhost is listening on \(path)"), "\($0)")
        }
        XCTAssertTrue(CommandServer.isAlive(path), "the live socket was kept")
    }
}

extension RobustnessTests {
    /// Watching the loudness of every node of the demo graph (every analysis tap on, drained by the analysis thread
    /// meanwhile) allocates nothing on the render path either.
    func testAnalysedRenderPathMakesNoAllocations() throws {
        try Self.withDemoSession { session, stream, buffer in
            let tapped = session.graph.document.nodes.map(\.id).filter { session.graph.meters.taps[$0] != nil }
            XCTAssertGreaterThan(tapped.count, 2)
            for id in tapped { try session.watch(.loudness, node: id, on: true) }
            XCTAssertEqual(Self.allocations(rendering: session, stream: stream, into: buffer, slices: 100), 0)
            XCTAssertTrue(tapped.allSatisfy { session.graph.meters.taps[$0]!.pointee.isOn.load(ordering: .relaxed) })
            XCTAssertTrue(
                TestSupport.waitUntil {
                    session.analysis.loudness.filter { $0.truePeak.isFinite }.count == tapped.count
                },
                "every tap was drained: \(session.analysis.loudness)")
        }
    }
}
