import Foundation
import XCTest

@testable import GraphHost

/// How soon a live change of a `peq` node is heard, judged on `graphhost render`'s output.
final class PEQChangeDelayTests: XCTestCase {
    /// A narrow low band (30 Hz, Q 10), whose bank takes 1.4 s to settle from rest, changes while a 30 Hz tone plays:
    /// within 100 ms of the change the tone's level is the new design's.
    func testANarrowLowBandChangeIsHeardAtOnce() throws {
        let tone = TestSupport.directory.appendingPathComponent("sine-30hz.wav").path
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", "-e", "floating-point", tone, "synth", "3", "sine", "30",
            "gain", "-20",
        ])
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(tone)" },
                         { "id": "eq", "type": "peq",
                           "bands": [ { "type": "peaking", "frequency": 30, "gain": -6, "q": 10 } ] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """, name: "peq-narrow-low")
        let output = TestSupport.directory.appendingPathComponent("peq-narrow-low.wav").path
        let result = try TestSupport.graphhost(["render", graph, "-o", output, "--at", "1.5", "set eq band.0.gain 12"])
        XCTAssertEqual(result.status, 0, result.err)
        let samples = try SoundFile(path: output).samples
        // Whole periods of the tone: twelve before the change, two once the 30 ms crossfade has ended.
        let before = ToneMeasure.dB(ToneMeasure.amplitude(samples, 30, start: 1, seconds: 0.4))
        let after = ToneMeasure.dB(ToneMeasure.amplitude(samples, 30, start: 1.5 + 1.0 / 30, seconds: 2.0 / 30))
        func design(_ gain: Double) -> Double {
            ParametricBand(shape: .peaking, frequency: 30, gain: gain, q: 10).coefficients(sampleRate: 48000)
                .magnitudeDB(at: 30, sampleRate: 48000)
        }
        XCTAssertEqual(after - before, design(12) - design(-6), accuracy: 0.1)
    }
}
