import Foundation
import XCTest

@testable import GraphHost

/// Live changes of a `peq` node while a 1 kHz sine plays, judged on `graphhost render`'s output with the click measure
/// of live control.
final class PEQClickTests: XCTestCase {
    static func graph(_ name: String, seconds: Double) throws -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(try TestSupport.sine(seconds: seconds))" },
                         { "id": "eq", "type": "peq",
                           "bands": [ { "type": "peaking", "frequency": 1000, "gain": 6, "q": 1.0 },
                                      { "type": "peaking", "frequency": 700, "gain": -4, "q": 2 } ] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """, name: name)
    }

    /// Renders `commands`, one every 0.7 s from 1 s on, and returns the output and the time after the last change.
    static func render(_ commands: [String], name: String) throws -> (samples: [Float], end: Double) {
        let end = 1 + 0.7 * Double(commands.count)
        let graph = try graph(name, seconds: end + 1)
        let output = TestSupport.directory.appendingPathComponent("\(name).wav").path
        let at = commands.enumerated().flatMap { ["--at", "\(1 + 0.7 * Double($0.offset))", $0.element] }
        let result = try TestSupport.graphhost(["render", graph, "-o", output] + at)
        XCTAssertEqual(result.status, 0, result.err)
        return (try SoundFile(path: output).samples, end)
    }

    /// Gain, frequency, Q and preamp changes and bypass: each crossfades, with no click.
    func testParameterChangesAreClickFree() throws {
        // A narrow band near the tone changes too: a crossfade to a bank that has not settled overshoots there.
        let commands = [
            "set eq band.0.gain -9", "set eq band.0.frequency 2500", "set eq band.1.q 8", "set eq band.1.gain 18",
            "set eq band.1.q 20", "set eq band.1.gain -24", "set eq band.1.frequency 990",
            "set eq band.1.frequency 1100",
            "set eq preamp -6", "bypass eq on", "bypass eq off",
        ]
        let (samples, end) = try Self.render(commands, name: "peq-click-parameters")
        let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: 0.6, end: end)
        print("peq parameter changes: \(worst)")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.0005, "\(worst)")
    }

    /// Changes of a band's type, by name and by index, including to shapes that pass or remove the tone entirely.
    func testTypeChangesAreClickFree() throws {
        let commands = [
            "set eq band.0.type notch", "set eq band.0.type low-shelf", "set eq band.1.type high-pass",
            "set eq band.0.type 3", "set eq band.1.type band-pass", "set eq band.0.type peaking",
        ]
        let (samples, end) = try Self.render(commands, name: "peq-click-types")
        let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: 0.6, end: end)
        print("peq type changes: \(worst)")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.0005, "\(worst)")
    }

    /// A change is heard: the tone's level after it is the designed one (so a change that does nothing cannot pass the
    /// click tests).
    func testAChangeReachesTheDesignedLevel() throws {
        let (samples, _) = try Self.render(["set eq band.0.gain -9"], name: "peq-level")
        let before = ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: 0.5, seconds: 0.4))
        let after = ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: 1.3, seconds: 0.3))
        func atTone(_ band: ParametricBand) -> Double {
            band.coefficients(sampleRate: 48000).magnitudeDB(at: 1000, sampleRate: 48000)
        }
        let design = { (gain: Double) -> Double in
            atTone(ParametricBand(shape: .peaking, frequency: 1000, gain: gain, q: 1))
                + atTone(ParametricBand(shape: .peaking, frequency: 700, gain: -4, q: 2))
        }
        XCTAssertEqual(after - before, design(-9) - design(6), accuracy: 0.05)
    }
}
