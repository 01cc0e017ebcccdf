import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// HLS against the loopback HTTP server: finite and live playlists (segments made by Debian's ffmpeg), a master
/// playlist's audio variant, segments a live playlist dropped, malformed and encrypted playlists, and a cancelled wait.
final class HLSTests: XCTestCase {
    /// 8 s of AAC in 1 s MPEG-TS segments (a.m3u8, seg000.ts …) in the server's folder; returns the segment paths.
    @discardableResult
    static func segments(in server: HTTPTestServer) throws -> [String] {
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=330:duration=8", "-f", "lavfi",
            "-i", "sine=frequency=550:duration=8", "-filter_complex", "[0][1]amerge=inputs=2", "-ar", "44100",
            "-c:a", "aac", "-b:a", "128k", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
            "-hls_segment_filename", server.root + "/seg%03d.ts", server.root + "/a.m3u8",
        ])
        let names = try FileManager.default.contentsOfDirectory(atPath: server.root).filter { $0.hasSuffix(".ts") }
            .sorted()
        XCTAssertGreaterThanOrEqual(names.count, 8)
        return names.map { server.root + "/" + $0 }
    }

    /// What ffmpeg decodes from the segments joined.
    static func expected(_ segments: [String]) throws -> [Float] {
        let joined = TestSupport.directory.appendingPathComponent("hls-joined-\(UUID().uuidString).ts").path
        FileManager.default.createFile(
            atPath: joined,
            contents: try segments.reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))) })
        return try EncodedMedia.ffmpegDecode(joined)
    }

    func render(_ url: String) throws -> [Float] {
        try TestSupport.render(TestSupport.streamGraph(url, rate: 44100)).samples
    }

    func testFiniteAndLivePlaylistsPlayEverySegmentOnce() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let expected = try Self.expected(try Self.segments(in: server))
        for url in [server.url("a.m3u8"), server.url("live/a.m3u8")] {
            let samples = try render(url)
            XCTAssertEqual(samples.count, expected.count, url)
            XCTAssertLessThanOrEqual(EncodedMedia.largestDifference(samples[...], expected[...]), 1e-4, url)
        }
    }

    /// ffmpeg's segment muxer gives every `.mp3` segment an ID3 tag and a Xing/Info frame of its own, while the audio
    /// frames run on across segments (the bit reservoir included): the segments join as ffmpeg plays them, with no
    /// frame of silence and no muting at the boundaries, and the same length.
    func testMP3SegmentsWithTagsAndInfoFramesJoinSeamlessly() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=8:sample_rate=44100",
            "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-f", "segment", "-segment_time", "2",
            "-segment_list", server.root + "/mp3.m3u8", server.root + "/part%03d.mp3",
        ])
        let first = try Data(contentsOf: URL(fileURLWithPath: server.root + "/part001.mp3"))
        XCTAssertTrue(
            first.starts(with: Data("ID3".utf8)) && first.range(of: Data("Info".utf8)) != nil,
            "a segment has a tag and an Info frame")
        let expected = try EncodedMedia.ffmpegDecode(server.root + "/mp3.m3u8")
        let samples = try render(server.url("mp3.m3u8"))
        XCTAssertEqual(samples.count, expected.count, "as long as ffmpeg plays it")
        XCTAssertLessThanOrEqual(EncodedMedia.largestDifference(samples[...], expected[...]), 1e-4, "sample for sample")
    }

    /// A live playlist whose reloads answer 404 for a while, and a segment whose first requests do, once the stream
    /// played: both are tried again with backoff, and every segment still plays once, as ffmpeg decodes them.
    func testALivePlaylistOrSegmentGoneForAWhileIsRetried() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let expected = try Self.expected(try Self.segments(in: server))
        let samples = try render(server.url("live/a.m3u8?fail=2@2&failsegment=4"))
        XCTAssertEqual(samples.count, expected.count)
        XCTAssertLessThanOrEqual(EncodedMedia.largestDifference(samples[...], expected[...]), 1e-4)
    }

    /// The variant with the highest bandwidth among the audio-only ones plays (the video one is not fetched).
    func testAMasterPlaylistPlaysItsAudioVariant() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let expected = try Self.expected(try Self.segments(in: server))
        let master = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS="mp4a.40.2"
            missing-low.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=9000000,CODECS="avc1.640028,mp4a.40.2"
            missing-video.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=160000,CODECS="mp4a.40.2"
            a.m3u8
            """
        FileManager.default.createFile(atPath: server.root + "/master.m3u8", contents: Data(master.utf8))
        XCTAssertEqual(try render(server.url("master.m3u8")).count, expected.count)
        let parsed = try HLSPlaylist.parse(master, url: "http://127.0.0.1/x/master.m3u8")
        XCTAssertEqual(parsed.chosenVariant?.url, "http://127.0.0.1/x/a.m3u8")
    }

    /// A live playlist that moves on faster than it is read (two segments per reload, a window of three): the segments
    /// it dropped are missed, the next read follows a break, and what arrives is in order.
    func testSegmentsALivePlaylistDroppedMakeABreak() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let segments = try Self.segments(in: server)
        let url = server.url("live/a.m3u8?step=4")
        let source = try HLSByteSource(url: url, text: try HLSByteSource.fetch(url), status: NetworkStreamStatus())
        var received = Data()
        var breaks: [Int] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { chunk.deallocate() }
        while case let n = try source.read(into: chunk), n > 0 {
            if source.lastReadFollowsBreak { breaks.append(received.count) }
            received.append(contentsOf: chunk[0..<n])
        }
        let files = try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        // Window 0…2, then 4…5 (3 was dropped) with the ENDLIST.
        XCTAssertEqual(received, files[0] + files[1] + files[2] + files[4...].reduce(Data(), +))
        XCTAssertEqual(breaks, [files[0].count + files[1].count + files[2].count])
    }

    func testMalformedAndEncryptedPlaylistsAreRefusedByLine() throws {
        let url = "http://127.0.0.1:1/p.m3u8"
        for (text, message) in [
            ("not a playlist", "HLS playlist \(url), line 1: does not start with #EXTM3U"),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n#EXTINF:2,\na.ts",
                "line 3: encrypted HLS (METHOD=AES-128) is not supported"
            ),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:2\na.ts", "line 3: segment 'a.ts' has no EXTINF before it"),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:soon\n", "line 2: EXT-X-TARGETDURATION 'soon' is not a positive number"),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nftp://x/a.ts",
                "line 4: 'ftp://x/a.ts' is not an http:// or https:// URL"
            ),
        ] {
            XCTAssertThrowsError(try HLSPlaylist.parse(text, url: url)) {
                XCTAssertTrue("\($0)".hasSuffix(message), "\($0)")
            }
        }
        // Through the stream node: the error names the playlist and line.
        let server = try HTTPTestServer()
        defer { server.stop() }
        FileManager.default.createFile(
            atPath: server.root + "/locked.m3u8",
            contents: Data(
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:2,\na.ts\n".utf8))
        XCTAssertThrowsError(try render(server.url("locked.m3u8"))) {
            XCTAssertTrue("\($0)".contains("locked.m3u8, line 3: encrypted HLS (METHOD=SAMPLE-AES)"), "\($0)")
        }
    }

    /// A read waiting for a live playlist's next reload (30 s away) returns at once when the source is cancelled.
    func testCancelWakesAReadWaitingForAReload() throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let segments = try Self.segments(in: server)
        let live = "#EXTM3U\n#EXT-X-TARGETDURATION:30\n#EXTINF:1.0,\nseg000.ts\n"
        FileManager.default.createFile(atPath: server.root + "/slow.m3u8", contents: Data(live.utf8))
        let url = server.url("slow.m3u8")
        let source = try HLSByteSource(url: url, text: live, status: NetworkStreamStatus())
        let first = try Data(contentsOf: URL(fileURLWithPath: segments[0]))
        let done = DispatchSemaphore(value: 0)
        let total = Mutex(0)
        Thread.detachNewThread {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            defer { chunk.deallocate() }
            while let n = try? source.read(into: chunk), n > 0 { total.withLock { $0 += n } }
            done.signal()
        }
        XCTAssertTrue(TestSupport.waitUntil { total.withLock { $0 } == first.count }, "the first segment arrives")
        XCTAssertEqual(done.wait(timeout: .now() + 0.5), .timedOut, "the read waits for the reload")
        source.cancel()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "cancel wakes it long before the 30 s reload")
    }
}
