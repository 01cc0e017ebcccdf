import XCTest

@testable import GraphHost

/// The frame guard passes clean streams unchanged and keeps splices, cuts and CRC-detected damage from
/// decoding louder than the clean audio.
final class FrameGuardTests: XCTestCase {
    /// Source audio for the encodings: pink-noise bursts with hard attacks (legitimate jumps in level).
    static func bursts() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("bursts.wav").path
        if !FileManager.default.fileExists(atPath: path) {
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "44100", "-c", "2", path, "synth", "0.05", "pinknoise",
                "fade", "0", "0.05", "0.04", "pad", "0", "0.25", "repeat", "6", "gain", "-n", "-1",
            ])
        }
        return path
    }

    /// `wav` encoded by lame with `options` (or by sox when `options` is nil: MPEG-1 layer II).
    static func encode(_ wav: String, _ name: String, _ options: [String]?) throws -> [UInt8] {
        let path = TestSupport.directory.appendingPathComponent("guard-\(name)").path
        if !FileManager.default.fileExists(atPath: path) {
            if let options {
                try TestSupport.run(["lame", "--quiet"] + options + [wav, path])
            } else {
                try TestSupport.run(["sox", "-q", wav, path])
            }
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Calls `body` with `bytes` in chunks of `chunk` bytes and whether each is the last.
    static func chunked(_ bytes: [UInt8], _ chunk: Int, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) rethrows
    {
        try bytes.withUnsafeBytes { all in
            var start = 0
            repeat {
                let end = min(start + chunk, all.count)
                try body(UnsafeRawBufferPointer(rebasing: all[start..<end]), end == all.count)
                start = end
            } while start < all.count
        }
    }

    /// The frames the guard passes on from `bytes` fed in chunks of `chunk` bytes, joined.
    static func guarded(_ bytes: [UInt8], chunk: Int) -> (bytes: [UInt8], guard: MPEGFrameGuard) {
        let frameGuard = MPEGFrameGuard()
        var out: [UInt8] = []
        chunked(bytes, chunk) { part, final in frameGuard.filter(part, final: final) { frame, _ in out += frame } }
        return (out, frameGuard)
    }

    /// Decodes `bytes` as a stream node does (frame guard, libmpg123, concealment) at the stream's own rate.
    static func decodeGuarded(_ bytes: [UInt8], chunk: Int = 4096) throws -> (samples: [Float], damage: StreamDamage) {
        let decoder = try GuardedMP3Decoder()
        var samples: [Float] = []
        try chunked(bytes, chunk) { part, final in
            try decoder.decode(part, final: final) { s, n, c, _ in
                samples += UnsafeBufferPointer(start: s, count: n * c.channels)
            }
        }
        return (samples, decoder.damage)
    }

    /// The byte offset of frame `index` in a file that is a plain sequence of frames.
    static func frameOffset(_ bytes: [UInt8], _ index: Int) -> Int {
        var offset = 0
        for _ in 0..<index {
            offset += bytes.withUnsafeBufferPointer { MPEGFrameHeader($0.baseAddress! + offset)!.length }
        }
        return offset
    }

    /// Writes `value` into the `width` bits starting `position` bits into `bytes` (most significant bit first).
    static func setBits(_ bytes: inout [UInt8], at position: Int, width: Int, to value: Int) {
        for i in 0..<width {
            let p = position + i
            let mask = UInt8(0x80 >> (p % 8))
            if value >> (width - 1 - i) & 1 == 1 { bytes[p / 8] |= mask } else { bytes[p / 8] &= ~mask }
        }
    }

    /// `out` (stereo) differs from `clean` in one span of at most `longestSpan` frames (beyond 1e-5: after a muted
    /// span libmpg123's synthesis can differ by an ulp, having skipped a window) and is nowhere louder.
    static func assertMuted(
        _ out: [Float], against clean: [Float], longestSpan: Int, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(out.count, clean.count, file: file, line: line)
        let changed = zip(out, clean).enumerated().filter { abs($0.element.0 - $0.element.1) > 1e-5 }.map(\.offset)
        XCTAssertFalse(changed.isEmpty, "nothing was muted", file: file, line: line)
        XCTAssertLessThanOrEqual(
            (changed.last ?? 0) - (changed.first ?? 0), 2 * longestSpan, "the muted span", file: file, line: line)
        XCTAssertTrue(
            zip(out, clean).allSatisfy { abs($0) <= abs($1) + 1e-6 }, "nothing louder than the clean decode",
            file: file, line: line)
    }

    /// Decodes `bytes` with libmpg123 (no guard) to interleaved floats at the stream's own rate.
    static func decode(_ bytes: [UInt8]) throws -> [Float] {
        let decoder = try MP3Decoder()
        bytes.withUnsafeBytes { decoder.feed($0) }
        var samples: [Float] = []
        while case .frames(let pcm, let n) = decoder.decode() {
            samples += UnsafeBufferPointer(start: pcm, count: n * decoder.channels)
        }
        return samples
    }

    func testCleanStreamsPassUnchanged() throws {
        let tone = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1) + ".wav"
        let bursts = try Self.bursts()
        let encodings: [(String, [String]?)] = [
            ("cbr128.mp3", ["-b", "128"]), ("vbr2.mp3", ["-V", "2"]), ("vbr9.mp3", ["-V", "9"]),
            ("mono.mp3", ["-m", "m", "-b", "64"]), ("crc.mp3", ["-p", "-b", "192"]), ("cbr320.mp3", ["-b", "320"]),
            ("mpeg2.mp3", ["--resample", "22.05", "-b", "64"]), ("mpeg25.mp3", ["--resample", "8", "-b", "16"]),
            ("layer2.mp2", nil),
        ]
        for (wav, label) in [(tone, "tone"), (bursts, "bursts")] {
            for (name, options) in encodings {
                let bytes = try Self.encode(wav, "\(label)-\(name)", options)
                for chunk in [1, 417, 1 << 16] {
                    let (out, frameGuard) = Self.guarded(bytes, chunk: chunk)
                    XCTAssertTrue(
                        out == bytes, "\(label) \(name), chunks of \(chunk): \(out.count) of \(bytes.count) bytes out")
                    XCTAssertEqual(frameGuard.silencedFrames + frameGuard.skippedBytes, 0, "\(label) \(name)")
                }
                XCTAssertTrue(
                    try Self.decodeGuarded(bytes, chunk: 417).samples == Self.decode(bytes),
                    "\(label) \(name) decodes as without the guard")
            }
        }
        // An ID3v2 tag (with bytes that look like frame headers) is dropped, the audio kept unchanged.
        let plain = try Self.encode(tone, "tone-cbr128.mp3", ["-b", "128"])
        let body: [UInt8] =
            Array(repeating: 0, count: 20) + [0xFF, 0xFB, 0x90, 0x64] + Array(repeating: 0x55, count: 600)
        let tag: [UInt8] = [0x49, 0x44, 0x33, 3, 0, 0, 0, 0, UInt8(body.count >> 7), UInt8(body.count & 0x7F)] + body
        XCTAssertTrue(Self.guarded(tag + plain, chunk: 333).bytes == plain, "a tagged file")
        // A LAME tag frame without CRC before audio frames with CRC is one stream.
        let protected = try Self.encode(tone, "tone-crc.mp3", ["-p", "-b", "192"])
        let lengths = [plain, protected].map { bytes in
            bytes.withUnsafeBufferPointer { MPEGFrameHeader($0.baseAddress!)!.length }
        }
        let mixed = Array(plain.prefix(lengths[0]) + protected.dropFirst(lengths[1]))
        let (out, frameGuard) = Self.guarded(mixed, chunk: 4096)
        XCTAssertTrue(out == mixed && frameGuard.silencedFrames + frameGuard.skippedBytes == 0, "tag frame without CRC")
        // Junk before the first frame (with a lone free-format header in it) and zeros after the last are dropped;
        // an ID3v1 tag between two files is skipped whole.
        let junk: [UInt8] = [0x00, 0xFF, 0xFB, 0x00, 0x64, 0x13, 0x37]
        for (input, expected, label) in [
            (junk + plain + Array(repeating: 0, count: 20), plain, "junk around"),
            (
                plain + Array("TAG".utf8) + Array(repeating: 0x20, count: 125) + protected, plain + protected,
                "ID3v1 between"
            ),
        ] {
            for chunk in [1, 500, input.count] {
                let (out, frameGuard) = Self.guarded(input, chunk: chunk)
                XCTAssertTrue(
                    out == expected, "\(label), chunks of \(chunk): \(out.count) bytes out, \(expected.count) expected")
                XCTAssertEqual(frameGuard.silencedFrames + frameGuard.skippedBytes, 0, label)
            }
        }
        // A free-format stream passes through unchecked and decodes.
        let free = try Self.encode(tone, "tone-free.mp3", ["--freeformat", "-b", "400"])
        XCTAssertEqual(free[2] >> 4, 0, "free format")
        for chunk in [1, 1000] {
            // A byte at a time, the free-format check waits for the bytes that tell instead of searching per byte.
            XCTAssertTrue(Self.guarded(free, chunk: chunk).bytes == free, "free format, chunks of \(chunk)")
        }
        XCTAssertTrue(try Self.decodeGuarded(free, chunk: 1000).samples == Self.decode(free), "free format decodes")
        XCTAssertGreaterThan(try Self.decode(free).count, 44100)
    }

    /// A second stream spliced in at a random byte (a cut frame, then the other stream's frames whose bit
    /// reservoir lies before the cut) never decodes louder than the louder clean stream + 1 dB; without the
    /// guard some splices do.
    func testSplicesNeverLouder() throws {
        let a = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        let b = try Self.encode(try Self.bursts(), "bursts-splice.mp3", ["-b", "128"])
        let limit = max(TestSupport.peak(try Self.decode(a)), TestSupport.peak(try Self.decode(b))) * powf(10, 1 / 20)
        var rng = SplitMix64(seed: 11)
        var louderUnguarded = 0
        var detected = 0
        let splices = 150
        for n in 0..<splices {
            let cut = Int.random(in: 1..<a.count, using: &rng)
            let from = Int.random(in: 1..<b.count, using: &rng)
            let spliced = Array(a.prefix(cut)) + Array(b.suffix(from: from))
            let (out, damage) = try Self.decodeGuarded(spliced)
            XCTAssertLessThanOrEqual(TestSupport.peak(out), limit, "splice \(n): \(cut) + \(from)")
            if damage != StreamDamage() { detected += 1 }
            if TestSupport.peak(try Self.decode(spliced)) > limit { louderUnguarded += 1 }
        }
        print(
            "splices: \(splices), detected \(detected), "
                + "louder than clean + 1 dB without the guard \(louderUnguarded), with it 0"
        )
        XCTAssertGreaterThan(detected, splices * 9 / 10)
        XCTAssertGreaterThan(louderUnguarded, 0, "the splices should include ones that decode louder without the guard")
    }

    /// A stream cut at every byte of its last frames, and joined there to another stream, never decodes louder
    /// than the clean streams + 1 dB (a false header in the cut frame's data must not pass as a last frame).
    func testEveryCutPoint() throws {
        let a = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestSupport.sine(seconds: 1))))
        let limit = max(TestSupport.peak(try Self.decode(a)), TestSupport.peak(try Self.decode(b))) * powf(10, 1 / 20)
        for cut in stride(from: a.count - 1600, to: a.count, by: 1) {
            let truncated = try Self.decodeGuarded(Array(a.prefix(cut))).samples
            XCTAssertLessThanOrEqual(TestSupport.peak(truncated), limit, "cut at \(cut)")
            if cut % 4 == 0 {
                let spliced = try Self.decodeGuarded(Array(a.prefix(cut)) + Array(b.suffix(from: b.count / 2))).samples
                XCTAssertLessThanOrEqual(TestSupport.peak(spliced), limit, "cut at \(cut), spliced")
            }
        }
    }

    /// A break the byte source announces (a reconnect) starts the bit reservoir afresh even where the bytes
    /// would fit together: the frame after it is silenced, its audio muted with fades, and nothing counts as damage.
    func testAnnouncedBreak() throws {
        let bytes = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        let clean = try Self.decode(bytes)
        let offset = Self.frameOffset(bytes, 20)
        let decoder = try GuardedMP3Decoder()
        var out: [Float] = []
        try decoder.decode(UnsafeRawBufferPointer(start: bytes, count: offset), final: false) { s, n, c, _ in
            out += UnsafeBufferPointer(start: s, count: n * c.channels)
        }
        decoder.markBreak()
        try bytes.withUnsafeBytes { all in
            try decoder.decode(UnsafeRawBufferPointer(rebasing: all[offset...]), final: true) { s, n, c, _ in
                out += UnsafeBufferPointer(start: s, count: n * c.channels)
            }
        }
        XCTAssertEqual(decoder.damage, StreamDamage())
        Self.assertMuted(out, against: clean, longestSpan: 128 + 2 * 1152 + 576 + 512 + 128)
    }

    /// In a CRC-protected stream every bit flip in a frame's side information is found and that frame silenced;
    /// the frames after it still find their bit reservoir (low bitrates reach back across several frames).
    func testCRCFindsSideInformationDamage() throws {
        let wav = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1) + ".wav"
        for options in [
            ["-p", "-b", "192"], ["-p", "--resample", "22.05", "-b", "48"], ["-p", "--resample", "8", "-b", "8"],
        ] {
            let bytes = try Self.encode(wav, "tone-crc\(options.joined()).mp3", options)
            let clean = TestSupport.peak(try Self.decode(bytes))
            var frames: [(offset: Int, sideInfo: Int)] = []
            var offset = 0
            bytes.withUnsafeBufferPointer { b in
                while offset + 4 <= b.count, let h = MPEGFrameHeader(b.baseAddress! + offset) {
                    if h.hasCRC { frames.append((offset, h.sideInfoLength)) }
                    offset += h.length
                }
            }
            XCTAssertEqual(offset, bytes.count, "\(options): the test file is a plain sequence of frames")
            var rng = SplitMix64(seed: 5)
            for n in 0..<100 {
                var damaged = bytes
                let frame = frames[Int.random(in: 1..<(frames.count - 1), using: &rng)]
                damaged[frame.offset + 6 + Int.random(in: 0..<frame.sideInfo, using: &rng)] ^= UInt8(
                    1 << Int.random(in: 0...7, using: &rng))
                let (out, damage) = try Self.decodeGuarded(damaged)
                XCTAssertGreaterThanOrEqual(damage.silencedFrames, 1, "\(options) flip \(n)")
                let peak = TestSupport.peak(out)
                XCTAssertLessThanOrEqual(
                    peak, clean * powf(10, 1 / 20), "\(options) flip \(n): \(20 * log10(peak / clean)) dB")
            }
        }
    }

    /// A frame libmpg123 gives up on part-way (main data shorter than its Huffman codes: it fills the rest with
    /// zeros and its filter bank goes on out of step) is counted and its audio muted with fades.
    func testAbandonedFrameIsConcealed() throws {
        let bytes = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        let clean = try Self.decode(bytes)
        var damaged = bytes
        // part2_3_length of granule 1, channel 0: 1 bit
        Self.setBits(&damaged, at: (Self.frameOffset(bytes, 20) + 4) * 8 + 20 + 2 * 59, width: 12, to: 1)
        let raw = try Self.decode(damaged)
        XCTAssertEqual(raw.count, clean.count)
        XCTAssertTrue(
            zip(raw, clean).contains { $0 == 0 && $1 != 0 }, "libmpg123 fills the abandoned granule with zeros")
        let (out, damage) = try Self.decodeGuarded(damaged)
        XCTAssertEqual(damage, StreamDamage(skippedBytes: 0, silencedFrames: 1))
        Self.assertMuted(out, against: clean, longestSpan: 128 + 1152 + 576 + 512 + 128)
    }

    /// A frame whose side information names an unused Huffman table (4 or 14) is silenced, with no CRC needed.
    func testUnusedHuffmanTableIsDamage() throws {
        let bytes = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        let offset = Self.frameOffset(bytes, 20)
        func bit(_ position: Int) -> Bool { bytes[offset + 4 + position / 8] & UInt8(0x80 >> (position % 8)) != 0 }
        let windowSwitching = bit(20 + 33)  // granule 0, channel 0
        let table = 20 + 34 + (windowSwitching ? 3 : 0)
        var damaged = bytes
        Self.setBits(&damaged, at: (offset + 4) * 8 + table, width: 5, to: 4)
        XCTAssertEqual(try Self.decodeGuarded(bytes).damage, StreamDamage())
        XCTAssertEqual(try Self.decodeGuarded(damaged).damage, StreamDamage(skippedBytes: 0, silencedFrames: 1))
    }

    /// Damaged input gives the same output however it is chunked.
    func testChunkingDoesNotMatter() throws {
        let a = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1))))
        var rng = SplitMix64(seed: 3)
        for _ in 0..<20 {
            var bytes =
                Array(a.prefix(Int.random(in: 0..<a.count, using: &rng)))
                + Array(a.suffix(from: Int.random(in: 0..<a.count, using: &rng)))
            for _ in 0..<5 where !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 0x10 }
            let whole = Self.guarded(bytes, chunk: max(bytes.count, 1))
            for chunk in [1, 7, 1000] {
                let part = Self.guarded(bytes, chunk: chunk)
                XCTAssertTrue(part.bytes == whole.bytes, "chunks of \(chunk)")
                XCTAssertEqual(part.guard.silencedFrames, whole.guard.silencedFrames)
                XCTAssertEqual(part.guard.skippedBytes, whole.guard.skippedBytes)
            }
        }
    }

    /// A looping stream counts its damage over every loop: each loop decodes the file afresh, and what the earlier
    /// loops found is not forgotten (a live `status` read just after a loop began showed none).
    func testALoopingStreamAddsUpItsDamage() throws {
        let a = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)))
        let b = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.sine(seconds: 1)))
        let spliced = TestSupport.directory.appendingPathComponent("spliced-loop.mp3").path
        FileManager.default.createFile(
            atPath: spliced, contents: a.prefix(a.count / 2 + 7) + b.suffix(from: b.count / 3 + 11))
        func damage(loop: Bool, seconds: Int) throws -> StreamDamage {
            let graph = TestSupport.graph(
                """
                { "nodes": [ { "id": "s", "type": "stream", "url": "\(spliced)", "loop": \(loop) }, \
                { "id": "out", "type": "output" } ],
                  "links": [ { "from": "s", "to": "out" } ] }
                """)
            let session = try TestSupport.session(graph)
            defer { session.close() }
            _ = try OfflineRenderer(session: session).render(durationFrames: 48000 * seconds) { _, _ in }
            return session.graph.streams[0].damage
        }
        let once = try damage(loop: false, seconds: 2)
        XCTAssertGreaterThan(once.silencedFrames + once.skippedBytes, 0, "the splice was not found")
        let looped = try damage(loop: true, seconds: 5)
        XCTAssertGreaterThanOrEqual(
            looped.silencedFrames, 3 * once.silencedFrames, "\(looped) after 3 or more loops of \(once)")
        XCTAssertGreaterThanOrEqual(
            looped.skippedBytes, 3 * once.skippedBytes, "\(looped) after 3 or more loops of \(once)")
    }

    /// Two MP3 files of different rates joined (`cat a.mp3 b.mp3`): neither file's audio is lost or silenced at the
    /// join. What the second file adds beyond its own gapless length is at most its encoder delay and padding,
    /// which a player of one stream keeps.
    func testJoinedFilesOfDifferentRatesLoseNothing() throws {
        let a = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let b = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let joined = TestSupport.directory.appendingPathComponent("joined-44100-48000.mp3").path
        try (try Data(contentsOf: URL(fileURLWithPath: a)) + (try Data(contentsOf: URL(fileURLWithPath: b)))).write(
            to: URL(fileURLWithPath: joined))
        func frames(_ path: String) throws -> (Int, StreamDamage) {
            let (samples, summary) = try TestSupport.render(TestSupport.streamGraph(path, rate: 48000))
            return (samples.count / 2, summary.damage)
        }
        let (alone, _) = try frames(a)
        let (other, _) = try frames(b)
        let (both, damage) = try frames(joined)
        XCTAssertEqual(damage, StreamDamage(), "nothing skipped or silenced at the join")
        XCTAssertGreaterThanOrEqual(both, alone + other, "nothing lost at the join")
        XCTAssertLessThanOrEqual(
            both, alone + other + 2 * 1152, "at most the second file's encoder delay and padding added")
    }
}
