import Foundation
import XCTest

@testable import GraphHostCore

/// `IsolatedKernel` on its own, with each test as its helper: it writes the helper's answers into the shared block.
final class IsolatedKernelTests: XCTestCase {
    /// The kernel alone, with this test as its helper: the first block is the latency, an answered block is heard one
    /// block late, an answer that is not safe to hear (NaN) and a block not answered in time play the dry signal, with
    /// the step from the last wet frame decayed over 64 samples, and a busy helper is not posted to.
    func testTheKernelPlaysDryWhenTheHelperIsLateOrItsOutputIsUnsafe() throws {
        let frames = 4
        let h = IsolatedKernelHarness(channels: 1, frames: frames, dryIsSilence: false, eventBus: -1)
        let (block, kernel, input, output, step) = (h.block, h.kernel, h.input, h.output, h.step)
        defer { withExtendedLifetime(h) {} }
        func call(_ value: Float) -> [Float] {
            input.update(repeating: value, count: frames)
            kernel.pointee.render(step, RenderSlice(frames: frames, channels: 1, channelStride: frames))
            return Array(UnsafeBufferPointer(start: output, count: frames))
        }
        func answer(_ make: (Float) -> Float) {
            let sequence = block.posted.load(ordering: .acquiring)
            for f in 0..<frames { block.output[f] = make(block.input[f]) }
            block.answered.store(sequence, ordering: .releasing)
            block.done.store(sequence, ordering: .releasing)
        }
        XCTAssertEqual(call(1), [0, 0, 0, 0], "the latency")
        XCTAssertEqual(block.posted.load(ordering: .relaxed), 1)
        answer { $0 * 0.5 }
        XCTAssertEqual(call(2), [0.5, 0.5, 0.5, 0.5], "block 1, wet")
        answer { _ in .nan }
        // Block 2 dry (2), its first frames carrying the step from the last wet frame (0.5 - 2) as it decays.
        XCTAssertEqual(call(3), (0..<frames).map { 2 - 1.5 * Float(64 - $0) / 64 })
        // Block 3 is not answered: dry, the decay going on; the helper is busy, so block 4 is not posted.
        XCTAssertEqual(call(4), (0..<frames).map { 3 - 1.5 * Float(60 - $0) / 64 })
        XCTAssertEqual(block.posted.load(ordering: .relaxed), 3)
        XCTAssertEqual(kernel.pointee.missedInARow.load(ordering: .relaxed), 2)
        XCTAssertEqual(call(5), (0..<frames).map { 4 - 1.5 * Float(56 - $0) / 64 }, "block 4, never posted, dry")
    }

    /// An instrument's events on the kernel's own: posted with their block at their frames; those of a block the busy
    /// helper could not take come with the next block it takes, at its first frame (a note's end late, never lost),
    /// and a missed block of an instrument is silence, never its event bytes heard as audio.
    func testEventsOfABlockTheHelperCouldNotTakeComeWithTheNext() throws {
        let (channels, frames) = (2, 16)
        let h = IsolatedKernelHarness(channels: channels, frames: frames, dryIsSilence: true, eventBus: 0)
        let (block, kernel, input, output, step) = (h.block, h.kernel, h.input, h.output, h.step)
        defer { withExtendedLifetime(h) {} }
        // A sequence of 3-byte MIDI events (type 7) at `events`' frames, as a `midi` node writes it into its bus.
        func call(_ events: [(frame: Int64, status: UInt8)]) -> [Float] {
            let sequence = UnsafeMutableRawPointer(input)
            sequence.storeBytes(of: UInt32(8 + 24 * events.count), as: UInt32.self)
            sequence.storeBytes(of: UInt32(9), toByteOffset: 4, as: UInt32.self)
            for (i, event) in events.enumerated() {
                let at = sequence + 16 + 24 * i
                at.storeBytes(of: event.frame, as: Int64.self)
                at.storeBytes(of: UInt32(3), toByteOffset: 8, as: UInt32.self)
                at.storeBytes(of: UInt32(7), toByteOffset: 12, as: UInt32.self)
                for (k, byte) in [event.status, 60, 100].enumerated() {
                    at.storeBytes(of: byte, toByteOffset: 16 + k, as: UInt8.self)
                }
            }
            kernel.pointee.render(step, RenderSlice(frames: frames, channels: channels, channelStride: frames))
            return Array(UnsafeBufferPointer(start: output, count: channels * frames))
        }
        func posted() -> [(frame: Int64, status: UInt8)] {
            let sequence = UnsafeRawPointer(block.input)
            let size = Int(sequence.load(as: UInt32.self))
            return stride(from: 16, to: 8 + size, by: 24).map {
                (
                    sequence.load(fromByteOffset: $0, as: Int64.self),
                    sequence.load(fromByteOffset: $0 + 16, as: UInt8.self)
                )
            }
        }
        func answer() {
            let sequence = block.posted.load(ordering: .acquiring)
            for i in 0..<(channels * frames) { block.output[i] = 0.25 }
            block.answered.store(sequence, ordering: .releasing)
            block.done.store(sequence, ordering: .releasing)
        }
        XCTAssertEqual(call([(5, 0x90)]), Array(repeating: 0, count: channels * frames), "the latency")
        XCTAssertEqual(posted().map(\.frame), [5])
        // Block 1 is not answered: block 2 (a note off at frame 3) is not posted, and block 1 is heard as silence.
        XCTAssertEqual(call([(3, 0x80)]), Array(repeating: 0, count: channels * frames))
        XCTAssertEqual(block.posted.load(ordering: .relaxed), 1)
        answer()
        _ = call([(7, 0x90)])
        XCTAssertEqual(block.posted.load(ordering: .relaxed), 2)
        let next = posted()
        XCTAssertEqual(next.map(\.frame), [0, 7], "the carried note off first, at frame 0")
        XCTAssertEqual(next.map(\.status), [0x80, 0x90])
        answer()
        let heard = call([])
        XCTAssertEqual(heard[0], 0.25 / 8, "block 2 fades in after the missed block")
        XCTAssertEqual(heard[frames - 1], 0.25, "block 2 heard")
        XCTAssertEqual(posted().count, 0, "carried events go once")
    }

    /// A plugin that sends MIDI, isolated: the events its helper sent come out one block late at their frames; when
    /// the helper then misses a block, the node sends All Notes Off on all 16 channels once, so no note it started
    /// hangs in the plugins after it.
    func testSentEventsComeABlockLateAndAMissedBlockEndsEveryNote() throws {
        let (channels, frames) = (2, 64)
        let h = IsolatedKernelHarness(
            channels: channels, frames: frames, dryIsSilence: true, eventBus: 0, eventOutput: true, midiEventType: 7)
        let (block, kernel, input, output, step) = (h.block, h.kernel, h.input, h.output, h.step)
        defer { withExtendedLifetime(h) {} }
        UnsafeMutableRawPointer(input).storeBytes(of: UInt32(8), as: UInt32.self)
        /// The events of the output sequence: (frame, first three MIDI bytes).
        func call() -> [(frame: Int64, bytes: [UInt8])] {
            kernel.pointee.render(step, RenderSlice(frames: frames, channels: channels, channelStride: frames))
            let sequence = UnsafeRawPointer(output)
            return stride(from: 16, to: 8 + Int(sequence.load(as: UInt32.self)), by: 24).map { at in
                (
                    sequence.load(fromByteOffset: at, as: Int64.self),
                    (0..<3).map { sequence.load(fromByteOffset: at + 16 + $0, as: UInt8.self) }
                )
            }
        }
        XCTAssertTrue(call().isEmpty, "the latency")
        // The helper answers block 1 with a note on at frame 2.
        let sent = UnsafeMutableRawPointer(block.output)
        sent.storeBytes(of: UInt32(8 + 24), as: UInt32.self)
        sent.storeBytes(of: Int64(2), toByteOffset: 16, as: Int64.self)
        sent.storeBytes(of: UInt32(3), toByteOffset: 24, as: UInt32.self)
        sent.storeBytes(of: UInt32(7), toByteOffset: 28, as: UInt32.self)
        sent.storeBytes(of: UInt32(0x64_3C_90), toByteOffset: 32, as: UInt32.self)
        block.answered.store(1, ordering: .releasing)
        block.done.store(1, ordering: .releasing)
        let played = call()
        XCTAssertEqual(played.map(\.frame), [2])
        XCTAssertEqual(played.first?.bytes, [0x90, 60, 100])
        // Block 2 is never answered: every channel's notes end, once.
        let ended = call()
        XCTAssertEqual(ended.map(\.frame), Array(repeating: 0, count: 16))
        XCTAssertEqual(ended.map(\.bytes), (0..<16).map { [UInt8(0xB0 | $0), 123, 0] })
        XCTAssertTrue(call().isEmpty)
    }
}

/// An `IsolatedKernel` with its shared block, memory and one input and output bus of `channels` × `frames` (zeroed),
/// freed with the harness.
final class IsolatedKernelHarness {
    let block: IsolatedBlock
    let kernel: UnsafeMutablePointer<IsolatedKernel>
    let input: UnsafeMutablePointer<Float>
    let output: UnsafeMutablePointer<Float>
    let step: RenderStep
    private let memory: UnsafeMutablePointer<Float>
    private let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let devNull = open("/dev/null", O_WRONLY)

    init(
        channels: Int, frames: Int, dryIsSilence: Bool, eventBus: Int, eventOutput: Bool = false,
        midiEventType: UInt32 = 0
    ) {
        let bytes = IsolatedBlock.byteCount(channels: channels, frames: frames)
        let base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        block = IsolatedBlock(base: base, channels: channels, frames: frames)
        memory = .allocate(capacity: IsolatedKernel.memoryFloats(block))
        kernel = .allocate(capacity: 1)
        kernel.initialize(
            to: IsolatedKernel(
                block: block, wakeFD: devNull, doneFD: -1, dryIsSilence: dryIsSilence, eventBus: eventBus,
                eventOutput: eventOutput, midiEventType: midiEventType, fadeSamples: 8, offlineWaitMillis: 0,
                memory: memory))
        input = .allocate(capacity: channels * frames)
        input.initialize(repeating: 0, count: channels * frames)
        output = .allocate(capacity: channels * frames)
        output.initialize(repeating: 0, count: channels * frames)
        inputs = .allocate(capacity: 1)
        inputs.initialize(to: input)
        step = RenderStep(kernel: .isolated(kernel), inputs: inputs, inputCount: 1, output: output)
    }

    deinit {
        kernel.pointee.destroy()
        kernel.deallocate()
        memory.deallocate()
        block.base.deallocate()
        [input, output].forEach { $0.deallocate() }
        inputs.deallocate()
        close(devNull)
    }
}
