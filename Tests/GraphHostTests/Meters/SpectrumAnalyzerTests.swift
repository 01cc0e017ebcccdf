import Foundation
import XCTest

@testable import GraphHost

/// The spectrum analyzer on graphhost's own output: WAVs made with sox played by a stream node through a mixer to the
/// output, rendered offline, the output fed to the analyzer in 256-frame blocks as a tap would.
final class SpectrumAnalyzerTests: XCTestCase {
    /// A 32-bit float WAV made by `sox -n` with `effects` (repeatable: the same noise every run).
    static func wav(_ name: String, rate: Int, _ effects: [String]) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("spectrum-\(name)-\(rate).wav").path
        if FileManager.default.fileExists(atPath: path) { return path }
        try TestSupport.run(
            ["sox", "-R", "-q", "-n", "-r", "\(rate)", "-c", "2", "-e", "floating-point", "-b", "32", path] + effects)
        return path
    }

    /// 6 s of a 1 kHz sine at -6 dBFS.
    static func sine(rate: Int) throws -> String {
        try wav("sine-1k", rate: rate, ["synth", "6", "sine", "1000", "gain", "-n", "-6"])
    }

    /// `file` rendered by graphhost: stream node, mixer, output at `rate`.
    static func render(_ file: String, rate: Int) throws -> [Float] {
        let graph = TestSupport.graph(
            """
            { "format": { "sampleRate": \(rate), "channels": 2 },
              "nodes": [ { "id": "s", "type": "stream", "url": "\(file)" },
                         { "id": "mix", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """)
        return try TestSupport.render(graph).samples
    }

    /// An analyzer for stereo at `rate` fed `samples` in blocks of 256 frames.
    static func analyzer(_ samples: [Float], rate: Int) -> SpectrumAnalyzer {
        let analyzer = SpectrumAnalyzer(sampleRate: Double(rate), channels: 2)
        feed(analyzer, samples)
        return analyzer
    }

    static func feed(_ analyzer: SpectrumAnalyzer, _ samples: [Float]) {
        samples.withUnsafeBufferPointer { samples in
            var frame = 0
            let frames = samples.count / 2
            while frame < frames {
                let count = min(256, frames - frame)
                analyzer.add(interleaved: samples.baseAddress! + 2 * frame, frames: count, channels: 2)
                frame += count
            }
        }
    }

    /// k of a band center 1000·2^(k/6) Hz.
    static func index(_ center: Double) -> Int { Int((6 * log2(center / 1000)).rounded()) }

    func testA1kHzSineAtMinus6dBFSReadsMinus6dBInTheBandHolding1kHzAt48And44_1kHz() throws {
        for rate in [48000, 44100] {
            // 6 s: the splatter of the sine's start, in the first analyses, has decayed by 80 dB in `reading()`.
            let samples = try Self.render(try Self.sine(rate: rate), rate: rate)
            XCTAssertEqual(samples.count, 6 * rate * 2, "\(rate)")
            let sineDB = 20 * log10(Double(TestSupport.peak(samples)))
            XCTAssertEqual(sineDB, -6, accuracy: 0.01)
            let bands = Self.analyzer(samples, rate: rate).reading()
            let loudest = try XCTUnwrap(bands.max { $0.level < $1.level })
            XCTAssertEqual(loudest.center, 1000, accuracy: 1e-9, "\(rate)")
            // The reference is a full-scale sine: its level is the sine's peak in dBFS.
            XCTAssertEqual(loudest.level, sineDB, accuracy: 0.05, "\(rate)")
            let far = bands.filter { abs(Self.index($0.center)) > 12 }
            XCTAssertEqual(far.count, bands.count - 25, "\(rate)")
            for band in far {
                XCTAssertLessThan(band.level, sineDB - 100, "\(rate): band \(band.center) Hz")
            }
        }
    }

    /// Pink noise has the same power in every constant-Q band, so its 1/6-octave bands read flat as they are: no
    /// slope to take out. 20 s of sox's pink noise, averaged over every analysis.
    func testPinkNoiseReadsFlatWithin1_5dBFrom20HzTo20kHz() throws {
        let rate = 48000
        let samples = try Self.render(
            try Self.wav("pink", rate: rate, ["synth", "20", "pinknoise", "gain", "-n", "-6"]), rate: rate)
        let bands = Self.analyzer(samples, rate: rate).average()
        XCTAssertEqual(bands.count, 61)
        let median = bands.map(\.level).sorted()[bands.count / 2]
        XCTAssertGreaterThan(median, -40)
        for band in bands {
            XCTAssertEqual(band.level, median, accuracy: 1.5, "band \(band.center) Hz")
        }
    }

    func testSilenceReadsMinusInfinityNeverNaN() throws {
        let samples = try Self.render(try Self.wav("silence", rate: 48000, ["trim", "0", "2"]), rate: 48000)
        XCTAssertEqual(samples.count, 2 * 48000 * 2)
        XCTAssertEqual(TestSupport.peak(samples), 0)
        let analyzer = SpectrumAnalyzer(sampleRate: 48000, channels: 2)
        XCTAssertEqual(Set(analyzer.reading().map(\.level)), [-.infinity], "before any audio")
        Self.feed(analyzer, samples)
        XCTAssertEqual(Set(analyzer.reading().map(\.level)), [-.infinity])
        XCTAssertEqual(Set(analyzer.average().map(\.level)), [-.infinity])

        let spectrum = RunStatus.Spectrum(node: "out", bands: analyzer.reading())
        let json = try JSONSerialization.jsonObject(with: Data(spectrum.json.compact.utf8)) as? [String: Any]
        XCTAssertEqual(json?["node"] as? String, "out")
        let bands = try XCTUnwrap(json?["bands"] as? [[String: Any]])
        XCTAssertEqual(bands.count, 61)
        XCTAssertEqual(try XCTUnwrap(bands.first?["center"] as? Double), 1000 * pow(2, -34.0 / 6), accuracy: 1e-9)
        XCTAssertTrue(bands.allSatisfy { $0["level"] is NSNull }, "\(bands)")

        // A sine, then NaN and infinity (read as silence), then `reset()`: -infinity again at once.
        let sine = try Self.render(try Self.sine(rate: 48000), rate: 48000)
        Self.feed(analyzer, sine)
        Self.feed(analyzer, [Float](repeating: .nan, count: 4800) + [Float](repeating: .infinity, count: 4800))
        let afterNaN = analyzer.reading().map(\.level)
        XCTAssertFalse(afterNaN.contains { $0.isNaN }, "\(afterNaN)")
        XCTAssertEqual(try XCTUnwrap(afterNaN.max()), -6, accuracy: 0.5)
        analyzer.reset()
        XCTAssertEqual(Set(analyzer.reading().map(\.level)), [-.infinity])
        XCTAssertEqual(Set(analyzer.average().map(\.level)), [-.infinity])
    }

    /// After a sine, silence: the reading changes once every 1600 frames (30 a second at 48 kHz), and once the window
    /// holds only silence it falls by a factor e in power (4.34 dB) every 300 ms.
    func testTheReadingFallsWithA300msTimeConstantAnalysed30TimesASecond() throws {
        let analyzer = Self.analyzer(try Self.render(try Self.sine(rate: 48000), rate: 48000), rate: 48000)
        XCTAssertEqual(analyzer.hop, 1600)
        func level() -> Double { analyzer.reading()[34].level }
        let silence = [Float](repeating: 0, count: 2 * 1600)
        func feedSilence(frames: Int) {
            silence.withUnsafeBufferPointer { analyzer.add(interleaved: $0.baseAddress!, frames: frames, channels: 2) }
        }
        let sine = level()
        XCTAssertEqual(sine, -6, accuracy: 0.05)
        feedSilence(frames: 1599)
        XCTAssertEqual(level(), sine, "no analysis before 1600 frames")
        feedSilence(frames: 1)
        XCTAssertLessThan(level(), sine)
        for _ in 1..<11 { feedSilence(frames: 1600) }  // 17 600 frames: the 16384-frame window is silent
        let windowSilent = level()
        for _ in 0..<9 { feedSilence(frames: 1600) }  // 9 analyses: 300 ms
        XCTAssertEqual(level() - windowSilent, -10 * log10(M_E), accuracy: 0.01)
    }

    /// 61 bands 1/6 octave apart from 19.7 Hz to 20.2 kHz at 44.1 and 48 kHz, analysed 30 times a second; lower rates
    /// stop at the last band below Nyquist.
    func testTheBandLayoutAt48And44_1kHzAndBelow() {
        for rate in [48000.0, 44100.0] {
            let analyzer = SpectrumAnalyzer(sampleRate: rate, channels: 2)
            let centers = analyzer.bands.centers
            XCTAssertEqual(centers.count, 61, "\(rate)")
            XCTAssertEqual(centers.first ?? 0, 19.686, accuracy: 0.001, "\(rate)")
            XCTAssertEqual(centers.last ?? 0, 20_158.7, accuracy: 0.1, "\(rate)")
            XCTAssertEqual(centers.map(Self.index), Array(-34...26), "\(rate)")
            XCTAssertTrue(zip(centers, centers.dropFirst()).allSatisfy { abs($1 / $0 - pow(2, 1.0 / 6)) < 1e-12 })
            XCTAssertEqual(centers[34], 1000, accuracy: 1e-9)
            XCTAssertEqual(analyzer.fftSize, 16384, "\(rate)")
            XCTAssertEqual(analyzer.hop, Int(rate) / 30, "\(rate)")
        }
        XCTAssertEqual(SpectrumBands(sampleRate: 32000).centers.map(Self.index), Array(-34...23))
        XCTAssertEqual(SpectrumBands(sampleRate: 22050).centers.map(Self.index), Array(-34...20))
    }
}
