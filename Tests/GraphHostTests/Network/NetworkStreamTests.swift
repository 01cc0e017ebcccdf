import Foundation
import XCTest

@testable import GraphHost

/// Network streams against real servers on 127.0.0.1: HTTP files with throttling, drops and Range, errors,
/// stalls, bounded memory, the cache, and Icecast radio with titles.
final class NetworkStreamTests: XCTestCase {
    func streamGraph(_ url: String, bufferSeconds: Double = 0.5, cache: String? = nil, loop: Bool = false) -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(url)", \
            "bufferSeconds": \
            \(bufferSeconds)\(cache.map { #", "cache": "\#($0)""# } ?? "")\(loop ? #", "loop": true"# : "") },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
    }

    /// Throttled downloads that drop mid-file resume with a Range request (or skip ahead when the server ignores
    /// Range), and a redirect is followed: the decoded output equals decoding the whole file locally, no gap, no
    /// repeat.
    func testDroppedDownloadsResumeWithoutGapOrRepeat() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 4)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let local = try TestSupport.renderStream(mp3)
        _ = try server.serve(mp3, as: "song.mp3")
        for url in ["rate=400000&drop=20000", "rate=400000&drop=30000&norange=1", "drop=1000"].map({
            server.url("song.mp3?" + $0)
        })
            + [server.url("moved?to=song.mp3")]
        {
            let query = url
            let out = try TestSupport.render(streamGraph(url))
            XCTAssertEqual(out.samples.count, local.count, query)
            XCTAssertTrue(out.samples == local, "\(query): differs from the local decode")
        }
    }

    /// A stall longer than the read timeout ends that request; the download resumes with a Range request from the
    /// byte reached, and the output still equals the local decode.
    func testAStallBeyondTheReadTimeoutResumes() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(mp3, as: "stalling.mp3", query: "stall=\(HTTPByteSource.readTimeout + 1.5)@12000")
        XCTAssertTrue(try TestSupport.render(streamGraph(url)).samples == (try TestSupport.renderStream(mp3)))
    }

    /// A live stream (declared by an ICY header, no Content-Length) whose connection ends reconnects and plays on.
    func testAnEndlessStreamReconnects() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(mp3, as: "radio.mp3", query: "endless=1")
        let session = try TestSupport.session(streamGraph(url))
        defer { session.close() }
        var loudAfterFirst = false
        _ = try OfflineRenderer(session: session).render(durationFrames: 48000 * 3) { samples, frames in
            // Past the first connection's second of audio, sound must go on.
            if session.graph.streams[0].counters.framesPlayed.load(ordering: .relaxed) > 48000 * 3 / 2 {
                for i in 0..<(2 * frames) where abs(samples[i]) > 0.05 { loudAfterFirst = true }
            }
        }
        XCTAssertTrue(loudAfterFirst)
        XCTAssertGreaterThanOrEqual(session.graph.streams[0].network?.reconnects ?? 0, 1)
    }

    /// Each new connection of a live stream is announced at its first byte, for the frame guard.
    func testAReconnectIsAnnouncedAtItsFirstByte() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let size = try Data(contentsOf: URL(fileURLWithPath: mp3)).count
        let server = try HTTPTestServer()
        defer { server.stop() }
        let source = HTTPByteSource(
            url: try server.serve(mp3, as: "radio.mp3", query: "endless=1"), status: NetworkStreamStatus())
        defer { source.cancel() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 1)
        defer { buffer.deallocate() }
        var total = 0
        var breaks: [Int] = []
        while total <= 2 * size {
            let n = try source.read(into: buffer)
            XCTAssertGreaterThan(n, 0)
            if source.lastReadFollowsBreak { breaks.append(total) }
            total += n
        }
        XCTAssertEqual(breaks, [size, 2 * size])
    }

    /// A finite file sent without a Content-Length (chunked, or closed at its end) and not declared live is a finite
    /// stream: it plays once, exactly as the local decode, and ends; it is neither replayed nor reconnected.
    func testAFiniteDownloadWithoutALengthEnds() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let local = try TestSupport.renderStream(mp3)
        for query in ["chunked=1", "close=1"] {
            let url = try server.serve(mp3, as: "finite.mp3", query: query)
            let session = try TestSupport.session(streamGraph(url))
            defer { session.close() }
            var samples: [Float] = []
            // Twice the media's length: a replay would sound in the second half.
            _ = try OfflineRenderer(session: session).render(durationFrames: local.count) { block, frames in
                samples.append(contentsOf: UnsafeBufferPointer(start: block, count: 2 * frames))
            }
            let stream = session.graph.streams[0]
            XCTAssertTrue(stream.finished, query)
            XCTAssertEqual(stream.network?.reconnects, 0, query)
            XCTAssertTrue(Array(samples[..<local.count]) == local, "\(query): differs from the local decode")
            XCTAssertEqual(TestSupport.peak(Array(samples[local.count...])), 0, "\(query): sound after the media's end")
        }
    }

    /// Retries back off, doubling up to a cap, and give up once the series of failures would outlast the limit; a
    /// connection that stayed up long enough starts a new series.
    func testRetriesBackOffAndAreBounded() {
        var retry = StreamRetry(limit: 30)
        let start = Date(timeIntervalSince1970: 1_000_000)
        var now = start
        var waits: [Double] = []
        // A server that hangs up one second after each answer.
        while let wait = retry.failed(connectedFor: 1, progressed: false, now: now) {
            waits.append(wait)
            now += wait + 1
        }
        XCTAssertEqual(Array(waits.prefix(6)), [0.25, 0.5, 1, 2, 4, 4])
        XCTAssertTrue(waits.allSatisfy { $0 <= StreamRetry.maxDelay })
        XCTAssertLessThanOrEqual(now.timeIntervalSince(start), 30 + 1)
        XCTAssertGreaterThan(now.timeIntervalSince(start) + StreamRetry.maxDelay + 1, 30, "gave up early: \(waits)")
        XCTAssertEqual(
            retry.failed(connectedFor: StreamRetry.healthySeconds, progressed: false, now: now), StreamRetry.firstDelay)
        var never = StreamRetry(limit: 0)
        XCTAssertNil(never.failed(connectedFor: 0, progressed: false, now: now))
    }

    /// A 200 with an empty body and a server that never answers say what happened; the failed render leaves no file
    /// behind (neither the output nor the file it was being written to).
    func testEmptyAndSilentServersAreNamedAndLeaveNoFile() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let folder = TestSupport.directory.appendingPathComponent("failed-render-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let binary = TestSupport.executable
        for (url, expected) in [
            (server.url("empty"), "empty response from \(server.url("empty"))"),
            (server.url("silent"), "no answer from \(server.url("silent")) within 5 s"),
        ] {
            let result = try TestSupport.execute(binary, ["render", streamGraph(url), "-o", folder + "/out.wav"])
            XCTAssertEqual(result.status, 1)
            let err = String(decoding: result.err, as: UTF8.self)
            XCTAssertTrue(err.contains(expected), err)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], url)
        }
    }

    /// A stream that fails mid-way (its download breaks and `retrySeconds` is 0) fades out over the audio it has left
    /// instead of stopping dead, and ends.
    func testAFailedStreamFadesOut() throws {
        let sine = try TestSupport.sine(seconds: 4)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(sine, as: "breaks.mp3", query: "drop=60000")
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(url)", "retrySeconds": 0 }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let session = try TestSupport.session(graph)
        defer { session.close() }
        let stream = session.graph.streams[0]
        session.graph.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 256)
        defer { buffer.deallocate() }
        var out: [Float] = []
        XCTAssertTrue(
            TestSupport.waitUntil {
                while !stream.canRender(frames: 256) { stream.wakeup.waitForData() }
                session.render(frames: 256, interleaved: buffer)
                out.append(contentsOf: UnsafeBufferPointer(start: buffer, count: 512))
                return stream.finished
            })
        XCTAssertTrue(
            "\(stream.failure.map { "\($0)" } ?? "none")".contains("gave up retrying after 0 s"),
            "\(String(describing: stream.failure))")
        let last = try XCTUnwrap(out.lastIndex { abs($0) > 1e-6 }) / 2
        let fade = Int(GraphDocument.defaultCrossfadeSeconds * 48000)
        XCTAssertGreaterThan(last, 48000, "the stream played")
        func rms(_ from: Int, _ to: Int) -> Double {
            (out[(2 * from)..<(2 * to)].reduce(0) { $0 + Double($1) * Double($1) } / Double(2 * (to - from)))
                .squareRoot()
        }
        let steady = rms(last - 2 * fade - 960, last - 2 * fade)
        XCTAssertGreaterThan(steady, 0.3)
        XCTAssertLessThan(rms(last - fade / 8, last + 1), 0.3 * steady, "the audio stops dead")
        XCTAssertTrue(out.allSatisfy { $0.isFinite && abs($0) <= 1 })
    }

    /// A 404, a redirect loop and a refused connection fail at start-up with the status or reason and the URL.
    func testHTTPErrorsNameTheStatusAndURL() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let out = TestSupport.directory.appendingPathComponent("never.wav").path
        let binary = TestSupport.executable
        for (url, expected) in [
            (server.url("missing"), "HTTP 404 from \(server.url("missing")) (not found)"),
            (server.url("loop"), "cannot stream \(server.url("loop")): Maximum (5) redirects followed"),
            ("http://127.0.0.1:9/none.mp3", "cannot stream http://127.0.0.1:9/none.mp3"),
        ] {
            let result = try TestSupport.execute(binary, ["render", streamGraph(url), "-o", out])
            XCTAssertNotEqual(result.status, 0)
            let err = String(decoding: result.err, as: UTF8.self)
            XCTAssertTrue(err.contains(expected), err)
        }
    }

    /// TLS is verified: a server with a self-signed certificate is refused, naming the certificate problem.
    func testTLSCertificatesAreVerified() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let server = try HTTPTestServer(tls: true)
        defer { server.stop() }
        let url = try server.serve(mp3, as: "secure.mp3")
        XCTAssertTrue(url.hasPrefix("https://"))
        XCTAssertThrowsError(try TestSupport.render(streamGraph(url))) { error in
            XCTAssertTrue(
                "\(error)".contains("cannot stream \(url)") && "\(error)".lowercased().contains("certificate"),
                "\(error)")
        }
    }

    /// While a render thread runs, a swap to a graph whose stream cannot be fetched is refused with the HTTP
    /// status, and the running graph stays.
    func testASwapToAFailingStreamIsRefused() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let session = try TestSupport.session(TestSupport.streamGraph(mp3))
        defer { session.close() }
        session.rendersConcurrently = true
        let running = session.graph
        XCTAssertThrowsError(try session.apply(Command.parse("load \(streamGraph(server.url("missing")))"))) { error in
            XCTAssertTrue("\(error)".contains("HTTP 404 from \(server.url("missing"))"), "\(error)")
        }
        XCTAssertTrue(session.graph === running)
    }

    /// Rendering in real time while the server stalls longer than the buffer: silence and an underrun, state
    /// "rebuffering", then playback resumes once the buffer refilled; never garbage.
    func testAStallUnderrunsThenRecovers() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 4)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(mp3, as: "stall.mp3", query: "rate=40000&stall=1.5@20000")
        let session = try TestSupport.session(streamGraph(url, bufferSeconds: 0.3))
        defer { session.close() }
        let stream = session.graph.streams[0]
        session.graph.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1024)
        defer { buffer.deallocate() }
        var states: [NetworkStreamStatus.State] = []
        var loud = [Bool]()
        let started = Date()
        var rendered = 0
        while rendered < 48000 * 5 {
            // Real-time pace: one 1024-frame block per 21.3 ms.
            let due = started.addingTimeInterval(Double(rendered) / 48000)
            if due > Date() { Thread.sleep(until: due) }
            session.render(frames: 1024, interleaved: buffer)
            let block = UnsafeBufferPointer(start: buffer, count: 2048)
            XCTAssertTrue(block.allSatisfy { $0.isFinite && abs($0) <= 1 })
            loud.append(block.contains { abs($0) > 0.01 })
            if states.last != stream.state { states.append(stream.state) }
            stream.wakeup.signalSpace()
            rendered += 1024
        }
        XCTAssertGreaterThan(stream.counters.underruns.load(ordering: .relaxed), 0)
        XCTAssertTrue(states.contains(.rebuffering), "\(states)")
        let firstRebuffer = states.firstIndex(of: .rebuffering)!
        XCTAssertTrue(states[firstRebuffer...].contains(.playing), "\(states)")
        XCTAssertTrue(loud.suffix(40).contains(true), "sound after the stall")
    }

    /// The decoder paces the download: with nobody rendering, the download pauses once the bounded buffers are full,
    /// and goes on when audio is played.
    func testMemoryStaysBounded() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 60)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(mp3, as: "long.mp3")
        let session = try TestSupport.session(streamGraph(url))
        defer { session.close() }
        session.graph.start()
        let stream = session.graph.streams[0]
        let network = try XCTUnwrap(stream.network)
        XCTAssertTrue(
            TestSupport.waitUntil { network.paused },
            "the download did not pause: \(network.bytesLoaded) bytes")
        let first = network.bytesLoaded
        let total = try XCTUnwrap(network.totalBytes)
        XCTAssertLessThan(first, total / 2, "\(first) of \(total) bytes fetched")
        XCTAssertLessThan(first, HTTPByteSource.bufferBytes + 200_000)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
        defer { buffer.deallocate() }
        XCTAssertTrue(
            TestSupport.waitUntil {
                session.render(frames: 4096, interleaved: buffer)
                stream.wakeup.signalSpace()
                return network.bytesLoaded > first
            }, "the download did not go on while audio was played")
    }

    /// With a cache path the finished download is kept and a later run plays it with the server gone.
    func testCacheKeepsTheDownloadForOfflinePlay() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let server = try HTTPTestServer()
        let url = try server.serve(mp3, as: "cached.mp3", query: "drop=15000")
        let cache = TestSupport.directory.appendingPathComponent("cache-\(UUID().uuidString).mp3").path
        let path = streamGraph(url, cache: cache)
        let online = try TestSupport.render(path).samples
        server.stop()
        XCTAssertEqual(FileManager.default.contents(atPath: cache), FileManager.default.contents(atPath: mp3))
        let offline = try TestSupport.render(path).samples
        XCTAssertTrue(online == offline)
        XCTAssertTrue(online == (try TestSupport.renderStream(mp3)))
    }

    /// `run` plays a local file (1 kHz) and two listeners of one Icecast mount (440 Hz) that retry for 60 s and for
    /// 2 s, while the Icecast source goes away (the mount answers 404) and comes back. The run plays on: both radios
    /// report the 404 (event, `status`); the brief one gives up (a streamFailed event, state failed), the other comes
    /// back (streamRecovered, playing); the recording holds the file's tone throughout and the radio's at the end.
    func testAnIcecastSourceThatRestartsLeavesTheRestPlaying() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let (dir, url) = try IcecastLoopback.start()
        defer { _ = try? TestSupport.execute(IcecastLoopback.script, ["stop", dir]) }
        let sine = try TestSupport.sine(seconds: 2)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "file", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "radio", "type": "stream", "url": "\(url)", "retrySeconds": 60 },
                         { "id": "brief", "type": "stream", "url": "\(url)", "retrySeconds": 2 },
                         { "id": "mix", "type": "mixer", "inputs": 3, "volumes": [0.5, 0.5, 0.5] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "file", "to": "mix:0" }, { "from": "radio", "to": "mix:1" }, \
            { "from": "brief", "to": "mix:2" },
                         { "from": "mix", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("restart-\(UUID().uuidString.prefix(8))/r.sock").path
        let record = TestSupport.directory.appendingPathComponent("restart-\(UUID().uuidString).wav").path
        let run = try pw.graphhost(["run", graph, "--socket", socket, "--record", record])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let subscriber = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(subscriber.waitForLine(containing: "\"subscribed\":true"), subscriber.text)
        func streams() throws -> [String: [String: Any]] {
            let list = (try control.status()["streams"] as? [[String: Any]]) ?? []
            return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
        }
        func state(_ id: String) throws -> String? { try streams()[id]?["state"] as? String }
        XCTAssertTrue(
            try TestSupport.waitUntil { try ["file", "radio", "brief"].allSatisfy { try state($0) == "playing" } })

        XCTAssertEqual(try TestSupport.execute(IcecastLoopback.script, ["pause", dir]).status, 0)
        // Events are JSON lines with sorted keys (and slashes escaped).
        func waitForEvent(_ parts: String...) -> Bool {
            subscriber.waitFor { $0.split(separator: "\n").contains { line in parts.allSatisfy { line.contains($0) } } }
        }
        for node in ["radio", "brief"] {
            XCTAssertTrue(
                waitForEvent("\"event\":\"streamRetrying\"", "\"node\":\"\(node)\"", "\"reason\":\"HTTP 404 from "),
                subscriber.text + run.errorText)
        }
        XCTAssertTrue(
            try TestSupport.waitUntil { try (streams()["radio"]?["problem"] as? String)?.contains("HTTP 404") ?? false }
        )
        XCTAssertEqual(try state("radio"), "retrying")
        XCTAssertTrue(waitForEvent("\"event\":\"streamFailed\"", "\"node\":\"brief\""), subscriber.text)
        XCTAssertTrue(try TestSupport.waitUntil { try state("brief") == "failed" })
        let brief = try streams()["brief"] ?? [:]
        XCTAssertTrue((brief["error"] as? String)?.contains("gave up retrying after 2 s") ?? false, "\(brief)")
        let away = try control.position()

        XCTAssertEqual(try TestSupport.execute(IcecastLoopback.script, ["resume", dir]).status, 0)
        XCTAssertTrue(subscriber.waitForLine(containing: "\"event\":\"streamRecovered\""), subscriber.text)
        XCTAssertTrue(try TestSupport.waitUntil { try state("radio") == "playing" })
        let back = try control.position()
        XCTAssertTrue(try control.waitForPosition(back + 2))
        XCTAssertEqual(try state("file"), "playing")
        XCTAssertEqual(try state("brief"), "failed")
        XCTAssertFalse(subscriber.text.contains("\"event\":\"streamFailed\",\"node\":\"radio\""), subscriber.text)
        _ = try HeadlessPipeWire.execute(
            TestSupport.executable, ["ctl", "--socket", socket, "quit"], environment: pw.environment)
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("stream 'brief' failed"), result.err)

        // The recording: the file's 1 kHz tone in every 100 ms from its start to the quit's fade; the radio's 440 Hz
        // before the source went away and after it came back.
        let recorded = try SoundFile(path: record)
        let mono = SignalMatch.mono(recorded.samples)
        func level(_ hertz: Double, at second: Double) -> Double {
            let from = Int(second * 48000)
            let count = 4800
            guard from >= 0, from + count <= mono.count else { return 0 }
            var re = 0.0
            var im = 0.0
            for i in 0..<count {
                let phase = 2 * Double.pi * hertz * Double(i) / 48000
                re += Double(mono[from + i]) * cos(phase)
                im += Double(mono[from + i]) * sin(phase)
            }
            return 2 * (re * re + im * im).squareRoot() / Double(count)
        }
        let first = try XCTUnwrap(SignalMatch.firstNonZeroFrame(recorded.samples, channels: 2))
        let start = Double(first) / 48000 + 0.2
        let end = Double(mono.count) / 48000 - 0.3
        let steady = level(1000, at: start)
        XCTAssertGreaterThan(steady, 0.1)
        var quiet: [Double] = []
        for tenth in 0..<Int((end - start) * 10) where level(1000, at: start + Double(tenth) / 10) < 0.8 * steady {
            quiet.append(start + Double(tenth) / 10)
        }
        XCTAssertEqual(quiet, [], "the file's tone dropped out (steady level \(steady))")
        XCTAssertGreaterThan(level(440, at: start), 0.05, "the radio before the source went away")
        XCTAssertGreaterThan(level(440, at: end - 0.5), 0.05, "the radio after it came back")
        XCTAssertLessThan(away, back)
    }

    /// Icecast radio (icecast2 fed by ezstream, both on loopback): audio arrives, the ICY metadata is stripped from
    /// it, and two title changes made through the admin API are both seen, quotes and UTF-8 intact.
    func testIcecastRadioAudioAndTitles() throws {
        let script = IcecastLoopback.script
        let (dir, url) = try IcecastLoopback.start()
        defer { _ = try? TestSupport.execute(script, ["stop", dir]) }
        let session = try TestSupport.session(streamGraph(url))
        defer { session.close() }
        let titles = ["First Title", "Café 'quoted' – ünïcode"]
        // The titles change after 1 s and 4 s of rendered audio (the render runs at the pace the radio sends).
        var changes = [(48000, titles[0]), (4 * 48000, titles[1])]
        var peak: Float = 0
        var rendered = 0
        let summary = try OfflineRenderer(session: session).render(durationFrames: 48000 * 9) { samples, frames in
            for i in 0..<(2 * frames) { peak = max(peak, abs(samples[i])) }
            rendered += frames
            if let (at, title) = changes.first, rendered >= at {
                changes.removeFirst()
                XCTAssertEqual(try TestSupport.execute(script, ["meta", dir, title]).status, 0)
            }
        }
        XCTAssertEqual(summary.frames, 48000 * 9)
        XCTAssertGreaterThan(peak, 0.1, "audio arrived")
        XCTAssertLessThanOrEqual(peak, 1)
        let network = try XCTUnwrap(session.graph.streams[0].network)
        let seen = network.titles
        XCTAssertTrue(seen.contains(titles[0]) && seen.contains(titles[1]), "titles seen: \(seen)")
        XCTAssertEqual(network.totalBytes, nil)
    }

    /// A network stream that fails once it has played (its download breaks, `retrySeconds` 0) counts as finished:
    /// `run` goes on with the file beside it and ends, exit 0, when that has finished too.
    func testARunEndsWhenEveryStreamFinishedOrFailed() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let server = try HTTPTestServer()
        defer { server.stop() }
        // 160 kbit/s: about 1.5 s of audio, served at twice its rate, then the connection drops.
        let url = try server.serve(
            try TestSupport.mp3(rate: 44100, channels: 2, seconds: 6), as: "breaking.mp3",
            query: "rate=40000&drop=30000")
        let file = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "file", "type": "stream", "url": "\(file)" },
                         { "id": "net", "type": "stream", "url": "\(url)", "retrySeconds": 0 },
                         { "id": "mix", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "file", "to": "mix:0" }, { "from": "net", "to": "mix:1" }, \
            { "from": "mix", "to": "out" } ] }
            """)
        let result = try pw.graphhost(["run", graph]).wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("stream 'net' failed"), result.err)
        XCTAssertTrue(result.err.contains("every stream has finished"), result.err)
        XCTAssertTrue(result.out.contains("played 3."), result.out)
    }

    /// `graphhost run` on a private PipeWire daemon: a 404 ends the run with the status and URL; an Icecast stream
    /// plays, `status` shows its state, bytes and title, and subscribers get a title event.
    func testRunShowsNetworkStateAndTitles() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let server = try HTTPTestServer()
        defer { server.stop() }
        let missing = try pw.graphhost(["run", streamGraph(server.url("missing")), "--duration", "3"]).wait(timeout: 20)
        XCTAssertEqual(missing.status, 1, missing.err)
        XCTAssertTrue(missing.err.contains("HTTP 404 from \(server.url("missing"))"), missing.err)

        let (dir, url) = try IcecastLoopback.start()
        defer { _ = try? TestSupport.execute(IcecastLoopback.script, ["stop", dir]) }
        let socket = TestSupport.directory.appendingPathComponent("radio/radio.sock").path
        let run = try pw.graphhost(["run", streamGraph(url), "--socket", socket])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let subscriber = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(subscriber.waitForLine(containing: "\"subscribed\":true"), subscriber.text)
        func state() throws -> String? {
            ((try control.status()["streams"] as? [[String: Any]])?.first?["state"] as? String)
        }
        XCTAssertTrue(try TestSupport.waitUntil { try state() == "playing" })
        XCTAssertEqual(try TestSupport.execute(IcecastLoopback.script, ["meta", dir, "Live Title"]).status, 0)
        XCTAssertTrue(subscriber.waitForLine(containing: "Live Title"), subscriber.text)
        let eventText = subscriber.text
        XCTAssertTrue(eventText.contains("\"event\":\"title\""), eventText)
        let status = try HeadlessPipeWire.execute(
            TestSupport.executable, ["ctl", "--socket", socket, "status"], environment: pw.environment
        ).out
        XCTAssertTrue(status.contains("\"title\":\"Live Title\""), status)
        XCTAssertTrue(status.contains("\"state\":\"playing\""), status)
        XCTAssertTrue(status.contains("\"bytesLoaded\""), status)
        _ = try HeadlessPipeWire.execute(
            TestSupport.executable, ["ctl", "--socket", socket, "quit"], environment: pw.environment)
        let result = run.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.err)
    }
}
