import Foundation
import XCTest

@testable import GraphHost

/// EBU R128 loudness of graphhost's own output (`render --loudness`, `LoudnessMeter`) against ffmpeg's `ebur128`
/// filter reading the same rendered file: integrated loudness and range within 0.1 LU, true peak within 0.2 dB, and
/// momentary and short-term loudness every 100 ms within 0.1 LU.
final class LoudnessTests: XCTestCase {
    typealias Step = LoudnessReference.Step

    /// What `render --loudness` printed for the output `out`, and the rendered file.
    struct Rendered {
        var file: String
        var integrated: Double
        var range: Double
        var truePeak: Double
    }

    /// Renders `signal` through a stream node straight to the output (gain 1) with `render --loudness`.
    func render(_ signal: String) throws -> Rendered {
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(signal)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let file = signal.replacingOccurrences(of: ".wav", with: "-rendered.wav")
        let result = try TestSupport.graphhost(["render", graph, "-o", file, "--loudness"])
        XCTAssertEqual(result.status, 0, result.err)
        let line = try XCTUnwrap(
            result.out.split(separator: "\n").first { $0.hasPrefix("loudness out: ") }, result.out)
        let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ")
        func value(after word: String) throws -> Double {
            let i = try XCTUnwrap(words.firstIndex(of: Substring(word)), String(line))
            return try XCTUnwrap(Double(words[i + 1]), String(line))
        }
        return Rendered(
            file: file, integrated: try value(after: "integrated"), range: try value(after: "range"),
            truePeak: try value(after: "peak"))
    }

    /// Compares `render --loudness` of `signal` with ffmpeg's reading of the rendered file.
    @discardableResult
    func assertMatchesFFmpeg(_ signal: String, file: StaticString = #filePath, line: UInt = #line) throws -> Rendered {
        let ours = try render(signal)
        let reference = try LoudnessReference.ffmpeg(ours.file)
        print("graphhost \(ours), ffmpeg I \(reference.integrated) LRA \(reference.range) TP \(reference.truePeak)")
        XCTAssertEqual(ours.integrated, reference.integrated, accuracy: 0.1, "integrated", file: file, line: line)
        XCTAssertEqual(ours.range, reference.range, accuracy: 0.1, "loudness range", file: file, line: line)
        XCTAssertEqual(ours.truePeak, reference.truePeak, accuracy: 0.2, "true peak", file: file, line: line)
        return ours
    }

    /// Tech 3341 case 1: a stereo 1 kHz sine at -23 dBFS reads -23.0 LUFS.
    func testSineAtMinus23dBFSReadsMinus23LUFS() throws {
        let ours = try assertMatchesFFmpeg(
            try LoudnessReference.signal("sine-23", [Step(seconds: 20, left: -23, right: -23)]))
        XCTAssertEqual(ours.integrated, -23, accuracy: 0.1)
        XCTAssertEqual(ours.range, 0, accuracy: 0.1)
        XCTAssertEqual(ours.truePeak, -23, accuracy: 0.2)
    }

    /// Channels at different levels (left 6 dB above right) and a mono signal in the left channel only.
    func testChannelsAtDifferentLevels() throws {
        try assertMatchesFFmpeg(try LoudnessReference.signal("left-right", [Step(seconds: 10, left: -20, right: -26)]))
        let mono = try assertMatchesFFmpeg(try LoudnessReference.signal("left-only", [Step(seconds: 10, left: -20)]))
        XCTAssertEqual(mono.integrated, -23, accuracy: 0.1, "one channel of two at -20 dBFS is 3 dB quieter")
    }

    /// An inter-sample peak (Tech 3341 cases 15-19 style): a 6 kHz sine at -6 dBFS sampled 22.5° off its crests
    /// has samples at -6.7 dBFS and a true peak of -6 dBTP.
    func testTruePeakFindsTheInterSamplePeak() throws {
        let ours = try assertMatchesFFmpeg(
            try LoudnessReference.signal(
                "true-peak-6k", [Step(seconds: 5, left: -6.02, right: -6.02)], frequency: 6000, phase: Double.pi / 8))
        XCTAssertEqual(ours.truePeak, -6.02, accuracy: 0.2)
        XCTAssertGreaterThan(ours.truePeak, -6.5, "above the highest sample")
    }

    /// Tech 3341 case 4 (shortened): -72, -36, -23, -36, -72 dBFS; the gates leave the -23 dBFS part.
    func testGatedStepsReadMinus23AndTheirRange() throws {
        let ours = try assertMatchesFFmpeg(
            try LoudnessReference.signal(
                "case4",
                [-72.0, -36, -23, -36, -72].enumerated().map { Step(seconds: $0 == 2 ? 20 : 5, left: $1, right: $1) }))
        XCTAssertEqual(ours.integrated, -23, accuracy: 0.1)
        XCTAssertGreaterThan(ours.range, 1, "the -36 dBFS parts widen the range")
    }

    /// Momentary and short-term loudness of graphhost's output fed to a `LoudnessMeter` in 100 ms steps match
    /// ffmpeg's 100 ms frame lines through level steps.
    func testMomentaryAndShortTermFollowFFmpegEvery100ms() throws {
        let signal = try LoudnessReference.signal(
            "steps",
            [
                Step(seconds: 4, left: -20, right: -20), Step(seconds: 4, left: -30, right: -30),
                Step(seconds: 4, left: -15),
            ])
        let rendered = try render(signal)
        let samples = try LoudnessReference.samples(rendered.file)
        let reference = try LoudnessReference.ffmpeg(rendered.file)
        let meter = LoudnessMeter(channels: 2, sampleRate: 48000)
        let step = 4800
        var compared = (momentary: 0, shortTerm: 0)
        samples.withUnsafeBufferPointer { buffer in
            for k in 0..<(samples.count / 2 / step) {
                meter.add(interleaved: buffer.baseAddress! + 2 * k * step, frames: step, channels: 2)
                let time = Double(k + 1) / 10
                guard let frame = reference.frames.first(where: { abs($0.time - time) < 0.01 }) else { continue }
                if time >= 0.4 {
                    XCTAssertEqual(meter.momentary, frame.momentary, accuracy: 0.1, "momentary at \(time) s")
                    compared.momentary += 1
                }
                if time >= 3 {
                    XCTAssertEqual(meter.shortTerm, frame.shortTerm, accuracy: 0.1, "short-term at \(time) s")
                    compared.shortTerm += 1
                }
            }
        }
        XCTAssertGreaterThan(compared.momentary, 110)
        XCTAssertGreaterThan(compared.shortTerm, 85)
    }

    /// Several outputs: one line each, named by node id; an output fed at half the volume reads 6.02 LU lower.
    func testEveryOutputGetsALine() throws {
        let signal = try LoudnessReference.signal("sine-23", [Step(seconds: 20, left: -23, right: -23)])
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(signal)" },
                         { "id": "mix", "type": "mixer", "inputs": 1, "volumes": [0.5] },
                         { "id": "main", "type": "output" }, { "id": "quiet", "type": "output" } ],
              "links": [ { "from": "s", "to": "main" }, { "from": "s", "to": "mix" },
                         { "from": "mix", "to": "quiet" } ] }
            """)
        let file = TestSupport.directory.appendingPathComponent("loudness-main.wav").path
        let result = try TestSupport.graphhost(["render", graph, "-o", "main=\(file)", "--duration", "5", "--loudness"])
        XCTAssertEqual(result.status, 0, result.err)
        let lines = result.out.split(separator: "\n").filter { $0.hasPrefix("loudness ") }
        XCTAssertEqual(lines.map { $0.split(separator: ":")[0] }, ["loudness main", "loudness quiet"], result.out)
        func integrated(_ line: Substring) throws -> Double {
            let words = line.split(separator: " ")
            return try XCTUnwrap(Double(words[words.firstIndex(of: "integrated")! + 1]), String(line))
        }
        XCTAssertEqual(try integrated(lines[0]), -23, accuracy: 0.1)
        XCTAssertEqual(try integrated(lines[0]) - integrated(lines[1]), 6.02, accuracy: 0.05)
    }

    /// Silence reads -infinity, never NaN; a reset forgets what was added.
    func testSilenceReadsMinusInfinityAndResetForgets() throws {
        let meter = LoudnessMeter(channels: 2, sampleRate: 48000)
        let silence = [Float](repeating: 0, count: 2 * 48000)
        meter.add(interleaved: silence, frames: 48000, channels: 2)
        for value in [meter.momentary, meter.shortTerm, meter.integrated, meter.truePeak] {
            XCTAssertEqual(value, -.infinity)
        }
        XCTAssertEqual(meter.range, 0)
        let json = RunStatus.Loudness(node: "out", meter).json.compact
        XCTAssertTrue(json.contains(#""momentary":null"#) && json.contains(#""truePeak":null"#), json)
        let tone = (0..<(2 * 48000)).map { Float(0.1 * sin(2 * Double.pi * 1000 * Double($0 / 2) / 48000)) }
        meter.add(interleaved: tone, frames: 48000, channels: 2)
        XCTAssertTrue(meter.momentary.isFinite)
        meter.reset()
        XCTAssertEqual(meter.momentary, -.infinity)
        XCTAssertEqual(meter.truePeak, -.infinity)
    }
}
