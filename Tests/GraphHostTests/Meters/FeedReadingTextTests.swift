import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// The meters feed written straight into text reads exactly as the same reading written through `JSONValue`.
final class FeedReadingTextTests: XCTestCase {
    func testTheMetersTextIsTheJSONValuesText() {
        func level(_ peak: Float, _ held: Float, _ meanSquare: Float, _ clips: Int) -> RunStatus.Level {
            var reading = LevelMeter.Reading()
            (reading.peak, reading.heldPeak, reading.meanSquare, reading.clips) = (peak, held, meanSquare, clips)
            return RunStatus.Level(reading)
        }
        let readings: [FeedReading] = [
            .meters([]),
            .meters([RunStatus.Meter(node: "out", channels: [level(0.5, 0.7, 0.125, 0), level(0, 0, 0, 3)])]),
            .meters([
                RunStatus.Meter(node: "eq", channels: [level(1.5, 2, 1.1, 12_345)]),
                RunStatus.Meter(node: #"odd "name"\"#, channels: [level(.nan, .infinity, 1e-12, 0)]),
            ]),
            .load(nil),
        ]
        for reading in readings {
            for time in [0, 12.345678, 1e9 + 0.5] {
                XCTAssertEqual(reading.compactJSON(time: time), reading.json(time: time).compact)
            }
        }
    }
}
