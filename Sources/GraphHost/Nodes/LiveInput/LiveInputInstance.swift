import Atomics
import Synchronization

/// A running `capture` or `sink` node: the ring its PipeWire stream's callback fills and the kernel that plays it
/// (a stream kernel kept in the output's cycle, or one behind it, by `LiveInputAlignment`; a slice that finds the ring
/// short is silence, counted as a dropout).
public final class LiveInputInstance: NodeInstance, @unchecked Sendable {
    public var liveInput: LiveInputInstance? { self }

    /// Where the sound comes from.
    public enum Source: Equatable, Sendable {
        case capture(target: String?, monitor: Bool)
        case sink(name: String?, description: String?)
    }

    public let id: String
    public let source: Source
    public let ring: PCMRing
    /// Frames PipeWire's adapter holds in its resampler when the input runs at another rate (its stream's pw_time).
    public let resamplerFrames: UnsafeAtomic<Int>
    /// Frames its stream writes per cycle, and the graph clock position of the cycle it last wrote.
    public let cycleFrames: UnsafeAtomic<Int>
    public let writtenCycle: UnsafeAtomic<UInt64>
    public let counters: StreamCounters
    let kernelPointer: UnsafeMutablePointer<StreamKernel>

    init(id: String, source: Source, format: GraphFormat) {
        self.id = id
        self.source = source
        (ring, resamplerFrames, cycleFrames, writtenCycle) = LiveInputRings.shared.ring(for: id, format: format)
        counters = .create()
        kernelPointer = .allocateRender(capacity: 1)
        var kernel = StreamKernel(ring: ring, counters: counters, startThreshold: 0)
        kernel.alignment = LiveInputAlignment(
            writtenCycle: writtenCycle, cycleFrames: cycleFrames, outputCycle: LiveInputRings.outputCycle,
            sameCycle: LiveInputRings.sameCycle)
        kernelPointer.initialize(to: kernel)
    }

    public var kernel: RenderStep.Kernel { .stream(kernelPointer) }
    /// Slices that found no input (the stream was late or stopped).
    public var dropouts: Int { counters.underruns.load(ordering: .relaxed) }

    public func check(_ command: NodeCommand) throws {
        throw NodeCommandError.notSupported("'\(id)' is a live input; it has no parameters or presets")
    }

    public func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }

    /// What the PipeWire backend needs to make the node's stream.
    public var spec: LiveInputSpec {
        LiveInputSpec(
            id: id, source: source, ring: ring, resamplerFrames: resamplerFrames,
            cycleFrames: cycleFrames, writtenCycle: writtenCycle)
    }

    /// Frees the kernel; the ring stays with `LiveInputRings`, as a stream may still write into it.
    public func close() {
        kernelPointer.deinitialize(count: 1).deallocateRender()
        counters.destroy()
    }
}

/// A live input as the PipeWire backend sees it: the node, where its sound comes from, and the ring to fill.
public struct LiveInputSpec: Sendable {
    public var id: String
    public var source: LiveInputInstance.Source
    public var ring: PCMRing
    public var resamplerFrames: UnsafeAtomic<Int>
    public var cycleFrames: UnsafeAtomic<Int>
    public var writtenCycle: UnsafeAtomic<UInt64>
}

/// The rings of live inputs, one per node id, kept for the life of the process: a PipeWire stream's callback never
/// writes into freed memory, and a graph loaded later finds its node's ring again.
final class LiveInputRings: Sendable {
    typealias Entry = (PCMRing, UnsafeAtomic<Int>, UnsafeAtomic<Int>, UnsafeAtomic<UInt64>)
    static let shared = LiveInputRings()
    /// The graph clock position of the cycle the playback stream renders (it stores it before rendering).
    static let outputCycle = UnsafeAtomic<UInt64>.create(0)
    /// Set while the playback stream runs after the live inputs in their cycle (`CycleGate`).
    static let sameCycle = UnsafeAtomic<Bool>.create(false)
    private let rings = Mutex<[String: Entry]>([:])

    /// The ring of node `id`, and the atomics its stream reports its resampler's delay, its cycle's frames and the
    /// clock position of the cycle it last wrote in.
    func ring(for id: String, format: GraphFormat) -> Entry {
        rings.withLock { rings in
            if let entry = rings[id], entry.0.channels == format.channels { return entry }
            let entry = (
                PCMRing.allocate(
                    minimumFrames: max(format.sampleRate / 2, 4 * format.maxFrames), channels: format.channels),
                UnsafeAtomic<Int>.create(0), UnsafeAtomic<Int>.create(0), UnsafeAtomic<UInt64>.create(0)
            )
            rings[id] = entry
            return entry
        }
    }
}
