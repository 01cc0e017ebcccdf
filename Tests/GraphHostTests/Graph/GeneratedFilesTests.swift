import Foundation
import GraphHost
import XCTest

/// Graphs/graph.schema.json and the node settings tables of docs/graph-format.md are generated from the node
/// descriptors, and the page's files in the binary from Page/: the committed copies must be current.
final class GeneratedFilesTests: XCTestCase {
    func testCommittedSchemaIsTheGeneratedOne() throws {
        let path = TestSupport.root.appendingPathComponent("Graphs/graph.schema.json").path
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(
            committed == GraphSchema.text,
            "\(path) differs from the schema the descriptors give; "
                + "regenerate it: swift build -c release && .build/release/graphhost schema > Graphs/graph.schema.json"
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
                + "regenerate them: swift build -c release && "
                + ".build/release/graphhost schema --update-doc docs/graph-format.md"
        )
    }

    /// The page the binary serves is the page in Sources/GraphHost/Control/Web/Page/.
    func testTheEmbeddedPageIsCurrent() throws {
        let script = TestSupport.root.appendingPathComponent("scripts/embed-page").path
        let result = try TestSupport.execute(URL(fileURLWithPath: "/usr/bin/python3"), [script, "--check"])
        XCTAssertEqual(result.status, 0, String(decoding: result.err, as: UTF8.self))
    }
}
