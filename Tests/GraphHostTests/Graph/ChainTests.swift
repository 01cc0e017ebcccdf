import XCTest

@testable import GraphHost

/// Named chains in graph files: expansion, checks of every chain, and tab completion of the command language.
final class ChainTests: XCTestCase {
    func chainGraph(_ chains: String, chain: String = "warm", extra: String = "") throws -> String {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        return TestSupport.graph(
            """
            { \(extra) "chains": { \(chains) },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(mp3)" }, \
            { "id": "fx", "type": "chain", "chain": "\(chain)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
    }

    func testAChainNodeRunsItsMembersInOrder() throws {
        let path = try chainGraph(
            #""warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Rock" }, "#
                + #"{ "type": "mixer", "inputs": 1, "volume": 0.5 } ], "dry": []"#
        )
        let doc = try GraphDocument.load(path: path)
        XCTAssertEqual(doc.order.map { doc.nodes[$0].id }, ["song", "fx/eq", "fx/1", "out"])
        XCTAssertEqual(doc.chainNodes, [ChainPlacement(id: "fx", chain: "warm")])
        XCTAssertEqual(doc.chains["dry"], ["through"])
        let dry = try doc.selecting(chain: "dry", for: "fx")
        XCTAssertEqual(dry.order.map { dry.nodes[$0].id }, ["song", "fx/through", "out"])
        let shown = GraphPrinter.text(doc)
        XCTAssertTrue(
            shown.contains("  warm: eq -> 1\n") && shown.contains("  dry: through\n")
                && shown.contains("node fx runs warm"), shown)
        XCTAssertThrowsError(try doc.selecting(chain: "cold", for: "fx")) {
            XCTAssertTrue("\($0)".contains("no chain 'cold'; chains: dry, warm"), "\($0)")
        }
        XCTAssertThrowsError(try doc.selecting(chain: "dry", for: "song")) {
            XCTAssertTrue("\($0)".contains("'song' is not a chain node; chain nodes: fx"), "\($0)")
        }
    }

    func testEveryChainIsCheckedWithItsPath() throws {
        func assertRejected(_ path: String, _ parts: [String], line: UInt = #line) {
            do {
                _ = try GraphDocument.load(path: path)
                XCTFail("accepted", line: line)
            } catch {
                XCTAssertTrue(parts.allSatisfy { "\(error)".contains($0) }, "\(error)", line: line)
            }
        }
        assertRejected(
            try chainGraph(#""warm": [], "cold": [ { "type": "ipod-eq", "preset": "Nope" } ]"#),
            ["chains.cold[0].preset", "unknown preset 'Nope'"])
        assertRejected(try chainGraph(#""warm": [ { "type": "stream", "url": "x.mp3" } ]"#), ["chains.warm[0]"])
        assertRejected(
            try chainGraph(#""warm": [ { "type": "output" } ]"#),
            ["chains.warm[0].type", "one input and one output; 'output' has 1 and 0"])
        assertRejected(try chainGraph(#""warm": [ { "type": "mixer", "inputs": 2 } ]"#), ["'mixer' has 2 and 1"])
        assertRejected(
            try chainGraph(#""warm": []"#, chain: "hot"), ["nodes[1].chain", "no chain 'hot'; chains: warm"])
        assertRejected(
            try chainGraph(#""warm": [ { "id": "a", "type": "ipod-eq" }, { "id": "a", "type": "ipod-eq" } ]"#),
            ["chains.warm[1].id", "duplicate id 'a'"])
        assertRejected(
            try chainGraph(#""warm": [ { "type": "lv2", "uri": "urn:nothing" } ]"#),
            ["chains.warm[0].uri", "no LV2 plugin 'urn:nothing'"])
        assertRejected(
            try chainGraph(#""warm": []"#, extra: #""crossfadeSeconds": 5,"#), ["crossfadeSeconds", "out of range"])
    }

    func testCompletion() throws {
        let path = try chainGraph(#""warm": [ { "id": "eq", "type": "ipod-eq" } ], "bright": [], "bold": []"#)
        let session = try TestSupport.session(path)
        defer { session.close() }
        let complete = CommandCompletion(session: session).complete
        XCTAssertEqual(complete("pre"), ["preset "])
        XCTAssertEqual(complete("preset "), ["preset fx/eq "])
        XCTAssertEqual(complete("preset fx/eq Bass B"), ["preset fx/eq Bass Booster "])
        XCTAssertEqual(
            complete("preset fx/eq Treble "), ["preset fx/eq Treble Booster ", "preset fx/eq Treble Reducer "])
        XCTAssertEqual(complete("chain "), ["chain fx "])
        XCTAssertEqual(complete("chain fx b"), ["chain fx bold ", "chain fx bright "])
        XCTAssertEqual(complete("set fx/eq pre"), ["set fx/eq preamp "])
        XCTAssertEqual(complete("bypass fx/eq o"), ["bypass fx/eq off ", "bypass fx/eq on "])
        XCTAssertEqual(complete("p"), ["pause ", "play ", "preset "])
        XCTAssertEqual(complete("nothing here"), [])
    }
}
