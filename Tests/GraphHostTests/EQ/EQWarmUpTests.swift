import Atomics
import XCTest

@testable import GraphHost
@testable import GraphHostCore

/// How the iPod EQ kernel warms a new filter bank: on the control side from the history ring, or in the render world,
/// at once offline and spread over the following calls live.
final class EQWarmUpTests: XCTestCase {
    static let slice = 64, rate = 48000

    /// Stereo input: (seeded) noise plus a 40 Hz tone (the band that rings longest), planar, `frames` per channel.
    static func input(frames: Int) -> [Float] {
        var seed: UInt32 = 12345
        return (0..<2 * frames).map { i in
            let f = i % frames
            let c = i / frames
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return 0.3 * sinf(2 * .pi * 40 * Float(f) / Float(rate) + Float(c)) + 0.2
                * (Float(seed >> 8) / Float(1 << 23) - 1)
        }
    }

    static func coefficients(_ preset: String) -> ParallelEQCoefficients {
        IPodEQSettings(gains: IPodEQPreset.named(preset)!.gains, preamp: 0).coefficients(sampleRate: rate)
    }

    /// A kernel with its own state and workspace; `close` frees them.
    final class Kernel {
        let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
        let workspace = IPodEQWorkspace.allocate(channels: 2, maxFrames: 4096)
        var kernel: IPodEQKernel
        var output: [Float] = []

        init(preset: String, pace: Int) {
            state.initialize(repeating: SIMD16<Float>(), count: 2 * IPodEQKernel.stateVectors)
            kernel = IPodEQKernel(
                state: state, coefficients: EQWarmUpTests.coefficients(preset),
                rampSamples: Int(IPodEQKernel.rampSeconds * Double(EQWarmUpTests.rate)), workspace: workspace)
            kernel.warmPace = pace
        }

        /// Renders one slice of `input` starting at frame `at` (planar, `total` frames per channel).
        func process(_ input: [Float], at: Int, total: Int) {
            let n = EQWarmUpTests.slice
            var slice = (0..<2 * n).map { input[($0 / n) * total + at + $0 % n] }
            slice.withUnsafeMutableBufferPointer {
                kernel.process(
                    input: $0.baseAddress!, output: $0.baseAddress!, channelStride: n, channels: 2, frames: n)
            }
            output += slice
        }

        deinit {
            state.deallocate()
            workspace.deallocate()
        }
    }

    /// Live, a preset change costs each call at most `liveWarmPace` frames of warm-up per frame, the old bank plays
    /// on untouched meanwhile, the crossfade begins once the new bank is level with the input (half the history
    /// later), and from there the output is what warming at once at that moment gives, within −100 dB.
    func testALiveWarmUpIsSpreadOverTheCallsAfterTheChange() {
        let slices = 600
        let total = slices * Self.slice
        let input = Self.input(frames: total)
        let live = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        let unchanged = Kernel(preset: "Rock", pace: 0)
        let changeAt = 200
        var caughtUpAt: Int?
        var mostWarmed = 0
        for s in 0..<slices {
            if s == changeAt { live.kernel.apply(.coefficients(Self.coefficients("Bass Booster"))) }
            let behind = live.kernel.warming ? live.kernel.warmBehind : 0
            live.process(input, at: s * Self.slice, total: total)
            unchanged.process(input, at: s * Self.slice, total: total)
            if s >= changeAt && caughtUpAt == nil {
                if live.kernel.warming {
                    XCTAssertLessThanOrEqual(live.kernel.warmBehind, IPodEQWorkspace.historyFrames)
                    mostWarmed = max(mostWarmed, behind - live.kernel.warmBehind + Self.slice)
                } else {
                    XCTAssertTrue(live.kernel.fading)
                    caughtUpAt = s
                }
            }
        }
        XCTAssertEqual(mostWarmed, IPodEQKernel.liveWarmPace * Self.slice)
        // 16384 frames of history, caught up by 128 frames a call (192 warmed, 64 new).
        XCTAssertEqual(caughtUpAt, changeAt + IPodEQWorkspace.historyFrames / (2 * Self.slice) - 1)
        guard let caughtUpAt else { return }
        // Until the crossfade the old bank alone is heard, sample for sample.
        let fadeStart = caughtUpAt * Self.slice
        XCTAssertEqual(Array(live.output[0..<(2 * fadeStart)]), Array(unchanged.output[0..<(2 * fadeStart)]))
        // Warming at once when the live bank caught up gives the same output from there on.
        let atOnce = Kernel(preset: "Rock", pace: 0)
        for s in 0..<slices {
            if s == caughtUpAt { atOnce.kernel.apply(.coefficients(Self.coefficients("Bass Booster"))) }
            atOnce.process(input, at: s * Self.slice, total: total)
        }
        let difference = zip(live.output, atOnce.output).map { abs($0 - $1) }.max()!
        print("live warm-up vs warming at once when it caught up: max abs difference \(difference)")
        XCTAssertLessThan(difference, 1e-4)
        XCTAssertGreaterThan(
            zip(live.output, unchanged.output).suffix(2 * Self.slice * 100).map { abs($0 - $1) }.max()!, 0.01,
            "the change was not heard")
    }

    /// Changes that arrive during a warm-up or crossfade wait, the newest wins, and a warm-up that starts in the middle
    /// of a call (when a crossfade ends there) loses no history: the end is the newest preset's steady output.
    func testChangesDuringAWarmUpEndOnTheNewest() {
        let slices = 1200
        let total = slices * Self.slice
        let input = Self.input(frames: total)
        let live = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        let steady = Kernel(preset: "Treble Booster", pace: 0)
        for s in 0..<slices {
            if s == 10 { live.kernel.apply(.coefficients(Self.coefficients("Bass Booster"))) }
            if s == 20 { live.kernel.apply(.coefficients(Self.coefficients("Vocal Booster"))) }
            if s == 30 { live.kernel.apply(.coefficients(Self.coefficients("Treble Booster"))) }
            live.process(input, at: s * Self.slice, total: total)
            steady.process(input, at: s * Self.slice, total: total)
            if live.kernel.warming { XCTAssertLessThanOrEqual(live.kernel.warmBehind, IPodEQWorkspace.historyFrames) }
        }
        XCTAssertFalse(live.kernel.warming || live.kernel.fading || live.kernel.hasPending)
        XCTAssertEqual(live.kernel.current, Self.coefficients("Treble Booster"))
        let difference = zip(live.output, steady.output).suffix(2 * Self.slice * 100).map { abs($0 - $1) }.max()!
        XCTAssertLessThan(difference, 1e-4)
    }

    /// A bank warmed on the control side needs only the frames since; with none since, the output is the one of
    /// warming at once in the callback, sample for sample, and with a few since it differs below −80 dB.
    func testAControlWarmedChangeMatchesWarmingAtOnce() {
        let slices = 400
        let total = slices * Self.slice
        let changeAt = 200
        let input = Self.input(frames: total)
        for framesSince in [0, 2 * Self.slice] {
            let warmed = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
            let atOnce = Kernel(preset: "Rock", pace: 0)
            let bass = Self.coefficients("Bass Booster")
            var ticket: (slot: Int, through: Int)?
            for s in 0..<slices {
                if s == changeAt - framesSince / Self.slice { ticket = warmed.workspace.warm(bass) }
                if s == changeAt {
                    XCTAssertEqual(warmed.workspace.slots.inUse.load(ordering: .relaxed), 1 << ticket!.slot)
                    warmed.kernel.apply(.warmed(bass, through: ticket!.through, slot: ticket!.slot))
                    XCTAssertEqual(
                        warmed.workspace.slots.inUse.load(ordering: .relaxed), 0, "the slot was not given back")
                    XCTAssertEqual(warmed.kernel.warming ? warmed.kernel.warmBehind : 0, framesSince)
                    atOnce.kernel.apply(.coefficients(bass))
                }
                warmed.process(input, at: s * Self.slice, total: total)
                atOnce.process(input, at: s * Self.slice, total: total)
                if s == changeAt { XCTAssertTrue(warmed.kernel.fading) }
            }
            if framesSince == 0 {
                XCTAssertEqual(warmed.output, atOnce.output)
            } else {
                XCTAssertLessThan(zip(warmed.output, atOnce.output).map { abs($0 - $1) }.max()!, 1e-4)
            }
        }
    }

    /// A warmed state older than the history is not used (the bank warms from rest); a warmed change replaced
    /// before it starts gives its slot back; when every slot waits, the control side declines.
    func testWarmedSlotsAreGivenBackAndStaleStatesRefused() {
        let slices = 700
        let total = slices * Self.slice
        let input = Self.input(frames: total)
        let k = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        let bass = Self.coefficients("Bass Booster")
        let vocal = Self.coefficients("Vocal Booster")
        let stale = k.workspace.warm(bass)!
        for s in 0..<300 { k.process(input, at: s * Self.slice, total: total) }
        k.kernel.apply(.warmed(bass, through: stale.through, slot: stale.slot))
        XCTAssertTrue(k.kernel.warming)
        XCTAssertEqual(k.kernel.warmBehind, IPodEQWorkspace.historyFrames)
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 0)
        // Two more while that one warms: the first waits, the second replaces it.
        let first = k.workspace.warm(vocal)!
        let second = k.workspace.warm(bass)!
        XCTAssertNotEqual(first.slot, second.slot)
        k.kernel.apply(.warmed(vocal, through: first.through, slot: first.slot))
        k.kernel.apply(.warmed(bass, through: second.through, slot: second.slot))
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 1 << second.slot)
        for s in 300..<slices { k.process(input, at: s * Self.slice, total: total) }
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 0)
        XCTAssertEqual(k.kernel.current, bass)
        let held = (0..<IPodEQWorkspace.warmedSlots).map { _ in k.workspace.warm(vocal) }
        XCTAssertFalse(held.contains { $0 == nil })
        XCTAssertNil(k.workspace.warm(vocal))
    }

    /// A control-side warm is refused once the render world has begun a write that reaches the oldest frame it read,
    /// before that write is published, and accepted while every write stays clear of it.
    func testAWriteUnderWayRefusesTheWarm() {
        let slices = 300
        let total = slices * Self.slice
        let input = Self.input(frames: total)
        let k = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        for s in 0..<slices { k.process(input, at: s * Self.slice, total: total) }
        let through = k.workspace.history.remembered.load(ordering: .relaxed)
        XCTAssertEqual(k.workspace.history.writing.load(ordering: .relaxed), through, "a finished write is published")
        let slack = IPodEQWorkspace.historyCapacity - IPodEQWorkspace.historyFrames
        k.workspace.history.writing.store(through + slack, ordering: .relaxed)
        let clear = k.workspace.warm(Self.coefficients("Bass Booster"))
        XCTAssertEqual(clear?.through, through)
        if let clear { k.workspace.slots.release(slot: clear.slot) }
        k.workspace.history.writing.store(through + slack + 1, ordering: .relaxed)
        XCTAssertNil(
            k.workspace.warm(Self.coefficients("Bass Booster")), "a write under way over the oldest frame read")
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 0)
    }

    /// A restart (an LV2 plugin's activate) gives back the slot of a change that waited, drops the changes under way,
    /// and keeps counting history, so a warm made before it is still checked against what was written since.
    func testARestartGivesBackItsSlotAndKeepsTheHistoryCount() {
        let slices = 300
        let total = slices * Self.slice
        let input = Self.input(frames: total)
        let k = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        for s in 0..<200 { k.process(input, at: s * Self.slice, total: total) }
        k.kernel.apply(.coefficients(Self.coefficients("Vocal Booster")))
        let waiting = k.workspace.warm(Self.coefficients("Bass Booster"))!
        k.kernel.apply(.warmed(Self.coefficients("Bass Booster"), through: waiting.through, slot: waiting.slot))
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 1 << waiting.slot)
        let remembered = k.kernel.remembered
        k.kernel.restart(coefficients: Self.coefficients("Treble Booster"))
        XCTAssertEqual(
            k.workspace.slots.inUse.load(ordering: .relaxed), 0, "the waiting change's slot was not given back")
        XCTAssertEqual(k.kernel.remembered, remembered)
        XCTAssertFalse(k.kernel.warming || k.kernel.fading || k.kernel.hasPending)
        XCTAssertEqual(k.kernel.current, Self.coefficients("Treble Booster"))
        XCTAssertEqual(k.kernel.warmPace, IPodEQKernel.liveWarmPace)
        for s in 200..<slices { k.process(input, at: s * Self.slice, total: total) }
        XCTAssertEqual(k.workspace.history.remembered.load(ordering: .relaxed), remembered + 100 * Self.slice)
    }

    /// The control side warms while a render thread runs flat out beside it, faster than real time (a warm the ring
    /// outran is declined and sent unwarmed): every change lands, every slot comes back, the output stays finite.
    func testControlWarmingBesideARenderThread() {
        let k = Kernel(preset: "Rock", pace: IPodEQKernel.liveWarmPace)
        nonisolated(unsafe) let queue = ControlQueue.allocate(capacity: 64)
        defer { queue.deallocate() }
        nonisolated(unsafe) let kernel = UnsafeMutablePointer<IPodEQKernel>.allocate(capacity: 1)
        kernel.initialize(to: k.kernel)
        defer { kernel.deallocate() }
        let stop = ManagedAtomic(false)
        let finite = ManagedAtomic(true)
        let ended = DispatchSemaphore(value: 0)
        let render = Thread {
            defer { ended.signal() }
            let n = Self.slice
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
            defer { buffer.deallocate() }
            var phase: Float = 0
            while !stop.load(ordering: .relaxed) || queue.index.readable() > 0 {
                while let message = queue.peek() {
                    if case .kernel(.ipodEQ(let target, let change)) = message { target.pointee.apply(change) }
                    queue.dropFirst()
                }
                for f in 0..<n {
                    phase += 0.01
                    buffer[f] = 0.5 * sinf(phase)
                    buffer[n + f] = 0.5 * cosf(phase)
                }
                kernel.pointee.process(input: buffer, output: buffer, channelStride: n, channels: 2, frames: n)
                if !(0..<2 * n).allSatisfy({ buffer[$0].isFinite && abs(buffer[$0]) < 4 }) {
                    finite.store(false, ordering: .relaxed)
                }
            }
        }
        render.start()
        let presets = ["Bass Booster", "Vocal Booster", "Treble Booster", "Rock"]
        var warmed = 0
        var declined = 0
        for i in 0..<60 {
            let c = Self.coefficients(presets[i % presets.count])
            let message: ControlMessage
            if let ticket = k.workspace.warm(c) {
                warmed += 1
                message = .kernel(.ipodEQ(kernel, .warmed(c, through: ticket.through, slot: ticket.slot)))
            } else {
                declined += 1
                message = .kernel(.ipodEQ(kernel, .coefficients(c)))
            }
            XCTAssertTrue(queue.push(message), "the queue holds every change")
        }
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(ended.wait(timeout: .now() + 60), .success)
        print("control warm beside a free-running render thread: \(warmed) warmed, \(declined) declined")
        XCTAssertGreaterThan(warmed, 0, "no change went out warmed")
        XCTAssertTrue(finite.load(ordering: .relaxed))
        // Let the last change finish, then nothing waits.
        let n = Self.slice
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0, count: 2 * n)
        for _ in 0..<1000 {
            kernel.pointee.process(input: buffer, output: buffer, channelStride: n, channels: 2, frames: n)
        }
        XCTAssertEqual(kernel.pointee.current, Self.coefficients("Rock"))
        XCTAssertEqual(k.workspace.slots.inUse.load(ordering: .relaxed), 0)
    }

    /// Offline the bank warms in the call that applies the change, and the crossfade starts there.
    func testOfflineWarmsAtOnce() {
        let kernel = Kernel(preset: "Rock", pace: 0)
        let input = Self.input(frames: 4 * Self.slice)
        kernel.process(input, at: 0, total: 4 * Self.slice)
        kernel.kernel.apply(.coefficients(Self.coefficients("Bass Booster")))
        XCTAssertFalse(kernel.kernel.warming)
        XCTAssertTrue(kernel.kernel.fading)
    }

    /// A live session's EQs warm at the live pace, and so do those of a graph loaded while it plays; offline ones do
    /// not.
    func testLiveGraphsWarmAtTheLivePace() throws {
        let session = try TestSupport.session(TestSupport.root.appendingPathComponent("Graphs/demo.json").path)
        let pace = { (session: GraphSession) in
            (session.graph.instances["eq"] as! IPodEQInstance).kernelPointer.pointee.warmPace
        }
        XCTAssertEqual(pace(session), 0)
        session.rendersConcurrently = true
        XCTAssertEqual(pace(session), IPodEQKernel.liveWarmPace)
        session.rendersConcurrently = false
        XCTAssertEqual(pace(session), 0)
    }
}
