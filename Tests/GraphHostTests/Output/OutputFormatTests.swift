import XCTest

@testable import GraphHost

/// `render -o` and `run --record` formats: FLAC (and the lossy ones) clip at full scale and count what they clipped;
/// Ogg Vorbis and Ogg Opus files decode back to the graph's output.
final class OutputFormatTests: XCTestCase {

    /// A 440 Hz tone through a mixer at `volume`.
    func graph(volume: Double) throws -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.tones([440]))" },
                         { "id": "mix", "type": "mixer", "inputs": 1, "volume": \(volume) }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """)
    }

    func render(_ graph: String, _ ext: String) throws -> (path: String, out: String) {
        let path = TestSupport.directory.appendingPathComponent("out-\(UUID().uuidString).\(ext)").path
        let r = try TestSupport.graphhost(["render", graph, "-o", path, "--duration", "2"])
        XCTAssertEqual(r.status, 0, r.err)
        return (path, r.out)
    }

    /// A graph peaking far above 0 dBFS writes a FLAC file whose samples stop at full scale, and says how many
    /// samples it clipped: as many as the float WAV holds beyond full scale; Ogg Vorbis and Opus files likewise.
    func testFLACClipsAndCounts() throws {
        let hot = try graph(volume: 4)
        let wav = try SoundFile(path: try render(hot, "wav").path).samples
        let beyond = wav.filter { abs($0) > 1 }.count
        XCTAssertGreaterThan(beyond, 1000)
        let (flac, out) = try render(hot, "flac")
        XCTAssertTrue(out.contains("\(flac): clipped \(beyond) samples at full scale"), out)
        let written = try SoundFile(path: flac).samples
        XCTAssertEqual(written.count, wav.count)
        XCTAssertLessThanOrEqual(TestSupport.peak(written), 1)
        // Ogg Vorbis and Opus are clipped before encoding and counted the same way (decoded, a hard-clipped wave comes
        // back above full scale: the encoders keep its band-limited shape).
        for ext in ["ogg", "opus"] {
            let (path, out) = try render(hot, ext)
            XCTAssertTrue(out.contains("\(path): clipped \(beyond) samples at full scale"), "\(ext): \(out)")
        }
        for ext in ["flac", "ogg", "opus"] {
            let (_, quiet) = try render(try graph(volume: 0.5), ext)
            XCTAssertFalse(quiet.contains("clipped"), "\(ext): \(quiet)")
        }
    }

    /// Ogg Vorbis and Ogg Opus: the decoded tone has the graph's level within 0.5 dB and its pitch.
    func testOggVorbisAndOpus() throws {
        let g = try graph(volume: 0.5)
        let reference = try SoundFile(path: try render(g, "wav").path)
        let level = ToneMeasure.amplitude(reference.samples, 440, start: 0.5, seconds: 1)
        for ext in ["ogg", "opus"] {
            let decoded = try SoundFile(path: try render(g, ext).path)
            XCTAssertEqual(decoded.sampleRate, 48000, ext)
            XCTAssertEqual(decoded.channels, 2, ext)
            XCTAssertEqual(Double(decoded.frames) / 48000, 2, accuracy: 0.05, ext)
            XCTAssertEqual(
                ToneMeasure.dB(ToneMeasure.amplitude(decoded.samples, 440, start: 0.5, seconds: 1) / level), 0,
                accuracy: 0.5, ext)
            XCTAssertLessThan(ToneMeasure.amplitude(decoded.samples, 470, start: 0.5, seconds: 1), level / 100, ext)
        }
    }

    /// `--bits 16` writes 16-bit PCM with TPDF dither: a tone of a third of an LSB, which plain rounding would turn
    /// into silence, is still there at its level; the error is a steady noise of half an LSB RMS (rounding's twelfth
    /// plus the dither's sixth of an LSB squared) that carries none of the tone; samples beyond full scale are clipped
    /// and counted.
    func testSixteenBitsAreDithered() throws {
        let lsb = 1.0 / 32768
        let frames = 96000
        var tone = [Float](repeating: 0, count: 2 * frames)
        for n in 0..<frames {
            let x = Float(lsb / 3 * sin(2 * Double.pi * 440 * Double(n) / 48000))
            tone[2 * n] = x
            tone[2 * n + 1] = x
        }
        tone[7] = 1.5
        tone[9] = -2
        let path = TestSupport.directory.appendingPathComponent("dither-\(UUID().uuidString).wav").path
        let writer = try SoundFileWriter(path: path, sampleRate: 48000, channels: 2, bits: 16)
        try tone.withUnsafeBufferPointer { samples in
            // Odd block lengths, so the converter's tails are written too.
            var at = 0
            for length in [1, 7, 1023, 4097] where at < frames {
                try writer.write(samples.baseAddress! + 2 * at, frames: min(length, frames - at))
                at += length
            }
            try writer.write(samples.baseAddress! + 2 * at, frames: frames - at)
        }
        XCTAssertEqual(writer.clippedSamples, 2)
        writer.close()
        let file = try SoundFile(path: path)
        XCTAssertEqual(file.frames, frames)
        XCTAssertEqual(file.samples[7], Float(32767) / 32768)
        XCTAssertEqual(file.samples[9], -1)
        let written = ToneMeasure.amplitude(file.samples, 440, start: 0.5, seconds: 1)
        XCTAssertEqual(ToneMeasure.dB(written / (lsb / 3)), 0, accuracy: 1, "the tone under an LSB survives")
        let error = (1000..<2 * frames).map { Double(file.samples[$0] - tone[$0]) }
        let rms = (error.reduce(0) { $0 + $1 * $1 } / Double(error.count)).squareRoot()
        XCTAssertEqual(rms / lsb, 0.5, accuracy: 0.03)
        XCTAssertEqual(abs(error.reduce(0, +) / Double(error.count)) / lsb, 0, accuracy: 0.01, "no offset")
        let errorTone = ToneMeasure.amplitude((0..<2 * frames).map { file.samples[$0] - tone[$0] }, 440, start: 0.5)
        XCTAssertLessThan(errorTone / lsb, 0.02, "the error does not follow the signal")
    }

    /// `render --bits`: 16 and 24 bits for .wav and .flac, 32 for .wav; anything else is refused with what the
    /// extension takes.
    func testRenderBits() throws {
        let g = try graph(volume: 0.5)
        let float = try SoundFile(path: try render(g, "wav").path)
        for (ext, bits) in [("wav", 16), ("wav", 24), ("flac", 16)] {
            let path = TestSupport.directory.appendingPathComponent("bits-\(UUID().uuidString).\(ext)").path
            let r = try TestSupport.graphhost(["render", g, "-o", path, "--duration", "2", "--bits", "\(bits)"])
            XCTAssertEqual(r.status, 0, r.err)
            let info = try TestSupport.execute(URL(fileURLWithPath: "/usr/bin/soxi"), ["-b", path])
            XCTAssertEqual(
                String(decoding: info.out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "\(bits)")
            let written = try SoundFile(path: path)
            XCTAssertEqual(written.samples.count, float.samples.count)
            let worst = zip(written.samples, float.samples).map { abs(Double($0 - $1)) }.max() ?? 1
            XCTAssertLessThanOrEqual(worst, 1.5 / Double(1 << (bits - 1)), "\(ext) \(bits)")
        }
        for (ext, bits, says) in [
            ("wav", 20, "20 bits: a .wav file takes 16, 24, 32"), ("flac", 32, "32 bits: a .flac file takes 16, 24"),
            ("ogg", 16, "16 bits: a .ogg file has no bits per sample to choose"),
        ] {
            let path = TestSupport.directory.appendingPathComponent("bad-bits.\(ext)").path
            let r = try TestSupport.graphhost(["render", g, "-o", path, "--duration", "1", "--bits", "\(bits)"])
            XCTAssertNotEqual(r.status, 0)
            XCTAssertTrue(r.err.contains(says), r.err)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        }
    }

    func testUnknownExtensionsAndOpusRatesAreRefused() throws {
        let r = try TestSupport.graphhost([
            "render", try graph(volume: 1), "-o", TestSupport.directory.appendingPathComponent("x.mp3").path,
            "--duration", "1",
        ])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("unknown extension '.mp3' (use .wav, .flac, .ogg or .opus)"), r.err)
        XCTAssertThrowsError(
            try SoundFileWriter(
                path: TestSupport.directory.appendingPathComponent("x.opus").path, sampleRate: 44100, channels: 2)
        ) {
            XCTAssertTrue(
                "\($0)".contains("Opus takes 48000, 24000, 16000, 12000 or 8000 Hz, and the graph runs at 44100 Hz"),
                "\($0)")
        }
    }

    /// A render interrupted (Ctrl-C, or SIGTERM) stops, exits 130 and leaves nothing where it was writing: the file
    /// is written under a hidden name beside its target and renamed only when the render succeeded.
    func testAnInterruptedRenderLeavesNoFile() throws {
        let folder = TestSupport.directory.appendingPathComponent("interrupted-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "tone", "type": "stream", "url": "\(try TestSupport.sine(seconds: 2))", \
            "loop": true }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "tone", "to": "out" } ] }
            """)
        for signal in [SIGINT, SIGTERM] {
            let render = Process()
            render.executableURL = TestSupport.executable
            render.arguments = ["render", graph, "-o", folder + "/long.flac", "--duration", "36000"]
            let err = Pipe()
            render.standardError = err
            try render.run()
            XCTAssertTrue(
                TestSupport.waitUntil {
                    (try? FileManager.default.contentsOfDirectory(atPath: folder))?.contains { $0.hasSuffix(".part") }
                        ?? false
                },
                "the render began writing")
            kill(render.processIdentifier, signal)
            render.waitUntilExit()
            XCTAssertEqual(render.terminationStatus, 130, "signal \(signal)")
            XCTAssertTrue(
                String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("interrupted"))
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "signal \(signal)")
        }
    }
}
