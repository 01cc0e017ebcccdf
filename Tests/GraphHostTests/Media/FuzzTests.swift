import Foundation
import XCTest

@testable import GraphHost

/// Mutation fuzzing of the graph loader and the MP3 stream path. CI runs a bounded number of inputs;
/// `scripts/reliability` sets GRAPHHOST_FUZZ_GRAPHS=100000 and GRAPHHOST_FUZZ_MP3=10000.
final class FuzzTests: XCTestCase {
    static func count(_ variable: String, default value: Int) -> Int {
        Int(ProcessInfo.processInfo.environment[variable] ?? "") ?? value
    }

    /// Fragments a mutation may insert: JSON syntax, wrong types, extremes, and real keys and values.
    static let fragments = [
        "{", "}", "[", "]", ",", ":", "\"", "null", "true", "-1", "1e308", "0", "4096", "\"out\"", "\"mix:7\"",
        "\"type\"", "\"chain\"", "\"lv2\"", "\"uri\"", "\"preset\"", "\"Rock\"", "\"x:y\"", "\"\\u0000\"", "\"é\"",
        "\"chains\"", "\"links\"", "\"nodes\"", "{\"id\":\"a\",\"type\":\"mixer\"}", "9999999999999999999999", "\"\\\"",
    ]

    static func mutate(_ text: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = text
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !bytes.isEmpty:
                bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &rng)))
            case 2: bytes.insert(contentsOf: Array(fragments.randomElement(using: &rng)!.utf8), at: at)
            case 3 where !bytes.isEmpty:
                let from = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.insert(
                    contentsOf: bytes[from..<min(bytes.count, from + Int.random(in: 1...80, using: &rng))], at: at)
            case 4: bytes = Array(bytes.prefix(at))
            default: if !bytes.isEmpty { bytes.swapAt(at, Int.random(in: 0..<bytes.count, using: &rng)) }
            }
        }
        return bytes
    }

    /// Every mutated graph is accepted or rejected with errors that each name a JSON path or a line and column,
    /// and nothing crashes or hangs (a parse over a second fails the run).
    func testGraphLoaderFuzz() throws {
        let inputs = Self.count("GRAPHHOST_FUZZ_GRAPHS", default: 5000)
        let root = TestSupport.root.appendingPathComponent("Graphs")
        let seeds = try ["demo.json", "chains.json"].map {
            try [UInt8](Data(contentsOf: root.appendingPathComponent($0)))
        }
        var rng = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["GRAPHHOST_FUZZ_SEED"] ?? "") ?? 1)
        var accepted = 0
        var rejected = 0
        var slowest = 0.0
        for n in 0..<inputs {
            let bytes = Self.mutate(seeds[n % seeds.count], &rng)
            let text = String(decoding: bytes, as: UTF8.self)
            let started = Date()
            do {
                _ = try GraphDocument.parse(text: text, file: root.appendingPathComponent("fuzz.json"))
                accepted += 1
            } catch let errors as GraphErrors {
                rejected += 1
                XCTAssertFalse(errors.errors.isEmpty)
                for e in errors.errors where e.path.isEmpty && e.line == nil || e.message.isEmpty {
                    XCTFail("input \(n): an error without a place: \(e)")
                }
            } catch {
                XCTFail("input \(n): not a graph error: \(error)")
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        print(
            "graph fuzz: \(inputs) inputs, \(accepted) accepted, \(rejected) rejected, slowest "
                + "\(String(format: "%.1f", slowest * 1000)) ms"
        )
        XCTAssertLessThan(slowest, 1.0)
        XCTAssertGreaterThan(rejected, inputs / 2)
    }

    /// Mutated, truncated and spliced MP3 bytes decode without a crash; the output is always finite and within
    /// ±2.0 (the corrupt-block guard); truncated and spliced streams never decode louder than the clean decode
    /// + 1 dB (the frame guard). Bit damage inside frames can (unprotected fields that decode to louder audio
    /// mpg123 accepts): how often and how loud is printed for RELIABILITY.md.
    func testMP3StreamFuzz() throws {
        let inputs = Self.count("GRAPHHOST_FUZZ_MP3", default: 300)
        let clean = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 1)
        let other = try TestSupport.sine(seconds: 1)
        let cleanBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
        let otherBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: other)))
        let reference = max(
            TestSupport.peak(try TestSupport.renderStream(clean)), TestSupport.peak(try TestSupport.renderStream(other))
        )
        let limit = reference * powf(10, 1 / 20)
        var rng = SplitMix64(seed: 7)
        let path = TestSupport.directory.appendingPathComponent("fuzz.mp3").path
        let graph = TestSupport.streamGraph(path)
        var loudest: [Float] = [0, 0, 0]
        var louder = [0, 0, 0]
        var failures = 0
        let kinds = ["bit damage", "truncated", "spliced"]
        for n in 0..<inputs {
            var bytes: [UInt8]
            switch n % 3 {
            case 0:  // bit and byte damage in the audio data
                bytes = cleanBytes
                for _ in 0..<Int.random(in: 1...20, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(
                        1 << Int.random(in: 0...7, using: &rng))
                }
            case 1:  // truncated
                bytes = Array(cleanBytes.prefix(Int.random(in: 0..<cleanBytes.count, using: &rng)))
            default:  // spliced from two files
                let a = Int.random(in: 0..<cleanBytes.count, using: &rng)
                let b = Int.random(in: 0..<otherBytes.count, using: &rng)
                bytes = Array(cleanBytes.prefix(a)) + Array(otherBytes.suffix(from: b))
            }
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            do {
                let out = try TestSupport.render(graph, durationFrames: 48000 * 2).samples
                let peak = TestSupport.peak(out)
                let failed =
                    !out.allSatisfy { $0.isFinite } || peak > CorruptAudioGuard.ceiling || peak > limit && n % 3 != 0
                let kept = TestSupport.directory.appendingPathComponent("fuzz-failed-\(n).mp3").path
                if failed { try FileManager.default.copyItem(atPath: path, toPath: kept) }
                XCTAssertTrue(out.allSatisfy { $0.isFinite }, "input \(n), kept as \(kept)")
                XCTAssertLessThanOrEqual(peak, CorruptAudioGuard.ceiling, "input \(n), kept as \(kept)")
                if peak > limit {
                    XCTAssertEqual(
                        n % 3, 0,
                        "input \(n) (\(kinds[n % 3])) decodes \(String(format: "%+.2f", 20 * log10(peak / reference))) "
                            + "dB against the clean decode, kept as \(kept) with the clean files \(clean), \(other)"
                    )
                    loudest[n % 3] = max(loudest[n % 3], peak)
                    louder[n % 3] += 1
                }
            } catch {
                failures += 1  // rejected media (not MP3 at all) is an error, not a crash
            }
        }
        let counts = (0..<3).map {
            "\(kinds[$0]) \(louder[$0])"
                + (louder[$0] > 0 ? String(format: " (loudest %+.2f dB)", 20 * log10(loudest[$0] / reference)) : "")
        }
        print(
            "MP3 fuzz: \(inputs) inputs (a third each bit damage, truncated, spliced), \(failures) rejected as not "
                + "MP3; louder than clean + 1 dB: \(counts.joined(separator: ", "))"
        )
    }

    /// Every other format, damaged the same three ways (1–20 bit flips, a cut at a random byte, the file spliced at two
    /// random bytes to itself or to the next format's file): AAC in ADTS and MP4, Ogg Vorbis, Opus, FLAC and WAV.
    /// Nothing crashes or hangs; the output is always finite and within ±2.0. Media FFmpeg cannot open at all is
    /// rejected with an error.
    func testEveryFormatStreamFuzz() throws {
        let inputs = Self.count("GRAPHHOST_FUZZ_FORMATS", default: 12)
        var rng = SplitMix64(seed: 11)
        var summary: [String] = []
        for (i, (ext, rate)) in EncodedMedia.formats.enumerated() {
            let clean = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try EncodedMedia.file(ext))))
            let formats = EncodedMedia.formats
            let other = [UInt8](
                try Data(contentsOf: URL(fileURLWithPath: try EncodedMedia.file(formats[(i + 1) % formats.count].ext))))
            let path = TestSupport.directory.appendingPathComponent("fuzz-format.\(ext)").path
            let graph = TestSupport.streamGraph(path, rate: rate)
            var rejected = 0
            var damaged = 0
            var loudest: Float = 0
            for n in 0..<inputs {
                var bytes = clean
                switch n % 3 {
                case 0:
                    for _ in 0..<Int.random(in: 1...20, using: &rng) {
                        bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(
                            1 << Int.random(in: 0...7, using: &rng))
                    }
                case 1:
                    bytes = Array(clean.prefix(Int.random(in: 0..<clean.count, using: &rng)))
                default:
                    // Half to itself, half to the next format's file.
                    let tail = n % 2 == 0 ? clean : other
                    let a = Int.random(in: 0..<clean.count, using: &rng)
                    let b = Int.random(in: 0..<tail.count, using: &rng)
                    bytes = Array(clean.prefix(a)) + Array(tail.suffix(from: b))
                }
                FileManager.default.createFile(atPath: path, contents: Data(bytes))
                let session: GraphSession
                do {
                    session = try TestSupport.session(graph)
                } catch {
                    rejected += 1
                    continue
                }
                defer { session.close() }
                var finite = true
                var peak: Float = 0
                let rendered = try OfflineRenderer(session: session).render(durationFrames: rate * 2) {
                    samples, frames in
                    for i in 0..<(2 * frames) {
                        if !samples[i].isFinite { finite = false }
                        peak = max(peak, abs(samples[i]))
                    }
                }
                let kept = TestSupport.directory.appendingPathComponent("fuzz-failed-\(n).\(ext)").path
                if !finite || peak > CorruptAudioGuard.ceiling {
                    try? FileManager.default.copyItem(atPath: path, toPath: kept)
                }
                XCTAssertTrue(finite, "\(ext) input \(n), kept as \(kept)")
                XCTAssertLessThanOrEqual(peak, CorruptAudioGuard.ceiling, "\(ext) input \(n), kept as \(kept)")
                XCTAssertEqual(rendered.frames, rate * 2, "\(ext) input \(n)")
                loudest = max(loudest, peak)
                damaged += session.graph.streams[0].damage.silencedFrames > 0 ? 1 : 0
            }
            summary.append(
                "\(ext) \(rejected) rejected, \(damaged) with packets dropped, peak \(String(format: "%.2f", loudest))")
        }
        print(
            "format fuzz: \(inputs) inputs per format (a third each bit damage, truncated, spliced): "
                + "\(summary.joined(separator: "; "))"
        )
    }
}
