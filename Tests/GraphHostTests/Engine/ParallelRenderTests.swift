import AllocationCounter
import Foundation
import XCTest

@testable import GraphHost

/// Rendering on several threads (`--threads`): a plan records what each step waits for (its inputs' producers); a bus
/// is reused only where that adds no wait; a plan whose steps can only run one after another has no schedule; two
/// threads render exactly the samples one renders, across parameter changes and a crossfaded swap; the shared
/// render path allocates nothing on any thread.
final class ParallelRenderTests: XCTestCase {
    typealias Source = PlanStepSource.Source

    func testAChainHasNoScheduleAndBranchesHaveOne() {
        compile([([], 1), ([Source(step: 0)], 1), ([Source(step: 1)], 1)], outputs: [Source(step: 2)]) { plan, _ in
            XCTAssertNil(plan.schedule, "a chain got a schedule")
        }
        // Two sources, an effect on each, a mixer of both.
        let branches: [(inputs: [Source?], outputs: Int)] = [
            ([], 1), ([], 1), ([Source(step: 0)], 1), ([Source(step: 1)], 1), ([Source(step: 2), Source(step: 3)], 1),
        ]
        compile(branches, outputs: [Source(step: 4)]) { plan, _ in
            XCTAssertNotNil(plan.schedule, "independent branches got no schedule")
            XCTAssertEqual(plan.predecessors[4], [2, 3])
            XCTAssertEqual(plan.predecessors[2], [0])
            XCTAssertEqual(plan.predecessors[1], [])
        }
    }

    /// A bus is reused only by a step that waits for everything that used it: in a chain the third step writes the
    /// first one's bus again (it waits for both users); a second source beside a chain does not (it would have to wait
    /// for the chain, and nothing could render at once), so it writes a bus of its own.
    func testABusIsReusedOnlyWhereItAddsNoWait() {
        compile([([], 1), ([Source(step: 0)], 1), ([Source(step: 1)], 1)], outputs: [Source(step: 2)]) { plan, _ in
            let rendered = Array(plan.plan.steps)
            XCTAssertEqual(rendered[2].output, rendered[0].output, "the chain's first bus was not reused")
            XCTAssertEqual(plan.predecessors, [[], [0], [1]])
        }
        let beside: [(inputs: [Source?], outputs: Int)] = [
            ([], 1), ([Source(step: 0)], 1), ([], 1), ([Source(step: 1), Source(step: 2)], 1),
        ]
        compile(beside, outputs: [Source(step: 3)]) { plan, _ in
            let rendered = Array(plan.plan.steps)
            XCTAssertFalse(
                [rendered[0].output, rendered[1].output].contains(rendered[2].output), "the second source reused a bus")
            XCTAssertEqual(plan.predecessors[2], [])
            XCTAssertNotNil(plan.schedule, "the second source can render beside the chain")
        }
    }

    /// Two branches of effects (iPod EQs, a peq and an LV2 plugin with state of its own) from two sources into a
    /// mixer: rendered with every slice shared by two threads, in slices of varied sizes, with a preset change and a
    /// crossfaded `load` of a graph that keeps one branch, the samples equal one thread's exactly.
    func testTwoThreadsRenderExactlyWhatOneRenders() throws {
        let first = try Self.branchGraph(detune: true)
        let second = try Self.branchGraph(detune: false)
        let events = [
            TimedCommand(frame: 24000, request: try Command.parse("preset a1 Dance")),
            TimedCommand(frame: 48000, request: try Command.parse("load \(second)")),
        ]
        let sizes = [256, 1024, 64, 999, 1, 512]
        func render(threads: Int) throws -> (samples: [Float], workerSteps: Int) {
            let session = GraphSession(
                graph: try CompiledGraph(try GraphDocument.load(path: first)), threads: threads, shareAboveNanos: 0)
            defer { session.close() }
            var samples: [Float] = []
            _ = try OfflineRenderer(session: session, events: events).render(
                durationFrames: 48000 * 2 + 12345, frameSizes: sizes
            ) { samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: $1 * 2)) }
            return (samples, session.workerSteps)
        }
        let one = try render(threads: 1)
        let two = try render(threads: 2)
        XCTAssertEqual(one.workerSteps, 0)
        XCTAssertGreaterThan(two.workerSteps, 100, "the worker rendered no share of the slices")
        XCTAssertEqual(one.samples.count, two.samples.count)
        XCTAssertGreaterThan(TestSupport.peak(one.samples), 0.05, "the graph renders silence")
        let differing = zip(one.samples, two.samples).enumerated().first { $0.element.0 != $0.element.1 }
        XCTAssertNil(differing, "two threads differ from one at sample \(differing?.offset ?? -1)")
    }

    /// Two sources, each through a branch of effects (iPod EQs and a peq; mda Detune, an LV2 plugin with state of its
    /// own, or another EQ), into a mixer.
    static func branchGraph(detune: Bool) throws -> String {
        let low = try TestSupport.tones([220], seconds: 3)
        let high = try TestSupport.tones([1760], seconds: 3)
        return TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2, "maxFrames": 1024 },
              "nodes": [ { "id": "a", "type": "stream", "url": "\(low)" },
                         { "id": "b", "type": "stream", "url": "\(high)" },
                         { "id": "a1", "type": "ipod-eq", "preset": "Rock" },
                         { "id": "a2", "type": "ipod-eq", "preset": "Bass Booster" },
                         { "id": "a3", "type": "peq", "bands": [ { "type": "peaking", "frequency": 300, \
            "gain": 6, "q": 1 } ] },
                         { "id": "b1", "type": "ipod-eq", "preset": "Jazz" },
                         { "id": "b2", "type": "\(detune ? "lv2" : "ipod-eq")"\
            \(detune ? ", \"uri\": \"http://drobilla.net/plugins/mda/Detune\"" : ", \"preset\": \"Pop\"") },
                         { "id": "mix", "type": "mixer", "inputs": 2, "volumes": [0.5, 0.5] },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "a", "to": "a1" }, { "from": "a1", "to": "a2" }, { "from": "a2", "to": "a3" },
                         { "from": "a3", "to": "mix:0" }, { "from": "b", "to": "b1" }, { "from": "b1", "to": "b2" },
                         { "from": "b2", "to": "mix:1" }, { "from": "mix", "to": "out" } ] }
            """)
    }

    /// A shared slice allocates nothing, neither on the rendering thread nor on the worker (counted on both by the
    /// allocator interposer), and the worker takes part in it.
    func testTheSharedRenderPathMakesNoAllocations() throws {
        let path = try Self.branchGraph(detune: true)
        let session = GraphSession(
            graph: try CompiledGraph(try GraphDocument.load(path: path)), threads: 2, shareAboveNanos: 0,
            workerSetUp: { gh_allocation_counter_probe(1) })
        defer { session.close() }
        XCTAssertNotNil(session.graph.compiled.schedule, "the branches render at once")
        session.graph.start()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 8192)
        defer { buffer.deallocate() }
        let streams = session.graph.streams
        let workerBefore = gh_allocation_counter_probe_total()
        var counted = 0
        for k in 0..<200 {
            let frames = [64, 4096, 8192, 1, 999][k % 5]
            for stream in streams { while !stream.canRender(frames: frames) { stream.wakeup.waitForData() } }
            gh_allocation_counter_begin()
            session.render(frames: frames, interleaved: buffer)
            counted += gh_allocation_counter_end()
            streams.forEach { $0.wakeup.signalSpace() }
        }
        XCTAssertEqual(counted, 0, "the rendering thread allocated")
        if gh_allocation_counter_available() != 0 {
            XCTAssertEqual(gh_allocation_counter_probe_total() - workerBefore, 0, "the worker allocated")
        }
        XCTAssertGreaterThan(session.workerSteps, 0, "the worker rendered nothing")
    }
}
