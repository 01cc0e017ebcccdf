import Atomics
import XCTest

@testable import GraphHost

/// Render-world pieces on their own: the stream kernel's buffering and underruns, bus reuse in the plan compiler.
final class RenderWorldTests: XCTestCase {
    /// The `--record` tap interleaves what the callback hands over; what its ring has no room for is dropped and
    /// counted.
    func testRecordTapInterleavesAndCountsWhatDoesNotFit() {
        let tap = RecordTap.allocate(channels: 2, sampleRate: 1000, seconds: 1)
        defer { tap.deallocate() }
        XCTAssertEqual(tap.ring.capacityFrames, 1024)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 1500)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 1500)
        let channels = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer {
            left.deallocate()
            right.deallocate()
            channels.deallocate()
        }
        for f in 0..<1500 {
            left[f] = Float(f)
            right[f] = -Float(f)
        }
        channels[0] = left
        channels[1] = right
        tap.capture(planar: channels, frames: 1000)
        XCTAssertEqual(tap.droppedFrames.load(ordering: .relaxed), 0)
        tap.capture(planar: channels, frames: 100)
        XCTAssertEqual(tap.droppedFrames.load(ordering: .relaxed), 76)
        var out = [Float](repeating: 0, count: 2 * 2048)
        XCTAssertEqual(tap.ring.read(into: &out, frames: 2048), 1024)
        XCTAssertEqual(Array(out[0..<4]), [0, 0, 1, -1])
        XCTAssertEqual(Array(out[1998..<2002]), [999, -999, 0, 0])
        XCTAssertEqual(out[2 * 1023], 23)
        let interleaved: [Float] = [5, -5, 6, -6]
        tap.capture(interleaved: interleaved, frames: 2)
        XCTAssertEqual(tap.ring.read(into: &out, frames: 2048), 2)
        XCTAssertEqual(Array(out[0..<4]), interleaved)
        XCTAssertEqual(tap.droppedFrames.load(ordering: .relaxed), 76)
    }

    /// A live input stays exactly one cycle behind the output whatever order the two callbacks run in, when either
    /// misses cycles, and when the output renders a cycle in two slices: every sample heard is the input's sample of
    /// one Interleaving round-trips any channel count and length (stereo goes four frames at a time, with a tail), and
    /// a bus's peak is the largest magnitude wherever it lies, negative or in a tail, NaN passed over.
    func testInterleavingAndPeak() {
        for channels in [1, 2, 3] {
            for frames in [0, 3, 4, 17] {
                let stride = frames + 5
                let planar = (0..<channels * stride).map { Float($0) * 0.01 - 1 }
                var interleaved = [Float](repeating: .nan, count: channels * frames)
                var back = [Float](repeating: 0, count: channels * stride)
                planar.withUnsafeBufferPointer { p in
                    interleaved.withUnsafeMutableBufferPointer {
                        Interleaving.interleave(
                            from: p.baseAddress!, channelStride: stride, channels: channels, frames: frames,
                            into: $0.baseAddress!)
                    }
                }
                for f in 0..<frames {
                    for c in 0..<channels { XCTAssertEqual(interleaved[f * channels + c], planar[c * stride + f]) }
                }
                interleaved.withUnsafeBufferPointer { i in
                    back.withUnsafeMutableBufferPointer {
                        Interleaving.deinterleave(
                            from: i.baseAddress!, channels: channels, frames: frames, into: $0.baseAddress!,
                            channelStride: stride)
                    }
                }
                for c in 0..<channels {
                    XCTAssertEqual(
                        Array(back[c * stride..<c * stride + frames]), Array(planar[c * stride..<c * stride + frames]))
                }
            }
        }
        var samples = [Float](repeating: 0.25, count: 37)
        samples[5] = .nan
        samples[12] = -0.75
        samples.withUnsafeMutableBufferPointer {
            XCTAssertEqual(Bus.peak($0.baseAddress!, channelStride: 0, channels: 1, from: 0, to: 37), 0.75)
        }
        samples[36] = 0.9
        samples.withUnsafeMutableBufferPointer {
            XCTAssertEqual(Bus.peak($0.baseAddress!, channelStride: 0, channels: 1, from: 0, to: 37), 0.9)
            XCTAssertEqual(Bus.peak($0.baseAddress!, channelStride: 0, channels: 1, from: 13, to: 36), 0.25)
            XCTAssertEqual(Bus.peak($0.baseAddress!, channelStride: 0, channels: 1, from: 20, to: 20), 0)
        }
    }

    /// Whatever order the input's and the output's callbacks run in, each output sample is the input's sample one
    /// quantum earlier, or silence where the input had none. The input writes each frame's clock position + 1.
    func testALiveInputStaysOneCycleBehindWhateverTheOrder() {
        let quantum = 256
        let slice = 128
        let rig = AlignedInput(quantum: quantum, slice: slice, sameCycle: false)
        let (counters, bus) = (rig.counters, rig.bus)
        var rng = SplitMix64(seed: 7)
        var heard = 0
        var wrong = 0
        var silentCycles = 0
        func input(_ clock: Int) { rig.input(clock: clock) }
        func render(_ clock: Int) {
            var silent = 0
            rig.render(clock: clock) { part in
                for f in 0..<slice {
                    let t = clock + part * slice + f
                    if bus[f] == 0 {
                        silent += 1
                    } else if bus[f] == Float(t - quantum + 1) {
                        heard += 1
                    } else {
                        wrong += 1
                    }
                }
            }
            if silent > 0 { silentCycles += 1 }
        }
        for cycle in 1...2000 {
            let clock = cycle * quantum
            let inputRuns = cycle % 97 != 0
            let outputRuns = cycle % 89 != 0
            if Bool.random(using: &rng) {
                if inputRuns { input(clock) }
                if outputRuns { render(clock) }
            } else {
                if outputRuns { render(clock) }
                if inputRuns { input(clock) }
            }
        }
        XCTAssertEqual(wrong, 0, "samples heard at another latency than one cycle")
        // Silence only at the start and after each of the input's 20 missed cycles (one cycle each, or two when the
        // order puts the gap across two output cycles).
        XCTAssertLessThanOrEqual(silentCycles, 1 + 2 * 20)
        XCTAssertGreaterThan(heard, (2000 - 22 - 41) * quantum)
        XCTAssertGreaterThan(
            counters.trimmedFrames.load(ordering: .relaxed), 0, "the output's missed cycles were not trimmed")
    }

    /// With the output run after the input in each cycle (`CycleGate`), each output sample is the input's sample of
    /// the same cycle. The input first runs after the output (a stream not yet counted in the gate): from the cycle it
    /// runs first, the one cycle it was behind is dropped, never heard late.
    func testALiveInputInTheOutputsCycleAddsNoLatency() {
        let quantum = 256
        let slice = 64
        let rig = AlignedInput(quantum: quantum, slice: slice, sameCycle: true)
        let bus = rig.bus
        var heard = 0
        var late = 0
        var wrong = 0
        for cycle in 1...500 {
            let clock = cycle * quantum
            let joined = cycle > 3
            if joined { rig.input(clock: clock) }
            rig.render(clock: clock) { part in
                for f in 0..<slice {
                    let t = clock + part * slice + f
                    if bus[f] == Float(t + 1) {
                        heard += 1
                    } else if bus[f] != 0 && joined {
                        late += 1
                    } else if bus[f] != 0 && bus[f] != Float(t - quantum + 1) {
                        wrong += 1
                    }
                }
            }
            if !joined { rig.input(clock: clock) }
        }
        XCTAssertEqual(late, 0, "samples heard late once the output runs after the input")
        XCTAssertEqual(wrong, 0)
        XCTAssertEqual(heard, (500 - 3) * quantum)
    }

    func testStreamKernelBuffersThenPlaysAndCountsUnderruns() {
        let ring = PCMRing.allocate(minimumFrames: 4096, channels: 2)
        let counters = StreamCounters.create()
        defer {
            ring.deallocate()
            counters.destroy()
        }
        var kernel = StreamKernel(ring: ring, counters: counters, startThreshold: 1000)
        let bus = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 256)
        defer { bus.deallocate() }
        let frames = (0..<1200).flatMap { [Float($0), -Float($0)] }
        // 500 frames buffered: still buffering, silence, no underrun.
        XCTAssertEqual(frames.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: 500) }, 500)
        bus.update(repeating: 9, count: 512)
        kernel.process(output: bus, channelStride: 256, channels: 2, frames: 256)
        XCTAssertFalse(kernel.playing)
        XCTAssertEqual((0..<512).map { bus[$0] }.max(), 0)
        XCTAssertEqual(counters.underruns.load(ordering: .relaxed), 0)
        // 1200 buffered: plays from the first frame (buffering consumed nothing), deinterleaved into the planar bus.
        _ = frames.withUnsafeBufferPointer { ring.write($0.baseAddress! + 1000, frames: 700) }
        kernel.process(output: bus, channelStride: 256, channels: 2, frames: 256)
        XCTAssertTrue(kernel.playing)
        XCTAssertEqual(bus[255], 255)
        XCTAssertEqual(bus[256 + 255], -255)
        // 944 frames left: three full slices, then a short one (176 frames and silence), counted as an underrun.
        for _ in 0..<4 { kernel.process(output: bus, channelStride: 256, channels: 2, frames: 256) }
        XCTAssertEqual(bus[0], 1024)
        XCTAssertEqual(bus[175], 1199)
        XCTAssertEqual((176..<256).map { bus[$0] }.max(), 0)
        XCTAssertEqual(counters.underruns.load(ordering: .relaxed), 1)
        // Rebuffering: silence until the threshold is buffered again, not another underrun.
        XCTAssertFalse(kernel.playing)
        kernel.process(output: bus, channelStride: 256, channels: 2, frames: 256)
        XCTAssertEqual(counters.underruns.load(ordering: .relaxed), 1)
        XCTAssertFalse(counters.finished.load(ordering: .relaxed))
        // The decoder is done and the ring is empty: finished, not an underrun, ending where that slice began.
        counters.decoderFinished.store(true, ordering: .releasing)
        kernel.process(output: bus, channelStride: 256, channels: 2, frames: 256)
        XCTAssertTrue(counters.finished.load(ordering: .relaxed))
        XCTAssertEqual(counters.endFrame.load(ordering: .relaxed), 7 * 256)
        XCTAssertEqual(counters.underruns.load(ordering: .relaxed), 1)
    }

    /// In a chain, a bus is reused once its reader has run: three EQs in a row need two buses plus the silent one.
    func testBusesAreReusedAlongAChain() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let doc = try GraphDocument.load(
            path: TestSupport.graph(
                """
                { "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" }, \
                { "id": "e1", "type": "ipod-eq", "preset": "Rock" },
                             { "id": "e2", "type": "ipod-eq", "preset": "Pop" }, { "id": "e3", "type": "ipod-eq" }, \
                { "id": "out", "type": "output" } ],
                  "links": [ { "from": "s", "to": "e1" }, { "from": "e1", "to": "e2" }, { "from": "e2", "to": "e3" }, \
                { "from": "e3", "to": "out" } ] }
                """))
        let graph = try CompiledGraph(doc)
        defer { graph.close() }
        XCTAssertEqual(graph.busCount, 3)
        let steps = Array(graph.plan.steps)
        for (i, step) in steps.enumerated() where step.inputCount > 0 && step.output != nil {
            XCTAssertNotEqual(step.inputs[0], step.output, "step \(i) writes the bus it reads")
        }
    }
}

/// A live input's stream kernel with its alignment, a ring the test writes as the input's callback would (each frame
/// its clock position + 1), and a bus it renders slices into.
final class AlignedInput {
    let quantum: Int
    let slice: Int
    let ring: PCMRing
    let counters = StreamCounters.create()
    let written = UnsafeAtomic<UInt64>.create(0)
    let frames = UnsafeAtomic<Int>.create(0)
    let output = UnsafeAtomic<UInt64>.create(0)
    let sameCycle: UnsafeAtomic<Bool>
    var kernel: StreamKernel
    let source: UnsafeMutablePointer<Float>
    let bus: UnsafeMutablePointer<Float>

    init(quantum: Int, slice: Int, sameCycle: Bool) {
        self.quantum = quantum
        self.slice = slice
        ring = PCMRing.allocate(minimumFrames: 8 * quantum, channels: 1)
        self.sameCycle = .create(sameCycle)
        kernel = StreamKernel(ring: ring, counters: counters, startThreshold: 0)
        kernel.alignment = LiveInputAlignment(
            writtenCycle: written, cycleFrames: frames, outputCycle: output, sameCycle: self.sameCycle)
        source = .allocate(capacity: quantum)
        bus = .allocate(capacity: slice)
    }

    deinit {
        ring.deallocate()
        counters.destroy()
        written.destroy()
        frames.destroy()
        output.destroy()
        sameCycle.destroy()
        source.deallocate()
        bus.deallocate()
    }

    /// The input's callback in the cycle at `clock`.
    func input(clock: Int) {
        for f in 0..<quantum { source[f] = Float(clock + f + 1) }
        _ = ring.write(source, frames: quantum)
        frames.store(quantum, ordering: .relaxed)
        written.store(UInt64(clock), ordering: .releasing)
    }

    /// The output's callback in the cycle at `clock`: each slice rendered into `bus`, then `body(part)`.
    func render(clock: Int, _ body: (Int) -> Void) {
        output.store(UInt64(clock), ordering: .releasing)
        for part in 0..<(quantum / slice) {
            kernel.process(output: bus, channelStride: slice, channels: 1, frames: slice)
            body(part)
        }
    }
}
