import FoundationEssentials
import XCTest

@testable import GraphHost

/// `graphhost service run CONFIG`: the graph mapped to the default sink plays and follows it, in a private PipeWire
/// with WirePlumber and null sinks as the devices; the configuration reloads when saved.
final class ServiceTests: XCTestCase {
    /// A looping 1 kHz sine through the iPod EQ with `preset`, to the output (which names no target).
    static func graph(_ folder: URL, _ name: String, preset: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        let text = """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 20))",
                           "loop": true },
                         { "id": "eq", "type": "ipod-eq", "preset": "\(preset)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    /// A fresh folder with the Flat, Bass Booster and Spoken Word graphs (their paths) and where its configuration
    /// goes.
    static func threeGraphs() throws -> (config: String, flat: String, bass: String, spoken: String) {
        let folder = TestSupport.directory.appendingPathComponent("service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (
            folder.appendingPathComponent("service.json").path, try graph(folder, "flat.json", preset: "Flat"),
            try graph(folder, "bass.json", preset: "Bass Booster"),
            try graph(folder, "spoken.json", preset: "Spoken Word")
        )
    }

    static func write(_ path: String, _ text: String) {
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }

    func testTheGraphFollowsTheDefaultSinkFallsBackAndTheConfigurationReloads() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink("out_a")
        try pw.addSink("out_b")
        let (config, flat, bass, spoken) = try Self.threeGraphs()
        Self.write(
            config,
            """
            { "devices": [ { "match": { "node.name": "out_b" }, "graph": "bass.json" },
                           { "match": { "node.description": "graphhost null sink out_a" }, "graph": "spoken.json" } ],
              "fallback": "flat.json" }
            """)
        let socket = TestSupport.directory.appendingPathComponent("live/service.sock").path
        let record = TestSupport.directory.appendingPathComponent("service.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "service", "run", config, "--name", "svc", "--latency", "256", "--socket", socket, "--record", record,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        func graph() throws -> String? { try control.status()["graph"] as? String }
        XCTAssertEqual(try graph(), flat, "the default sink is mapped to nothing: the fallback plays")
        XCTAssertTrue(try TestSupport.waitUntil { try StreamRoutesTests.linked(pw, "svc") == ["graphhost_test_sink"] })
        XCTAssertTrue(try control.waitForPosition(1.5, every: 0.25))

        // The default sink moves to out_b: its graph within 1 s of the graph's clock, click-free, played there.
        let outB = try XCTUnwrap(try StreamRoutesTests.nodeID(pw, "out_b"))
        let switched = try control.position()
        let wpctl = URL(fileURLWithPath: "/usr/bin/wpctl")
        XCTAssertEqual(
            try HeadlessPipeWire.execute(wpctl, ["set-default", outB], environment: pw.environment).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil(every: 0.25) { try graph() == bass }, "\(run.errorText)")
        XCTAssertTrue(
            try TestSupport.waitUntil { try StreamRoutesTests.linked(pw, "svc") == ["out_b"] },
            "the output did not move")
        XCTAssertTrue(try control.waitForPosition(switched + 2.5, every: 0.25))
        let device = try XCTUnwrap(try control.status()["device"] as? [String: Any])
        XCTAssertEqual(device["name"] as? String, "out_b")
        XCTAssertEqual(device["description"] as? String, "graphhost null sink out_b")
        XCTAssertEqual(device["graph"] as? String, bass)

        // out_b goes away while playing: the default moves on and its graph (here the fallback) plays; no exit.
        let pwcli = URL(fileURLWithPath: "/usr/bin/pw-cli")
        XCTAssertEqual(try HeadlessPipeWire.execute(pwcli, ["destroy", outB], environment: pw.environment).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil(every: 0.25) { try graph() == flat }, "\(run.errorText)")
        XCTAssertTrue(try TestSupport.waitUntil { try StreamRoutesTests.linked(pw, "svc") == ["graphhost_test_sink"] })

        // A saved configuration is taken; a broken edit is logged and the running one stays.
        Self.write(
            config,
            """
            { "devices": [ { "match": { "node.name": "graphhost_test_sink" }, "graph": "spoken.json" } ],
              "fallback": "flat.json" }
            """)
        XCTAssertTrue(try TestSupport.waitUntil(every: 0.25) { try graph() == spoken }, "\(run.errorText)")
        Self.write(
            config,
            """
            { "devices": [ { "match": { "node.name": "graphhost_test_sink" }, "graph": "nope.json" } ],
              "fallback": "flat.json" }
            """)
        XCTAssertTrue(run.waitForError(containing: "not reloaded, the running configuration stays"), run.errorText)
        XCTAssertTrue(run.errorText.contains("devices[0].graph"), run.errorText)
        XCTAssertEqual(try graph(), spoken)
        let end = try control.position()
        XCTAssertTrue(try control.waitForPosition(end + 0.5, every: 0.25))
        run.interrupt()
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)

        // graphhost's own recording: Flat, then Bass Booster from within 1 s of the switch, without a click.
        let samples = try SoundFile(path: record).samples
        func level(_ t: Double) -> Double {
            ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: t, seconds: 0.02))
        }
        let before = level(switched - 0.3)
        let after = level(switched + 2.0)
        XCTAssertGreaterThan(abs(after - before), 2, "Flat and Bass Booster differ at 1 kHz")
        let change = try XCTUnwrap(
            stride(from: switched - 0.1, to: switched + 2, by: 0.02).first {
                abs(level($0) - before) > abs(after - before) / 2
            })
        print(
            "service: Bass Booster heard \(String(format: "%.2f", change - switched)) s after the default sink changed")
        XCTAssertLessThanOrEqual(change - switched, 1.0)
        let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: switched - 0.2, end: switched + 2)
        print("service swap: \(worst)")
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.0005, "\(worst)")
    }

    /// A sound card's active output route (speakers, headphones) as `match` sees it: the default sink's device
    /// (route-device-fixture, a device with both routes and a sink through them) reports its route, and when it
    /// changes, as when headphones are plugged in, the graph mapped to the new route loads.
    func testTheGraphFollowsTheActiveRouteOfTheDefaultSinksDevice() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let jack = Pipe()
        let card = try HeadlessPipeWire.Running(
            TestSupport.products.appendingPathComponent("route-device-fixture"), [],
            environment: pw.environment, input: jack)
        defer {
            try? jack.fileHandleForWriting.close()
            _ = card.wait()
        }
        XCTAssertTrue(TestSupport.waitUntil { card.outputText.contains("ready") }, card.errorText)
        let sink = try XCTUnwrap(try StreamRoutesTests.nodeID(pw, "graphhost_fixture_sink"))
        let wpctl = URL(fileURLWithPath: "/usr/bin/wpctl")
        XCTAssertEqual(
            try HeadlessPipeWire.execute(wpctl, ["set-default", sink], environment: pw.environment).status, 0)
        let (config, flat, bass, spoken) = try Self.threeGraphs()
        Self.write(
            config,
            """
            { "devices": [ { "match": { "device.route.name": "analog-output-headphones" }, "graph": "bass.json" },
                           { "match": { "node.name": "graphhost_fixture_sink", "device.route.description": "Speakers" },
                             "graph": "spoken.json" } ],
              "fallback": "flat.json" }
            """)
        let socket = TestSupport.directory.appendingPathComponent("live/service-route.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["service", "run", config, "--name", "svc", "--latency", "256", "--socket", socket])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        func device() throws -> [String: Any]? { try control.status()["device"] as? [String: Any] }
        XCTAssertTrue(
            try TestSupport.waitUntil(every: 0.25) { try device()?["graph"] as? String == spoken },
            "speakers: \(String(describing: try? device())) \(run.errorText)")
        XCTAssertEqual(try device()?["route"] as? String, "Speakers")
        XCTAssertNotEqual(flat, spoken)

        jack.fileHandleForWriting.write(Data("route analog-output-headphones\n".utf8))
        XCTAssertTrue(
            try TestSupport.waitUntil(every: 0.25) { try device()?["graph"] as? String == bass },
            "headphones: \(String(describing: try? device())) \(run.errorText)")
        XCTAssertEqual(try device()?["route"] as? String, "Headphones")
        XCTAssertTrue(try control.ctl(["status"]).out.contains("Headphones"))

        jack.fileHandleForWriting.write(Data("route analog-output-speaker\n".utf8))
        XCTAssertTrue(
            try TestSupport.waitUntil(every: 0.25) { try device()?["graph"] as? String == spoken },
            "speakers again: \(String(describing: try? device())) \(run.errorText)")
        run.interrupt()
        XCTAssertEqual(run.wait().status, 0, run.errorText)
    }

    func testConfigurationsAreCheckedWithTheirPaths() throws {
        let folder = TestSupport.directory.appendingPathComponent("service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = try Self.graph(folder, "flat.json", preset: "Flat")
        let config = folder.appendingPathComponent("service.json").path
        func refused(_ text: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            Self.write(config, text)
            XCTAssertThrowsError(try ServiceConfig.load(path: config), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(expected), "\($0)", file: file, line: line)
            }
        }
        refused(#"{ "devices": [] }"#, "fallback: missing (a graph file)")
        refused(#"{ "fallback": "gone.json" }"#, "fallback: ")
        refused(
            #"{ "fallback": "flat.json", "devices": [ { "match": { "node.name": 1 }, "graph": "flat.json" } ] }"#,
            "devices[0].match.node.name: expected a string")
        refused(#"{ "fallback": "flat.json", "device": [] }"#, "unknown setting 'device'")
        refused(
            #"{ "fallback": "flat.json", "routes": [ { "match": { "application.name": "mpv" }, "to": "music" } ] }"#,
            "routes[0].to: no sink node 'music'")
        let surround = folder.appendingPathComponent("surround.json").path
        Self.write(
            surround,
            """
            { "format": { "sampleRate": 48000, "channels": 6 },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 20))" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "out" } ] }
            """)
        refused(
            #"{ "fallback": "flat.json", "devices": [ { "match": {}, "graph": "surround.json" } ] }"#,
            "devices[0].graph: \(surround) cannot take over from")
        Self.write(
            config,
            #"{ "fallback": "flat.json", "devices": [ { "match": { "node.name": "usb-*" }, "graph": "flat.json" } ] }"#)
        let loaded = try ServiceConfig.load(path: config)
        XCTAssertEqual(loaded.graph(for: ["node.name": "usb-headset"]), folder.appendingPathComponent("flat.json").path)
        XCTAssertEqual(loaded.graph(for: nil), loaded.fallback)
    }

    /// `service install` writes a user unit that `systemd-analyze --user verify` accepts (where no user service
    /// manager runs, as here, it is only written); a broken configuration is refused first; `uninstall` removes it.
    func testInstallWritesAUnitSystemdAcceptsAndUninstallRemovesIt() throws {
        let folder = TestSupport.directory.appendingPathComponent("service-unit-\(UUID().uuidString)")
        let runtime = folder.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        _ = try Self.graph(folder, "flat.json", preset: "Flat")
        let config = folder.appendingPathComponent("my effects.json").path
        Self.write(config, #"{ "fallback": "flat.json" }"#)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        func graphhost(_ words: [String]) throws -> (status: Int32, out: String, err: String) {
            try HeadlessPipeWire.execute(TestSupport.executable, words, environment: environment)
        }
        let installed = try graphhost(["service", "install", config, "--name", "my fx"])
        XCTAssertEqual(installed.status, 0, installed.err)
        let unit = folder.appendingPathComponent("config/systemd/user/graphhost.service").path
        XCTAssertTrue(installed.out.contains("wrote \(unit)"), installed.out)
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let binary = TestSupport.executable.standardizedFileURL.resolvingSymlinksInPath().path
        XCTAssertTrue(
            text.contains("ExecStart=\(binary) service run \"\(config)\" --name \"my fx\" --idle-after 5"), text)
        XCTAssertTrue(text.contains("Restart=on-failure") && text.contains("StandardError=journal"), text)
        let verified = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["--user", "verify", unit], environment: environment)
        XCTAssertEqual(verified.status, 0, verified.out + verified.err)

        Self.write(config, #"{ "fallback": "gone.json" }"#)
        let refused = try graphhost(["service", "install", config])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.err.contains("fallback: "), refused.err)

        let removed = try graphhost(["service", "uninstall"])
        XCTAssertEqual(removed.status, 0, removed.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: unit))
        XCTAssertEqual(try graphhost(["service", "uninstall"]).status, 1)
    }
}
