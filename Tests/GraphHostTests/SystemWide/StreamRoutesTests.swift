import FoundationEssentials
import XCTest

@testable import GraphHost

/// The graph's `routes`: applications' playback streams moved into its sinks by rule, in a private PipeWire with
/// WirePlumber, and the rules' checks.
final class StreamRoutesTests: XCTestCase {
    /// The system-effects example with its headset on a null sink of its own and `routes` added (none: nil).
    static func graph(routes: String?) throws -> String {
        var text = try String(contentsOfFile: LiveInputTests.systemEffects, encoding: .utf8)
            .replacingOccurrences(
                of: #"{ "id": "headset",  "type": "output" }"#,
                with: #"{ "id": "headset", "type": "output", "target": "out_headset" }"#)
        XCTAssertTrue(text.contains("out_headset"), "the example's outputs changed; update this test")
        if let routes {
            text = text.replacingOccurrences(of: #""nodes": ["#, with: "\"routes\": \(routes),\n  \"nodes\": [")
        }
        return TestSupport.graph(text, name: "routes-\(UUID().uuidString)")
    }

    static let rules = """
        [ { "match": { "application.name": "Firefox" }, "to": "music" },
          { "match": { "media.role": "Communication" }, "to": "voice" },
          { "match": { "application.process.binary": "mpv" }, "exclude": true } ]
        """

    /// The nodes each output port of `node` is linked to (`pw-link -l`).
    static func linked(_ pw: HeadlessPipeWire, _ node: String) throws -> Set<String> {
        let out = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-link"), ["-l"], environment: pw.environment
        ).out
        var targets = Set<String>()
        var inNode = false
        for line in out.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                inNode = line.hasPrefix("\(node):output_")
            } else if inNode, let arrow = line.range(of: "|-> ") {
                targets.insert(String(line[arrow.upperBound...].split(separator: ":")[0]))
            }
        }
        return targets
    }

    /// A node's id, from `pw-cli ls Node`.
    static func nodeID(_ pw: HeadlessPipeWire, _ name: String) throws -> String? {
        let out = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-cli"), ["ls", "Node"], environment: pw.environment
        ).out
        var id: String?
        for line in out.split(separator: "\n") {
            if let m = line.firstMatch(of: /^\s*id (\d+),/) { id = String(m.1) }
            if line.contains("node.name = \"\(name)\"") { return id }
        }
        return nil
    }

    func play(_ pw: HeadlessPipeWire, _ arguments: [String], tone: Int) throws -> HeadlessPipeWire.Running {
        try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"),
            ["--latency", "256"] + arguments + [try LiveInputTests.toneWAV(tone)],
            environment: pw.environment)
    }

    /// A stream that played before graphhost started and one that starts later land in the sinks their rules name (the
    /// later one heard in graphhost's own recording within 1 s of the graph's clock); an excluded one and one that
    /// names its own target stay; on exit each goes back where it was, a target the user had given included.
    func testApplicationsGoToTheSinksTheirRulesNameAndReturnOnExit() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("out_headset")
        try pw.addSink("out_elsewhere")
        // Before graphhost: a call the user had moved to out_elsewhere (pavucontrol's way), and an mpv.
        let call = try play(pw, ["--media-role", "Communication", "-P", "{ node.name = route_call }"], tone: 300)
        let mpv = try play(pw, ["-P", "{ node.name = route_mpv application.process.binary = mpv }"], tone: 2000)
        defer { [call, mpv].forEach { $0.interrupt() } }
        let callID = try XCTUnwrap(
            TestSupport.waitUntil { try Self.nodeID(pw, "route_call") != nil } ? Self.nodeID(pw, "route_call") : nil)
        XCTAssertEqual(
            try HeadlessPipeWire.execute(
                URL(fileURLWithPath: "/usr/bin/pw-metadata"), [callID, "target.object", "out_elsewhere"],
                environment: pw.environment
            ).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.linked(pw, "route_call") == ["out_elsewhere"] })
        XCTAssertTrue(try TestSupport.waitUntil { try Self.linked(pw, "route_mpv") == ["graphhost_test_sink"] })

        let socket = TestSupport.directory.appendingPathComponent("live/routes.sock").path
        let record = TestSupport.directory.appendingPathComponent("routes.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", try Self.graph(routes: Self.rules), "--latency", "256", "--name", "routes", "--record", record,
            "--socket", socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try Self.linked(pw, "route_call") == ["graphhost.voice"] })
        let started = try control.position()
        let firefox = try play(pw, ["-P", "{ node.name = route_firefox application.name = Firefox }"], tone: 1000)
        let asked = try play(
            pw, ["--target", "out_elsewhere", "-P", "{ node.name = route_asked application.name = Firefox }"],
            tone: 3000)
        defer { [firefox, asked].forEach { $0.interrupt() } }
        XCTAssertTrue(try TestSupport.waitUntil { try Self.linked(pw, "route_firefox") == ["graphhost.music"] })
        XCTAssertTrue(try control.waitForPosition(started + 3, every: 0.25))
        XCTAssertEqual(try Self.linked(pw, "route_mpv"), ["graphhost_test_sink"], "the excluded stream moved")
        XCTAssertEqual(try Self.linked(pw, "route_asked"), ["out_elsewhere"], "a stream's own target was overridden")
        // status: the rules and the streams moved.
        let routes = try XCTUnwrap(try control.status()["routes"] as? [String: Any])
        XCTAssertEqual((routes["rules"] as? [[String: Any]])?.count, 3)
        let moved = Set(
            ((routes["moved"] as? [[String: Any]]) ?? []).map { "\($0["application"] ?? "")→\($0["sink"] ?? "")" })
        XCTAssertEqual(moved, ["Firefox→music", "pw-play→voice"])
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("routes: 'Firefox'"), result.err)
        // Back where they were: the call to the sink the user had chosen, Firefox to the default.
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.linked(pw, "route_call") == ["out_elsewhere"] },
            "the call did not return")
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.linked(pw, "route_firefox") == ["graphhost_test_sink"] },
            "Firefox did not return")

        // Firefox in the music chain (graphhost's own recording, speakers), nothing of the others.
        let speakers = try SoundFile(path: record).samples
        let seconds = Double(speakers.count / 2) / 48000
        XCTAssertGreaterThan(
            ToneMeasure.medianLevel(speakers, 1000, from: seconds - 1.5, to: seconds - 0.5), -30, "no Firefox")
        for tone in [300.0, 2000, 3000] {
            XCTAssertLessThan(
                ToneMeasure.medianLevel(speakers, tone, from: seconds - 1.5, to: seconds - 0.5), -80,
                "\(tone) Hz reached the music sink")
        }
        let heard = (0..<Int(seconds * 20)).first {
            ToneMeasure.dB(ToneMeasure.amplitude(speakers, 1000, start: Double($0) / 20, seconds: 0.05)) > -40
        }
        let first = try XCTUnwrap(heard.map { Double($0) / 20 }, "Firefox never heard")
        print("routes: Firefox heard \(String(format: "%.2f", first - started)) s after it started (graph clock)")
        XCTAssertLessThanOrEqual(first - started, 1.0)
    }

    func testRulesAreCheckedWithTheirPaths() throws {
        func refused(_ routes: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertThrowsError(try GraphDocument.load(path: try Self.graph(routes: routes)), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(expected), "\($0)", file: file, line: line)
            }
        }
        try refused(
            #"[ { "match": { "application.name": "Firefox" }, "to": "musc" } ]"#,
            "routes[0].to: no sink node 'musc'; sink nodes: music, voice")
        try refused(
            #"[ { "to": "music" }, { "match": { "media.role": "Music" }, "to": "music", "exclude": true } ]"#,
            "routes[1]: a rule either moves (\"to\") or excludes, not both")
        try refused(
            #"[ { "match": { "media.role": 3 }, "to": "voice" } ]"#, "routes[0].match.media.role: expected a string")
        try refused(#"[ { "match": {} } ]"#, "routes[0]: a rule needs \"to\" (a sink node) or \"exclude\": true")
        try refused(#"{ "to": "music" }"#, "routes: expected an array of rules")
    }

    func testTheFirstFittingRuleDecidesAndSaveKeepsTheRules() throws {
        let path = try Self.graph(routes: Self.rules)
        let document = try GraphDocument.load(path: path)
        let routes = try XCTUnwrap(document.routes)
        func sink(_ properties: [String: String]) -> String? { routes.sink { properties[$0] } }
        XCTAssertEqual(sink(["application.name": "Firefox", "media.role": "Communication"]), "music")
        XCTAssertEqual(sink(["application.name": "Zoom", "media.role": "Communication"]), "voice")
        XCTAssertNil(sink(["application.process.binary": "mpv", "application.name": "mpv"]))
        XCTAssertNil(sink(["application.name": "firefox"]), "matching is case-sensitive, as PipeWire's properties are")
        let everything = try XCTUnwrap(
            try GraphDocument.load(
                path: try Self.graph(
                    routes: #"[ { "match": { "application.name": "*fox" }, "to": "music" }, { "to": "voice" } ]"#)
            ).routes)
        XCTAssertEqual(everything.sink { ["application.name": "Firefox"][$0] }, "music")
        XCTAssertEqual(everything.sink { _ in nil }, "voice", "a rule without match is the default")
        let saved = document.savedJSON(folder: URL(fileURLWithPath: path).deletingLastPathComponent())
        XCTAssertEqual(saved["routes"]?.compact, document.root?["routes"]?.compact)
        XCTAssertNotNil(saved["routes"])
    }

    /// Under `service run`, the configuration's routes move applications into the sinks of the graph that plays (it
    /// has no routes of its own); a graph a `load` brings in decides with its own routes from then on.
    func testTheServicesRoutesAndALoadedGraphsOwnDecide() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("out_headset")
        let folder = TestSupport.directory.appendingPathComponent("routes-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let plain = folder.appendingPathComponent("plain.json").path
        let own = folder.appendingPathComponent("own.json").path
        try FileManager.default.copyItem(atPath: try Self.graph(routes: nil), toPath: plain)
        try FileManager.default.copyItem(
            atPath: try Self.graph(routes: #"[ { "match": { "application.name": "Firefox" }, "to": "voice" } ]"#),
            toPath: own)
        let config = folder.appendingPathComponent("service.json").path
        ServiceTests.write(
            config,
            """
            { "devices": [], "fallback": "plain.json",
              "routes": [ { "match": { "application.name": "Firefox" }, "to": "music" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("live/routes-service.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "service", "run", config, "--name", "svcroutes", "--latency", "256", "--socket", socket,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        let first = try play(pw, ["-P", "{ node.name = route_ff1 application.name = Firefox }"], tone: 1000)
        defer { first.interrupt() }
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.linked(pw, "route_ff1") == ["graphhost.music"] },
            "the configuration's rule did not move Firefox")

        XCTAssertEqual(try control.ctl(["load", own]).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil(every: 0.25) { try control.status()["graph"] as? String == own })
        let second = try play(pw, ["-P", "{ node.name = route_ff2 application.name = Firefox }"], tone: 2000)
        defer { second.interrupt() }
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.linked(pw, "route_ff2") == ["graphhost.voice"] },
            "the loaded graph's rule did not decide")
        XCTAssertEqual(try Self.linked(pw, "route_ff1"), ["graphhost.music"], "a stream moved before was moved again")
        let rules = try XCTUnwrap((try control.status()["routes"] as? [String: Any])?["rules"] as? [[String: Any]])
        XCTAssertEqual(rules.first?["to"] as? String, "voice", "status shows the rules in force")
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
    }
}
