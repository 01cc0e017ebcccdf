import Foundation
import GraphHost
import XCTest

/// Graphs/graph.schema.json and the node settings tables of docs/graph-format.md are generated from the node
/// descriptors: the committed copies must be what the descriptors give now.
final class GeneratedFilesTests: XCTestCase {
    func testCommittedSchemaIsTheGeneratedOne() throws {
        let path = TestSupport.root.appendingPathComponent("Graphs/graph.schema.json").path
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(
            committed == GraphSchema.text,
            "\(path) differs from the schema the descriptors give; "
                + "regenerate it: swift build && .build/debug/graphhost schema > Graphs/graph.schema.json"
        )
    }

    func testCommittedSettingsTablesAreTheGeneratedOnes() throws {
        let path = TestSupport.root.appendingPathComponent("docs/graph-format.md").path
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        let generated = try XCTUnwrap(
            NodeSettingsTables.replacingSection(in: committed), "\(path) has no marked node settings section")
        XCTAssertTrue(committed.contains("**`lv2`**"), "the node settings section lists no lv2 settings")
        XCTAssertTrue(
            committed == generated,
            "the node settings tables of \(path) differ from what the descriptors give; "
                + "regenerate them: swift build && .build/debug/graphhost schema --update-doc docs/graph-format.md"
        )
    }
}
