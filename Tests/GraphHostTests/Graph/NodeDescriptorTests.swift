import Foundation
import XCTest

@testable import GraphHost

/// What the node kinds say of themselves, and the surfaces that read it.
final class NodeDescriptorTests: XCTestCase {
    func testParameterIDsReadTheirTextFormOnce() {
        XCTAssertEqual(ParameterID("band.3"), .band(3))
        XCTAssertEqual(ParameterID("volume.1"), .volume(input: 1))
        XCTAssertEqual(ParameterID("volume"), .volume)
        XCTAssertEqual(ParameterID("preamp"), .preamp)
        XCTAssertEqual(ParameterID("gain_1"), ParameterID(name: "gain_1"))
        XCTAssertEqual(
            ParameterID("band.03"), ParameterID(name: "band.03"), "an index is written without leading zeros")
        for text in ["band.3", "volume", "gain_1", "band.03", "a.b"] {
            XCTAssertEqual(ParameterID(text).description, text)
        }
    }

    /// A configured node describes itself: a mixer its inputs, an EQ its bands with units; `show` prints them.
    func testConfiguredNodesDescribeTheirParameters() throws {
        let file = TestSupport.directory.appendingPathComponent("described.json")
        let text = """
            {"nodes": [{"id": "a", "type": "capture"}, {"id": "b", "type": "capture"},
                       {"id": "mix", "type": "mixer", "inputs": 2}, {"id": "eq", "type": "ipod-eq"}, \
            {"id": "out", "type": "output"}],
             "links": [{"from": "a", "to": "mix:0"}, {"from": "b", "to": "mix:1"}, {"from": "mix", "to": "eq"}, \
            {"from": "eq", "to": "out"}]}
            """
        let doc = try GraphDocument.parse(text: text, file: file)
        let mixer = try XCTUnwrap(doc.node("mix")).definition.descriptor
        XCTAssertEqual(mixer.parameters.map(\.name), ["volume", "volume.0", "volume.1"])
        XCTAssertEqual(mixer.parameter(.volume(input: 1))?.range, 0...16)
        XCTAssertTrue(mixer.traits.contains(.mixesInputs))
        let eq = try XCTUnwrap(doc.node("eq")).definition.descriptor
        XCTAssertEqual(eq.parameter(.band(3))?.unit, "dB")
        XCTAssertEqual(eq.parameter(.band(3))?.label, "250 Hz band")
        XCTAssertEqual(eq.presets.first, "Flat")
        let shown = GraphPrinter.text(doc)
        XCTAssertTrue(
            shown.contains("parameters: volume 0…16 linear, volume.0 0…16 linear, volume.1 0…16 linear"), shown)
        XCTAssertTrue(shown.contains("band.3 -12…12 dB"), shown)
    }

    /// An `lv2` node's parameters carry the units its plugin declares (units:unit), as people write them.
    func testLV2ParametersCarryTheirUnits() throws {
        // x42 balance (x42-plugins): trim is in units:db, the phase switches have no unit.
        let balance = try XCTUnwrap(LV2World.shared.plugin("http://gareus.org/oss/lv2/balance")).descriptor
        XCTAssertEqual(balance.parameter(ParameterID("trim"))?.unit, "dB")
        XCTAssertEqual(balance.parameter(ParameterID("phaseL"))?.unit, "")
        XCTAssertTrue(balance.parameter(ParameterID("trim"))?.rangeText.hasSuffix(" dB") == true)
    }

    /// `set` names a parameter by its text; the node answers with a typed error naming the known ones.
    func testAnUnknownParameterIsATypedErrorListingTheKnownOnes() throws {
        let file = TestSupport.directory.appendingPathComponent("typed-error.json")
        let text = """
            {"nodes": [{"id": "a", "type": "capture"}, {"id": "mix", "type": "mixer", "inputs": 1}, \
            {"id": "out", "type": "output"}],
             "links": [{"from": "a", "to": "mix"}, {"from": "mix", "to": "out"}]}
            """
        let session = try TestSupport.session(document: try GraphDocument.parse(text: text, file: file))
        defer { session.close() }
        let instance = try XCTUnwrap(session.graph.instances["mix"])
        XCTAssertThrowsError(try instance.check(.set(parameter: .volume(input: 4), value: 1))) { error in
            XCTAssertEqual(
                error as? NodeCommandError,
                .unknownParameter(
                    node: "mixer 'mix'", parameter: .volume(input: 4), known: "parameters: volume, volume.0"))
            XCTAssertEqual("\(error)", "mixer 'mix' has no parameter 'volume.4'; parameters: volume, volume.0")
        }
        XCTAssertThrowsError(try instance.check(.set(parameter: .volume, value: 20))) { error in
            XCTAssertEqual("\(error)", "volume 20 is out of range 0…16 (linear gain)")
        }
        let entry = try XCTUnwrap(NodeListing(session).nodes.first { $0.id == "mix" })
        XCTAssertEqual(entry.parameters.map(\.unit), ["linear", "linear"])
        XCTAssertEqual(entry.parameters.map(\.label), ["volume", "input 0 volume"])
        XCTAssertEqual(entry.parameters.first?.maximum, 16)
        let json = entry.json.compact
        for field in [#""label":"input 0 volume""#, #""unit":"linear""#, #""type":"float""#, #""maximum":16"#] {
            XCTAssertTrue(json.contains(field), "\(field) in \(json)")
        }
    }
}
