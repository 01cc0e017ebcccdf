import Foundation
import XCTest

@testable import GraphHost

/// Radio in every format, against a loopback Icecast fed over HTTP PUT and the loopback HTTP server: Ogg Opus and
/// AAC mounts, a chained Ogg stream whose songs change codec, rate, channels and title, a reconnect that comes back
/// with other media, and concatenated MP3 and AAC files of two rates. Pitch is judged on the rendered output, so a
/// resampler kept from before a change of rate (the wrong pitch) fails.
final class RadioFormatTests: XCTestCase {
    /// A tone at `hertz`, `seconds` long, encoded as `ext` at `rate` with `channels`, titled `title`.
    static func tone(_ hertz: Int, seconds: Double, rate: Int, channels: Int, ext: String, title: String) throws
        -> String
    {
        let path = TestSupport.directory.appendingPathComponent(
            "radio-\(hertz)-\(rate)-\(channels)-\(seconds)-\(title.filter(\.isLetter)).\(ext)"
        ).path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wav, "synth", "\(seconds)", "sine",
            "\(hertz)", "gain", "-n", "-6",
        ])
        switch ext {
        case "ogg": try TestSupport.run(["oggenc", "-Q", "-t", title, "-o", path, wav])
        case "opus": try TestSupport.run(["opusenc", "--quiet", "--title", title, wav, path])
        case "aac":
            try TestSupport.run([
                "ffmpeg", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-b:a", "96k", "-f", "adts", path,
            ])
        case "mp3": try TestSupport.run(["lame", "--quiet", "-b", "96", wav, path])
        default: throw TestSupport.ToolFailure(description: "no encoder for .\(ext)")
        }
        return path
    }

    /// Files joined byte for byte.
    static func joined(_ parts: [String], as name: String) throws -> String {
        let path = TestSupport.directory.appendingPathComponent(name).path
        FileManager.default.createFile(
            atPath: path, contents: try parts.reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))) })
        return path
    }

    /// A channel's pitch (0 left, 1 right) in each whole second of interleaved stereo at 48 kHz, by zero crossings.
    static func pitches(_ samples: [Float], channel: Int = 0) -> [Int] {
        stride(from: 0, to: samples.count / 2 - 47999, by: 48000).map { start in
            var crossings = 0
            for f in (start + 1)..<(start + 48000)
            where samples[2 * (f - 1) + channel] < 0 && samples[2 * f + channel] >= 0 { crossings += 1 }
            return crossings
        }
    }

    /// The distinct pitches heard, in order, each held for at least one whole second.
    static func sequence(_ pitches: [Int], of tones: [Int]) -> [Int] {
        var result: [Int] = []
        for p in pitches {
            guard let tone = tones.first(where: { abs($0 - p) <= 3 }) else { continue }
            if result.last != tone { result.append(tone) }
        }
        return result
    }

    /// Renders a stream graph for `seconds`, noting each title the stream shows as it changes.
    static func render(_ url: String, seconds: Int) throws -> (samples: [Float], titles: [String]) {
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(url)", "bufferSeconds": 0.3 }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let session = try TestSupport.session(graph)
        defer { session.close() }
        var samples: [Float] = []
        var titles: [String] = []
        _ = try OfflineRenderer(session: session).render(durationFrames: 48000 * seconds) { block, frames in
            samples += UnsafeBufferPointer(start: block, count: 2 * frames)
            if let title = session.graph.streams[0].title, titles.last != title { titles.append(title) }
        }
        XCTAssertTrue(samples.allSatisfy(\.isFinite))
        return (samples, titles)
    }

    /// The loopback Icecast's folder and its address (`http://127.0.0.1:PORT`).
    func startIcecast() throws -> (dir: String, server: String) {
        let (dir, url) = try IcecastLoopback.start()
        let address = try XCTUnwrap(URL(string: url))
        return (dir, "http://\(try XCTUnwrap(address.host)):\(try XCTUnwrap(address.port))")
    }

    /// Sends `file` to `mount` at about real time (its bytes over `seconds`, a little faster).
    func source(_ icecast: (dir: String, server: String), _ file: String, mount: String, type: String, seconds: Double)
        throws -> String
    {
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        let result = try TestSupport.execute(
            IcecastLoopback.script,
            ["source", icecast.dir, file, mount, type, "\(Int(Double(size) / seconds * 1.25))"])
        XCTAssertEqual(result.status, 0, String(decoding: result.err, as: UTF8.self))
        return icecast.server + mount
    }

    /// An Ogg radio sends each song as a new stream of a chain: Vorbis at 44.1 kHz stereo, then Opus at 48 kHz mono,
    /// then Vorbis again. Each plays at its pitch and its title (Vorbis comment, Opus tags) reaches the stream.
    func testChainedOggRadioChangesCodecRateChannelsAndTitle() throws {
        let icecast = try startIcecast()
        defer { _ = try? TestSupport.execute(IcecastLoopback.script, ["stop", icecast.dir]) }
        let a = try Self.tone(440, seconds: 3, rate: 44100, channels: 2, ext: "ogg", title: "Song A")
        let b = try Self.tone(660, seconds: 3, rate: 48000, channels: 1, ext: "opus", title: "Song B")
        let chain = try Self.joined([a, b, a, b], as: "radio-chain.ogg")
        let url = try source(icecast, chain, mount: "/chain.ogg", type: "audio/ogg", seconds: 12)
        let (samples, titles) = try Self.render(url, seconds: 8)
        XCTAssertEqual(
            Self.sequence(Self.pitches(samples), of: [440, 660]), [440, 660, 440], "\(Self.pitches(samples))")
        XCTAssertEqual(Array(titles.prefix(3)), ["Song A", "Song B", "Song A"])
    }

    /// Opus and AAC (ADTS) mounts play at their pitch; the Opus mount's title comes from its tags.
    func testOpusAndAACMounts() throws {
        let icecast = try startIcecast()
        defer { _ = try? TestSupport.execute(IcecastLoopback.script, ["stop", icecast.dir]) }
        let opus = try Self.tone(550, seconds: 6, rate: 48000, channels: 2, ext: "opus", title: "Opus Radio")
        let aac = try Self.tone(330, seconds: 6, rate: 22050, channels: 2, ext: "aac", title: "")
        for (file, mount, type, pitch, title) in [
            (opus, "/radio.opus", "audio/ogg", 550, "Opus Radio" as String?),
            (aac, "/radio.aac", "audio/aac", 330, nil),
        ] {
            let url = try source(icecast, file, mount: mount, type: type, seconds: 6)
            let (samples, titles) = try Self.render(url, seconds: 4)
            XCTAssertEqual(
                Self.sequence(Self.pitches(samples), of: [pitch]), [pitch], "\(mount): \(Self.pitches(samples))")
            XCTAssertLessThanOrEqual(TestSupport.peak(samples), 0.6, mount)
            XCTAssertEqual(titles.first, title, mount)
        }
    }

    /// An endless stream whose reconnect brings other media (Vorbis 44.1 kHz stereo, then Opus 48 kHz mono): a new
    /// decoder and resampler start at the reconnect, so both tones keep their pitch.
    func testAReconnectToOtherMediaRebuildsTheDecoderAndResampler() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let a = try Self.tone(440, seconds: 3, rate: 44100, channels: 2, ext: "ogg", title: "Before")
        let b = try Self.tone(660, seconds: 10, rate: 48000, channels: 1, ext: "opus", title: "After")
        _ = try server.serve(b, as: "after.opus")
        let url = try server.serve(a, as: "radio", query: "endless=1&next=after.opus")
        let (samples, titles) = try Self.render(url, seconds: 6)
        for channel in 0..<2 {
            XCTAssertEqual(
                Self.sequence(Self.pitches(samples, channel: channel), of: [440, 660]), [440, 660],
                "channel \(channel): \(Self.pitches(samples, channel: channel))")
        }
        XCTAssertEqual(titles, ["Before", "After"])
    }

    /// `graphhost run` of a chained Ogg radio whose songs carry Vorbis comments and Opus tags: each song's title
    /// reaches subscribers as a `title` event with its artist, `status`, and the log.
    func testLiveTitlesFromTagsReachEventsStatusAndTheLog() throws {
        func song(_ ext: String, _ hertz: Int, _ name: String) throws -> String {
            let path = TestSupport.directory.appendingPathComponent("tagged-\(name.filter(\.isLetter)).\(ext)").path
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "48000", "-c", "2", "-b", "16", path + ".wav", "synth", "2", "sine",
                "\(hertz)", "gain", "-n", "-6",
            ])
            if ext == "ogg" {
                try TestSupport.run([
                    "oggenc", "-Q", "-t", "Song \(name)", "-a", "Artist \(name)", "-o", path, path + ".wav",
                ])
            } else {
                try TestSupport.run([
                    "opusenc", "--quiet", "--title", "Song \(name)", "--artist", "Artist \(name)", path + ".wav", path,
                ])
            }
            return path
        }
        let chain = try Self.joined(
            [try song("ogg", 440, "A"), try song("opus", 660, "B"), try song("ogg", 550, "C")], as: "tagged-chain.ogg")
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: chain)[.size] as? Int)
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(chain, as: "tagged-radio.ogg", query: "endless=1&rate=\(size / 6 * 5 / 4)")
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("tags-\(getpid())/radio.sock").path
        let run = try pw.graphhost(["run", TestSupport.streamGraph(url), "--socket", socket, "--no-mpris"])
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let subscriber = try HeadlessPipeWire.SocketClient.subscriber(socket)
        XCTAssertTrue(subscriber.waitForLine(containing: "\"subscribed\":true"), subscriber.text)
        // Song A may have begun before the subscription; B and C come after it.
        for name in ["B", "C"] {
            XCTAssertTrue(subscriber.waitForLine(containing: "\"title\":\"Song \(name)\""), subscriber.text)
            let event = try XCTUnwrap(
                subscriber.text.split(separator: "\n").first { $0.contains("\"title\":\"Song \(name)\"") })
            XCTAssertTrue(
                event.contains("\"event\":\"title\"") && event.contains("\"artist\":\"Artist \(name)\""), String(event))
            let stream = try XCTUnwrap((try control.status()["streams"] as? [[String: Any]])?.first)
            XCTAssertTrue(["Song \(name)", "Song C"].contains(stream["title"] as? String ?? ""), "\(stream)")
        }
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        for name in ["A", "B", "C"] { XCTAssertTrue(result.err.contains("now playing 'Song \(name)'"), result.err) }
    }

    /// MP3 and AAC (ADTS) files of two rates joined byte for byte (44.1 kHz stereo, then 22.05 kHz mono): the second
    /// part keeps its pitch, on both channels.
    func testConcatenatedFilesOfTwoRates() throws {
        for ext in ["mp3", "aac"] {
            let a = try Self.tone(440, seconds: 3, rate: 44100, channels: 2, ext: ext, title: "")
            let b = try Self.tone(660, seconds: 3, rate: 22050, channels: 1, ext: ext, title: "")
            let joined = try Self.joined([a, b], as: "radio-two-rates.\(ext)")
            let samples = try TestSupport.render(TestSupport.streamGraph(joined)).samples
            for channel in 0..<2 {
                XCTAssertEqual(
                    Self.sequence(Self.pitches(samples, channel: channel), of: [440, 660]), [440, 660],
                    "\(ext) channel \(channel): \(Self.pitches(samples, channel: channel))")
            }
            // No longer than ffmpeg decodes the joined file, no shorter than the two parts decoded on their own (the
            // second part's encoder delay and the first's padding stay: neither format marks them mid-stream).
            func frames48k(_ file: String) throws -> Int {
                try TestSupport.run([
                    "ffmpeg", "-v", "quiet", "-i", file, "-ar", "48000", "-ac", "1", "-f", "f32le", "-",
                ]).count / 4
            }
            let frames = samples.count / 2
            let parts = try frames48k(a) + frames48k(b)
            let whole = try frames48k(joined)
            XCTAssertTrue(
                (parts - 480)...(whole + 480) ~= frames, "\(ext): \(frames) frames; parts \(parts), ffmpeg \(whole)")
        }
    }
}
