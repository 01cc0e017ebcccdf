import Foundation
import XCTest

@testable import GraphHost

/// The transition compiler on its own, on small graphs without media or a daemon: which nodes a swap keeps, where it
/// crossfades, the one render order of both graphs, the spillover gates, and the fade's gains. Mixers whose inputs
/// nothing feeds stand in for sources.
final class CompiledTransitionTests: XCTestCase {
    func document(_ json: String) throws -> GraphDocument {
        try GraphDocument.parse(text: json, file: TestSupport.directory.appendingPathComponent("transition.json"))
    }

    /// A source `a` through the EQs `effects`, in order, to the output `out`.
    func chain(_ effects: [String]) throws -> GraphDocument {
        let ids = ["a"] + effects + ["out"]
        let nodes =
            [#"{ "id": "a", "type": "mixer", "inputs": 1 }"#]
            + effects.map { #"{ "id": "\#($0)", "type": "ipod-eq" }"# } + [#"{ "id": "out", "type": "output" }"#]
        let links = zip(ids, ids.dropFirst()).map { #"{ "from": "\#($0)", "to": "\#($1)" }"# }
        let nodeList = nodes.joined(separator: ", ")
        let linkList = links.joined(separator: ", ")
        return try document(#"{ "nodes": [ \#(nodeList) ], "links": [ \#(linkList) ] }"#)
    }

    /// "key = role(inputs)", an input written as its key (":bus" when not 0) or "-" for silence.
    func describe(_ node: CompiledTransition.UnionNode) -> String {
        let role: String
        switch node.role {
        case .old(let id): role = "old \(id)"
        case .new(let id): role = "new \(id)"
        case .crossfade: role = "crossfade"
        case .spill: role = "spill"
        case .gate: role = "gate"
        }
        let inputs = node.inputs.map { $0.map { $0.bus == 0 ? $0.key : "\($0.key):\($0.bus)" } ?? "-" }
        return "\(node.key) = \(role)(\(inputs.joined(separator: ", ")))"
    }

    func union(
        _ old: GraphDocument, _ new: GraphDocument, kept: Set<String>,
        spillover: Bool = false
    ) throws -> (nodes: [String], outputs: [String]) {
        let union = CompiledTransition.union(old: old, new: new, kept: kept, spillover: spillover)
        let result = try XCTUnwrap(union, "no order for the union")
        return (result.nodes.map(describe), result.outputs.map { $0?.key ?? "-" })
    }

    /// An EQ put in front of a kept EQ: the kept one hears its input cross from the source to the new EQ; the output
    /// already plays the kept EQ, so it does not fade, and nothing of the old graph is left to run.
    func testAKeptNodeWhoseInputChangesHearsACrossfade() throws {
        let (nodes, outputs) = try union(try chain(["eq"]), try chain(["fx", "eq"]), kept: ["a", "eq"])
        XCTAssertEqual(
            nodes,
            [
                "a = new a(-)", "fx = new fx(a)", "crossfade:eq:0 = crossfade(a, fx)",
                "eq = new eq(crossfade:eq:0)",
            ])
        XCTAssertEqual(outputs, ["eq"])
    }

    /// Nothing kept: both graphs run side by side (the old one's nodes under "old:"), the new one first, and the output
    /// crosses from the old graph's last node to the new one's.
    func testNothingKeptRunsBothGraphsAndFadesTheOutput() throws {
        let (nodes, outputs) = try union(try chain(["eq"]), try chain(["eq"]), kept: [])
        XCTAssertEqual(
            nodes,
            [
                "a = new a(-)", "eq = new eq(a)", "old:a = old a(-)", "old:eq = old eq(old:a)",
                "crossfade:output:out = crossfade(old:eq, eq)",
            ])
        XCTAssertEqual(outputs, ["crossfade:output:out"])
    }

    /// The same graph again keeps everything and needs no crossfade at all.
    func testKeepingEverythingNeedsNoCrossfade() throws {
        let (nodes, outputs) = try union(try chain(["x", "y"]), try chain(["x", "y"]), kept: ["a", "x", "y"])
        XCTAssertEqual(nodes, ["a = new a(-)", "x = new x(a)", "y = new y(x)"])
        XCTAssertEqual(outputs, ["y"])
    }

    /// Two kept EQs that change places would each have to run before the other: there is no order, and the swap
    /// must build one of them afresh.
    func testKeptNodesInOppositeOrdersHaveNoUnion() throws {
        let (before, after) = (try chain(["x", "y"]), try chain(["y", "x"]))
        XCTAssertNil(CompiledTransition.union(old: before, new: after, kept: ["a", "x", "y"]))
        XCTAssertNotNil(CompiledTransition.union(old: before, new: after, kept: ["a", "x"]))
    }

    /// Spillover: the old effect stops hearing the kept source (a gate fades its input out) while its tail rings out
    /// at the output crossfade, which spills; an old side that is no tail (the kept source itself) is gated too.
    func testSpilloverGatesWhatFeedsTheOldEffects() throws {
        let (nodes, outputs) = try union(try chain(["rev"]), try chain(["dry"]), kept: ["a"], spillover: true)
        XCTAssertEqual(
            nodes,
            [
                "a = new a(-)", "dry = new dry(a)", "gate:old:rev:0 = gate(a, -)",
                "old:rev = old rev(gate:old:rev:0)", "crossfade:output:out = spill(old:rev, dry)",
            ])
        XCTAssertEqual(outputs, ["crossfade:output:out"])
        let (direct, _) = try union(try chain([]), try chain(["dry"]), kept: ["a"], spillover: true)
        XCTAssertEqual(
            direct,
            [
                "a = new a(-)", "dry = new dry(a)", "gate:crossfade:output:out:0 = gate(a, -)",
                "crossfade:output:out = spill(gate:crossfade:output:out:0, dry)",
            ])
    }

    /// The gains: zeros through the pre-roll, then a raised cosine from 0 to exactly 1.
    func testFadeGainsHoldThroughThePrerollThenRiseToOne() {
        let gains = CompiledTransition.fadeGains(frames: 4, preroll: 2)
        let expected: [Float] = [0, 0, 0, 0.146_446_6, 0.5, 0.853_553_4, 1]
        XCTAssertEqual(gains.count, expected.count)
        for (gain, value) in zip(gains, expected) { XCTAssertEqual(gain, value, accuracy: 1e-6, "\(gains)") }
    }

    /// Built from two compiled graphs: one step per union node, the kept nodes' kernels shared with the old graph,
    /// a crossfade kernel where the union has one, the new graph's plan to go on with, and a clock over the fade.
    func testATransitionPlanRunsTheUnionOnTheGraphsKernels() throws {
        let old = try CompiledGraph(try chain(["eq"]))
        let new = try CompiledGraph(try chain(["fx", "eq"]), keeping: old, keep: ["a", "eq"])
        defer {
            old.release(new.keptIDs)
            old.close()
            new.close()
        }
        XCTAssertEqual(new.keptIDs, ["a", "eq"])
        let compiled = CompiledTransition(from: old, to: new, fadeFrames: 64)
        let transition = compiled.transition.pointee
        let steps = Array(transition.plan.steps)
        let ids = steps.map { new.nodeID(kernelAddress: Int(bitPattern: $0.kernel.address)) }
        XCTAssertEqual(ids, ["a", "fx", nil, "eq"])
        guard steps.count == 4 else { return }
        XCTAssertEqual(steps[0].kernel.address, old.instances["a"]?.kernel.address, "the source was not kept")
        XCTAssertEqual(steps[3].kernel.address, old.instances["eq"]?.kernel.address, "the EQ was not kept")
        guard case .crossfade = steps[2].kernel else { return XCTFail("step 2 is no crossfade") }
        XCTAssertEqual(steps[2].inputs[0], steps[0].output, "the crossfade's old side is not the source")
        XCTAssertEqual(steps[2].inputs[1], steps[1].output, "the crossfade's new side is not the new EQ")
        XCTAssertEqual(steps[3].inputs[0], steps[2].output)
        XCTAssertEqual(transition.plan.outputBus, steps[3].output)
        XCTAssertEqual(transition.next.steps.baseAddress, new.plan.steps.baseAddress)
        XCTAssertEqual(transition.clock.pointee.frames, 64)
    }
}
