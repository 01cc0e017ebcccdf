import Foundation
import XCTest

@testable import GraphHost

/// File properties of real plugins: an impulse response given to x42 zeroconvolv from the graph file and while it
/// plays. A new file makes a new instance that loads it before it is heard, and the output crossfades to it.
final class LV2FilePropertyTests: XCTestCase {
    static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#CfgStereo"

    /// A mono 32-bit float WAV impulse response: one impulse of `gain` at frame `at`.
    static func impulseResponse(gain: Float, at: Int) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("ir-\(gain)-\(at).wav").path
        var samples = [Float](repeating: 0, count: 2 * at)
        samples[at] = gain
        var data = Data("RIFF".utf8)
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
        append(UInt32(36 + 4 * samples.count))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(3))
        append(UInt16(1))
        append(UInt32(48000))
        append(UInt32(4 * 48000))
        append(UInt16(4))
        append(UInt16(32))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(4 * samples.count))
        samples.forEach { append($0) }
        FileManager.default.createFile(atPath: path, contents: data)
        return path
    }

    func graph(ir: String) throws -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "music", "type": "stream", "url": "\(try TestSupport.tones([1000]))" },
                         { "id": "conv", "type": "lv2", "uri": "\(Self.convolver)", "properties": { "ir": "\(ir)" } },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "music", "to": "conv" }, { "from": "conv", "to": "out" } ] }
            """)
    }

    /// The graph file's IR is convolved from the first second: an impulse of 0.5 makes the tone 6 dB quieter. Two
    /// renders are identical.
    func testAConvolverTakesItsImpulseResponseFromTheGraphFile() throws {
        let path = try graph(ir: try Self.impulseResponse(gain: 0.5, at: 480))
        let out = try TestSupport.render(path, durationFrames: 3 * 48000).samples
        XCTAssertEqual(out, try TestSupport.render(path, durationFrames: 3 * 48000).samples)
        XCTAssertEqual(ToneMeasure.dB(ToneMeasure.amplitude(out, 1000)), -18, accuracy: 0.3)
        let document = try GraphDocument.load(path: path)
        XCTAssertTrue(
            GraphPrinter.text(document).contains("ir=\(try Self.impulseResponse(gain: 0.5, at: 480))"),
            GraphPrinter.text(document))
    }

    /// `set conv ir FILE` while it plays (at an exact frame offline): the new instance runs unheard on the live input
    /// for `filePrerollSeconds` (its IR starts after a pre-delay, so a cold start would begin with a step), then the
    /// output crossfades to it, meeting the click criteria; the old instance is retired. The command falls between two
    /// zero crossings of the tone, where a cold start is audible. A missing file is refused and nothing changes.
    func testAnImpulseResponseLoadedWhilePlayingCrossfadesWithoutAClick() throws {
        let first = try Self.impulseResponse(gain: 0.5, at: 480)
        let second = try Self.impulseResponse(gain: 0.25, at: 240)
        let path = try graph(ir: first)
        let out = try TestSupport.render(
            path, durationFrames: 3 * 48000,
            events: [TimedCommand(frame: 72012, request: .node(try NodeRequest.parse("set conv ir \(second)")))]
        ).samples
        func level(_ start: Double) -> Double { ToneMeasure.dB(ToneMeasure.amplitude(out, 1000, start: start)) }
        XCTAssertEqual(level(0.4), -18, accuracy: 0.3, "before the command")
        XCTAssertEqual(level(1.6), -24, accuracy: 0.3, "after the command")
        let click = ClickMeasure.window(out, channels: 2, rate: 48000, time: 1.5, seconds: 0.15)
        XCTAssertLessThanOrEqual(click.slopeRatio, 1.5, "\(click)")
        XCTAssertLessThanOrEqual(click.peakRatio, 1.01, "\(click)")

        let session = try TestSupport.session(path)
        defer { session.close() }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set conv ir /no/such/ir.wav"))) {
            XCTAssertTrue("\($0)".contains("/no/such/ir.wav"), "\($0)")
        }
        XCTAssertEqual((session.graph.instances["conv"] as? LV2Instance)?.propertyValues["ir"], first)
        try session.apply(NodeRequest.parse("set conv ir \(second)"))
        XCTAssertEqual((session.graph.instances["conv"] as? LV2Instance)?.propertyValues["ir"], second)
    }

    /// Live under a private PipeWire daemon, `graphhost ctl set conv ir FILE`: the `--record` output changes level
    /// without a click.
    func testAnImpulseResponseLoadedLiveThroughTheSocketIsClickFree() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let second = try Self.impulseResponse(gain: 0.25, at: 240)
        let path = try graph(ir: try Self.impulseResponse(gain: 0.5, at: 480))
        let record = TestSupport.directory.appendingPathComponent("ir-live.wav").path
        let socket = TestSupport.directory.appendingPathComponent("ir-live-\(getpid())/g.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", path, "--duration", "3", "--latency", "256", "--socket", socket, "--record", record,
        ])
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try control.waitForPosition(1))
        let set = try control.ctl(["set", "conv", "ir", second])
        XCTAssertEqual(set.status, 0, set.out)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        let recorded = try SoundFile(path: record).samples
        let click = ClickMeasure.worst(
            recorded, channels: 2, rate: 48000, start: 0.5, end: Double(recorded.count / 2) / 48000 - 0.5)
        XCTAssertLessThanOrEqual(click.slopeRatio, 1.5, "\(click)")
        let start =
            Double(try XCTUnwrap(SignalMatch.firstNonZeroFrame(recorded, channels: 2), "silent recording")) / 48000
        let end = Double(recorded.count / 2) / 48000
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(recorded, 1000, start: start + 0.1, seconds: 0.5)), -18, accuracy: 0.3)
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(recorded, 1000, start: end - 0.6, seconds: 0.5)), -24, accuracy: 0.3)
    }
}
