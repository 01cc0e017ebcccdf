import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// The typed control API in-process: `perform` answers typed results and throws typed errors that leave the graph as
/// it was, changes publish typed events, and only `reply(to:)` and the events meet JSON.
final class ControlAPITests: XCTestCase {
    func makeControl() throws -> LiveControl {
        let path = TestSupport.graph(try TestSupport.eqGraph(preset: "Rock"), name: "control-api")
        let session = try TestSupport.session(path)
        let status = TestSupport.offlineStatus()
        return LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
    }

    func testChangesAnswerDoneAndPublishTheCommand() throws {
        let control = try makeControl()
        defer { control.withSession { $0.close() } }
        let events = Mutex<[ControlEvent]>([])
        control.addListener { event in events.withLock { $0.append(event) } }

        let preset = Command.node(NodeRequest(node: "eq", action: .preset("Bass Booster")))
        guard case .done(let request, _, _) = try control.perform(preset) else {
            return XCTFail("a preset is a change")
        }
        XCTAssertEqual(request, preset)
        XCTAssertEqual(events.withLock { $0 }, [.command("preset eq Bass Booster")])
        XCTAssertEqual(
            control.withSession { ($0.graph.document.node("eq")?.definition as? IPodEQNode)?.preset.name },
            "Bass Booster")

        guard case .status(let status) = try control.perform(.status) else {
            return XCTFail("status answers the status")
        }
        XCTAssertEqual(status.streams.map(\.id), ["s"])
        XCTAssertTrue(status.playing)
        guard case .listing(let listing) = try control.perform(.list) else {
            return XCTFail("list answers the listing")
        }
        XCTAssertEqual(listing.nodes.map(\.id), ["s", "eq", "out"])
        XCTAssertEqual(listing.nodes[1].presets.first, IPodEQPreset.all.first?.name)
        guard case .help(let help, detailed: true) = try control.perform(.help("seek")) else {
            return XCTFail("help answers help")
        }
        XCTAssertEqual(help.map(\.verb), ["seek"])
        XCTAssertEqual(events.withLock { $0.count }, 1, "status, list and help change nothing and publish nothing")
    }

    func testErrorsAreTypedAndChangeNothing() throws {
        let control = try makeControl()
        defer { control.withSession { $0.close() } }
        func error(_ request: Command) -> ControlError? {
            do {
                _ = try control.perform(request)
                return nil
            } catch {
                return error
            }
        }
        guard case .unknownNode("nope", let known) = error(.node(NodeRequest(node: "nope", action: .bypass(true))))
        else {
            return XCTFail("an unknown node")
        }
        XCTAssertEqual(known, ["s", "eq", "out"])
        guard case .noTransport = error(.tempo(128)) else { return XCTFail("tempo without a transport") }
        guard case .noMIDIControlPort = error(.learn(node: "eq", parameter: .preamp)) else {
            return XCTFail("learn without a port")
        }
        guard case .node(let refused) = error(.node(NodeRequest(node: "eq", action: .preset("No Such Preset")))) else {
            return XCTFail("a preset the node does not have is the node's error")
        }
        XCTAssertTrue("\(refused)".contains("No Such Preset"), "\(refused)")
        guard case .graph = error(.load(path: "/nonexistent/graph.json")) else {
            return XCTFail("a missing graph file")
        }
        XCTAssertEqual(
            control.withSession { ($0.graph.document.node("eq")?.definition as? IPodEQNode)?.preset.name }, "Rock")
    }

    /// JSON only at the edge: the socket's reply to a line, and events, keep their shape.
    func testRepliesAndEventsAsJSON() throws {
        let control = try makeControl()
        defer { control.withSession { $0.close() } }
        XCTAssertEqual(
            control.reply(to: "bypass nope on"), #"{"error":"no node 'nope'; nodes: s, eq, out","ok":false}"#)
        XCTAssertEqual(
            control.reply(to: "frobnicate"),
            #"{"error":"unknown command 'frobnicate'; commands: "# + CommandHelp.usage() + #"","ok":false}"#)
        XCTAssertEqual(control.reply(to: "quit"), #"{"ok":true}"#)
        let done = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(control.reply(to: "bypass eq on").utf8)) as? [String: Any])
        XCTAssertEqual(Set(done.keys), ["ok", "command", "arrival", "appliedBefore"])
        XCTAssertEqual(done["command"] as? String, "bypass eq on")
        XCTAssertEqual(
            ControlEvent.title(node: "s", title: "A/B", artist: nil, position: 1.5).line,
            #"{"event":"title","node":"s","position":1.5,"title":"A/B"}"#)
        XCTAssertEqual(
            ControlEvent.learned(channel: 2, controller: 7, node: "eq", parameter: .preamp).line,
            #"{"cc":7,"channel":2,"event":"learned","node":"eq","param":"preamp"}"#)
    }
}
