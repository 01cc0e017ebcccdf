import Foundation
import XCTest

@testable import GraphHost

/// Every format the stream node reads, made by Debian's encoders: decoded as `ffmpeg -f f32le` decodes it, told from
/// its content (not its name), with its tags as titles, and seekable.
final class MediaFormatTests: XCTestCase {
    func testEveryFormatDecodesAsFFmpegDoes() throws {
        for (ext, rate) in EncodedMedia.formats {
            let path = try EncodedMedia.file(ext)
            let expected = try EncodedMedia.ffmpegDecode(path)
            let (samples, summary) = try TestSupport.render(TestSupport.streamGraph(path, rate: rate))
            XCTAssertGreaterThan(expected.count, 2 * rate * 5, ext)
            XCTAssertEqual(samples.count, expected.count, "\(ext): same length, gapless as FFmpeg trims it")
            XCTAssertLessThanOrEqual(EncodedMedia.largestDifference(samples[...], expected[...]), 1e-4, ext)
            XCTAssertEqual(summary.underruns, 0, ext)
        }
    }

    /// A file named like another format, and a network stream sent with another format's Content-Type, still decode:
    /// the first bytes decide.
    func testTheContentDecidesNotTheName() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        for (ext, disguise) in [("ogg", "mp3"), ("flac", "ogg"), ("mp3", "m4a"), ("opus", "wav")] {
            let path = try EncodedMedia.file(ext)
            let renamed = TestSupport.directory.appendingPathComponent("disguised-\(ext).\(disguise)").path
            try? FileManager.default.removeItem(atPath: renamed)
            try FileManager.default.copyItem(atPath: path, toPath: renamed)
            let rate = ext == "opus" ? 48000 : 44100
            let expected = try TestSupport.render(TestSupport.streamGraph(path, rate: rate)).samples
            XCTAssertEqual(
                try TestSupport.render(TestSupport.streamGraph(renamed, rate: rate)).samples, expected,
                "\(ext) named .\(disguise)")
            let url = try server.serve(path, as: "disguised-\(ext).\(disguise)")
            XCTAssertEqual(
                try TestSupport.render(TestSupport.streamGraph(url, rate: rate)).samples, expected,
                "\(ext) served as .\(disguise)")
        }
    }

    /// Executables and shared libraries hold runs of what reads as MPEG audio frames by chance: as files (named .mp3)
    /// and over HTTP (sent as audio/mpeg or as binary data) they are refused, naming the input, where they once
    /// played as seconds of noise. MP3 only a few frames long, and MP3 after junk (a stream joined mid-frame),
    /// still play.
    func testBinariesAreNotAudioButShortAndJunkPrefixedMP3Plays() throws {
        let libc = String(decoding: try TestSupport.run(["cc", "-print-file-name=libc.so.6"]), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let binaries = ["/bin/ls", libc, TestSupport.executable.path]
        let server = try HTTPTestServer()
        defer { server.stop() }
        for (index, binary) in binaries.enumerated() {
            let disguised = TestSupport.directory.appendingPathComponent("binary-\(index).mp3").path
            try? FileManager.default.removeItem(atPath: disguised)
            try FileManager.default.copyItem(atPath: binary, toPath: disguised)
            let validated = try TestSupport.graphhost(["validate", TestSupport.streamGraph(disguised)])
            XCTAssertEqual(validated.status, 2, binary)
            XCTAssertTrue(
                validated.err.contains("nodes[0].url") && validated.err.contains(disguised)
                    && validated.err.contains("is not a supported audio stream"), validated.err)
            for query in ["", "type=application/octet-stream"] {
                let url = try server.serve(disguised, as: "binary-\(index).mp3", query: query)
                let out = TestSupport.directory.appendingPathComponent("binary-\(index).wav").path
                let rendered = try TestSupport.graphhost(["render", TestSupport.streamGraph(url), "-o", out])
                XCTAssertNotEqual(rendered.status, 0, "\(binary) over HTTP \(query)")
                XCTAssertTrue(
                    rendered.err.contains(url) && rendered.err.contains("is not a supported audio stream"), rendered.err
                )
            }
        }
        // A sine, not TestSupport.mp3's noise: the file is the same every run (ffmpeg cannot read every 50 ms noise
        // MP3).
        let short = TestSupport.directory.appendingPathComponent("sine-50ms.mp3").path
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "44100", "-c", "2", short + ".wav", "synth", "0.05", "sine", "440", "gain", "-n",
            "-3",
        ])
        try TestSupport.run(["lame", "--quiet", "-b", "160", short + ".wav", short])
        let expected = try EncodedMedia.ffmpegDecode(short)
        XCTAssertGreaterThan(expected.count, 0)
        XCTAssertEqual(
            try TestSupport.render(TestSupport.streamGraph(short, rate: 44100)).samples.count, expected.count,
            "a short MP3 plays whole")
        let full = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)))
        let junked = TestSupport.directory.appendingPathComponent("junk-first.mp3").path
        // What a stream joined mid-frame starts with: the tail of a frame, then whole frames.
        try (full.subdata(in: 700..<full.count)).write(to: URL(fileURLWithPath: junked))
        let (samples, summary) = try TestSupport.render(TestSupport.streamGraph(junked, rate: 44100))
        XCTAssertGreaterThan(samples.count, 2 * 44100 * 3 / 2, "an MP3 joined mid-frame plays")
        XCTAssertGreaterThan(TestSupport.peak(samples), 0.1)
        XCTAssertEqual(summary.underruns, 0)
    }

    func testShowPrintsCodecRateChannelsAndBitRate() throws {
        // The lossy encoders' bit rates vary with the music; FLAC's is what it compressed to.
        for (ext, codec, rates) in [
            ("m4a", "aac, 44100 Hz, 2 ch", 120...200), ("aac", "aac, 44100 Hz, 2 ch", 120...200),
            ("opus", "opus, 48000 Hz, 2 ch", 60...200), ("flac", "flac, 44100 Hz, 2 ch", 100...1411),
            ("ogg", "vorbis, 44100 Hz, 2 ch", 60...250), ("wav", "pcm_s16le, 44100 Hz, 2 ch", 1411...1411),
            ("mp3", "mp3, 44100 Hz, 2 ch", 192...192),
        ] {
            let result = try TestSupport.graphhost(["show", TestSupport.streamGraph(try EncodedMedia.file(ext))])
            XCTAssertEqual(result.status, 0)
            let shown = try XCTUnwrap(
                result.out.firstMatch(of: /media=([a-z0-9_]+, \d+ Hz, \d+ ch), (\d+) kb\/s/), "\(ext): \(result.out)")
            XCTAssertEqual(String(shown.1), codec, ext)
            XCTAssertTrue(rates.contains(Int(shown.2) ?? 0), "\(ext): \(shown.2) kb/s")
        }
        let text = try TestSupport.directory.appendingPathComponent("not-audio.ogg").path
        FileManager.default.createFile(
            atPath: text, contents: Data(String(repeating: "plain text, not audio\n", count: 400).utf8))
        let bad = try TestSupport.graphhost(["show", TestSupport.streamGraph(text)])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(
            bad.err.contains("nodes[0].url") && bad.err.contains("not-audio.ogg")
                && bad.err.contains("is not a supported audio stream"), bad.err)
    }

    /// Vorbis comments, Opus tags, FLAC comments, MP4 and ID3 tags, and RIFF INFO give the title and artist.
    func testTagsOfEveryFormatGiveTheTitle() throws {
        for ext in EncodedMedia.formats.map(\.ext) + ["mp3"] {
            let session = try TestSupport.session(TestSupport.streamGraph(try EncodedMedia.file(ext)))
            defer { session.close() }
            _ = try OfflineRenderer(session: session).render(durationFrames: 4800) { _, _ in }
            let stream = session.graph.streams[0]
            XCTAssertEqual(stream.title, "Title \(ext)", ext)
            XCTAssertEqual(stream.tags?.artist, "Artist \(ext)", ext)
        }
    }

    /// `seek` in `render --at`: after the crossfade the output is the media from the time sought, and the crossfade
    /// has no click. FLAC and WAV are sample-exact; the lossy formats are compared after their decoders settle.
    func testSeekCrossfadesToTheTimeSought() throws {
        for (ext, rate, tolerance) in [
            ("flac", 44100, Float(1e-6)), ("wav", 44100, 1e-6), ("mp3", 44100, 1e-3),
            ("ogg", 44100, 1e-2), ("opus", 48000, 1e-2), ("m4a", 44100, 1e-2),
        ] {
            let graph = TestSupport.streamGraph(try EncodedMedia.file(ext), rate: rate)
            let plain = try TestSupport.render(graph).samples
            let at = rate
            let to = 4.0
            let seeked = try TestSupport.render(
                graph, durationFrames: 2 * rate,
                events: [TimedCommand(frame: at, request: try Command.parse("seek s 4"))])
            let fade = Int(GraphDocument.defaultCrossfadeSeconds * Double(rate))
            // Settled: 0.1 s after the crossfade (lossy decoders start cold after a seek).
            let settle = fade + rate / 10
            let length = rate / 2
            let target = Int(to * Double(rate))
            let got = seeked.samples[(2 * (at + settle))..<(2 * (at + settle + length))]
            let want = plain[(2 * (target + settle))..<(2 * (target + settle + length))]
            XCTAssertLessThanOrEqual(
                EncodedMedia.largestDifference(got, want), tolerance, "\(ext): audio after the seek")
            let before = seeked.samples[0..<(2 * at)]
            let same = plain[0..<(2 * at)]
            XCTAssertEqual(Array(before), Array(same), "\(ext): audio before the seek is untouched")
            if tolerance < 1e-3 {
                // Sample-exact media: the crossfade is the old audio going on under an equal-power fade-out plus the
                // media at the time sought under the fade-in (not a fade from a ring the render had run dry).
                var worst: Float = 0
                for f in 0..<fade {
                    let fadeIn = Float(sin(Double(f + 1) / Double(fade + 1) * .pi / 2))
                    let fadeOut = Float(sin(Double(fade - f) / Double(fade + 1) * .pi / 2))
                    for c in 0..<2 {
                        let want = plain[2 * (at + f) + c] * fadeOut + plain[2 * (target + f) + c] * fadeIn
                        worst = max(worst, abs(seeked.samples[2 * (at + f) + c] - want))
                    }
                }
                XCTAssertLessThanOrEqual(worst, 1e-5, "\(ext): the crossfade mixes the old and the new audio")
            }
            let click = ClickMeasure.worst(
                seeked.samples, channels: 2, rate: rate, start: 0.98, end: 1.0 + Double(fade) / Double(rate) + 0.02)
            XCTAssertLessThanOrEqual(click.slopeRatio, 1.5, "\(ext): the seek crossfades, \(click)")
            XCTAssertLessThanOrEqual(click.peakRatio, 1.5, "\(ext): \(click)")
        }
    }

    /// A finite download seeks with Range requests (or skips ahead where the server ignores Range): the same audio
    /// as seeking in the file.
    func testSeekInAFiniteDownload() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        for (ext, query) in [("flac", ""), ("mp3", ""), ("ogg", "norange=1")] {
            let path = try EncodedMedia.file(ext)
            let events = [TimedCommand(frame: 48000, request: try Command.parse("seek s 3.5"))]
            let local = try TestSupport.render(TestSupport.streamGraph(path), events: events).samples
            let url = try server.serve(path, as: "seek.\(ext)", query: query)
            let remote = try TestSupport.render(TestSupport.streamGraph(url), events: events).samples
            XCTAssertEqual(remote.count, local.count, ext)
            XCTAssertTrue(remote == local, "\(ext) \(query): the download seeks as the file does")
            // The server honoured a Range request into the file (not from its start) unless told to ignore them.
            let ranges = server.rangeRequests(for: "seek.\(ext)")
            XCTAssertEqual(ranges.contains { $0 > 0 }, query.isEmpty, "\(ext) \(query): Range requests \(ranges)")
        }
    }

    /// `seek` through the socket while `run` plays a FLAC file into PipeWire: the stream's position jumps to the time
    /// sought (forwards and back), `status` names the codec, and in the recording of the process callback the audio
    /// after each seek is the media's at the time sought, with no click. The file's left channel is a steady tone (for
    /// the click measure), its right a sweep whose pitch tells the time (300 Hz to 2300 Hz, exponential: sox's `-`).
    func testLiveSeekThroughTheSocket() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let flac = TestSupport.directory.appendingPathComponent("seek-timecode-20.flac").path
        if !FileManager.default.fileExists(atPath: flac) {
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "48000", "-c", "2", "-b", "16", flac, "synth", "20", "sine", "1000", "sine",
                "300-2300",
                "gain", "-n", "-6",
            ])
        }
        let graph = TestSupport.streamGraph(flac)
        let socket = TestSupport.directory.appendingPathComponent("live/seek.sock").path
        let recording = TestSupport.directory.appendingPathComponent("live-seek.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", graph, "--socket", socket, "--latency", "256", "--record", recording])
        XCTAssertTrue(control.waitForSocket())
        func streamPosition(_ status: [String: Any]) -> Double {
            ((status["streams"] as? [[String: Any]])?.first?["position"] as? Double) ?? -1
        }
        XCTAssertTrue(try control.waitForPosition(1.5))
        XCTAssertTrue(
            ((try control.status()["streams"] as? [[String: Any]])?.first?["media"] as? String)?.hasPrefix(
                "flac, 48000 Hz, 2 ch") == true)
        // (graph seconds, media seconds) read together once each seek has been heard for half a second.
        var heard: [(graph: Double, media: Double)] = []
        for (target, next) in [(12.0, 12.5), (4.0, 4.5)] {
            let reply = try control.ctl(["seek", "s", "\(target)"])
            XCTAssertEqual(reply.status, 0, reply.out)
            XCTAssertTrue(
                try TestSupport.waitUntil {
                    let p = streamPosition(try control.status())
                    return p >= next && p < next + 3
                }, "position after seek \(target)")
            let status = try control.status()
            heard.append(((status["position"] as? Double) ?? -1, streamPosition(status)))
        }
        let past = try control.ctl(["seek", "s", "25"])
        XCTAssertEqual(past.status, 1, past.out)
        XCTAssertTrue(past.out.contains("past the end"), past.out)
        let at = try control.position()
        XCTAssertTrue(try control.waitForPosition(at + 1))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let samples = try SoundFile(path: recording).samples
        // The recording starts with the first callback, where the graph's position starts.
        for (graphSeconds, mediaSeconds) in heard {
            // The 0.2 s up to the reading (the next seek is sent after it), whose middle is 0.1 s of media before it.
            let first = Int((graphSeconds - 0.2) * 48000)
            let window = 9600
            var crossings = 0
            for f in (first + 1)..<(first + window) where samples[2 * (f - 1) + 1] < 0 && samples[2 * f + 1] >= 0 {
                crossings += 1
            }
            XCTAssertEqual(
                Double(crossings) * 5, 300 * pow(2300.0 / 300, (mediaSeconds - 0.1) / 20), accuracy: 40,
                "the sweep at \(graphSeconds) s of the recording, \(mediaSeconds) s of the media")
        }
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let start = Double(try XCTUnwrap(SignalMatch.firstSound(samples), "silent recording") / 2) / 48000
        let end = Double(left.count) / 48000 - 0.8
        let worst = ClickMeasure.worst(left, channels: 1, rate: 48000, start: start + 0.5, end: end)
        // An equal-power crossfade between two phases of one tone may rise up to 3 dB; it must not step.
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.42, "\(worst)")
    }

    /// A live stream (no length, declared live as Icecast does) cannot seek: the command is refused with the reason, in
    /// `render --at` as on the socket.
    func testSeekIsRefusedInAnEndlessStream() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let url = try server.serve(try EncodedMedia.file("ogg"), as: "endless.ogg", query: "endless=1&rate=200000")
        let result = try TestSupport.graphhost([
            "render", TestSupport.streamGraph(url), "-o",
            TestSupport.directory.appendingPathComponent("endless.wav").path, "--at", "0.5", "seek s 2",
        ])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.err.contains(
                "seek s: '\(url)' is a live stream or a download of unknown length "
                    + "(only files and downloads with a Content-Length can seek)"
            ), result.err)
    }

    func testSeekIsRefusedWhereItCannotWork() throws {
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(try EncodedMedia.file("flac"))" }, \
            { "id": "eq", "type": "ipod-eq" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        for (line, message) in [
            ("seek s 60", "past the end"), ("seek s -1", "before the start"), ("seek eq 1", "only stream nodes seek"),
            ("seek s", "usage: seek NODE SECONDS"),
        ] {
            let result = try TestSupport.graphhost([
                "render", graph, "-o", TestSupport.directory.appendingPathComponent("refused.wav").path,
                "--at", "0.5", line,
            ])
            XCTAssertNotEqual(result.status, 0, line)
            XCTAssertTrue(result.err.contains(message), "\(line): \(result.err)")
        }
    }
}
