import Foundation
import XCTest

@testable import GraphHost

/// The `peq` node's response, measured on graphhost's own output (an impulse rendered through a graph), against the
/// Audio EQ Cookbook's designs computed independently in Python with scipy.
final class PEQAccuracyTests: XCTestCase {
    /// One case: a node of these bands.
    struct Case {
        var bands: [(type: String, frequency: Double, gain: Double, q: Double)]
    }

    /// Every band type with several frequencies, gains and Qs, and a cascade of one band of each type.
    static let cases: [Case] = [
        Case(bands: [("peaking", 1000, -3, 1.0)]), Case(bands: [("peaking", 60, 9, 4)]),
        Case(bands: [("peaking", 8000, -12, 0.5)]),
        Case(bands: [("peaking", 30, 6, 0.7)]), Case(bands: [("peaking", 250, 18, 10)]),
        Case(bands: [("low-shelf", 100, 6, 0.707)]), Case(bands: [("low-shelf", 300, -9, 1.5)]),
        Case(bands: [("high-shelf", 5000, -6, 0.707)]), Case(bands: [("high-shelf", 10000, 8, 0.5)]),
        Case(bands: [("low-pass", 2000, 0, 0.707)]), Case(bands: [("low-pass", 150, 0, 4)]),
        Case(bands: [("high-pass", 80, 0, 0.707)]), Case(bands: [("high-pass", 3000, 0, 2)]),
        Case(bands: [("band-pass", 500, 0, 1)]), Case(bands: [("band-pass", 4000, 0, 8)]),
        Case(bands: [("notch", 1000, 0, 2)]), Case(bands: [("notch", 60, 0, 10)]),
        Case(bands: [
            ("high-pass", 25, 0, 0.707), ("low-shelf", 120, 4, 0.707), ("peaking", 900, -5, 2), ("notch", 3000, 0, 6),
            ("band-pass", 2000, 0, 0.3), ("high-shelf", 9000, -3, 0.9), ("low-pass", 16000, 0, 0.707),
        ]),
    ]

    /// Makes an impulse file, measures each rendered output's response at many frequencies and prints, per case, the
    /// largest difference in dB from scipy.signal.freqz of the cookbook coefficients (where the design is above -40
    /// dB), and for a case with a `curve` (`graphhost eq-curve --csv`), the largest difference of its rows.
    static let script = #"""
        import json, sys
        import numpy as np
        from scipy.io import wavfile
        from scipy import signal

        mode, rate = sys.argv[1], int(sys.argv[2])
        if mode == "impulse":
            x = np.zeros((1 << 16, 2), dtype=np.float32)
            x[1000, :] = 1.0
            wavfile.write(sys.argv[3], rate, x)
            sys.exit(0)

        def cookbook(kind, f0, gain, q, fs):
            w0 = 2 * np.pi * f0 / fs
            c, alpha, A = np.cos(w0), np.sin(w0) / (2 * q), 10 ** (gain / 40)
            if kind == "peaking":
                b, a = [1 + alpha * A, -2 * c, 1 - alpha * A], [1 + alpha / A, -2 * c, 1 - alpha / A]
            elif kind == "low-shelf":
                s = 2 * np.sqrt(A) * alpha
                b = [A * ((A + 1) - (A - 1) * c + s), 2 * A * ((A - 1) - (A + 1) * c), A * ((A + 1) - (A - 1) * c - s)]
                a = [(A + 1) + (A - 1) * c + s, -2 * ((A - 1) + (A + 1) * c), (A + 1) + (A - 1) * c - s]
            elif kind == "high-shelf":
                s = 2 * np.sqrt(A) * alpha
                b = [A * ((A + 1) + (A - 1) * c + s), -2 * A * ((A - 1) + (A + 1) * c), A * ((A + 1) + (A - 1) * c - s)]
                a = [(A + 1) - (A - 1) * c + s, 2 * ((A - 1) - (A + 1) * c), (A + 1) - (A - 1) * c - s]
            elif kind == "low-pass":
                b, a = [(1 - c) / 2, 1 - c, (1 - c) / 2], [1 + alpha, -2 * c, 1 - alpha]
            elif kind == "high-pass":
                b, a = [(1 + c) / 2, -(1 + c), (1 + c) / 2], [1 + alpha, -2 * c, 1 - alpha]
            elif kind == "band-pass":
                b, a = [alpha, 0, -alpha], [1 + alpha, -2 * c, 1 - alpha]
            elif kind == "notch":
                b, a = [1, -2 * c, 1], [1 + alpha, -2 * c, 1 - alpha]
            return np.array(b) / a[0], np.array(a) / a[0]

        def quality(band):
            if "slope" not in band:
                return band["q"]
            A, S = 10 ** (band["gain"] / 40), band["slope"] / 12
            return 1 / np.sqrt((A + 1 / A) * (1 / S - 1) + 2)

        cases = json.loads(sys.argv[3])
        report = []
        for case in cases:
            fs = float(rate)
            freqs = np.unique(np.concatenate([np.geomspace(20, 20000, 97), [b["frequency"] for b in case["bands"]]]))
            design = np.full(len(freqs), 10 ** (case.get("preamp", 0) / 20), dtype=complex)
            for band in case["bands"]:
                b, a = cookbook(band["type"], band["frequency"], band["gain"], quality(band), fs)
                design *= signal.freqz(b, a, worN=freqs, fs=fs)[1]
            design_db = 20 * np.log10(np.abs(design))
            rendered_rate, y = wavfile.read(case["file"])
            assert rendered_rate == rate, (rendered_rate, rate)
            worst = 0.0
            for channel in range(y.shape[1]):
                measured = signal.freqz(y[:, channel].astype(np.float64), 1, worN=freqs, fs=fs)[1]
                measured_db = 20 * np.log10(np.maximum(np.abs(measured), 1e-30))
                keep = design_db > -40
                worst = max(worst, float(np.max(np.abs(measured_db[keep] - design_db[keep]))))
            entry = {"worst": worst, "points": int(np.sum(design_db > -40))}
            if "curve" in case:
                rows = np.loadtxt(case["curve"], delimiter=",", skiprows=1, ndmin=2)
                curve = np.full(len(rows), 10 ** (case.get("preamp", 0) / 20), dtype=complex)
                for band in case["bands"]:
                    b, a = cookbook(band["type"], band["frequency"], band["gain"], quality(band), fs)
                    curve *= signal.freqz(b, a, worN=rows[:, 0], fs=fs)[1]
                curve_db = 20 * np.log10(np.abs(curve))
                keep = curve_db > -40
                entry["curve"] = float(np.max(np.abs(rows[keep, 1] - curve_db[keep])))
                entry["curvePoints"] = int(np.sum(keep))
            report.append(entry)
        print(json.dumps(report))
        """#

    func testResponseMatchesTheCookbookAt44100And48000() throws {
        for rate in [44100, 48000] {
            let folder = TestSupport.directory.appendingPathComponent("peq-accuracy-\(rate)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let impulse = folder.appendingPathComponent("impulse.wav").path
            try TestSupport.run(["python3", "-c", Self.script, "impulse", "\(rate)", impulse])
            var nodes = [#"{ "id": "in", "type": "stream", "url": "\#(impulse)" }"#]
            var links: [String] = []
            var outputs: [String] = []
            var described: [[String: Any]] = []
            for (k, c) in Self.cases.enumerated() {
                let bands = c.bands.map {
                    #"{ "type": "\#($0.type)", "frequency": \#($0.frequency), "gain": \#($0.gain), "q": \#($0.q) }"#
                }
                nodes.append(#"{ "id": "eq\#(k)", "type": "peq", "bands": [\#(bands.joined(separator: ", "))] }"#)
                nodes.append(#"{ "id": "out\#(k)", "type": "output" }"#)
                links += [#"{ "from": "in", "to": "eq\#(k)" }"#, #"{ "from": "eq\#(k)", "to": "out\#(k)" }"#]
                let file = folder.appendingPathComponent("out\(k).wav").path
                outputs += ["-o", "out\(k)=\(file)"]
                described.append([
                    "file": file,
                    "bands": c.bands.map { ["type": $0.type, "frequency": $0.frequency, "gain": $0.gain, "q": $0.q] },
                ])
            }
            let graph = TestSupport.graph(
                """
                { "format": { "sampleRate": \(rate), "channels": 2 }, "nodes": [\(nodes.joined(separator: ",\n"))],
                  "links": [\(links.joined(separator: ", "))] }
                """, name: "peq-accuracy-\(rate)")
            let render = try TestSupport.graphhost(["render", graph] + outputs)
            XCTAssertEqual(render.status, 0, render.err)
            // The cascade's curve as `eq-curve` plots it.
            let last = Self.cases.count - 1
            let curve = folder.appendingPathComponent("curve.csv").path
            let plotted = try TestSupport.graphhost([
                "eq-curve", "--graph", graph, "--node", "eq\(last)", "--csv", curve,
            ])
            XCTAssertEqual(plotted.status, 0, plotted.err)
            described[last]["curve"] = curve
            let json = String(decoding: try JSONSerialization.data(withJSONObject: described), as: UTF8.self)
            let out = try TestSupport.run(["python3", "-c", Self.script, "measure", "\(rate)", json])
            let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: out) as? [[String: Any]])
            XCTAssertEqual(report.count, Self.cases.count)
            for (c, result) in zip(Self.cases, report) {
                let worst = try XCTUnwrap(result["worst"] as? Double)
                let points = try XCTUnwrap(result["points"] as? Int)
                XCTAssertGreaterThan(points, 20, "\(c.bands) at \(rate) Hz: too few frequencies compared")
                XCTAssertLessThanOrEqual(worst, 0.01, "\(c.bands) at \(rate) Hz: \(worst) dB from the cookbook design")
            }
            let curveError = try XCTUnwrap(report[last]["curve"] as? Double)
            let curvePoints = try XCTUnwrap(report[last]["curvePoints"] as? Int)
            XCTAssertGreaterThan(curvePoints, 150)
            XCTAssertLessThanOrEqual(
                curveError, 0.01, "eq-curve at \(rate) Hz is \(curveError) dB from the cookbook design")
            let worst = report.compactMap { $0["worst"] as? Double }.max() ?? .nan
            print("peq at \(rate) Hz: worst \(worst) dB from scipy over \(report.count) cases")
        }
    }

    /// Equalizer APO and AutoEQ files (`EqualizerAPOFileTests`' samples) through `peq` nodes, against scipy's
    /// designs of the filters as the test reads the files (a shelf's slope made into Q by the cookbook's formula),
    /// preamps included; and `eq-curve FILE` against the same design.
    func testHeadphoneCorrectionFilesMatchTheirFiltersDesigns() throws {
        let folder = TestSupport.directory.appendingPathComponent("peq-files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let impulse = folder.appendingPathComponent("impulse.wav").path
        try TestSupport.run(["python3", "-c", Self.script, "impulse", "48000", impulse])
        func band(_ type: String, _ frequency: Double, gain: Double = 0, q: Double? = nil, slope: Double? = nil)
            -> [String: Any]
        {
            var band: [String: Any] = ["type": type, "frequency": frequency, "gain": gain]
            band["q"] = q ?? 0.7071067811865476
            if let slope { band["slope"] = slope }
            return band
        }
        let files: [(text: String, preamp: Double, bands: [[String: Any]])] = [
            (
                EqualizerAPOFileTests.autoEQ, -6.4,
                [
                    band("low-shelf", 105, gain: 5.6, q: 0.7), band("peaking", 158, gain: -2.6, q: 0.61),
                    band("peaking", 2700, gain: 3.5, q: 1.8), band("high-shelf", 10000, gain: -3, q: 0.7),
                ]
            ),
            (
                EqualizerAPOFileTests.apo, -3.5,
                [
                    band("peaking", 1000, gain: -3, q: 2), band("low-shelf", 80, gain: 4, slope: 6),
                    band("high-pass", 30), band("notch", 50, q: 10), band("band-pass", 2000, q: 0.5),
                ]
            ),
        ]
        var nodes = [#"{ "id": "in", "type": "stream", "url": "\#(impulse)" }"#]
        var links: [String] = []
        var outputs: [String] = []
        var described: [[String: Any]] = []
        for (k, file) in files.enumerated() {
            let path = folder.appendingPathComponent("eq\(k).txt").path
            try file.text.write(toFile: path, atomically: true, encoding: .utf8)
            nodes.append(#"{ "id": "eq\#(k)", "type": "peq", "file": "\#(path)" }"#)
            nodes.append(#"{ "id": "out\#(k)", "type": "output" }"#)
            links += [#"{ "from": "in", "to": "eq\#(k)" }"#, #"{ "from": "eq\#(k)", "to": "out\#(k)" }"#]
            let wav = folder.appendingPathComponent("out\(k).wav").path
            outputs += ["-o", "out\(k)=\(wav)"]
            let curve = folder.appendingPathComponent("curve\(k).csv").path
            let plotted = try TestSupport.graphhost(["eq-curve", path, "--csv", curve])
            XCTAssertEqual(plotted.status, 0, plotted.err)
            described.append(["file": wav, "bands": file.bands, "preamp": file.preamp, "curve": curve])
        }
        let graph = TestSupport.graph(
            """
            { "nodes": [\(nodes.joined(separator: ",\n"))], "links": [\(links.joined(separator: ", "))] }
            """, name: "peq-files")
        let render = try TestSupport.graphhost(["render", graph] + outputs)
        XCTAssertEqual(render.status, 0, render.err)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: described), as: UTF8.self)
        let out = try TestSupport.run(["python3", "-c", Self.script, "measure", "48000", json])
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: out) as? [[String: Any]])
        XCTAssertEqual(report.count, files.count)
        for (k, result) in report.enumerated() {
            XCTAssertGreaterThan(try XCTUnwrap(result["points"] as? Int), 50)
            XCTAssertLessThanOrEqual(try XCTUnwrap(result["worst"] as? Double), 0.01, "file \(k): \(result)")
            XCTAssertGreaterThan(try XCTUnwrap(result["curvePoints"] as? Int), 150)
            // The CSV's frequencies have two decimals: on the skirts of the 30 Hz high pass and the 50 Hz notch that
            // alone moves the design by up to 0.02 dB.
            XCTAssertLessThanOrEqual(try XCTUnwrap(result["curve"] as? Double), 0.05, "eq-curve of file \(k)")
        }
    }
}
