import Foundation
import XCTest

@testable import GraphHost

/// The graph's parameters as the playback node's PipeWire params: `pw-dump` shows them, `pw-cli set-param` changes
/// them (judged on the `--record` output), changes made through the socket, a load and a reconnect are published
/// back.
final class PipeWireParamsTests: XCTestCase {
    /// What pw-dump shows of the node `name`: its id, its Props params (name to value), its PropInfo descriptions
    /// (name to description) and pw-dump's whole output without white space (which shows how values are typed).
    struct Published {
        var id: Int
        var values: [String: Double] = [:]
        var descriptions: [String: String] = [:]
        var text = ""
    }

    static func published(_ pw: HeadlessPipeWire, node name: String) throws -> Published? {
        let out = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-dump"), [], environment: pw.environment
        ).out
        guard let objects = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]] else {
            return nil
        }
        for object in objects {
            guard let info = object["info"] as? [String: Any],
                (info["props"] as? [String: Any])?["node.name"] as? String == name,
                let id = object["id"] as? Int
            else { continue }
            var result = Published(id: id, text: out.filter { !$0.isWhitespace })
            let params = info["params"] as? [String: Any]
            for entry in (params?["Props"] as? [[String: Any]]) ?? [] {
                guard let list = entry["params"] as? [Any] else { continue }
                for i in stride(from: 0, to: list.count - 1, by: 2) {
                    guard let key = list[i] as? String, key.contains(":") else { continue }
                    if let v = list[i + 1] as? Double {
                        result.values[key] = v
                    } else if let b = list[i + 1] as? Bool {
                        result.values[key] = b ? 1 : 0
                    }
                }
            }
            for entry in (params?["PropInfo"] as? [[String: Any]]) ?? [] {
                if let key = entry["name"] as? String, let description = entry["description"] as? String {
                    result.descriptions[key] = description
                }
            }
            return result
        }
        return nil
    }

    /// Runs pw-cli set-param on node `id` with a Props pod.
    static func setProps(_ pw: HeadlessPipeWire, id: Int, _ pod: String) throws {
        let r = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-cli"), ["set-param", "\(id)", "Props", pod], environment: pw.environment)
        XCTAssertEqual(r.status, 0, r.err)
    }

    func testParamsArePublishedSetAndPublishedBack() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let name = "params"
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 40))" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "eq", "type": "ipod-eq" }, \
            { "id": "amp", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/amp" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, \
            { "from": "eq", "to": "amp" }, { "from": "amp", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("live/params.sock").path
        let recording = TestSupport.directory.appendingPathComponent("params.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", path, "--name", name, "--socket", socket, "--latency", "256", "--record", recording,
        ])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        let events = try HeadlessPipeWire.SocketClient.subscriber(socket)
        var shown: Published?
        XCTAssertTrue(
            try TestSupport.waitUntil {
                shown = try Self.published(pw, node: name)
                return shown?.values["mix:volume"] != nil
            })
        let first = try XCTUnwrap(shown)
        XCTAssertEqual(
            first.values,
            [
                "mix:volume": 1, "mix:volume.0": 1, "eq:preset": 0, "eq:preamp": 0, "eq:bypass": 0,
                "amp:gain": 0, "amp:bypass": 0,
            ].merging((0..<10).map { ("eq:band.\($0)", 0.0) }) { $1 })
        // The preset is an int, the bypasses bools, the rest floats.
        XCTAssertTrue(first.text.contains(#""eq:preset",0,"eq:preamp",0.000000,"#), first.text)
        XCTAssertTrue(first.text.contains(#""eq:bypass",false,"amp:gain",0.000000,"amp:bypass",false"#), first.text)
        XCTAssertEqual(first.descriptions["eq:band.3"], "eq: 250 Hz band (dB)")
        XCTAssertEqual(first.descriptions["mix:volume.0"], "mix: input 0 volume (linear)")
        XCTAssertEqual(first.descriptions["eq:preset"], "eq: preset number (0 Flat … 21 Vocal Booster)")
        XCTAssertEqual(first.descriptions["amp:gain"], "amp: Amps gain (dB)")
        let id = first.id
        XCTAssertTrue(try control.waitForPosition(1))

        // A mixer volume and an LV2 control through PipeWire, the EQ's preamp through the socket: each published.
        try Self.setProps(pw, id: id, #"{ params = [ "mix:volume" 0.25 ] }"#)
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.published(pw, node: name)?.values["mix:volume"] == 0.25 },
            "the change was not applied and published back")
        let second = try control.position()
        XCTAssertTrue(try control.waitForPosition(second + 1))
        try Self.setProps(pw, id: id, #"{ params = [ "amp:gain" -6.0 ] }"#)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.published(pw, node: name)?.values["amp:gain"] == -6 })
        let third = try control.position()
        XCTAssertTrue(try control.waitForPosition(third + 1))
        XCTAssertEqual(try control.ctl(["set", "eq", "preamp", "-6"]).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil { try Self.published(pw, node: name)?.values["eq:preamp"] == -6 },
            "a change through the socket was not published")
        let fourth = try control.position()
        XCTAssertTrue(try control.waitForPosition(fourth + 1))

        // A client sending the list back with its changes: the unchanged volume is left alone, the preset (by index)
        // and the bypass apply, an unknown name, a value out of range and a value that is no number change nothing.
        try Self.setProps(
            pw, id: id,
            #"{ params = [ "mix:volume" 0.25 "eq:preset" 16 "eq:bypass" true "nope:x" 1 "mix:volume.0" 99.0 "#
                + #""amp:gain" "loud" ] }"#
        )
        XCTAssertTrue(events.waitForLine(containing: #""command":"bypass eq on""#), events.text)
        XCTAssertEqual(
            events.text.components(separatedBy: #""command":"set mix volume 0.25""#).count - 1, 1, events.text)
        XCTAssertTrue(events.text.contains(#""command":"preset eq 16""#), events.text)
        var last: Published?
        XCTAssertTrue(
            try TestSupport.waitUntil {
                last = try Self.published(pw, node: name)
                return last?.values["eq:bypass"] == 1
            })
        XCTAssertEqual(last?.values["eq:preset"], 16)
        let lastText = try XCTUnwrap(last).text
        XCTAssertTrue(lastText.contains(#""eq:preset",16,"#), lastText)
        XCTAssertEqual(last?.values["mix:volume.0"], 1)
        XCTAssertEqual(last?.values["amp:gain"], -6)
        let fifth = try control.position()
        XCTAssertTrue(try control.waitForPosition(fifth + 1))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(
            result.err.contains("PipeWire param 'nope:x' = 1 (set nope x 1): error: no node 'nope'"), result.err)
        XCTAssertTrue(
            result.err.contains("PipeWire param 'mix:volume.0' = 99") && result.err.contains("out of range"), result.err
        )
        XCTAssertTrue(result.err.contains("PipeWire param 'amp:gain': the value is not a number or a bool"), result.err)

        let samples = try SoundFile(path: recording).samples
        let hop = 0.05
        let levels = stride(from: 0, to: samples.count / 2 - 2400, by: 2400).map {
            ToneMeasure.dB(ToneMeasure.amplitude(samples, 1000, start: Double($0) / 48000, seconds: hop))
        }
        let onset = try XCTUnwrap(levels.firstIndex { $0 > -30 })
        let reference = levels[onset + 4]
        /// The first of ten windows (half a second) at `dB` from the reference, from window `start` on.
        func held(_ dB: Double, from start: Int) -> Int? {
            (start..<max(start, levels.count - 10)).first { i in
                levels[i..<(i + 10)].allSatisfy { abs($0 - (reference + dB)) < 0.3 }
            }
        }
        // In order: the mixer at 0.25, the plugin's -6 dB, the preamp's -6 dB, then the EQ bypassed.
        let quarter = try XCTUnwrap(held(-12.04, from: onset), "no half second at mix:volume 0.25: \(levels)")
        let gain = try XCTUnwrap(held(-18.04, from: quarter), "no half second with amp:gain -6: \(levels)")
        let preamp = try XCTUnwrap(held(-24.04, from: gain), "no half second with eq:preamp -6: \(levels)")
        XCTAssertNotNil(held(-18.04, from: preamp + 10), "no half second with the EQ bypassed: \(levels)")
        // The changes that glide or crossfade are click-free: the mixer's, the preamp's and the bypass (swh amp's
        // gain steps, as the plugin does not smooth its control, so its change is left out).
        let end = Double(samples.count / 2) / 48000 - 0.8
        // The first window ends before the amp's change was sent (a second after `second`); `third` is read only after
        // the change was published back, which may be well after it was heard.
        for (from, to) in [(Double(onset) * hop + 0.5, second + 0.9), (fourth - 0.2, end)] {
            let worst = ClickMeasure.worst(samples, channels: 2, rate: 48000, start: from, end: to)
            XCTAssertLessThanOrEqual(worst.slopeRatio, 1.5, "\(from)…\(to): \(worst)")
        }
    }

    /// A load publishes the new graph's parameters (a plugin it adds, its preset and volume); after the daemon
    /// restarts, the reconnected node publishes them again, with the values changed meanwhile.
    func testParamsFollowLoadAndReconnect() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let directory = pw.directory
        let name = "params-reload"
        let song = try TestSupport.sine(seconds: 40)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(song)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "eq", "type": "ipod-eq" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, \
            { "from": "eq", "to": "out" } ] }
            """)
        let next = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(song)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1, "volume": 0.5 },
                         { "id": "eq", "type": "ipod-eq", "preset": "Rock" },
                         { "id": "amp", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/amp", \
            "controls": { "gain": -3 } },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, \
            { "from": "eq", "to": "amp" }, { "from": "amp", "to": "out" } ] }
            """)
        let socket = TestSupport.directory.appendingPathComponent("live/params-reload.sock").path
        let control = pw.control(socket)
        let run = try pw.graphhost(["run", path, "--name", name, "--socket", socket, "--latency", "256"])
        defer { run.interrupt() }
        XCTAssertTrue(control.waitForSocket())
        var shown: Published?
        XCTAssertTrue(
            try TestSupport.waitUntil {
                shown = try Self.published(pw, node: name)
                return shown?.values["eq:preset"] != nil
            })
        XCTAssertNil(shown?.values["amp:gain"])
        XCTAssertTrue(try control.waitForPosition(1))

        XCTAssertEqual(try control.ctl(["load", next]).status, 0)
        var loaded: Published?
        XCTAssertTrue(
            try TestSupport.waitUntil {
                loaded = try Self.published(pw, node: name)
                return loaded?.values["eq:preset"] == 16 && loaded?.values["amp:gain"] == -3
                    && loaded?.values["mix:volume"] == 0.5
            }, "the loaded graph's parameters were not published: \(String(describing: loaded?.values))")
        let id = try XCTUnwrap(Self.published(pw, node: name)).id
        try Self.setProps(pw, id: id, #"{ params = [ "amp:gain" -6.0 ] }"#)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.published(pw, node: name)?.values["amp:gain"] == -6 })

        pw.stop()
        let again = try HeadlessPipeWire(quantum: 256, directory: directory)
        defer { again.stop() }
        var after: Published?
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 60) {
                after = try Self.published(again, node: name)
                return after?.values["amp:gain"] != nil
            },
            "the reconnected node publishes no parameters")
        XCTAssertEqual(after?.values["amp:gain"], -6)
        XCTAssertEqual(after?.values["eq:preset"], 16)
        XCTAssertEqual(after?.values["mix:volume"], 0.5)
        // Set-param reaches the new node too.
        try Self.setProps(again, id: try XCTUnwrap(after).id, #"{ params = [ "mix:volume" 0.75 ] }"#)
        XCTAssertTrue(try TestSupport.waitUntil { try Self.published(again, node: name)?.values["mix:volume"] == 0.75 })
        XCTAssertTrue(run.waitForError(containing: "reconnected to PipeWire"))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
    }

    /// What a graph publishes, typed as its ports are, and the lines Props changes become.
    func testPublishedParametersAndTheirLines() throws {
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "in", "type": "stream", "url": "\(try TestSupport.sine(seconds: 40))" }, \
            { "id": "eq", "type": "ipod-eq", "preset": "Rock", "bypass": true },
                         { "id": "combo", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Combo", \
            "controls": { "stereo": 1 } },
                         { "id": "lim", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Limiter" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "in", "to": "eq" }, { "from": "eq", "to": "combo" }, \
            { "from": "combo", "to": "lim" }, { "from": "lim", "to": "out" } ] }
            """)
        let all = PublishedParameter.all(try GraphDocument.load(path: path))
        func find(_ name: String) throws -> PublishedParameter { try XCTUnwrap(all.first { $0.name == name }, name) }
        XCTAssertEqual(try find("eq:preset").value, 16)
        XCTAssertEqual(try find("eq:preset").kind, .int)
        XCTAssertEqual(try find("eq:band.0").value, 5)
        XCTAssertEqual(try find("eq:bypass").value, 1)
        XCTAssertEqual(try find("eq:bypass").kind, .bool)
        XCTAssertEqual(try find("combo:stereo").kind, .bool)
        XCTAssertEqual(try find("combo:stereo").value, 1)
        XCTAssertEqual(try find("combo:model").kind, .float, "an enumeration of fractions stays a float")
        XCTAssertEqual(try find("lim:knee").kind, .int)
        XCTAssertEqual(try find("combo:bypass").value, 0)
        XCTAssertNil(all.first { $0.name.hasPrefix("in:") }, "a stream has no parameters")
        // A chain's nodes are named by their path, as `set` names them.
        let chains = PublishedParameter.all(
            try GraphDocument.load(path: TestSupport.root.appendingPathComponent("Graphs/chains.json").path))
        XCTAssertEqual(chains.first { $0.name == "fx/eq:preset" }?.value, 2, "\(chains.map(\.name))")
        // graphhost's EQ as an LV2 plugin has a control named preset: it is set, not an LV2 preset chosen.
        let bright = try GraphDocument.load(path: TestSupport.root.appendingPathComponent("Graphs/chains.json").path)
            .selecting(chain: "bright", for: "fx")
        func set(_ node: String, _ parameter: ParameterID, _ value: Double) -> Command {
            .node(NodeRequest(node: node, action: .set(parameter: parameter, value: value)))
        }
        let lv2Preset = try XCTUnwrap(PublishedParameter.all(bright).first { $0.name == "fx/lv2eq:preset" })
        XCTAssertEqual(lv2Preset.kind, .int)
        XCTAssertEqual(try lv2Preset.request(16), set("fx/lv2eq", ParameterID("preset"), 16))

        XCTAssertEqual(
            try PublishedParameter.request(name: "eq:band.3", value: Double(Float(6.1))), set("eq", .band(3), 6.1))
        XCTAssertEqual(try find("eq:preset").request(16), .node(NodeRequest(node: "eq", action: .preset("16"))))
        XCTAssertEqual(try find("eq:bypass").request(1), .node(NodeRequest(node: "eq", action: .bypass(true))))
        XCTAssertEqual(try find("combo:bypass").request(0), .node(NodeRequest(node: "combo", action: .bypass(false))))
        XCTAssertEqual(try find("combo:stereo").request(0), set("combo", ParameterID("stereo"), 0))
        XCTAssertEqual(try PublishedParameter.request(name: "fx/eq:preamp", value: -3), set("fx/eq", .preamp, -3))
        XCTAssertThrowsError(try PublishedParameter.request(name: "eq", value: 1))
        XCTAssertThrowsError(try PublishedParameter.request(name: ":x", value: 1))
        XCTAssertThrowsError(try PublishedParameter.request(name: "eq:band.3", value: .nan))
        XCTAssertTrue(try find("eq:preset").holds(16))
        XCTAssertFalse(try find("eq:band.0").holds(5.5))
        XCTAssertTrue(try find("eq:bypass").holds(1))
    }
}
