import XCTest

@testable import GraphHost

/// Every validation error names the file, the JSON path and the problem.
final class ValidationTests: XCTestCase {
    func errors(_ json: String) -> [String] {
        let path = TestSupport.graph(json, name: "invalid")
        do {
            _ = try GraphDocument.load(path: path)
            XCTFail("expected the graph to be rejected")
            return []
        } catch let e as GraphErrors {
            for error in e.errors { XCTAssertTrue(error.description.hasPrefix(path), error.description) }
            return e.errors.map(\.description)
        } catch {
            XCTFail("unexpected error \(error)")
            return []
        }
    }

    func assertError(_ json: String, contains parts: [String], file: StaticString = #filePath, line: UInt = #line) {
        let all = errors(json)
        XCTAssertTrue(
            all.contains { e in parts.allSatisfy { e.contains($0) } }, "no error containing \(parts) in \(all)",
            file: file, line: line)
    }

    var mp3: String { get throws { try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1) } }

    func testMalformedJSONGivesLineAndColumn() {
        assertError(
            "{\n  \"nodes\": [\n    { \"id\": \"a\" \"type\": \"output\" }\n  ]\n}",
            contains: [":3:17:", "malformed JSON", "expected ',' or '}'"])
        assertError("{ \"nodes\": [", contains: [":1:13:", "malformed JSON"])
    }

    /// A key given twice in one object is refused at the second, with where the first was; a syntax error says what
    /// was expected, never the text it found (a graph named by a client may be any file).
    func testDuplicateKeysAndSyntaxErrorsNameThePlaceNotTheText() {
        assertError(
            "{ \"nodes\": [ { \"id\": \"out\", \"type\": \"output\", \"id\": \"o2\" } ],\n  \"links\": [] }",
            contains: [":1:47:", "malformed JSON", "given twice", "line 1, column 16"])
        let secret = errors("root:x:0:0:root:/root:/bin/bash\n").joined()
        XCTAssertTrue(secret.contains(":1:1:"), secret)
        XCTAssertFalse(secret.contains("'r'") || secret.contains("root"), "the text was echoed: \(secret)")
    }

    func testUnknownNodeTypeListsKnownTypes() {
        assertError(
            #"{ "nodes": [ { "id": "x", "type": "reverb" }, { "id": "out", "type": "output" } ], "links": [] }"#,
            contains: [
                "nodes[0].type", "unknown node type 'reverb'",
                "known types: stream, capture, sink, mixer, ipod-eq, peq, lv2, ladspa, midi, output, chain",
            ])
    }

    func testDuplicateID() {
        assertError(
            #"{ "nodes": [ { "id": "out", "type": "output" }, { "id": "out", "type": "output" } ], "links": [] }"#,
            contains: ["nodes[1].id", "duplicate id 'out'", "nodes[0].id"])
    }

    func testDanglingLink() {
        assertError(
            #"{ "nodes": [ { "id": "out", "type": "output" } ], "links": [ { "from": "ghost", "to": "out" } ] }"#,
            contains: ["links[0].from", "dangling link", "'ghost'"])
        assertError(
            #"{ "nodes": [ { "id": "m", "type": "mixer", "inputs": 2 }, { "id": "out", "type": "output" } ], "#
                + #""links": [ { "from": "m", "to": "out:3" } ] }"#,
            contains: ["links[0].to", "dangling link", "input buses 0…0, not 3"])
    }

    func testDoublyConnectedInput() {
        assertError(
            #"""
            { "nodes": [ { "id": "a", "type": "mixer" }, { "id": "b", "type": "mixer" }, \#
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "a", "to": "out" }, { "from": "b", "to": "out:0" } ] }
            """#, contains: ["nodes[2]", "input 'out:0' is connected 2 times", "links[0], links[1]"])
    }

    func testUnconnectedInput() {
        assertError(
            #"{ "nodes": [ { "id": "eq", "type": "ipod-eq" }, { "id": "out", "type": "output" } ], "#
                + #""links": [ { "from": "eq", "to": "out" } ] }"#,
            contains: ["nodes[0]", "input 'eq:0' is not connected"])
    }

    func testUnknownPresetListsValidOnes() {
        assertError(
            #"{ "nodes": [ { "id": "m", "type": "mixer" }, { "id": "eq", "type": "ipod-eq", "preset": "Rok" }, "#
                + #"{ "id": "out", "type": "output" } ], "links": [ { "from": "m", "to": "eq" }, "#
                + #"{ "from": "eq", "to": "out" } ] }"#,
            contains: ["nodes[1].preset", "unknown preset 'Rok'", "Acoustic", "Vocal Booster"])
    }

    func testCycleNamesItsNodes() {
        assertError(
            #"""
            { "nodes": [ { "id": "m1", "type": "mixer", "inputs": 1 }, { "id": "e1", "type": "ipod-eq" }, \#
            { "id": "e2", "type": "ipod-eq" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "m1", "to": "e1" }, { "from": "e1", "to": "e2" }, { "from": "e2", "to": "m1" }, \#
            { "from": "e2", "to": "out" } ] }
            """#, contains: ["links", "cycle", "m1 → e1 → e2 → m1"])
    }

    func testNoOutput() {
        assertError(
            #"{ "nodes": [ { "id": "m", "type": "mixer" } ], "links": [] }"#, contains: ["nodes", "no output node"])
    }

    func testUnreadableAndNonMP3Media() throws {
        assertError(
            #"{ "nodes": [ { "id": "s", "type": "stream", "url": "missing.mp3" }, "#
                + #"{ "id": "out", "type": "output" } ], "links": [ { "from": "s", "to": "out" } ] }"#,
            contains: ["nodes[0].url", "cannot read media", "missing.mp3", "no such file"])
        let junk = TestSupport.directory.appendingPathComponent("junk.mp3").path
        FileManager.default.createFile(atPath: junk, contents: Data((0..<50000).map { _ in UInt8(0) }))
        assertError(
            #"{ "nodes": [ { "id": "s", "type": "stream", "url": "junk.mp3" }, { "id": "out", "type": "output" } ], "#
                + #""links": [ { "from": "s", "to": "out" } ] }"#,
            contains: ["nodes[0].url", "is not a supported audio stream"])
        assertError(
            #"{ "nodes": [ { "id": "s", "type": "stream", "url": "ftp://127.0.0.1/x.mp3" }, "#
                + #"{ "id": "out", "type": "output" } ], "links": [ { "from": "s", "to": "out" } ] }"#,
            contains: ["nodes[0].url", "unsupported URL"])
    }

    func testWrongTypesAndUnknownKeys() {
        assertError(
            #"{ "format": { "sampleRate": "fast" }, "nodes": [ { "id": "out", "type": "output" } ], "links": [] }"#,
            contains: ["format.sampleRate", "expected a whole number"])
        assertError(
            #"{ "nodes": [ { "id": "m", "type": "mixer", "volumz": [1] }, { "id": "out", "type": "output" } ], "#
                + #""links": [ { "from": "m", "to": "out" } ] }"#,
            contains: ["nodes[0].volumz", "unknown setting", "inputs, volumes, volume"])
    }

    func testRelativePathsResolveAgainstTheGraphFolderAndFormatDefaults() throws {
        let mp3 = try self.mp3
        let name = URL(fileURLWithPath: mp3).lastPathComponent
        let doc = try GraphDocument.load(
            path: TestSupport.graph(
                """
                { "nodes": [ { "id": "s", "type": "stream", "url": "\(name)" }, { "id": "out", "type": "output" } ], \
                "links": [ { "from": "s", "to": "out" } ] }
                """))
        XCTAssertEqual(doc.format, GraphFormat(sampleRate: 48000, channels: 2, maxFrames: 4096))
        XCTAssertEqual((doc.node("s")!.definition as! StreamNode).path, mp3)
    }

    func testDemoGraphIsValidAndOrdered() throws {
        let demo = TestSupport.root.appendingPathComponent("Graphs/demo.json").path
        let doc = try GraphDocument.load(path: demo)
        XCTAssertEqual(doc.order.map { doc.nodes[$0].id }, ["song", "mix", "eq", "out"])
        XCTAssertTrue(GraphPrinter.text(doc).contains("render order: song -> mix -> eq -> out"))
        XCTAssertTrue(GraphPrinter.dot(doc).contains("\"mix\" -> \"eq\""))
    }

    func testCommandParser() throws {
        XCTAssertEqual(
            try NodeRequest.parse("preset eq Bass Booster"), NodeRequest(node: "eq", action: .preset("Bass Booster")))
        XCTAssertEqual(
            try NodeRequest.parse("set mix volume.1 0.25"),
            NodeRequest(node: "mix", action: .set(parameter: .volume(input: 1), value: 0.25)))
        XCTAssertEqual(
            try NodeRequest.parse("set fx mode Low pass"),
            NodeRequest(node: "fx", action: .choose(parameter: ParameterID("mode"), label: "Low pass")))
        XCTAssertThrowsError(try NodeRequest.parse("set mix volume.1 inf"))
        XCTAssertThrowsError(try NodeRequest.parse("set mix volume.1"))
        let demo = TestSupport.root.appendingPathComponent("Graphs/demo.json").path
        let session = try TestSupport.session(demo)
        defer { session.close() }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set mix volume.1 loud"))) {
            XCTAssertEqual("\($0)", "'loud' is not a number ('mix' volume.1 takes a number)")
        }
        XCTAssertThrowsError(try session.apply(NodeRequest.parse("set eq band.3 high"))) {
            XCTAssertEqual("\($0)", "'high' is not a number ('eq' band.3 takes a number)")
        }
        XCTAssertThrowsError(try NodeRequest.parse("explode eq"))
    }
}
