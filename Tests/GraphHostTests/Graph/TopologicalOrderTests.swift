import Foundation
import XCTest

@testable import GraphHost

/// The render order a graph file gets, without a daemon or media: every node after the nodes feeding it, nodes that
/// are ready together in file order, and links that form a cycle refused with the cycle named.
/// Mixers whose inputs nothing feeds stand in for sources (they play silence).
final class TopologicalOrderTests: XCTestCase {
    func document(_ json: String) throws -> GraphDocument {
        let file = TestSupport.directory.appendingPathComponent("order.json")
        return try GraphDocument.parse(text: json, file: file, displayName: "order.json")
    }

    func order(_ json: String) throws -> [String] {
        let graph = try document(json)
        return graph.order.map { graph.nodes[$0].id }
    }

    /// Listed backwards, the graph still renders sources first; the two sources, both ready at the start, keep
    /// their file order (b before a).
    func testNodesComeAfterTheirInputsAndTiesKeepFileOrder() throws {
        XCTAssertEqual(
            try order(
                """
                { "nodes": [ { "id": "out", "type": "output" }, { "id": "eq", "type": "ipod-eq" },
                             { "id": "mix", "type": "mixer", "inputs": 2 },
                             { "id": "b", "type": "mixer" }, { "id": "a", "type": "mixer" } ],
                  "links": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:1" }, \
                { "from": "mix", "to": "eq" },
                             { "from": "eq", "to": "out" } ] }
                """), ["b", "a", "mix", "eq", "out"])
    }

    /// A diamond: both branches become ready when the source has run; they go in file order (y, then x), not in
    /// the order of the links that freed them.
    func testBranchesReadyTogetherGoInFileOrder() throws {
        XCTAssertEqual(
            try order(
                """
                { "nodes": [ { "id": "sum", "type": "mixer", "inputs": 2 },
                             { "id": "y", "type": "ipod-eq" }, { "id": "x", "type": "ipod-eq" },
                             { "id": "src", "type": "mixer" }, { "id": "out", "type": "output" } ],
                  "links": [ { "from": "src", "to": "x" }, { "from": "src", "to": "y" }, { "from": "x", "to": "sum:0" },
                             { "from": "y", "to": "sum:1" }, { "from": "sum", "to": "out" } ] }
                """), ["src", "y", "x", "sum", "out"])
    }

    /// Two outputs, one fed through an EQ and one straight from the source: each comes after what feeds it, and
    /// once both are ready they go in file order.
    func testOutputsComeAfterWhatFeedsThem() throws {
        XCTAssertEqual(
            try order(
                """
                { "nodes": [ { "id": "speakers", "type": "output" }, { "id": "eq", "type": "ipod-eq" },
                             { "id": "src", "type": "mixer" }, { "id": "phones", "type": "output" } ],
                  "links": [ { "from": "src", "to": "eq" }, { "from": "eq", "to": "speakers" },
                             { "from": "src", "to": "phones" } ] }
                """), ["src", "eq", "speakers", "phones"])
    }

    /// A loop through three nodes is refused; the message names the cycle once round, from the node first in the
    /// file, along the links.
    func testACycleIsRefusedAndNamed() throws {
        XCTAssertThrowsError(
            try document(
                """
                { "nodes": [ { "id": "q", "type": "ipod-eq" }, { "id": "r", "type": "ipod-eq" },
                             { "id": "p", "type": "mixer", "inputs": 2 },
                             { "id": "src", "type": "mixer" }, { "id": "out", "type": "output" } ],
                  "links": [ { "from": "src", "to": "p:0" }, { "from": "p", "to": "q" }, { "from": "q", "to": "r" },
                             { "from": "r", "to": "p:1" }, { "from": "p", "to": "out" } ] }
                """)
        ) { error in
            let message = "order.json: links: the links form a cycle: q → r → p → q"
            XCTAssertTrue("\(error)".contains(message), "\(error)")
        }
    }

    /// A node linked to itself is the shortest cycle.
    func testANodeFeedingItselfIsACycle() throws {
        XCTAssertThrowsError(
            try document(
                """
                { "nodes": [ { "id": "src", "type": "mixer" }, { "id": "loop", "type": "mixer", "inputs": 2 },
                             { "id": "out", "type": "output" } ],
                  "links": [ { "from": "src", "to": "loop:0" }, { "from": "loop", "to": "loop:1" },
                             { "from": "loop", "to": "out" } ] }
                """)
        ) { error in
            XCTAssertTrue("\(error)".contains("the links form a cycle: loop → loop"), "\(error)")
        }
    }
}
