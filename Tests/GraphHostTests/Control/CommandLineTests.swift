import XCTest

@testable import GraphHost

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The `graphhost` executable: exit codes, messages and files, and the JSON Schema against the example graphs.
final class CommandLineTests: XCTestCase {
    func graphhost(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try TestSupport.graphhost(arguments)
    }

    var demo: String { TestSupport.root.appendingPathComponent("Graphs/demo.json").path }

    func testValidateExitCodes() throws {
        XCTAssertEqual(try graphhost(["validate", demo]).status, 0)
        let bad = TestSupport.graph(
            #"{ "nodes": [ { "id": "eq", "type": "ipod-eq", "preset": "Rok" } ], "links": [] }"#)
        let result = try graphhost(["validate", bad])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.err.contains("\(bad):1:"), result.err)
        XCTAssertTrue(result.err.contains("nodes[0].preset: unknown preset 'Rok'"), result.err)
    }

    /// FFmpeg's libraries (and their hundred-odd dependencies) and libcurl are loaded only when a stream needs them:
    /// rendering the MP3 demo maps neither; an Ogg Vorbis file loads FFmpeg, an MP3 download libcurl. The dynamic
    /// loader's own log (LD_DEBUG=files, into a file) names every library mapped, at start or by dlopen.
    func testFFmpegIsLoadedOnlyForTheFormatsThatNeedIt() throws {
        func loaded(_ graph: String) throws -> String {
            let out = TestSupport.directory.appendingPathComponent("lazy.wav").path
            let log = TestSupport.directory.appendingPathComponent("lazy-\(UUID().uuidString)").path
            var environment = ProcessInfo.processInfo.environment
            environment["LD_DEBUG"] = "files"
            environment["LD_DEBUG_OUTPUT"] = log
            let r = try TestSupport.execute(
                TestSupport.executable,
                ["render", graph, "-o", out, "--duration", "0.5"], environment: environment)
            XCTAssertEqual(r.status, 0, String(decoding: r.err, as: UTF8.self))
            // The loader writes LOG.PID.
            let folder = TestSupport.directory.path
            let name = try XCTUnwrap(
                try FileManager.default.contentsOfDirectory(atPath: folder).first {
                    $0.hasPrefix((log as NSString).lastPathComponent + ".")
                })
            return try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        }
        let mp3 = try loaded(demo)
        XCTAssertTrue(mp3.contains("libmpg123"), "the loader's log is not there: \(mp3.suffix(500))")
        XCTAssertFalse(mp3.contains("libavformat"), "the MP3 demo mapped FFmpeg")
        XCTAssertFalse(mp3.contains("libcurl"), "a graph of local files mapped libcurl")
        let ogg = TestSupport.directory.appendingPathComponent("lazy.ogg").path
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "44100", "-c", "2", "-b", "16", ogg + ".wav", "synth", "1", "sine", "440",
        ])
        try TestSupport.run(["oggenc", "-Q", "-o", ogg, ogg + ".wav"])
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(ogg)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        XCTAssertTrue(try loaded(graph).contains("libavformat"), "an Ogg stream did not load FFmpeg")
        let server = try HTTPTestServer()
        defer { server.stop() }
        let http = try loaded(
            TestSupport.streamGraph(try server.serve(try TestSupport.sine(seconds: 1), as: "lazy.mp3")))
        XCTAssertTrue(http.contains("libcurl"), "an HTTP stream did not load libcurl")
        XCTAssertFalse(http.contains("libavformat"), "an MP3 download mapped FFmpeg")
    }

    func testRenderWritesTheFileAndReportsIt() throws {
        let out = TestSupport.directory.appendingPathComponent("cli.wav").path
        let result = try graphhost(["render", demo, "-o", out, "--duration", "1.5", "--at", "0.5", "preset eq Pop"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("wrote \(out): 1.500 s"), result.out)
        XCTAssertTrue(result.out.contains("eq: preset Rock, then at 0.500 s: preset Pop"), result.out)
        let file = try SoundFile(path: out)
        XCTAssertEqual(file.sampleRate, 48000)
        XCTAssertEqual(file.frames, 72000)
        let flac = TestSupport.directory.appendingPathComponent("cli.flac").path
        XCTAssertEqual(try graphhost(["render", demo, "-o", flac, "--duration", "0.5"]).status, 0)
        XCTAssertEqual(try SoundFile(path: flac).frames, 24000)
    }

    /// A stream cut in the middle of a frame and joined to another is reported, and a clean one is not.
    func testRenderReportsDamagedStreamData() throws {
        let a = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)))
        let b = try Data(contentsOf: URL(fileURLWithPath: try TestSupport.sine(seconds: 1)))
        let spliced = TestSupport.directory.appendingPathComponent("spliced.mp3").path
        FileManager.default.createFile(
            atPath: spliced, contents: a.prefix(a.count / 2 + 7) + b.suffix(from: b.count / 3 + 11))
        let out = TestSupport.directory.appendingPathComponent("spliced.wav").path
        let damaged = try graphhost(["render", TestSupport.streamGraph(spliced), "-o", out])
        XCTAssertEqual(damaged.status, 0, damaged.err)
        XCTAssertNotNil(
            damaged.out.range(
                of: #"damaged stream data: [1-9][0-9]* frames silenced, [1-9][0-9]* bytes skipped"#,
                options: .regularExpression), damaged.out)
        let clean = try graphhost(["render", TestSupport.streamGraph(try TestSupport.sine(seconds: 1)), "-o", out])
        XCTAssertFalse(clean.out.contains("damaged"), clean.out)
    }

    func testRenderRejectsBadCommandsAndOutputs() throws {
        let bad = try graphhost([
            "render", demo, "-o", "/tmp/x.wav", "--at", "1", "preset ghost Rock", "--duration", "2",
        ])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.err.contains("no node 'ghost'"), bad.err)
        let ext = try graphhost(["render", demo, "-o", "/tmp/x.mp4"])
        XCTAssertNotEqual(ext.status, 0)
        XCTAssertTrue(ext.err.contains("unknown extension '.mp4'"), ext.err)
        let record = try graphhost(["run", demo, "--record", "/tmp/x.aiff"])
        XCTAssertNotEqual(record.status, 0)
        XCTAssertTrue(
            record.err.contains(
                "cannot write '/tmp/x.aiff': unknown extension '.aiff' (use .wav, .flac, .ogg or .opus)"), record.err)
    }

    /// `graphhost --help` says what graphhost is: a real-time effects host with LV2 plugins, played through PipeWire.
    func testHelpSaysWhatGraphhostIs() throws {
        let help = try graphhost(["--help"])
        XCTAssertEqual(help.status, 0, help.err)
        let overview = help.out.components(separatedBy: "USAGE:").first?.replacingOccurrences(of: "\n", with: " ") ?? ""
        for words in [
            "real-time DSP effects host for Linux", "LV2 plugins", "PipeWire", "HLS", "live inputs", "virtual sinks",
            "rendered offline",
        ] {
            XCTAssertTrue(overview.contains(words), "'\(words)' missing from:\n\(help.out)")
        }
    }

    func testShowAndDot() throws {
        let text = try graphhost(["show", demo])
        XCTAssertTrue(text.out.contains("eq (ipod-eq) in 1 out 1  preset=Rock (#16)"), text.out)
        XCTAssertTrue(text.out.contains("render order: song -> mix -> eq -> out"))
        XCTAssertTrue(try graphhost(["show", "--dot", demo]).out.hasPrefix("digraph graphhost {"))
    }

    /// The CSV's curves agree, and the SVG chart is well-formed XML whose polylines, read against the chart's own
    /// axis labels, sit inside the plot frame and follow the CSV point by point (1 kHz included) to within half a
    /// pixel.
    func testEQCurveWritesCSVAndSVG() throws {
        let csv = TestSupport.directory.appendingPathComponent("rock.csv").path
        let svg = TestSupport.directory.appendingPathComponent("rock.svg").path
        try? FileManager.default.removeItem(atPath: svg)
        XCTAssertEqual(try graphhost(["eq-curve", "Rock", "--rate", "44100", "--csv", csv, "--svg", svg]).status, 0)
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",").map { Double($0)! } }
        XCTAssertGreaterThan(rows.count, 200)
        for v in rows where v[0] >= 32 && v[0] <= 16000 { XCTAssertEqual(v[2], v[1], accuracy: 1.0, "\(v)") }

        let chart = try SVGElements(contentsOf: URL(fileURLWithPath: svg))
        func number(_ element: SVGElements.Element?, _ attribute: String) throws -> Double {
            try XCTUnwrap(
                element?.attributes[attribute].flatMap(Double.init), "\(element?.name ?? "no element") \(attribute)")
        }
        XCTAssertEqual(chart.root?.name, "svg")
        let (width, height) = (try number(chart.root, "width"), try number(chart.root, "height"))
        XCTAssertEqual(chart.root?.attributes["viewBox"], "0 0 \(Int(width)) \(Int(height))")

        let frame = chart.elements.first { $0.attributes["class"] == "plot-area" }
        let (left, top) = (try number(frame, "x"), try number(frame, "y"))
        let (right, bottom) = (left + (try number(frame, "width")), top + (try number(frame, "height")))
        XCTAssertTrue(0 <= left && left < right && right <= width && 0 <= top && top < bottom && bottom <= height)

        // The axes as a reader sees them: label values and their positions, fitted by a line (log frequency for x).
        func labels(_ kind: String, _ position: String, _ value: (String) -> Double?) throws -> [(
            value: Double, at: Double
        )] {
            try chart.elements.filter { $0.attributes["class"] == kind }.map {
                (try XCTUnwrap(value($0.text), $0.text), try number($0, position))
            }
        }
        let xLabels = try labels("x-label", "x") {
            $0.hasSuffix("k") ? Double($0.dropLast()).map { log10($0 * 1000) } : Double($0).map(log10)
        }
        let yLabels = try labels("y-label", "y") { Double($0) }
        XCTAssertGreaterThanOrEqual(xLabels.count, 5)
        XCTAssertGreaterThanOrEqual(yLabels.count, 5)
        func fit(_ labels: [(value: Double, at: Double)]) -> (Double) -> Double {
            let (a, b) = (labels.min { $0.value < $1.value }!, labels.max { $0.value < $1.value }!)
            return { a.at + ($0 - a.value) / (b.value - a.value) * (b.at - a.at) }
        }
        let (xOf, yOf) = (fit(xLabels), fit(yLabels))
        for label in xLabels { XCTAssertEqual(xOf(label.value), label.at, accuracy: 0.5, "x label at \(label.at)") }
        for label in yLabels { XCTAssertEqual(yOf(label.value), label.at, accuracy: 0.5, "y label at \(label.at)") }

        let curves = chart.elements.filter { $0.name == "polyline" }
        XCTAssertEqual(curves.map { $0.attributes["data-label"] }, ["target", "achieved"])
        for (column, curve) in zip([1, 2], curves) {
            let label = curve.attributes["data-label"]!
            let points = curve.attributes["points", default: ""].split(separator: " ").map {
                $0.split(separator: ",").map { Double($0) }
            }
            XCTAssertEqual(points.count, rows.count, label)
            var worst = (pixels: 0.0, at: 0.0)
            for (p, row) in zip(points, rows) {
                guard p.count == 2, let x = p[0], let y = p[1], x.isFinite, y.isFinite else {
                    XCTFail("\(label): bad point \(p)")
                    break
                }
                guard left <= x && x <= right && top <= y && y <= bottom else {
                    XCTFail("\(label): (\(x), \(y)) outside the plot")
                    break
                }
                let error = max(abs(x - xOf(log10(row[0]))), abs(y - yOf(row[column])))
                if error > worst.pixels { worst = (error, row[0]) }
            }
            XCTAssertLessThanOrEqual(worst.pixels, 0.5, "\(label) is \(worst.pixels) px off the CSV at \(worst.at) Hz")
        }

        let none = try graphhost(["eq-curve", "Rock"])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.err.contains("give --svg FILE and/or --csv FILE"), none.err)
        XCTAssertNotEqual(try graphhost(["eq-curve", "Nope", "--csv", csv]).status, 0)
    }

    /// The schema is valid JSON Schema 2020-12, accepts every example graph and rejects a misspelled setting, an output
    /// inside a chain and a '/' in an id.
    func testSchemaAcceptsExamples() throws {
        let script = """
            import json, glob, sys, jsonschema
            root = sys.argv[1]
            schema = json.load(open(root + "/Graphs/graph.schema.json"))
            jsonschema.Draft202012Validator.check_schema(schema)
            graphs = [p for p in glob.glob(root + "/Graphs/*.json") if not p.endswith("schema.json")]
            assert graphs
            for p in graphs: jsonschema.validate(json.load(open(p)), schema)
            for bad in [{"nodes": [{"id": "m", "type": "mixer", "volumz": [1]}], "links": []},
                        {"chains": {"c": [{"type": "output"}]}, "nodes": [{"id": "f", "type": "chain", "chain": "c"}], \
            "links": []},
                        {"nodes": [{"id": "a/b", "type": "output"}], "links": []}]:
                try:
                    jsonschema.validate(bad, schema)
                    sys.exit("accepted: %s" % bad)
                except jsonschema.ValidationError:
                    pass
            print("ok", len(graphs))
            """
        let out = try TestSupport.run(["/usr/bin/python3", "-c", script, TestSupport.root.path])
        XCTAssertTrue(String(decoding: out, as: UTF8.self).hasPrefix("ok"))
    }
}

extension CommandLineTests {
    /// A bad `--at` command is rejected before anything is rendered or written.
    func testBadTimedCommandWritesNothing() throws {
        let out = TestSupport.directory.appendingPathComponent("never.wav").path
        let result = try graphhost(["render", demo, "-o", out, "--at", "1", "set eq band.3 40"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.err.contains("band gain 40 dB is out of range"), result.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}

/// Every element of an XML document in document order, with its attributes and its own text.
private final class SVGElements: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
    }
    private(set) var elements: [Element] = []
    private var open: [Int] = []
    var root: Element? { elements.first }

    init(contentsOf url: URL) throws {
        super.init()
        let parser = XMLParser(data: try Data(contentsOf: url))
        parser.delegate = self
        guard parser.parse() else {
            throw NSError(
                domain: "SVGElements", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "not XML: \(String(describing: parser.parserError))"])
        }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        open.append(elements.count)
        elements.append(Element(name: name, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let i = open.last { elements[i].text += string }
    }
}
