import XCTest

@testable import GraphHost

/// The compiled EQ kernel meets every preset's curve: ≤ 0.5 dB at the band centres, ≤ 1 dB on the
/// 1/3-octave grid between them, after removing the constant headroom gain. Measured on the kernel's impulse response.
final class EQAccuracyTests: XCTestCase {
    func testEveryPresetAtBothRates() {
        var worstCentre = 0.0
        var worstBetween = 0.0
        for rate in [44100, 48000] {
            for preset in IPodEQPreset.all {
                let settings = IPodEQSettings(gains: preset.gains, preamp: 0)
                let headroom = settings.headroomDB(sampleRate: rate)
                let ir = EQKernelResponse.impulseResponse(settings.coefficients(sampleRate: rate), length: 1 << 14)
                for (k, centre) in IPodEQPreset.bandCenters.enumerated() {
                    for third in (k < 9 ? [0, 1, 2] : [0]) {
                        let f = centre * pow(2, Double(third) / 3)
                        let achieved = EQKernelResponse.magnitudeDB(ir, at: f, sampleRate: Double(rate)) - headroom
                        let error = abs(achieved - GraphicEQDesign.target(gains: preset.gains, at: f))
                        let limit = third == 0 ? 0.5 : 1.0
                        XCTAssertLessThanOrEqual(error, limit, "\(preset.name) at \(rate) Hz, \(Int(f)) Hz")
                        if third == 0 {
                            worstCentre = max(worstCentre, error)
                        } else {
                            worstBetween = max(worstBetween, error)
                        }
                    }
                }
            }
        }
        print("EQ accuracy: worst \(worstCentre) dB at centres, \(worstBetween) dB between")
    }

    func testPresetTableAndLookup() {
        XCTAssertEqual(IPodEQPreset.all.count, 22)
        XCTAssertEqual(IPodEQPreset.named("rock")?.index, 16)
        XCTAssertEqual(IPodEQPreset.named("16")?.name, "Rock")
        XCTAssertEqual(IPodEQPreset.named("Flat")?.gains, Array(repeating: 0, count: 10))
        XCTAssertNil(IPodEQPreset.named("Rok"))
    }

    /// Boosting presets are lowered so a full-scale sine at any frequency stays at or below 0 dBFS.
    func testHeadroomKeepsBoostsBelowFullScale() {
        for preset in IPodEQPreset.all {
            let settings = IPodEQSettings(gains: preset.gains, preamp: 0)
            let ir = EQKernelResponse.impulseResponse(settings.coefficients(sampleRate: 48000), length: 1 << 14)
            var f = 20.0
            while f < 20000 {
                XCTAssertLessThanOrEqual(
                    EQKernelResponse.magnitudeDB(ir, at: f, sampleRate: 48000), 0.05, "\(preset.name) \(f) Hz")
                f *= pow(2, 1.0 / 24)
            }
        }
    }

    /// The single-channel path (odd channel counts) matches the paired stereo path, and both stereo channels agree.
    func testMonoAndStereoPathsAgree() {
        let k = IPodEQSettings(gains: IPodEQPreset.named("Loudness")!.gains, preamp: 2).coefficients(sampleRate: 44100)
        let stereo = EQKernelResponse.impulseResponses(k, length: 8192, channels: 2)
        let mono = EQKernelResponse.impulseResponses(k, length: 8192, channels: 1)[0]
        XCTAssertEqual(stereo[0], stereo[1])
        XCTAssertLessThan(zip(stereo[0], mono).map { abs($0 - $1) }.max()!, 1e-6)
        XCTAssertGreaterThan(mono.map(abs).max()!, 0.1)
    }

    /// Flat with no preamp is transparent (the parallel form reduces to d = 1).
    func testFlatIsTransparent() {
        let ir = EQKernelResponse.impulseResponse(
            IPodEQSettings(gains: IPodEQPreset.all[0].gains, preamp: 0).coefficients(sampleRate: 48000), length: 64)
        XCTAssertEqual(ir[0], 1)
        XCTAssertEqual(ir[1...].map(abs).max()!, 0)
    }
}
