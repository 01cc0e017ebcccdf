import Foundation
import XCTest

@testable import GraphHost

/// `render --meters FILE.csv`: the levels over time of graphhost's own offline output.
final class MeterCSVTests: XCTestCase {
    /// One CSV row.
    struct Row {
        var seconds: Double
        var node: String
        var channel: Int
        var peak: Double
        var heldPeak: Double
        var rms: Double
        var clips: Int
    }

    static func rows(_ path: String) throws -> (header: String, rows: [Row]) {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let rows = lines.dropFirst().map { line -> Row in
            let cells = line.split(separator: ",").map(String.init)
            return Row(
                seconds: Double(cells[0])!, node: cells[1], channel: Int(cells[2])!, peak: Double(cells[3])!,
                heldPeak: Double(cells[4])!, rms: Double(cells[5])!, clips: Int(cells[6])!)
        }
        return (lines.first ?? "", rows)
    }

    /// A −6 dBFS sine: a row per node and channel every 0.1 s, reading −6.02 dBFS peak and −9.03 dBFS RMS once the
    /// 300 ms window is full; a +1 dBFS sine counts clips; silence reads -inf.
    func testRenderWritesTheLevelsOfEveryMeterEveryInterval() throws {
        let sine = LevelMeterTests.graph(try TestSupport.floatSine(amplitude: 0.5, seconds: 3), meter: "true")
        let csv = TestSupport.directory.appendingPathComponent("outputs/meters.csv").path
        let wav = TestSupport.directory.appendingPathComponent("outputs/meters.wav").path
        let r = try TestSupport.graphhost(["render", sine, "-o", wav, "--duration", "2", "--meters", csv])
        XCTAssertEqual(r.status, 0, r.err)
        let (header, rows) = try Self.rows(csv)
        XCTAssertEqual(header, "seconds,node,channel,peak_dbfs,held_peak_dbfs,rms_dbfs,clips")
        XCTAssertEqual(rows.count, 20 * 2 * 2, "20 times × 2 nodes × 2 channels")
        XCTAssertEqual(Set(rows.map(\.seconds)), Set((1...20).map { Double($0) / 10 }))
        XCTAssertEqual(Set(rows.map(\.node)), ["s", "out"])
        for row in rows where row.seconds >= 0.3 {
            XCTAssertEqual(row.peak, -6.02, accuracy: 0.05, "\(row)")
            XCTAssertEqual(row.heldPeak, -6.02, accuracy: 0.05, "\(row)")
            XCTAssertEqual(row.rms, -9.03, accuracy: 0.05, "\(row)")
            XCTAssertEqual(row.clips, 0, "\(row)")
        }

        let loud = LevelMeterTests.graph(try TestSupport.floatSine(amplitude: 1.122, seconds: 3))
        XCTAssertEqual(
            try TestSupport.graphhost([
                "render", loud, "-o", wav, "--duration", "1", "--meters", csv, "--meter-interval", "0.5",
            ]).status, 0)
        let clipped = try Self.rows(csv).rows
        XCTAssertEqual(clipped.map(\.seconds), [0.5, 0.5, 1, 1])
        XCTAssertTrue(clipped.allSatisfy { $0.node == "out" && $0.clips > 0 && $0.peak > 0.9 }, "\(clipped)")

        let silence = TestSupport.graph(
            """
            { "nodes": [ { "id": "mix", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "mix", "to": "out" } ] }
            """)
        XCTAssertEqual(
            try TestSupport.graphhost(["render", silence, "-o", wav, "--duration", "0.5", "--meters", csv]).status, 0)
        let quiet = try Self.rows(csv).rows
        XCTAssertEqual(quiet.count, 10)
        XCTAssertTrue(quiet.allSatisfy { $0.peak == -.infinity && $0.rms == -.infinity && $0.clips == 0 }, "\(quiet)")

        let bad = try TestSupport.graphhost(["render", sine, "-o", wav, "--meters", csv, "--meter-interval", "0"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.err.contains("--meter-interval 0.0 is not a positive number of seconds"), bad.err)
    }
}
