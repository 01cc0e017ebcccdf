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
            render.executableURL = TestSupport.debugGraphhost
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
