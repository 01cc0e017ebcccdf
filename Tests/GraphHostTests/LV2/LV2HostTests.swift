import Atomics
import CLV2
import CLV2Glue
import CLilv
import Synchronization
import XCTest

@testable import GraphHost

/// The `lv2` node with real plugins from Debian packages (swh-lv2, mda-lv2, x42-plugins) and lilv-utils.
final class LV2HostTests: XCTestCase {
    static let detune = "http://drobilla.net/plugins/mda/Detune"

    func graph(_ mp3: String, channels: Int = 2, lv2: String) -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": \(channels) },
              "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" }, \(lv2), { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
    }

    /// A mono plugin on a stereo bus runs once per channel.
    func testMonoPluginRunsOncePerChannel() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(
            mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(TestPlugins.amp)", "controls": { "gain": -6 } }"#)
        let doc = try GraphDocument.load(path: path)
        XCTAssertEqual((doc.node("fx")!.definition as! LV2Node).copies, 2)
        let out = try TestSupport.render(path).samples
        let dry = try TestSupport.renderStream(mp3)
        XCTAssertEqual(out.count, dry.count)
        let gain = Float(pow(10, -6.0 / 20))
        XCTAssertLessThan(zip(out, dry).map { abs($0 - $1 * gain) }.max()!, 1e-5)
        XCTAssertGreaterThan(TestSupport.peak(out), 0.1)
    }

    /// graphhost's offline output equals lv2apply's for the same input and control values.
    func testOutputEqualsLV2Apply() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 1)
        let input = TestSupport.directory.appendingPathComponent("lv2apply-in.wav").path
        let applied = TestSupport.directory.appendingPathComponent("lv2apply-out.wav").path
        try TestSupport.run(["mpg123", "-q", "-e", "f32", "-w", input, mp3])
        try TestSupport.run(["lv2apply", "-i", input, "-o", applied, "-c", "gain", "-9.5", TestPlugins.amp])
        let reference = try SoundFile(path: applied).samples
        let ours = try TestSupport.render(
            graph(
                mp3, channels: 1,
                lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(TestPlugins.amp)", "controls": { "gain": -9.5 } }"#)
        ).samples
        XCTAssertEqual(ours.count, reference.count)
        XCTAssertLessThan(zip(ours, reference).map { abs($0 - $1) }.max()!, 1e-6)
    }

    /// A stereo plugin with presets: the preset's port values take effect; commands select presets by label.
    func testStereoPluginPresetTakesEffect() throws {
        let plugin = try XCTUnwrap(LV2World.shared.plugin(Self.detune))
        let symphonic = try XCTUnwrap(plugin.preset("Symphonic"))
        let stored = plugin.portValues(of: symphonic)
        XCTAssertFalse(stored.isEmpty)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.detune)", "preset": "symphonic" }"#)
        let node = try GraphDocument.load(path: path).node("fx")!.definition as! LV2Node
        XCTAssertEqual(node.copies, 1)
        for port in plugin.controlInputs {
            if let value = stored[port.symbol] { XCTAssertEqual(node.controlValues[port.index], value, port.symbol) }
        }
        let out = try TestSupport.render(
            path, events: [TimedCommand(frame: 24000, command: try NodeRequest.parse("preset fx Out Of Tune"))]
        ).samples
        XCTAssertTrue(out.allSatisfy(\.isFinite))
        XCTAssertGreaterThan(TestSupport.peak(out), 0.05)
        let session = try TestSupport.session(path)
        defer { session.close() }
        let graph = session.graph
        XCTAssertThrowsError(try graph.check(NodeRequest.parse("preset fx Nope"))) { error in
            XCTAssertTrue("\(error)".contains("presets: Out Of Tune, Stereo Detune, Symphonic"), "\(error)")
        }
        XCTAssertThrowsError(try graph.check(NodeRequest.parse("set fx detuen 1"))) { error in
            XCTAssertTrue("\(error)".contains("controls: detune"), "\(error)")
        }
    }

    /// A plugin with atom ports (x42 fil4: control in, notify out) gets sized sequence buffers and runs.
    func testPluginWithAtomPortsRuns() throws {
        let uri = "http://gareus.org/oss/lv2/fil4#stereo"
        let plugin = try XCTUnwrap(LV2World.shared.plugin(uri))
        XCTAssertEqual(plugin.ports.filter { $0.kind == .atom }.count, 2)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let out = try TestSupport.render(
            graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)", "controls": { "gain": -6 } }"#)
        ).samples
        XCTAssertTrue(out.allSatisfy(\.isFinite))
        XCTAssertGreaterThan(TestSupport.peak(out), 0.05)
    }

    /// Builds a fixture bundle's plugin with cc and loads the bundle into the world.
    static func loadFixture(_ bundle: String, source: String? = nil, binary: String? = nil) throws {
        let dir = TestPlugins.fixtures + "/" + bundle
        if let source, let binary {
            try TestPlugins.compile(dir + "/" + binary, dir + "/" + source)
        }
        LV2World.shared.loadBundle(dir)
    }

    /// A plugin that requires a feature graphhost does not provide is refused at validate time, naming it.
    func testUnsupportedRequiredFeatureIsRefused() throws {
        try Self.loadFixture("needs-unknown.lv2")
        let uri = "urn:graphhost:test:needs-unknown"
        let path = graph(
            try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1), channels: 1,
            lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)" }"#)
        XCTAssertThrowsError(try GraphDocument.load(path: path)) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    "nodes[1].uri: plugin '\(uri)' requires the feature urn:graphhost:test:feature-nobody-provides, "
                        + "which graphhost does not provide"
                ), "\(error)")
        }
    }

    /// worker:schedule: a gain change requested in run() takes effect once the worker answered, and the response is
    /// delivered on the render thread before the next run(). Offline the work runs in place; live (`live`) the worker
    /// thread does it, woken by the request; either way the answer is there for the second slice.
    func testWorkerRoundTrip() throws {
        try workerRoundTrip(live: false)
        try workerRoundTrip(live: true)
    }

    func workerRoundTrip(live: Bool) throws {
        try Self.loadFixture("worker-gain.lv2", source: "worker_gain.c", binary: "worker_gain.so")
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 1)
        let doc = try GraphDocument.load(
            path: graph(
                mp3, channels: 1,
                lv2:
                    #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:worker-gain", "#
                    + #""controls": { "gain": 0.5 } }"#
            ))
        let dry = try TestSupport.renderStream(mp3, channels: 1)
        let session = try TestSupport.session(document: doc)
        defer { session.close() }
        session.rendersConcurrently = live
        let graph = session.graph
        graph.start()
        let stream = graph.streams[0]
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { buffer.deallocate() }
        let fx = try XCTUnwrap(graph.instances["fx"] as? LV2Instance)
        var out: [Float] = []
        for _ in 0..<8 {
            while !stream.canRender(frames: 1024) { stream.wakeup.waitForData() }
            session.render(frames: 1024, interleaved: buffer)
            stream.wakeup.signalSpace()
            out += UnsafeBufferPointer(start: buffer, count: 1024)
            XCTAssertTrue(fx.waitForWorker())
        }
        // The first slice ran before any response (gain 1); from the second on the worker's answer applies (0.5).
        XCTAssertEqual(Array(out[0..<1024]), Array(dry[0..<1024]))
        XCTAssertEqual(Array(out[1024..<8192]), dry[1024..<8192].map { $0 * 0.5 })
        if live {
            // The worker thread sleeps until a request wakes it. Once every wake-up posted so far is taken, at most the
            // pass under way can still end in this 200 ms window (a thread polling every millisecond made ~200).
            let worker = try XCTUnwrap(fx.workerThread)
            XCTAssertTrue(TestSupport.waitUntil { worker.pendingWakeups == 0 })
            let passes = worker.passes.load(ordering: .acquiring)
            usleep(200_000)
            XCTAssertLessThanOrEqual(worker.passes.load(ordering: .acquiring) - passes, 1)
        }
        try session.apply(NodeRequest.parse("set fx gain 2"))
        for _ in 0..<3 {
            session.render(frames: 1024, interleaved: buffer)
            XCTAssertTrue(fx.waitForWorker())
        }
        session.render(frames: 1024, interleaved: buffer)
        XCTAssertEqual(buffer[100], dry[8192 + 3 * 1024 + 100] * 2)
    }

    func testUnknownPluginAndShapeErrors() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        XCTAssertThrowsError(
            try GraphDocument.load(path: graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "urn:nothing" }"#))
        ) { error in
            XCTAssertTrue("\(error)".contains("no LV2 plugin 'urn:nothing'"), "\(error)")
        }
        // A stereo plugin does not fit a 4-channel bus (its 2 ports are neither 1 nor at least 4); the error lists its
        // ports.
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: graph(mp3, channels: 4, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.detune)" }"#))
        ) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    "has 2 audio inputs and 2 outputs; a 4-channel bus takes none, 1 or at least 4 inputs"), "\(error)")
            XCTAssertTrue("\(error)".contains("Its ports: 0 "), "\(error)")
        }
        // On a mono bus its first input and output are the main ports; the second input is linked by name or silent.
        let mono = try GraphDocument.load(
            path: graph(mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.detune)" }"#))
        let detune = try XCTUnwrap(mono.node("fx")?.definition as? LV2Node)
        XCTAssertEqual(detune.mainInputs.count, 1)
        XCTAssertEqual(detune.mainOutputs.count, 1)
        XCTAssertTrue(
            mono.warnings.contains {
                "\($0)".contains("audio input") && "\($0)".contains("is not linked and reads silence")
            }, "\(mono.warnings)")
    }

    func testPluginsCommandListsPluginsAsJSON() throws {
        let result = try TestSupport.execute(TestSupport.executable, ["plugins", "--json", "swh-plugins/amp"])
        XCTAssertEqual(result.status, 0)
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: result.out) as? [[String: Any]])
        let amp = try XCTUnwrap(list.first { $0["uri"] as? String == TestPlugins.amp })
        XCTAssertEqual(amp["audioInputs"] as? Int, 1)
        let controls = try XCTUnwrap(amp["controls"] as? [[String: Any]])
        XCTAssertEqual(controls.first?["symbol"] as? String, "gain")
        XCTAssertEqual(controls.first?["minimum"] as? Double, -70)
        let presets = try TestSupport.execute(TestSupport.executable, ["presets", Self.detune])
        XCTAssertEqual(String(decoding: presets.out, as: UTF8.self).split(separator: "\n").count, 3)
    }
}

extension LV2HostTests {
    /// A real convolver (x42 zeroconvolv: worker, state paths, options) with a preset whose state names an
    /// impulse response: the state is restored, the worker loads the IR, and the plugin then passes audio.
    func testConvolverPresetStateLoadsThroughTheWorker() throws {
        let uri = "http://gareus.org/oss/lv2/zeroconvolv#Stereo"
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let doc = try GraphDocument.load(
            path: graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)", "preset": "No-OP Stereo" }"#))
        let session = try TestSupport.session(document: doc)
        defer { session.close() }
        let graph = session.graph
        graph.start()
        let stream = graph.streams[0]
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
        defer { buffer.deallocate() }
        let fx = try XCTUnwrap(graph.instances["fx"] as? LV2Instance)
        var loudest: Float = 0
        for block in 0..<20 {
            while !stream.canRender(frames: 4096) { stream.wakeup.waitForData() }
            session.render(frames: 4096, interleaved: buffer)
            stream.wakeup.signalSpace()
            if block >= 10 { for i in 0..<(2 * 4096) { loudest = max(loudest, abs(buffer[i])) } }
            XCTAssertTrue(fx.waitForWorker())
        }
        XCTAssertGreaterThan(loudest, 0.05, "the convolver never passed audio: its IR did not load")
    }
}

extension LV2HostTests {
    /// A plugin library that fails to load (an unresolved symbol) gives a clear error, not a crash.
    func testLibraryThatFailsToLoadIsAClearError() throws {
        let dir = TestPlugins.fixtures + "/bad-binary.lv2"
        try TestPlugins.compile(
            dir + "/bad_binary.so", dir + "/bad_binary.c", flags: ["-Wl,--allow-shlib-undefined"])
        LV2World.shared.loadBundle(dir)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 1)
        let doc = try GraphDocument.load(
            path: graph(
                mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:bad-binary" }"#))
        XCTAssertThrowsError(try CompiledGraph(doc)) { error in
            XCTAssertTrue(
                "\(error)".contains("LV2 plugin urn:graphhost:test:bad-binary failed to instantiate (node 'fx')"),
                "\(error)")
        }
    }

    /// urid:map grows without bound and gives one id per URI from several threads at once.
    func testURIDMapIsConsistentAcrossThreads() {
        let map = URIDMap.shared
        let shared = Mutex([[LV2_URID]](repeating: [], count: 4))
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            let ids = (0..<20000).map { map.map("urn:graphhost:test:uri-\($0)") }
            shared.withLock { $0[t] = ids }
        }
        let results = shared.withLock { $0 }
        for t in 1..<4 { XCTAssertEqual(results[t], results[0]) }
        XCTAssertEqual(Set(results[0]).count, 20000)
        XCTAssertEqual(map.unmap(results[0][12345]), "urn:graphhost:test:uri-12345")
    }
}

extension LV2HostTests {
    /// Our own bundle hosted by graphhost: the LV2 iPod EQ with preset Rock sounds exactly like the built-in node.
    func testOwnIPodEQBundleMatchesTheBuiltInNode() throws {
        let so = TestSupport.root.appendingPathComponent("Plugins/graphhost-ipod-eq.lv2/libGraphHostIPodEQLV2.so").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: so), "run scripts/build-plugins (scripts/test does)")
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let hosted = try TestSupport.render(
            graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:ipod-eq", "preset": "Rock" }"#)
        ).samples
        let builtIn = try TestSupport.render(graph(mp3, lv2: #"{ "id": "fx", "type": "ipod-eq", "preset": "Rock" }"#))
            .samples
        XCTAssertEqual(hosted.count, builtIn.count)
        XCTAssertLessThan(zip(hosted, builtIn).map { abs($0 - $1) }.max()!, 1e-6)
        XCTAssertGreaterThan(TestSupport.peak(hosted), 0.05)
    }

    /// A preset change of our LV2 EQ: its designer thread designs and warms the new bank off run(), and once the
    /// crossfade is over the plugin sounds like the built-in node changed at the same moment; before it, like Rock.
    func testOwnIPodEQBundleChangesPresetLikeTheBuiltInNode() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 8)
        let change = [TimedCommand(frame: 48000, command: try NodeRequest.parse("preset fx Bass Booster"))]
        func render(_ node: String, events: [TimedCommand] = change) throws -> [Float] {
            try TestSupport.render(graph(mp3, lv2: node), durationFrames: 8 * 48000, events: events).samples
        }
        let hosted = try render(#"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:ipod-eq", "preset": "Rock" }"#)
        let builtIn = try render(#"{ "id": "fx", "type": "ipod-eq", "preset": "Rock" }"#)
        XCTAssertEqual(hosted.count, builtIn.count)
        XCTAssertLessThan(zip(hosted, builtIn).prefix(2 * 48000).map { abs($0 - $1) }.max()!, 1e-6, "before the change")
        XCTAssertLessThan(zip(hosted, builtIn).suffix(2 * 48000).map { abs($0 - $1) }.max()!, 1e-4, "the last second")
        let rock = try render(#"{ "id": "fx", "type": "ipod-eq", "preset": "Rock" }"#, events: [])
        XCTAssertGreaterThan(
            zip(hosted.suffix(2 * 48000), rock.suffix(2 * 48000)).map { abs($0 - $1) }.max()!, 0.01,
            "the change was not heard")
        let heard = (2 * 48000..<hosted.count).first { abs(hosted[$0] - rock[$0]) > 1e-3 }.map {
            ($0 / 2 - 48000) * 1000 / 48000
        }
        print("our LV2 EQ: the change was heard \(heard.map(String.init) ?? "never") ms after the command")
        XCTAssertTrue(hosted.allSatisfy(\.isFinite))
    }
}

extension LV2HostTests {
    func stateGainGraph() throws -> (graph: CompiledGraph, dry: [Float]) {
        try Self.loadFixture("state-gain.lv2", source: "state_gain.c", binary: "state_gain.so")
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 2)
        let doc = try GraphDocument.load(
            path: graph(
                mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:state-gain" }"#))
        return (try CompiledGraph(doc), try TestSupport.renderStream(mp3, channels: 1))
    }

    /// Offline, a preset's state is restored between two slices: the change is exact at the command's frame.
    func testPresetStateRestoredAtTheCommandFrame() throws {
        let (graph, dry) = try stateGainGraph()
        var out: [Float] = []
        _ = try OfflineRenderer(
            graph: graph, events: [TimedCommand(frame: 24000, command: try NodeRequest.parse("preset fx Quarter"))]
        )
        .render(durationFrames: 48000) { out += UnsafeBufferPointer(start: $0, count: $1) }
        graph.close()
        XCTAssertEqual(Array(out[0..<24000]), Array(dry[0..<24000]))
        XCTAssertEqual(Array(out[24000..<48000]), dry[24000..<48000].map { $0 * 0.25 })
    }

    /// While a render thread runs, a plugin without state:threadSafeRestore is faded out, paused (its input passes
    /// through), restored and faded back in; the level never exceeds the louder of the two.
    func testPresetStateRestoreWhileRenderingPausesThePlugin() throws {
        let (compiled, dry) = try stateGainGraph()
        let session = GraphSession(graph: compiled)
        defer { session.close() }
        let graph = session.graph
        session.rendersConcurrently = true
        graph.start()
        let stream = graph.streams[0]
        let stop = UnsafeAtomic<Bool>.create(false)
        let rendered = UnsafeAtomic<Int>.create(0)
        defer {
            stop.destroy()
            rendered.destroy()
        }
        final class Output: @unchecked Sendable { var samples: [Float] = [] }
        let output = Output()
        let finished = DispatchSemaphore(value: 0)
        // This thread plays the render world: it renders the engine while the test thread sends it commands.
        nonisolated(unsafe) let engine = session.engine
        let renderThread = Thread {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
            defer {
                buffer.deallocate()
                finished.signal()
            }
            while !stop.load(ordering: .acquiring) && output.samples.count < 90000 {
                guard stream.canRender(frames: 256) else {
                    stream.wakeup.waitForData()
                    continue
                }
                engine.pointee.render(frames: 256, interleaved: buffer)
                stream.wakeup.signalSpace()
                output.samples += UnsafeBufferPointer(start: buffer, count: 256)
                rendered.wrappingIncrement(by: 256, ordering: .releasing)
                // The pace of a device clock at about 10x real time, so the restore falls mid-render.
                usleep(500)
            }
        }
        renderThread.start()
        XCTAssertTrue(TestSupport.waitUntil { rendered.load(ordering: .acquiring) >= 4096 })
        try session.apply(NodeRequest.parse("preset fx Quarter"))
        // The plugin was restored while paused; what follows is the fade back in (30 ms) and then the new state.
        let restoredAt = rendered.load(ordering: .acquiring)
        XCTAssertTrue(TestSupport.waitUntil { rendered.load(ordering: .acquiring) >= min(restoredAt + 24000, 90000) })
        stop.store(true, ordering: .releasing)
        finished.wait()
        let out = output.samples
        XCTAssertGreaterThan(out.count, 20000)
        // Untouched at first, exactly a quarter at the end, and never louder than the input in between.
        XCTAssertEqual(Array(out[0..<2048]), Array(dry[0..<2048]))
        let tail = (out.count - 2048)..<out.count
        XCTAssertEqual(Array(out[tail]), dry[tail].map { $0 * 0.25 })
        for i in 0..<out.count { XCTAssertLessThanOrEqual(abs(out[i]), abs(dry[i]) + 1e-6, "sample \(i)") }
        // The change was a crossfade (the pause path), not a step: some samples lie strictly between the two gains.
        let between = (0..<out.count).filter {
            abs(dry[$0]) > 0.05 && abs(out[$0]) > abs(dry[$0]) * 0.3 && abs(out[$0]) < abs(dry[$0]) * 0.95
        }
        XCTAssertGreaterThan(between.count, 100)
    }
}

extension LV2HostTests {
    /// A plugin reporting latency (x42 dpl, a look-ahead limiter): `show` prints the value it reports and what the
    /// graph adds.
    func testShowPrintsReportedLatency() throws {
        let uri = "http://gareus.org/oss/lv2/dpl#stereo"
        let path = graph(
            try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1),
            lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)" }"#)
        let graph = try CompiledGraph(try GraphDocument.load(path: path))
        let latency = try XCTUnwrap(graph.measuredPluginLatencies()["fx"])
        graph.close()
        XCTAssertGreaterThan(latency, 0)
        let show = try TestSupport.execute(TestSupport.executable, ["show", path])
        let text = String(decoding: show.out, as: UTF8.self)
        XCTAssertTrue(text.contains("latency: fx reports \(Format.number(Double(latency))) frames"), text)
        XCTAssertTrue(text.contains("latency: the graph adds \(Format.number(Double(latency))) frames"), text)
    }
}

extension LV2HostTests {
    /// Fills freed heap chunks of plugin-instance sizes with garbage, as a long-running host's heap holds.
    static func dirtyTheHeap() {
        var chunks: [UnsafeMutableRawPointer] = []
        for size in stride(from: 16, through: 1024, by: 8) {
            for _ in 0..<8 {
                let p = malloc(size)!
                memset(p, 0x7e, size)
                chunks.append(p)
            }
        }
        chunks.forEach { free($0) }
    }

    /// swh's LV2 plugins zero their filter memory in locals at activate, so they run from whatever instantiate's
    /// memory held (in another host, 1e30 and more for a second). graphhost hands a plugin zeroed memory from
    /// instantiate to activate: dcRemove and valve render the same twice on a dirty heap, and as lv2apply does.
    func testPluginsStartFromACleanStateOnADirtyHeap() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 2)
        let dryPath = TestSupport.directory.appendingPathComponent("dry-\(UUID().uuidString).wav").path
        let dry = try TestSupport.renderStream(mp3, channels: 1)
        let writer = try SoundFileWriter(path: dryPath, sampleRate: 48000, channels: 1)
        try writer.write(dry, frames: dry.count)
        writer.close()
        for uri in ["http://plugin.org.uk/swh-plugins/dcRemove", "http://plugin.org.uk/swh-plugins/valve"] {
            let path = graph(mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(uri)" }"#)
            Self.dirtyTheHeap()
            let first = try TestSupport.render(path).samples
            Self.dirtyTheHeap()
            let second = try TestSupport.render(path).samples
            XCTAssertEqual(first, second, "\(uri): two renders differ")
            let appliedPath = dryPath + ".applied.wav"
            try TestSupport.run(["lv2apply", "-i", dryPath, "-o", appliedPath, uri])
            let applied = try SoundFile(path: appliedPath).samples
            XCTAssertEqual(first.count, applied.count, uri)
            XCTAssertLessThanOrEqual(TestSupport.peak(first), TestSupport.peak(applied) + 1e-6, uri)
            let difference = zip(first, applied).map { abs($0 - $1) }.max() ?? .infinity
            XCTAssertLessThan(difference, 1e-5, "\(uri): graphhost and lv2apply differ by up to \(difference)")
        }
    }
}

/// Port properties: lv2:sampleRate bounds in Hz, toggles and enumerations by name, whole numbers for lv2:integer.
extension LV2HostTests {
    static let lowpass = "http://plugin.org.uk/swh-plugins/lowpass_iir"
    static let balance = "http://gareus.org/oss/lv2/balance"

    /// A mono 5 kHz sine at -6 dBFS as a float WAV and an MP3 of it.
    func sine5k() throws -> (wav: String, mp3: String) {
        let wav = TestSupport.directory.appendingPathComponent("sine-5k-mono.wav").path
        let mp3 = wav + ".mp3"
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "1", "-e", "floating-point", "-b", "32", wav, "synth", "1", "sine",
            "5000", "gain", "-n", "-6",
        ])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, mp3])
        return (wav, mp3)
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    /// swh lowpass_iir declares its cutoff in fractions of the sample rate: graphhost's default is 0.337525 × 48 kHz,
    /// a cutoff of 1000 Hz is taken as 1000 Hz (not clamped to 0.45), and 5 kHz is then attenuated exactly as
    /// lv2apply attenuates it with the same cutoff.
    func testSampleRatePortsTakeHertz() throws {
        let (_, mp3) = try sine5k()
        let defaults = try GraphDocument.load(
            path: graph(mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.lowpass)" }"#))
        let cutoff = try XCTUnwrap((defaults.node("fx")?.definition as? LV2Node)?.controlValues[0])
        XCTAssertEqual(cutoff, 0.337525 * 48000, accuracy: 0.5)
        // swh singlePara writes its default in Hz (440) on a port whose range is in fractions (0…0.4): it stays 440 Hz.
        let para = try GraphDocument.load(
            path: graph(
                mp3, channels: 1,
                lv2: #"{ "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/singlePara" }"#))
        XCTAssertEqual((para.node("fx")?.definition as? LV2Node)?.controlValues[1], 440)
        let path = graph(
            mp3, channels: 1,
            lv2:
                #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.lowpass)", "controls": { "cutoff": 1000, "#
                + #""stages": 2 } }"#
        )
        let filtered = try TestSupport.render(path).samples
        let dry = try TestSupport.renderStream(mp3, channels: 1)
        let dryPath = TestSupport.directory.appendingPathComponent("sine-5k-dry-\(UUID().uuidString).wav").path
        let writer = try SoundFileWriter(path: dryPath, sampleRate: 48000, channels: 1)
        try writer.write(dry, frames: dry.count)
        writer.close()
        try TestSupport.run([
            "lv2apply", "-i", dryPath, "-o", dryPath + ".lp.wav", "-c", "cutoff", "1000", "-c", "stages", "2",
            Self.lowpass,
        ])
        let reference = try SoundFile(path: dryPath + ".lp.wav").samples
        let settled = 4800..<(dry.count - 4800)
        let attenuation = 20 * log10(Self.rms(dry[settled]) / Self.rms(filtered[settled]))
        let expected = 20 * log10(Self.rms(dry[settled]) / Self.rms(reference[settled]))
        XCTAssertGreaterThan(expected, 30, "a 4-pole lowpass at 1 kHz attenuates 5 kHz by more than 30 dB")
        XCTAssertEqual(attenuation, expected, accuracy: 0.1)
        // Live, 1000 is 1000 Hz too.
        let session = try TestSupport.session(path)
        defer { session.close() }
        let instance = try XCTUnwrap(session.graph.instances["fx"] as? LV2Instance)
        XCTAssertEqual(try instance.targets(of: .set(parameter: ParameterID("cutoff"), value: 1000)).first?.value, 1000)
        XCTAssertEqual(
            try instance.targets(of: .set(parameter: ParameterID("stages"), value: 2.6)).first?.value, 3,
            "lv2:integer rounds")
    }

    /// x42 balance: an enumeration chosen by label in the graph file (Downmix to Mono: both channels equal), a toggle
    /// switched by name live (phaseL on: the left channel inverted), and an unknown name refused with the names.
    func testEnumerationsAndTogglesTakeNames() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let mono = try TestSupport.render(
            graph(
                mp3,
                lv2:
                    #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.balance)", "#
                    + #""controls": { "monoswap": "downmix to mono" } }"#
            )
        ).samples
        let frames = mono.count / 2
        XCTAssertGreaterThan(TestSupport.peak(mono), 0.1)
        for f in (frames / 2)..<frames { XCTAssertEqual(mono[2 * f], mono[2 * f + 1], accuracy: 1e-6, "frame \(f)") }
        let path = graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.balance)" }"#)
        let straight = try TestSupport.render(path).samples
        let inverted = try TestSupport.render(
            path, events: [TimedCommand(frame: 0, command: try NodeRequest.parse("set fx phaseL on"))]
        ).samples
        for f in (frames / 2)..<frames {
            XCTAssertEqual(inverted[2 * f], -straight[2 * f], accuracy: 1e-5, "left, frame \(f)")
            XCTAssertEqual(inverted[2 * f + 1], straight[2 * f + 1], accuracy: 1e-5, "right, frame \(f)")
        }
        let session = try TestSupport.session(path)
        defer { session.close() }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set fx monoswap Upside Down"))) { error in
            XCTAssertTrue(
                "\(error)".contains("'fx' monoswap has no value named 'Upside Down'; names: L->L, R->R (Straight), "),
                "\(error)")
        }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set fx balance loud"))) { error in
            XCTAssertTrue("\(error)".contains("it takes a number, -1…1"), "\(error)")
        }
        XCTAssertNoThrow(try session.apply(NodeRequest.parse("set fx monoswap L->R, R->L (Swap Channels)")))
        let completion = CommandCompletion(session: session)
        XCTAssertEqual(completion.complete("set fx monoswap Down"), ["set fx monoswap Downmix to Mono "])
        XCTAssertEqual(completion.complete("set fx monoswap Downmix t"), ["set fx monoswap Downmix to Mono "])
        XCTAssertEqual(completion.complete("set fx phaseL "), ["set fx phaseL off ", "set fx phaseL on "])
    }
}

extension LV2HostTests {
    /// The plugins' log ring: a burst of more lines than it holds drops the excess and counts it, and the ring keeps
    /// taking lines afterwards (it once stopped for good at its first overflow).
    func testTheLogRingCountsWhatItDropsAndKeepsLogging() throws {
        let log = try XCTUnwrap(gh_lv2_log_create(1, 2, 3, 4))
        defer { gh_lv2_log_destroy(log) }
        let feature = gh_lv2_log_feature_data(log).assumingMemoryBound(to: LV2_Log_Log.self).pointee
        func write(_ n: Int) {
            _ = withVaList([Int32(n)]) { feature.vprintf(feature.handle, 2, "line %d", $0) }
        }
        func drain() -> [String] {
            var lines: [String] = []
            var buffer = [CChar](repeating: 0, count: 600)
            while gh_lv2_log_next(log, &buffer, buffer.count) >= 0 { lines.append(String(cString: buffer)) }
            return lines
        }
        for n in 0..<300 { write(n) }
        let first = drain()
        XCTAssertEqual(first.count, 256)
        XCTAssertEqual(first.first, "line 0")
        XCTAssertEqual(gh_lv2_log_dropped(log), 44)
        write(1000)
        XCTAssertEqual(drain(), ["line 1000"])
    }
}

extension LV2HostTests {
    static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Stereo"

    /// Offline the worker runs in place, so a convolver (x42 zeroconvolv, which loads its impulse response through
    /// the worker) renders the same twice, and its first second is processed rather than silent while an IR loads.
    func testConvolverRendersTheSameTwiceFromTheFirstSecond() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let path = graph(
            mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.convolver)", "preset": "No-OP Stereo" }"#)
        let first = try TestSupport.render(path).samples
        let second = try TestSupport.render(path).samples
        XCTAssertEqual(first, second)
        XCTAssertGreaterThan(TestSupport.peak(Array(first[0..<48000])), 0.05, "the first half second is silent")
        XCTAssertGreaterThan(TestSupport.peak(Array(first[48000..<96000])), 0.05, "the first second is silent")
    }

    /// Live, state a plugin restores while run() goes on (zeroconvolv declares state:threadSafeRestore) schedules its
    /// work through the restore ring, not the render thread's request ring, and the worker thread answers it.
    func testWorkScheduledDuringARestoreGoesThroughItsOwnRing() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let session = try TestSupport.session(
            graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "\#(Self.convolver)" }"#))
        defer { session.close() }
        session.rendersConcurrently = true
        session.graph.start()
        let fx = try XCTUnwrap(session.graph.instances["fx"] as? LV2Instance)
        let before = fx.workers[0].restoreRequests.index.written.load(ordering: .acquiring)
        try session.apply(NodeRequest.parse("preset fx No-OP Stereo"))
        XCTAssertGreaterThan(fx.workers[0].restoreRequests.index.written.load(ordering: .acquiring), before)
        XCTAssertTrue(fx.waitForWorker())
        XCTAssertEqual(
            fx.workers[0].restoreRequests.index.readable(), 0, "the worker thread did not take the restore's work")
    }
}

/// Plugins whose channel counts differ from the bus: one input reads the channels' average, one output feeds every
/// channel.
extension LV2HostTests {
    /// swh split (1 in, 2 out: the input on both outputs) on a stereo bus: both channels are the average of the two.
    func testAMonoInputReadsTheChannelsAverage() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let dry = try TestSupport.renderStream(mp3)
        let out = try TestSupport.render(
            graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/split" }"#)
        ).samples
        XCTAssertEqual(out.count, dry.count)
        for f in 0..<(dry.count / 2) {
            let average = (dry[2 * f] + dry[2 * f + 1]) / 2
            XCTAssertEqual(out[2 * f], average, accuracy: 1e-6, "frame \(f)")
            XCTAssertEqual(out[2 * f + 1], average, accuracy: 1e-6, "frame \(f)")
        }
    }

    /// swh ringmod_2i1o (2 in, 1 out; at depth 0 the output is twice its first input) on a stereo bus: its one output
    /// is on both channels.
    func testAMonoOutputFeedsEveryChannel() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let dry = try TestSupport.renderStream(mp3)
        let out = try TestSupport.render(
            graph(mp3, lv2: #"{ "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/ringmod_2i1o" }"#)
        ).samples
        for f in 0..<(dry.count / 2) {
            XCTAssertEqual(out[2 * f], 2 * dry[2 * f], accuracy: 1e-6, "frame \(f)")
            XCTAssertEqual(out[2 * f + 1], out[2 * f], "frame \(f)")
        }
    }

    /// A mono-to-stereo reverb (swh plate) on a stereo bus: a stereo tail, the same in two renders.
    func testAMonoToStereoReverb() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = graph(
            mp3,
            lv2:
                #"{ "id": "fx", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/plate", "#
                + #""controls": { "wet": 1 } }"#
        )
        let out = try TestSupport.render(path).samples
        XCTAssertEqual(out, try TestSupport.render(path).samples)
        XCTAssertTrue(out.allSatisfy { $0.isFinite })
        XCTAssertGreaterThan(TestSupport.peak(out), 0.05)
        let different = (0..<(out.count / 2)).filter { abs(out[2 * $0] - out[2 * $0 + 1]) > 1e-3 }.count
        XCTAssertGreaterThan(different, out.count / 4, "the reverb's channels are nearly identical")
    }
}

extension LV2HostTests {
    /// Latency compensation: a dry path and the same signal through a look-ahead limiter that does not limit (x42
    /// dpl, which delays by its reported latency) summed in a mixer. Aligned, the sum is twice the input delayed by
    /// that latency; unaligned it would be comb-filtered.
    func testParallelPathsAreAlignedAtTheMixer() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" },
                         { "id": "lim", "type": "lv2", "uri": "http://gareus.org/oss/lv2/dpl#stereo", \
            "controls": { "threshold": 0, "truepeak": false } },
                         { "id": "mix", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "mix:0" }, { "from": "s", "to": "lim" }, { "from": "lim", "to": "mix:1" },
                         { "from": "mix", "to": "out" } ] }
            """)
        let session = try TestSupport.session(path)
        let compensation = session.graph.compensation
        session.close()
        let latency = try XCTUnwrap(compensation.latency["lim"])
        XCTAssertGreaterThan(latency, 0)
        XCTAssertEqual(compensation.delays["mix"], [latency, 0])
        XCTAssertEqual(compensation.total, latency)
        let dry = try TestSupport.renderStream(mp3)
        let out = try TestSupport.render(path).samples
        let frames = dry.count / 2
        var worst: Float = 0
        for f in latency..<frames {
            for c in 0..<2 { worst = max(worst, abs(out[2 * f + c] - 2 * dry[2 * (f - latency) + c])) }
        }
        XCTAssertLessThan(worst, 1e-5, "the sum is not twice the input \(latency) frames late")
    }
}

extension LV2HostTests {
    /// Properties (patch:Set) with a fixture that reads its gain from a file named by a path property, through the
    /// worker, as convolvers load impulse responses: the graph file's value (a path relative to the graph) is in
    /// effect from the first sample, `set fx gainFile PATH` changes it live, a file that cannot be read is refused
    /// naming it, and `status` lists the values, including those the plugin reports when asked (patch:Get).
    func testPathPropertiesFromTheGraphAndLive() throws {
        try Self.loadFixture("file-gain.lv2", source: "file_gain.c", binary: "file_gain.so")
        let half = TestSupport.directory.appendingPathComponent("gain-half.txt").path
        let quarter = TestSupport.directory.appendingPathComponent("gain-quarter.txt").path
        try "0.5\n".write(toFile: half, atomically: true, encoding: .utf8)
        try "0.25\n".write(toFile: quarter, atomically: true, encoding: .utf8)
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 2)
        let path = graph(
            mp3, channels: 1,
            lv2:
                #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:file-gain", "#
                + #""properties": { "gainFile": "gain-half.txt" } }"#
        )
        let dry = try TestSupport.renderStream(mp3, channels: 1)
        let out = try TestSupport.render(
            path, events: [TimedCommand(frame: 48000, command: try NodeRequest.parse("set fx gainFile \(quarter)"))]
        ).samples
        XCTAssertEqual(Array(out[0..<48000]), dry[0..<48000].map { $0 * 0.5 })
        // A new file makes a new instance, which loads it, runs unheard for the pre-roll and is crossfaded to.
        let switched = 48000 + Int((GraphSession.filePrerollSeconds + GraphDocument.defaultCrossfadeSeconds) * 48000)
        XCTAssertTrue(
            Array(out[switched...]) == dry[switched...].map { $0 * 0.25 }, "the new gain is not applied after the swap")
        let session = try TestSupport.session(path)
        defer { session.close() }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set fx gainFile /no/such.txt"))) {
            XCTAssertTrue("\($0)".contains("gainFile: cannot read '/no/such.txt' (no such file)"), "\($0)")
        }
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: graph(
                    mp3, channels: 1,
                    lv2:
                        #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:file-gain", "#
                        + #""properties": { "gainFile": "missing.txt", "colour": "red" } }"#
                ))
        ) {
            XCTAssertTrue("\($0)".contains("nodes[1].properties.gainFile: gainFile: cannot read"), "\($0)")
            XCTAssertTrue(
                "\($0)".contains("nodes[1].properties.colour: unknown property 'colour'; properties: gainFile"), "\($0)"
            )
        }
        XCTAssertEqual(session.graph.pluginProperties["fx"], ["gainFile": half])
        // The plugin reports the gain it applied (patch:Set on its notify port), which `status` then lists too.
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { buffer.deallocate() }
        session.render(frames: 256, interleaved: buffer)
        session.graph.drainPluginLogs()
        XCTAssertEqual(session.graph.pluginProperties["fx"], ["gainFile": half, "gain": "0.5"])
        // With no property set, graphhost asks for the values (patch:Get) and the plugin reports its gain.
        let unset = try TestSupport.session(
            graph(mp3, channels: 1, lv2: #"{ "id": "fx", "type": "lv2", "uri": "urn:graphhost:test:file-gain" }"#))
        defer { unset.close() }
        unset.render(frames: 256, interleaved: buffer)
        unset.graph.drainPluginLogs()
        XCTAssertEqual(unset.graph.pluginProperties["fx"], ["gain": "1"])
    }
}

extension LV2HostTests {
    /// A one-second burst of noise between two seconds of silence (stereo MP3), to drive a sidechain.
    static func burst() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("voice-burst.mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let quiet = path + ".quiet.wav"
        let loud = path + ".loud.wav"
        let wav = path + ".wav"
        try TestSupport.run(["sox", "-q", "-n", "-r", "48000", "-c", "2", quiet, "trim", "0", "1"])
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", loud, "synth", "1", "whitenoise", "gain", "-n", "-3",
        ])
        try TestSupport.run(["sox", "-q", quiet, loud, quiet, wav])
        try TestSupport.run(["lame", "--quiet", "-b", "192", wav, path])
        return path
    }

    /// A sidechain compressor (swh sc3, detecting on its sidechain) ducks a steady tone while a second stream, linked
    /// to its sidechain port by name, is loud; without that link the sidechain reads silence (and `validate` says
    /// so) and nothing is ducked.
    func testASidechainLinkedByPortNameDucksMusicFromASecondStream() throws {
        let music = try TestSupport.sine(seconds: 3)
        let voice = try Self.burst()
        func graph(linked: Bool) -> String {
            TestSupport.graph(
                """
                { "nodes": [ { "id": "music", "type": "stream", "url": "\(music)" }, \
                { "id": "voice", "type": "stream", "url": "\(voice)" },
                             { "id": "duck", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/sc3",
                               "controls": { "threshold": -30, "ratio": 10, "attack": 2, "release": 50, \
                "chain_bal": 1 } },
                             { "id": "sink", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
                  "links": [ { "from": "music", "to": "duck" }, \
                \(linked ? #"{ "from": "voice", "to": "duck:sidechain" },"# : #"{ "from": "voice", "to": "sink" },"#)
                             { "from": "duck", "to": "out" } ] }
                """)
        }
        func rms(_ x: [Float], _ from: Double, _ to: Double) -> Double {
            Self.rms(x[Int(from * 96000)..<Int(to * 96000)])
        }
        let ducked = try TestSupport.render(graph(linked: true), durationFrames: 3 * 48000).samples
        let drop = 20 * log10(rms(ducked, 0.3, 0.9) / rms(ducked, 1.3, 1.9))
        XCTAssertGreaterThan(drop, 10, "the tone was not ducked while the sidechain was loud")
        XCTAssertEqual(
            20 * log10(rms(ducked, 0.3, 0.9) / rms(ducked, 2.3, 2.9)), 0, accuracy: 1, "the tone did not come back")
        let unlinkedPath = graph(linked: false)
        let document = try GraphDocument.load(path: unlinkedPath)
        XCTAssertTrue(
            document.warnings.contains {
                "\($0)".contains("sidechain input 'sidechain' of 'duck' is not linked and reads silence")
            }, "\(document.warnings)")
        let steady = try TestSupport.render(unlinkedPath, durationFrames: 3 * 48000).samples
        XCTAssertEqual(20 * log10(rms(steady, 0.3, 0.9) / rms(steady, 1.3, 1.9)), 0, accuracy: 0.5)
        XCTAssertTrue(
            GraphPrinter.text(try GraphDocument.load(path: graph(linked: true))).contains("voice:0 -> duck:sidechain"))
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "music", "type": "stream", "url": "\(music)" },
                                 { "id": "duck", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/sc3" }, \
                    { "id": "out", "type": "output" } ],
                      "links": [ { "from": "music", "to": "duck" }, { "from": "music", "to": "duck:left_in" }, \
                    { "from": "duck", "to": "out" } ] }
                    """))
        ) { XCTAssertTrue("\($0)".contains("'duck:left_in': 'left_in' is one of its main inputs"), "\($0)") }
    }
}

/// Instruments played by a `midi` node reading a Standard MIDI File.
extension LV2HostTests {
    /// mda JX10 (an instrument: MIDI in, stereo out) plays a MIDI file offline: sound while the notes are held, the
    /// same in two renders; mda Piano plays them at their pitch (A4, then C5 at the frame the file says).
    func testAnInstrumentPlaysAMIDIFile() throws {
        let midi = try TestSupport.twoNotes()
        let path = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "keys", "type": "midi", "file": "\(midi)" },
                         { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/JX10" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "keys", "to": "synth" }, { "from": "synth", "to": "out" } ] }
            """)
        let out = try TestSupport.render(path, durationFrames: 72000).samples
        XCTAssertEqual(out, try TestSupport.render(path, durationFrames: 72000).samples)
        XCTAssertTrue(out.allSatisfy { $0.isFinite })
        let left = stride(from: 0, to: out.count, by: 2).map { out[$0] }
        XCTAssertGreaterThan(TestSupport.peak(Array(left[4800..<24000])), 0.05, "silent while A4 is held")
        // JX10's default patch stacks detuned oscillators; mda Piano shows the pitch plainly.
        let pianoPath = TestSupport.graph(
            (try String(contentsOfFile: path, encoding: .utf8)).replacingOccurrences(of: "mda/JX10", with: "mda/Piano"))
        let played = try TestSupport.render(pianoPath, durationFrames: 72000).samples
        let pianoLeft = stride(from: 0, to: played.count, by: 2).map { played[$0] }
        XCTAssertEqual(
            Double(ToneMeasure.period(pianoLeft[9600..<14400], shortest: 60, longest: 240)), 48000 / 440, accuracy: 1)
        XCTAssertEqual(
            Double(ToneMeasure.period(pianoLeft[33600..<38400], shortest: 60, longest: 240)), 48000 / 523.25,
            accuracy: 1)
        // A reload that gives the kept instrument another midi node switches its events (they are not crossfaded).
        let other = TestSupport.directory.appendingPathComponent("two-notes-again.mid").path
        try FileManager.default.copyItem(atPath: midi, toPath: other)
        let reload = TestSupport.graph(
            (try String(contentsOfFile: pianoPath, encoding: .utf8)).replacingOccurrences(
                of: "\"keys\"", with: "\"keys2\""
            ).replacingOccurrences(of: midi, with: other))
        let swapped = try TestSupport.render(
            pianoPath, durationFrames: 72000, events: [TimedCommand(frame: 24000, request: .load(path: reload))]
        ).samples
        XCTAssertTrue(swapped.allSatisfy { $0.isFinite && abs($0) < 2 })
        XCTAssertGreaterThan(TestSupport.peak(Array(swapped[48000...])), 0.05, "the second midi node does not play")
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "keys", "type": "midi", "file": "\(try TestSupport.sine(seconds: 1))" },
                                 { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/JX10" }, \
                    { "id": "out", "type": "output" } ],
                      "links": [ { "from": "keys", "to": "synth" }, { "from": "synth", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue("\($0)".contains("nodes[0].file: MIDI file"), "\($0)")
            XCTAssertTrue("\($0)".contains("not a Standard MIDI File"), "\($0)")
        }
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 1))" },
                                 { "id": "synth", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/JX10" }, \
                    { "id": "out", "type": "output" } ],
                      "links": [ { "from": "song", "to": "synth" }, { "from": "synth", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue(
                "\($0)".contains(
                    "'synth' takes MIDI events (a midi node's or a MIDI processor's), not the audio of 'song'"), "\($0)"
            )
        }
    }
}

extension LV2HostTests {
    /// MIDI outputs feed other plugins: a midi node → x42 miditranspose (a MIDI processor, +12 semitones) → mda Piano.
    /// A4 sounds as A5; bypassing the processor passes the notes as they are.
    func testAMIDIProcessorFeedsAnInstrument() throws {
        let midi = try TestSupport.twoNotes()
        let path = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "keys", "type": "midi", "file": "\(midi)" },
                         { "id": "up", "type": "lv2", "uri": "http://gareus.org/oss/lv2/midifilter#miditranspose", \
            "controls": { "transpose": 12 } },
                         { "id": "piano", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Piano" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "keys", "to": "up" }, { "from": "up", "to": "piano" }, \
            { "from": "piano", "to": "out" } ] }
            """)
        func left(_ x: [Float]) -> [Float] { stride(from: 0, to: x.count, by: 2).map { x[$0] } }
        let raised = left(try TestSupport.render(path, durationFrames: 48000).samples)
        XCTAssertEqual(
            Double(ToneMeasure.period(raised[9600..<14400], shortest: 30, longest: 240)), 48000 / 880, accuracy: 1)
        let passed = left(
            try TestSupport.render(
                path, durationFrames: 48000,
                events: [TimedCommand(frame: 0, command: try NodeRequest.parse("bypass up on"))]
            ).samples)
        XCTAssertEqual(
            Double(ToneMeasure.period(passed[9600..<14400], shortest: 60, longest: 240)), 48000 / 440, accuracy: 1)
        XCTAssertThrowsError(
            try GraphDocument.load(
                path: TestSupport.graph(
                    """
                    { "nodes": [ { "id": "keys", "type": "midi", "file": "\(midi)" },
                                 { "id": "up", "type": "lv2", \
                    "uri": "http://gareus.org/oss/lv2/midifilter#miditranspose" }, { "id": "out", "type": "output" } ],
                      "links": [ { "from": "keys", "to": "up" }, { "from": "up", "to": "out" } ] }
                    """))
        ) {
            XCTAssertTrue(
                "\($0)".contains(
                    "'up' sends MIDI events: link it to an instrument, a MIDI processor or a plugin's MIDI input"),
                "\($0)")
        }
    }
}
