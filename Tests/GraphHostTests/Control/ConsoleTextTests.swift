import Foundation
import XCTest

@testable import GraphHost

/// What the console prints, without a daemon: `help` from the one command table, `status` and `list` of a real
/// session as tables with units, `--json` giving the socket's JSON, and JSON text that writes "/" as it is.
final class ConsoleTextTests: XCTestCase {
    /// A session on a graph whose stream reads a file in a folder (a path with slashes), and its control.
    func makeControl() throws -> (control: LiveControl, counters: PlaybackCounters, song: String) {
        let song = try TestSupport.sine(seconds: 5)
        let path = TestSupport.graph(
            """
            { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ], "dry": [] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(song)" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "eq", "type": "ipod-eq", "preset": "Rock" }, \
            { "id": "fx", "type": "chain", "chain": "warm" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "fx" },
                         { "from": "fx", "to": "out" } ] }
            """, name: "console-text")
        let session = try TestSupport.session(path)
        let counters = PlaybackCounters.create()
        let status = PlaybackStatus(counters: counters, recorder: nil, sampleRate: 48000)
        return (LiveControl(session: session, status: { status.snapshot($0) }, quit: {}), counters, song)
    }

    func testStatusAndListAreTablesWithUnits() throws {
        let (control, counters, song) = try makeControl()
        defer {
            control.withSession { $0.close() }
            counters.destroy()
        }
        counters.frames.store(48000 * 3 / 2, ordering: .relaxed)
        counters.quantum.store(256, ordering: .relaxed)

        let status = ReplyText.answer("status", control: control)
        XCTAssertFalse(status.contains("{") || status.contains("\\/"), status)
        let lines = status.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "playing at 1.50 s | quantum 256 frames | latency 0 frames (0.0 ms)", status)
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("  ID ") && $0.contains("BUFFER") }, status)
        let row = lines[header + 1]
        XCTAssertTrue(row.hasPrefix("  song  "), status)
        XCTAssertTrue(row.hasSuffix(song), "the path as it is: \(status)")
        XCTAssertNotNil(row.firstMatch(of: /\d+ %/), status)
        // Columns line up: each header word starts where its column does.
        XCTAssertEqual(
            lines[header].range(of: "SOURCE")?.lowerBound.utf16Offset(in: lines[header]),
            row.range(of: song)?.lowerBound.utf16Offset(in: row), status)
        XCTAssertTrue(lines.contains("  fx  warm"), status)
        XCTAssertNotNil(status.firstMatch(of: /memory: [\d.]+ [kMG]?B locked/), status)

        let list = ReplyText.answer("list", control: control)
        XCTAssertFalse(list.contains("{") || list.contains("\\/"), list)
        let listed = list.split(separator: "\n").map(String.init)
        let volume = "0…" + Format.number(MixerNode.volumeRange.upperBound) + " linear"
        let eq =
            "\(IPodEQPreset.all.count)       preamp \(Format.number(IPodEQNode.preampRange.lowerBound))…"
            + "\(Format.number(IPodEQNode.preampRange.upperBound)) dB, band.0…9 "
            + "\(Format.number(IPodEQNode.bandRange.lowerBound))…"
            + Format.number(IPodEQNode.bandRange.upperBound) + " dB"
        XCTAssertEqual(
            Array(listed.prefix(8)),
            [
                "  ID     TYPE     PRESETS  PARAMETERS (RANGE)",
                "  song   stream   0",
                "  mix    mixer    0        volume \(volume), volume.0 \(volume)",
                "  eq     ipod-eq  " + eq,
                "  fx/eq  ipod-eq  " + eq,
                "  out    output   0",
                "  fx     chain    0        chain warm of dry, warm",
                "presets of eq, fx/eq: " + IPodEQPreset.all.map(\.name).joined(separator: ", "),
            ], list)
        XCTAssertEqual(listed.last, "chains: dry, warm", list)
    }

    func testJSONOnTheSocketAndUnderJSONFlag() throws {
        let (control, counters, song) = try makeControl()
        defer {
            control.withSession { $0.close() }
            counters.destroy()
        }
        let reply = control.reply(to: "status")
        XCTAssertEqual(
            ReplyText.answer("status --json", control: control).split(separator: ",").first,
            reply.split(separator: ",").first)
        XCTAssertTrue(reply.contains("\"url\":\"file://\(song)\""), reply)
        XCTAssertFalse(reply.contains("\\/"), reply)
        let list = ReplyText.answer("list --json", control: control)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [String: Any], list)
        XCTAssertEqual(object["ok"] as? Bool, true)
        XCTAssertEqual(
            (object["nodes"] as? [[String: Any]])?.map { $0["id"] as? String },
            ["song", "mix", "eq", "fx/eq", "out", "fx"])
        XCTAssertEqual(
            JSONValue.object([("url", .string("http://127.0.0.1/x")), ("path", .string("/a/b"))]).compact,
            #"{"path":"/a/b","url":"http://127.0.0.1/x"}"#)
    }

    /// `help` lists every verb of the one table completion reads; `help COMMAND` shows usage, arguments and an
    /// example that parses; an unknown command names the known ones; the socket answers help as JSON.
    func testHelpComesFromTheCommandTable() throws {
        let (control, counters, _) = try makeControl()
        defer {
            control.withSession { $0.close() }
            counters.destroy()
        }
        let help = ReplyText.answer("help", control: control)
        XCTAssertFalse(help.contains("{"), help)
        for command in CommandHelp.all {
            XCTAssertTrue(
                help.split(separator: "\n").contains { $0.hasPrefix("  " + command.synopsis + " ") },
                "\(command.verb) missing from:\n\(help)")
            XCTAssertEqual(
                try Command.parse(command.example).description.split(separator: " ").first.map(String.init),
                command.verb)
        }
        XCTAssertEqual(
            Set(CommandHelp.verbs),
            [
                "preset", "set", "bypass", "seek", "chain", "load", "save", "learn", "meter", "tempo",
                "pause", "play", "status", "list", "help", "quit",
            ])
        XCTAssertEqual(
            control.withSession { CommandCompletion(session: $0).complete("") },
            CommandHelp.verbs.sorted().map { $0 + " " })
        XCTAssertEqual(control.withSession { CommandCompletion(session: $0).complete("help pr") }, ["help preset "])

        let preset = ReplyText.answer("help preset", control: control)
        XCTAssertEqual(preset.split(separator: "\n").first, "usage: preset NODE NAME|INDEX", preset)
        XCTAssertTrue(preset.contains("arguments:\n  NODE  "), preset)
        XCTAssertTrue(preset.hasSuffix("example: preset eq Bass Booster"), preset)

        let unknown = ReplyText.answer("help nope", control: control)
        XCTAssertEqual(unknown, "error: unknown command 'nope'; commands: " + CommandHelp.verbs.joined(separator: ", "))

        let json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(control.reply(to: "help").utf8)) as? [String: Any])
        XCTAssertEqual(json["ok"] as? Bool, true)
        XCTAssertEqual((json["help"] as? [[String: Any]])?.compactMap { $0["command"] as? String }, CommandHelp.verbs)
        XCTAssertThrowsError(try Command.parse("help preset set"))
    }

    func testTableAlignsColumns() {
        XCTAssertEqual(
            ReplyText.table(header: ["ID", "STATE", "SOURCE"], [["song", "playing", "/a/b.mp3"], ["x", "", ""]]),
            ["  ID    STATE    SOURCE", "  song  playing  /a/b.mp3", "  x"])
    }
}
