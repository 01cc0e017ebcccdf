import Foundation
import GraphHostDSP
import XCTest

@testable import GraphHost

/// The page in a real browser (Debian's headless Chromium through Selenium, Tests/Browser/scenarios.py) against
/// `graphhost run --http 0` on a private PipeWire daemon, judged with what graphhost reports and records. One Chromium
/// serves the class (`BrowserScenarios`), each scenario in a fresh tab.
final class WebPageTests: XCTestCase {
    /// A run serving the page: its URL (token included), control socket and process.
    struct PageRun {
        let run: HeadlessPipeWire.Running
        let control: HeadlessPipeWire.Control
        let url: String
        let socket: String

        var port: Int { Int(url.split(separator: ":")[2].split(separator: "/")[0])! }
    }

    override class func tearDown() {
        BrowserScenarios.close()
        super.tearDown()
    }

    static func start(_ pw: HeadlessPipeWire, graph: String, name: String, extra: [String] = []) throws -> PageRun {
        let socket = TestSupport.directory.appendingPathComponent("web-\(getpid())/\(name).sock").path
        let run = try pw.graphhost(["run", graph, "--socket", socket, "--http", "0", "--no-mpris"] + extra)
        let control = pw.control(socket)
        XCTAssertTrue(run.waitForError(containing: "the page: http://"), run.errorText)
        let line = try XCTUnwrap(run.errorText.split(separator: "\n").first { $0.hasPrefix("the page: ") })
        XCTAssertTrue(control.waitForSocket())
        return PageRun(run: run, control: control, url: String(line.dropFirst("the page: ".count)), socket: socket)
    }

    /// Runs a browser scenario in the class's Chromium and returns the JSON object it returned; `environment` adds to
    /// the test's own for the tools it runs (a private PipeWire's).
    static func scenario(
        _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120
    ) throws -> [String: Any] {
        try BrowserScenarios.start(arguments, environment: environment).result(timeout: timeout)
    }

    /// A change graphhost was asked for, timed until the page showed it (ms), beside the most the probe (scenarios.py's
    /// `Probe`) was woken late over the same interval (ms).
    struct Change: CustomStringConvertible {
        let name: String
        let ms: Double
        let probeLate: Double

        var description: String {
            "\(name) \(String(format: "%.1f", ms)) ms (probe \(String(format: "%.1f", probeLate)) ms late)"
        }
    }

    /// The "within 100 ms" tests' rule: each change shows on the page within `latencyAllowed`. Only a peer can excuse
    /// one that took longer, never graphhost's own lateness: the probe, a thread of the browser's process that asks
    /// to sleep 5 ms at a time and records how late each wake came, over the same seconds. A change over
    /// `latencyAllowed` while the probe was itself woken more than `probeLateAllowed` late in that change's interval
    /// measured the machine, not graphhost: the probe lost that change, and any such change (of at most 10 in a
    /// measurement, more than `PeerJudgement.peerLossAllowed`) makes the measurement invalid, so it is made again, at
    /// most `PeerJudgement.measurements` times, and then the test fails saying the machine was too busy to judge. A
    /// change over `latencyAllowed` with a quiet probe fails.
    static let latencyAllowed = 100.0
    static let probeLateAllowed = 50.0

    /// The changes of a scenario's `latencies` and `probe` (each a list, or lists by how the change was made).
    static func changes(_ seen: [String: Any]) throws -> [Change] {
        func lists(_ key: String) throws -> [(String, [Double])] {
            if let list = seen[key] as? [Double] { return [("change", list)] }
            let lists = try XCTUnwrap(seen[key] as? [String: [Double]], "\(key): \(seen)")
            return lists.keys.sorted().map { ($0, lists[$0]!) }
        }
        let (latencies, probe) = (try lists("latencies"), try lists("probe"))
        guard latencies.map(\.0) == probe.map(\.0), latencies.map(\.1.count) == probe.map(\.1.count) else {
            throw TestSupport.ToolFailure(description: "the latencies and the probe differ: \(seen)")
        }
        return zip(latencies, probe).flatMap { latency, probe in
            zip(latency.1, probe.1).enumerated().map { index, pair in
                Change(name: "\(latency.0) \(index + 1)", ms: pair.0, probeLate: pair.1)
            }
        }
    }

    /// A scenario's changes, printed with the probe's record, and what the probe lost, for `measureByLosses`.
    static func judged(_ what: String, _ seen: [String: Any]) throws -> ([Change], [PeerLoss]) {
        let changes = try changes(seen)
        print("page latency of \(what): \(changes); the probe: \(seen["probe_overall"] ?? "?")")
        return (changes, [probeLoss(changes)])
    }

    /// What the probe lost: the changes over `latencyAllowed` while it was woken over `probeLateAllowed` late.
    static func probeLoss(_ changes: [Change]) -> PeerLoss {
        let lost = changes.filter { $0.ms > latencyAllowed && $0.probeLate > probeLateAllowed }
        return PeerLoss(
            peer: "the 5 ms probe", lost: lost.count, of: changes.count,
            what: "changes over \(Int(latencyAllowed)) ms while it woke over \(Int(probeLateAllowed)) ms late \(lost)")
    }

    /// A scenario that times changes on the page, measured again while the probe was too late to judge
    /// (`measureByLosses`): its result and its changes, or nil once it failed saying the machine was too busy.
    static func measuredChanges(
        _ what: String, _ arguments: [String], environment: [String: String] = [:], file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> (seen: [String: Any], changes: [Change])? {
        try PeerJudgement.measureByLosses(what, file: file, line: line) {
            let seen = try scenario(arguments, environment: environment)
            let (changes, peers) = try judged(what, seen)
            return ((seen, changes), peers)
        }
    }

    /// Each change showed within `latencyAllowed`.
    static func assertEachWithin100ms(_ changes: [Change], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(changes.isEmpty, file: file, line: line)
        for change in changes {
            XCTAssertLessThanOrEqual(change.ms, latencyAllowed, "\(change) of \(changes)", file: file, line: line)
        }
    }

    /// A −6 dBFS 1 kHz sine (looped) → mixer → ipod-eq (Flat) → output.
    static func sineGraph() throws -> String {
        loopGraph(try TestSupport.sine(seconds: 20), preset: "Flat", name: "web-sine")
    }

    /// `url` looped → mixer → ipod-eq (`preset`, metered) → output, written as `name`.json.
    static func loopGraph(_ url: String, preset: String, name: String) -> String {
        TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(url)", "loop": true },
                         { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "eq", "type": "ipod-eq", "preset": "\(preset)", "meter": true },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" },
                         { "from": "eq", "to": "out" } ] }
            """, name: name)
    }

    /// The page draws every node and link `list` and the graph file have, and shows the page's version.
    func testThePageListsTheNodesAndLinksAsListDoes() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "list")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["graph", page.url])
        let listed = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try page.control.ctl(["list"]).out.utf8)) as? [String: Any])
        let nodes = try XCTUnwrap(listed["nodes"] as? [[String: Any]]).map {
            [$0["id"] as! String, $0["type"] as! String]
        }
        XCTAssertEqual(seen["nodes"] as? [[String]], nodes)
        XCTAssertEqual(seen["drawn"] as? [String], nodes.map { $0[0] })
        let links = [["song", "mix"], ["mix", "eq"], ["eq", "out"]]
        XCTAssertEqual(seen["links"] as? [[String]], links)
        XCTAssertEqual(seen["paths"] as? [[String]], links)
        XCTAssertEqual(seen["version"] as? String, WebPage.version)
    }

    /// Lowering the 1 kHz band by 6 dB with the arrow keys on its handle in the page's EQ chart lowers the recorded
    /// 1 kHz tone by what the EQ's own response gives for that change, click-free by the live-control criteria. (A
    /// cut: a boost's automatic headroom would keep the boosted band's own level where it was.)
    func testMovingAnEQBandOnThePageChangesTheRecordingByTheBandsGain() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let recording = TestSupport.directory.appendingPathComponent("web-band.wav").path
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "band", extra: ["--record", recording])
        XCTAssertTrue(try page.control.waitForPosition(1.5))
        let seen = try Self.scenario(["band", page.url, page.socket, "band.5", "-12"])
        let after = try XCTUnwrap(seen["after"] as? Double)
        XCTAssertTrue(try page.control.waitForPosition(after + 1.5))
        XCTAssertEqual(try page.control.ctl(["quit"]).status, 0)
        let result = page.run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(seen["error"] as? String, "")
        XCTAssertGreaterThan(try XCTUnwrap(seen["curve"] as? Int), 100, "the EQ chart drew no response")

        let samples = try SoundFile(path: recording).samples
        let first = Double(try XCTUnwrap(SignalMatch.firstSound(samples)) / 2) / 48000
        let before = try XCTUnwrap(seen["before"] as? Double)
        // Record time ≈ position + the first sound's time; the windows keep 0.3 s away from the change.
        let levelBefore = ToneMeasure.dB(
            ToneMeasure.amplitude(samples, 1000, start: first + before - 0.8, seconds: 0.5))
        let levelAfter = ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: first + after + 0.5, seconds: 0.5))
        var gains = [Double](repeating: 0, count: 10)
        let flat = IPodEQNode(preset: IPodEQPreset.named("Flat")!, preamp: 0, gains: gains)
        gains[5] = -6
        let lowered = IPodEQNode(preset: IPodEQPreset.named("Flat")!, preamp: 0, gains: gains)
        func heard(_ node: IPodEQNode) -> Double {
            node.responseDB(at: 1000, sampleRate: 48000)
                + IPodEQSettings(gains: node.gains, preamp: 0).headroomDB(sampleRate: 48000)
        }
        let expected = heard(lowered) - heard(flat)
        print("web band: \(levelBefore) → \(levelAfter) dB, expected change \(expected) dB")
        XCTAssertLessThan(expected, -5, "the EQ's response at the band")
        XCTAssertEqual(levelAfter - levelBefore, expected, accuracy: 0.1)
        let end = Double(samples.count / 2) / 48000 - 0.8
        let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: first + before - 0.2, end: end)
        XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(worst)")
        XCTAssertLessThanOrEqual(worst.peakRatio, 1.0005, "\(worst)")
    }

    /// Presets changed through the control socket and through OSC show on the page within 100 ms, each of ten
    /// changes, from the moment the command was sent to the page applying graphhost's `values` message (judged by
    /// `latencyAllowed`'s rule), and each shows in the page's event log.
    func testChangesMadeElsewhereShowOnThePageWithin100ms() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "elsewhere", extra: ["--osc-port", "0"])
        defer { page.run.interrupt() }
        XCTAssertTrue(page.run.waitForError(containing: "OSC: listening on udp "))
        let osc = try XCTUnwrap(
            page.run.errorText.split(separator: "\n").first { $0.contains("OSC: listening on udp ") }?
                .split(separator: ":").last.flatMap { Int($0) })
        let measured = try Self.measuredChanges(
            "changes made elsewhere", ["elsewhere", page.url, page.socket, "\(osc)"])
        guard let (seen, changes) = measured else { return }
        XCTAssertEqual(changes.filter { $0.name.hasPrefix("socket ") }.count, 5, "\(changes)")
        XCTAssertEqual(changes.filter { $0.name.hasPrefix("osc ") }.count, 5, "\(changes)")
        Self.assertEachWithin100ms(changes)
        let logged = try XCTUnwrap(seen["logged"] as? [String])
        XCTAssertEqual(logged.filter { $0.contains("command: preset eq ") }.count, 10, "\(logged)")
    }

    /// Presets typed at `run`'s console (on a real terminal, tmux) show on the page within 100 ms of graphhost
    /// announcing the command to its surfaces (the control socket hearing the event), each of the five
    /// (`latencyAllowed`'s rule).
    func testPresetsTypedAtTheConsoleShowOnThePageWithin100ms() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let folder = TestSupport.directory.appendingPathComponent("web-console-\(getpid())")
        let socket = folder.appendingPathComponent("console.sock").path
        let environment = pw.environment.merging([
            "XDG_STATE_HOME": folder.appendingPathComponent("state").path, "LC_ALL": "C.UTF-8",
        ]) { $1 }
        let terminal = try TmuxTerminal(
            [
                TestSupport.executable.path, "run", try Self.sineGraph(), "--socket", socket, "--http", "0",
                "--no-mpris",
            ], environment: environment, width: 200)
        defer { terminal.close() }
        var url: String?
        XCTAssertTrue(
            terminal.waitForScreen { screen in
                url = screen.first { $0.contains("the page: http") }.flatMap { line in
                    line.components(separatedBy: "the page: ").last?.trimmingCharacters(in: .whitespaces)
                }
                return url != nil && screen.contains { $0.hasPrefix(">") }
            }, terminal.text())
        let presets = ["Rock", "Jazz", "Piano", "Dance", "Classical"]
        let pageURL = try XCTUnwrap(url)
        let measured = try PeerJudgement.measureByLosses("presets typed at the console") {
            let browser = try BrowserScenarios.start(["watch", pageURL, socket, presets.joined(separator: ",")])
            XCTAssertTrue(browser.waitForError(containing: "watching"), browser.errorText)
            for preset in presets {
                try terminal.type("preset eq \(preset)")
                try terminal.press("Enter")
                XCTAssertTrue(
                    browser.waitForError(containing: "saw \(preset)", timeout: 60), browser.errorText + terminal.text())
            }
            let seen = try browser.result()
            let (changes, peers) = try Self.judged("presets typed at the console", seen)
            return ((seen, changes), peers)
        }
        guard let (seen, changes) = measured else { return }
        XCTAssertEqual(changes.count, presets.count)
        Self.assertEachWithin100ms(changes)
        XCTAssertEqual(seen["commands"] as? [String], presets.map { "preset eq \($0)" })
    }

    /// Presets changed by MIDI program changes (`pw-cat --midi` into the graph's control port) and through PipeWire
    /// (`pw-cli set-param` on the playback node's Props) show on the page within 100 ms of graphhost announcing the
    /// command to its surfaces (the control socket hearing the event), each of the four (`latencyAllowed`'s rule).
    func testMIDIAndPipeWireChangesShowOnThePageWithin100ms() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let sine = try TestSupport.sine(seconds: 20)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "eq", "type": "ipod-eq", "preset": "Flat" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "eq" }, { "from": "eq", "to": "out" } ],
              "midiControl": { "port": "control",
                               "program": [ { "program": 1, "node": "eq", "preset": "Rock" },
                                            { "program": 2, "node": "eq", "preset": "Piano" } ] } }
            """, name: "web-surfaces")
        let name = "websurfaces"
        let page = try Self.start(pw, graph: graph, name: "surfaces", extra: ["--name", name])
        defer { page.run.interrupt() }
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("\(name).control") }, "no MIDI control node")
        var published: PipeWireParamsTests.Published?
        XCTAssertTrue(
            try TestSupport.waitUntil {
                published = try PipeWireParamsTests.published(pw, node: name)
                return published?.values["eq:preset"] != nil
            }, "the playback node publishes no eq:preset")
        let props = try XCTUnwrap(published).id
        let measured = try Self.measuredChanges(
            "MIDI and PipeWire changes", ["surfaces", page.url, page.socket, "\(name).control", "\(props)"],
            environment: pw.environment)
        guard let (seen, changes) = measured else { return }
        XCTAssertEqual(changes.filter { $0.name.hasPrefix("midi ") }.count, 2, "\(changes)")
        XCTAssertEqual(changes.filter { $0.name.hasPrefix("pw-cli ") }.count, 2, "\(changes)")
        Self.assertEachWithin100ms(changes)
        let commands = try XCTUnwrap(seen["commands"] as? [String])
        XCTAssertEqual(commands.count, 4)
        // MIDI selects the mapped preset by name, PipeWire's Props by number (the page showed each by name).
        XCTAssertEqual(
            commands.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element),
            [
                "preset eq Rock", "preset eq Piano",
            ])
        for command in commands.enumerated().filter({ !$0.offset.isMultiple(of: 2) }).map(\.element) {
            XCTAssertNotNil(Int(command.dropFirst("preset eq ".count)), "\(commands)")
        }
    }

    /// An LV2 plugin (Debian's mda Detune) on the page: a control for each of its control ports, labelled with its
    /// name and unit, a picker of its presets and a bypass toggle; a preset picked on the page sets the preset's
    /// port values in graphhost, and the toggle bypasses the node.
    func testAnLV2PluginsControlsPresetsAndBypassWorkFromThePage() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let plugin = try XCTUnwrap(LV2World.shared.plugin(LV2HostTests.detune))
        let outOfTune = plugin.portValues(of: try XCTUnwrap(plugin.preset("Out Of Tune")))
        let sine = try TestSupport.sine(seconds: 20)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "fx", "type": "lv2", "uri": "\(LV2HostTests.detune)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, name: "web-lv2")
        let page = try Self.start(pw, graph: graph, name: "lv2")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["lv2", page.url, "Out Of Tune"])
        let rows = try XCTUnwrap(seen["rows"] as? [[String]])
        let ids = rows.map { $0[0] }
        XCTAssertTrue(ids.contains("control-fx-preset") && ids.contains("control-fx-bypass"), "\(rows)")
        XCTAssertFalse(plugin.controlInputs.isEmpty)
        for port in plugin.controlInputs {
            let row = try XCTUnwrap(
                rows.first { $0[0] == "control-fx-\(port.symbol)" }, "no control for \(port.symbol)")
            XCTAssertTrue(row[1].hasPrefix(port.name), "\(row)")
            XCTAssertEqual(row[2], "range", "\(row)")
        }
        XCTAssertEqual(seen["presets"] as? [String], ["Out Of Tune", "Stereo Detune", "Symphonic"])
        let after = try XCTUnwrap(seen["after"] as? [String: Double])
        XCTAssertFalse(outOfTune.isEmpty)
        for (symbol, value) in outOfTune {
            XCTAssertEqual(try XCTUnwrap(after[symbol], symbol), Double(value), accuracy: 1e-4, symbol)
        }
        let logged = try XCTUnwrap(seen["logged"] as? [String])
        XCTAssertTrue(logged.contains { $0.contains("preset fx Out Of Tune") }, "\(logged)")
        XCTAssertTrue(logged.contains { $0.contains("bypass fx on") }, "\(logged)")
    }

    /// The transport and the other feeds on the page: the playing file's title and artist (its ID3 tags), its
    /// stream's buffer fill, a seek with the stream's slider that graphhost follows, the chain picker of a chain
    /// node's member, and the loudness and the spectrum once their disclosures are open.
    func testTransportChainsLoudnessAndSpectrumOnThePage() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try MPRISTests.taggedMP3(title: "Page Title", artist: "Page Artist")
        let graph = TestSupport.graph(
            """
            { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ], "dry": [] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" },
                         { "id": "fx", "type": "chain", "chain": "warm" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, name: "web-transport")
        let page = try Self.start(pw, graph: graph, name: "transport")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["transport", page.url, page.socket])
        XCTAssertEqual(seen["playing"] as? String, "Page Title — Page Artist")
        let fill = try XCTUnwrap(seen["fill"] as? String)
        XCTAssertTrue(fill.hasPrefix("buffer ") && fill.hasSuffix(" %"), fill)
        XCTAssertGreaterThan(try XCTUnwrap(seen["before"] as? Double), 3)
        XCTAssertLessThan(try XCTUnwrap(seen["after"] as? Double), 2.5, "the seek to 1 s")
        XCTAssertEqual(Set(try XCTUnwrap(seen["chains"] as? [String])), ["warm", "dry"])
        XCTAssertTrue(try XCTUnwrap(seen["loudness"] as? String).contains("out loudness (LUFS)"), "\(seen)")
        XCTAssertGreaterThan(try XCTUnwrap(seen["bands"] as? Int), 30)
    }

    /// The output's meter on the page moves while sound plays, falls to silence after the page's pause button and
    /// rises again after play.
    func testMetersMoveWhilePlayingAndFallWhilePaused() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "meters")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["meters", page.url])
        let playing = try XCTUnwrap(seen["playing"] as? [String]).compactMap(Double.init)
        XCTAssertEqual(playing.count, 10, "\(seen)")
        // The −6 dBFS sine through the flat EQ (its headroom is 0 dB).
        for peak in playing { XCTAssertEqual(peak, -6.02, accuracy: 0.5) }
    }

    /// With another process keeping both cores busy (stress-ng), the page draws in full within 2 s of being opened,
    /// on the browser's own clock from the navigation's start: the graph, the output's meter showing the tone, the
    /// transport showing the stream, and the EQ's response chart, the EQ selected the moment its node is drawn. The
    /// graph stays where it was first drawn meanwhile (a click aimed at it lands on it).
    func testThePageDrawsWithin2sWhileBothCoresAreBusy() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "busy")
        defer { page.run.interrupt() }
        XCTAssertTrue(try page.control.waitForPosition(0.5))
        let stress = try CPUStress(cores: 2, seconds: 300)
        defer { stress.stop() }
        let seen = try Self.scenario(["first-draw", page.url])
        print("the page's first draw under stress (ms from the navigation's start): \(seen)")
        let marks = try XCTUnwrap(seen["marks"] as? [String: Double], "\(seen)")
        for mark in ["open", "graph", "meters", "transport", "chart"] {
            XCTAssertLessThanOrEqual(try XCTUnwrap(marks[mark], mark), 2000, "\(mark): \(seen)")
        }
        XCTAssertEqual(seen["top_drawn"] as? Double, seen["top"] as? Double, "the graph moved: \(seen)")
    }

    /// A change made on the page while its connection is down (closed, not yet open again) is carried out once the
    /// page is connected again, and the EQ's chart is drawn again from graphhost's response.
    func testAChangeMadeWhileThePageReconnectsIsCarriedOut() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "reconnect")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["reconnect", page.url, page.socket])
        XCTAssertEqual(seen["state"] as? Int, 2, "the socket was closing: \(seen)")
        XCTAssertEqual(seen["heard"] as? [String], ["set eq band.5 0.5"], "\(seen)")
        XCTAssertEqual(seen["error"] as? String, "", "\(seen)")
        XCTAssertGreaterThan(try XCTUnwrap(seen["points"] as? Int), 100, "\(seen)")
    }

    /// `--http 0.0.0.0:0` listens beyond the machine: `run` warns that anyone with the URL and its token can control
    /// graphhost, shows a loopback URL, and still refuses a request without the token.
    func testListeningBeyondTheMachineWarnsAndStillWantsTheToken() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "wide", extra: ["--http", "0.0.0.0:0"])
        defer { page.run.interrupt() }
        XCTAssertTrue(
            page.run.waitForError(containing: "warning: the page listens on 0.0.0.0, beyond this machine"),
            page.run.errorText)
        XCTAssertTrue(page.url.hasPrefix("http://127.0.0.1:"), page.url)
        let token = String(page.url.split(separator: "=").last!)
        func status(_ path: String) throws -> String {
            String(
                decoding: try TestSupport.run([
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(page.port)" + path,
                ]), as: UTF8.self)
        }
        XCTAssertEqual(try status("/"), "403")
        XCTAssertEqual(try status("/?token=\(token)"), "303")
    }

    /// A request without the token, with a wrong one, from another site or naming another host is refused, for
    /// the page, its files, the graph download and the WebSocket alike; the right token is let in.
    func testWrongTokensForeignOriginsAndOtherHostsAreRefused() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "access")
        defer { page.run.interrupt() }
        let base = "http://127.0.0.1:\(page.port)"
        let token = String(page.url.split(separator: "=").last!)
        func status(_ path: String, _ headers: [String]) throws -> String {
            let arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] }
            return String(decoding: try TestSupport.run(arguments + [base + path]), as: UTF8.self)
        }
        let cookie = "Cookie: graphhost_token=\(token)"
        // The token with its last character changed (a token may end in either).
        let wrongToken = token.dropLast() + (token.hasSuffix("0") ? "1" : "0")
        let upgrade = [
            "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        ]
        XCTAssertEqual(try status("/?token=\(token)", []), "303")
        XCTAssertEqual(try status("/", [cookie]), "200")
        // An accepted handshake's status line, read from a socket of its own: curl would wait for the upgraded
        // connection to end.
        let handshake = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            lines = ["GET /ws HTTP/1.1", "Host: 127.0.0.1:" + sys.argv[1]] + sys.argv[2:]
            s.sendall(("\\r\\n".join(lines) + "\\r\\n\\r\\n").encode())
            print(s.recv(64).split(b" ")[1].decode(), end="")
            """
        let accepted = try TestSupport.run(
            ["python3", "-c", handshake, "\(page.port)", cookie, "Origin: \(base)"] + upgrade)
        XCTAssertEqual(String(decoding: accepted, as: UTF8.self), "101")
        for path in ["/", "/page/app.js", "/graph.json", "/graphs", "/ws"] {
            // A refused WebSocket handshake is answered as an HTTP request is, before any upgrade.
            let (ws, refused, host) = (path == "/ws" ? upgrade : [], "403", "421")
            XCTAssertEqual(try status(path, ws), refused, "\(path) without a token")
            XCTAssertEqual(try status(path, ["Cookie: graphhost_token=\(wrongToken)"] + ws), refused, path)
            XCTAssertEqual(try status(path, [cookie, "Origin: http://attacker.example"] + ws), refused, path)
            XCTAssertEqual(try status(path, [cookie, "Host: attacker.example:\(page.port)"] + ws), host, path)
        }
        XCTAssertEqual(try status("/?token=\(token)0", []), "403")
    }

    /// At a phone's width (390 px) the page is one column with nothing wider than the screen; every control has a
    /// label; the keyboard alone reaches a node with Tab, opens it with Enter and moves a band's slider, with a
    /// visible focus ring.
    func testThePageWorksAtPhoneWidthAndFromTheKeyboard() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "phone")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["phone", page.url])
        XCTAssertEqual(seen["width"] as? Int, 390, "\(seen)")
        XCTAssertEqual((seen["lefts"] as? [Int])?.count, 1, "\(seen)")
        XCTAssertLessThanOrEqual(try XCTUnwrap(seen["overflow"] as? Int), 0, "\(seen)")
        XCTAssertNotNil(seen["reached"] as? Int, "Tab never reached the eq node: \(seen)")
        XCTAssertEqual(seen["ring"] as? String, "4px", "no focus ring on the node: \(seen)")
        XCTAssertEqual(seen["outline"] as? String, "solid", "no focus ring on the slider: \(seen)")
        XCTAssertEqual((seen["unlabelled"] as? [String]) ?? ["?"], [], "\(seen)")
        XCTAssertEqual(seen["after"] as? Double, 12, "End moves the band to its top: \(seen)")
    }

    /// A value graphhost refuses shows its error on the page and changes nothing; the page loads a graph file from
    /// the running graph's folder and draws it; a path outside that folder is refused; the live graph downloads
    /// with what plays now.
    func testRefusalsLoadAndSave() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let sine = try TestSupport.sine(seconds: 20)
        _ = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "karaoke-eq", "type": "ipod-eq", "preset": "Rock" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "karaoke-eq" }, { "from": "karaoke-eq", "to": "out" } ] }
            """, name: "web-other")
        let page = try Self.start(pw, graph: try Self.sineGraph(), name: "files")
        defer { page.run.interrupt() }
        XCTAssertEqual(try page.control.ctl(["preset", "eq", "Jazz"]).status, 0)
        let token = String(page.url.split(separator: "=").last!)
        let saved = String(
            decoding: try TestSupport.run([
                "curl", "-s", "-H", "Cookie: graphhost_token=\(token)", "http://127.0.0.1:\(page.port)/graph.json",
            ]), as: UTF8.self)
        XCTAssertTrue(saved.contains(#""preset": "Jazz""#), saved)

        let seen = try Self.scenario(["files", page.url, "web-other.json"])
        XCTAssertTrue((seen["refused"] as? String ?? "").contains("out of range"), "\(seen)")
        XCTAssertEqual(seen["unchanged"] as? Bool, true)
        XCTAssertTrue((seen["outside"] as? String ?? "").contains("is not a graph file in"), "\(seen)")
        XCTAssertTrue((seen["options"] as? [String] ?? []).contains("web-sine.json"), "\(seen)")
        XCTAssertEqual(seen["nodes"] as? [String], ["song", "karaoke-eq", "out"])
    }

    /// Twenty pages open at once, each with meters at 30 Hz (and its other feeds), while graphhost plays the demo:
    /// graphhost's sink keeps as many intact 100 ms windows as pw-play playing the same sound to a second sink in
    /// the same seconds, less 2 % (the peer measure of the PipeWire tests). A run where pw-play itself lost more than
    /// `PeerJudgement.peerLossAllowed` of its windows is not judged against it: it is made again.
    func testTwentyPagesWithMetersKeepUpWithAPeer() throws {
        let seconds = 20
        let measured = try PeerJudgement.measureByLosses("20 pages") {
            let run = try Self.twentyPages(seconds: seconds)
            return (run, [PeerRecordings.loss(run.peer)])
        }
        guard let (own, other) = measured else { return }
        print("20 pages: intact 100 ms windows: graphhost \(own.intact), pw-play \(other.intact) of \(own.total)")
        XCTAssertGreaterThan(own.total, 9 * seconds)
        XCTAssertEqual(own.total, other.total)
        XCTAssertGreaterThanOrEqual(
            Double(own.intact), Double(other.intact) - 0.02 * Double(own.total),
            "graphhost \(own.intact), pw-play \(other.intact) of \(own.total)")
    }

    /// One run of twenty pages beside pw-play, judged but for the monitors' windows: graphhost's and pw-play's.
    static func twentyPages(seconds: Int) throws -> (own: (intact: Int, total: Int), peer: (intact: Int, total: Int)) {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink(HeadlessPipeWire.peerSink)
        let demo = TestSupport.root.appendingPathComponent("Graphs/demo.json").path
        let (rendered, source) = try TestSupport.renderedFile(demo, seconds: seconds, name: "web-demo-offline.wav")
        // graphhost waits paused while the pages open; then it plays the demo from its start beside the peer.
        let page = try Self.start(pw, graph: demo, name: "pages", extra: ["--latency", "256"])
        XCTAssertEqual(try page.control.ctl(["pause"]).status, 0)
        let browser = try BrowserScenarios.start(["pages", page.url, "20", "\(seconds + 6)"])
        XCTAssertTrue(browser.waitForError(containing: "20 pages open"), browser.errorText)
        let recordings = try PeerRecordings(pw, name: "web-demo")
        XCTAssertEqual(try page.control.ctl(["seek", "song", "0"]).status, 0)
        XCTAssertEqual(try page.control.ctl(["play"]).status, 0)
        let peer = try pw.play(source, sink: HeadlessPipeWire.peerSink, latency: 256)
        let peerResult = peer.wait()
        let result = page.run.wait(timeout: 60)
        let seen = try browser.result()
        let windows = try recordings.finish(reference: rendered)
        XCTAssertEqual(peerResult.status, 0, peerResult.err)
        XCTAssertEqual(seen["pages"] as? Int, 20, "\(seen)")
        XCTAssertEqual(result.status, 0, result.err)
        return windows
    }

    /// A browser scenario left running in a Chromium of its own (its standard error says how far it got), for a class
    /// that has not the browser tier's (LiveSoakTests); this class's use `BrowserScenarios.start`.
    static func scenarioProcess(_ arguments: [String]) throws -> HeadlessPipeWire.Running {
        try TestTier.require(.browser, .long, for: "Chromium")
        let script = TestSupport.root.appendingPathComponent("Tests/Browser/scenarios.py").path
        return try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/python3"), [script] + arguments,
            environment: ProcessInfo.processInfo.environment)
    }

    /// A `peq` band's handle dragged up and right on the page's chart raises the band's gain and frequency in
    /// graphhost, and the curve is drawn again from graphhost's response; the controls name their units; the band's
    /// type is a picker of the shapes, and a shape picked there is the band's shape in graphhost.
    func testAParametricBandIsDraggedOnTheCurve() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let sine = try TestSupport.sine(seconds: 20)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "peq", "type": "peq",
                           "bands": [ { "type": "peaking", "frequency": 500, "gain": 0, "q": 1 } ] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "peq" }, { "from": "peq", "to": "out" } ] }
            """, name: "web-peq")
        let page = try Self.start(pw, graph: graph, name: "peq")
        defer { page.run.interrupt() }
        let seen = try Self.scenario(["peq", page.url, "high-shelf"])
        let before = try XCTUnwrap(seen["before"] as? [String: Double])
        let after = try XCTUnwrap(seen["after"] as? [String: Double])
        XCTAssertGreaterThan(try XCTUnwrap(after["band.0.gain"]), try XCTUnwrap(before["band.0.gain"]) + 1)
        XCTAssertGreaterThan(try XCTUnwrap(after["band.0.frequency"]), try XCTUnwrap(before["band.0.frequency"]) * 1.2)
        // Units in the labels and in the shown values, as the descriptor gives them.
        let labels = try XCTUnwrap(seen["labels"] as? [String: [String]])
        XCTAssertEqual(labels["control-peq-band_0_frequency"]?.first, "band 0 frequency (Hz)", "\(labels)")
        XCTAssertEqual(labels["control-peq-band_0_gain"]?.first, "band 0 gain (dB)", "\(labels)")
        XCTAssertEqual(labels["control-peq-band_0_q"]?.first, "band 0 q", "\(labels)")
        XCTAssertEqual(labels["control-peq-preamp"]?.first, "preamp (dB)", "\(labels)")
        XCTAssertTrue(labels["control-peq-band_0_frequency"]?.last?.hasSuffix(" Hz") == true, "\(labels)")
        XCTAssertTrue(labels["control-peq-band_0_gain"]?.last?.hasSuffix(" dB") == true, "\(labels)")
        // The band's type is an enumeration: a picker of the shapes, in the descriptor's order, whose choice graphhost
        // takes as the shape's index.
        let shapes = try XCTUnwrap(seen["shapes"] as? [[String]])
        XCTAssertEqual(shapes.map { $0[0] }, ParametricBand.Shape.allCases.map(\.rawValue))
        XCTAssertEqual(shapes.map { $0[1] }, ParametricBand.Shape.allCases.indices.map(String.init))
        let highShelf = try XCTUnwrap(ParametricBand.Shape.allCases.firstIndex(of: .highShelf))
        XCTAssertEqual(seen["picked"] as? Double, Double(highShelf))
    }
}
