import Foundation
import XCTest

@testable import GraphHost

/// The plan compiler on its own: steps stay in the order given and read their producers' buses; a bus is reused
/// only once its last reader has run (never as a step's own input); unlinked inputs and outputs get the silent bus;
/// extra outputs get buses of their own. The steps' kernels are crossfades that never run: they only tell the
/// steps apart.
final class CompiledPlanTests: XCTestCase {
    typealias Source = PlanStepSource.Source
    /// Each step's input sources and number of outputs.
    typealias Steps = [(inputs: [Source?], outputs: Int)]

    func kernel(_ step: RenderStep) -> UnsafeMutablePointer<CrossfadeKernel>? {
        if case .crossfade(let kernel) = step.kernel { return kernel }
        return nil
    }

    /// A chain of four: the first bus is free again once the second step has read it, so the third writes there;
    /// two buses and the silent one suffice.
    func testAChainReusesBusesOnceTheirReaderHasRun() {
        let chain: Steps = [([], 1), ([Source(step: 0)], 1), ([Source(step: 1)], 1), ([Source(step: 2)], 1)]
        compile(chain, outputs: [Source(step: 3)]) { compiled, kernels in
            let steps = Array(compiled.plan.steps)
            XCTAssertEqual(steps.map { kernel($0) }, kernels.map(Optional.some), "the steps are not in the order given")
            XCTAssertEqual(compiled.busCount, 3)
            for p in 1..<4 {
                XCTAssertEqual(steps[p].inputCount, 1)
                XCTAssertEqual(steps[p].inputs[0], steps[p - 1].output, "step \(p) does not read its producer")
                XCTAssertNotEqual(steps[p].output, steps[p].inputs[0], "step \(p) writes the bus it reads")
            }
            XCTAssertEqual(steps[2].output, steps[0].output, "the first bus was not reused")
            XCTAssertEqual(steps[3].output, steps[1].output, "the second bus was not reused")
            XCTAssertEqual(compiled.plan.outputCount, 1)
            XCTAssertEqual(compiled.plan.outputBus, steps[3].output)
        }
    }

    /// A source read by two steps keeps its bus until the later one has run: a mixer of the source and an effect of
    /// it reads two live buses and writes a third.
    func testAFannedOutBusLivesUntilItsLastReader() {
        let fan: Steps = [([], 1), ([Source(step: 0)], 1), ([Source(step: 0), Source(step: 1)], 1)]
        compile(fan, outputs: [Source(step: 2)]) { compiled, _ in
            let steps = Array(compiled.plan.steps)
            XCTAssertEqual(compiled.busCount, 4)
            XCTAssertEqual(steps[2].inputCount, 2)
            XCTAssertEqual(steps[2].inputs[0], steps[0].output)
            XCTAssertEqual(steps[2].inputs[1], steps[1].output)
            let written = Set([steps[0].output, steps[1].output, steps[2].output])
            XCTAssertEqual(written.count, 3, "a bus was reused while still read")
        }
    }

    /// A step with two outputs (an LV2 node with one linked by port name) writes the second to a bus of its own;
    /// an unlinked input and an output nothing feeds read the silent bus; a step with no outputs writes none; a bus
    /// that is played stays to the end of the plan.
    func testExtraOutputsSilenceAndPlayedBuses() {
        compile(
            [([], 2), ([nil, Source(step: 0, bus: 1)], 1), ([Source(step: 1)], 0)],
            outputs: [Source(step: 1), nil, Source(step: 0)]
        ) { compiled, _ in
            let steps = Array(compiled.plan.steps)
            let plan = compiled.plan
            guard let extra = steps[0].extraOutputs else { return XCTFail("the step with two outputs has no second") }
            XCTAssertNotEqual(extra[0], steps[0].output)
            XCTAssertEqual(steps[1].inputs[1], extra[0])
            XCTAssertNil(steps[1].extraOutputs)
            XCTAssertNil(steps[2].output)
            XCTAssertEqual(plan.outputCount, 3)
            XCTAssertEqual(plan.outputBuses[0], steps[1].output)
            XCTAssertEqual(plan.outputBuses[2], steps[0].output)
            XCTAssertNotEqual(steps[1].output, steps[0].output, "a played bus was reused")
            let silence = plan.outputBuses[1]
            XCTAssertEqual(steps[1].inputs[0], silence)
            XCTAssertFalse([steps[0].output, extra[0], steps[1].output].contains(silence))
            let silent = UnsafeBufferPointer(start: silence, count: plan.channels * plan.maxFrames)
            XCTAssertTrue(silent.allSatisfy { $0 == 0 })
            XCTAssertEqual(compiled.busCount, 4)
        }
    }

    /// Compiled from a graph file, the plan holds one step per node that is not an output, in the graph's render
    /// order, each found again by its kernel, and plays what feeds the output.
    func testAGraphCompilesToItsRenderOrder() throws {
        let document = try GraphDocument.parse(
            text: """
                { "nodes": [ { "id": "out", "type": "output" }, { "id": "eq", "type": "ipod-eq" },
                             { "id": "mix", "type": "mixer", "inputs": 2 },
                             { "id": "b", "type": "mixer" }, { "id": "a", "type": "mixer" } ],
                  "links": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:1" }, \
                { "from": "mix", "to": "eq" },
                             { "from": "eq", "to": "out" } ] }
                """, file: TestSupport.directory.appendingPathComponent("plan.json"))
        let graph = try CompiledGraph(document)
        defer { graph.close() }
        let steps = Array(graph.plan.steps)
        let ids = steps.map { graph.nodeID(kernelAddress: Int(bitPattern: $0.kernel.address)) }
        XCTAssertEqual(ids, ["b", "a", "mix", "eq"])
        guard steps.count == 4 else { return }
        XCTAssertEqual(steps[2].inputs[0], steps[1].output, "mix:0 does not read a")
        XCTAssertEqual(steps[2].inputs[1], steps[0].output, "mix:1 does not read b")
        XCTAssertEqual(steps[3].inputs[0], steps[2].output)
        XCTAssertEqual(graph.plan.outputBus, steps[3].output)
    }
}
