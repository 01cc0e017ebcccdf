import Atomics
import Synchronization

/// A running `capture` or `sink` node: the ring its PipeWire stream's callback fills and the kernel that plays it
/// (a stream kernel: it starts once a slice is buffered, and a slice that finds the ring short is silence, counted
/// as a dropout, after which it waits for a slice again, or two when dropouts repeat).
public final class LiveInputInstance: NodeInstance, @unchecked Sendable {
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
    /// Frames its stream writes per cycle.
    public let cycleFrames: UnsafeAtomic<Int>
    public let counters: StreamCounters
    let kernelPointer: UnsafeMutablePointer<StreamKernel>

    init(id: String, source: Source, format: GraphFormat) {
        self.id = id
        self.source = source
        (ring, resamplerFrames, cycleFrames) = LiveInputRings.shared.ring(for: id, format: format)
        counters = .create()
        kernelPointer = .allocateRender(capacity: 1)
        var kernel = StreamKernel(ring: ring, counters: counters, startThreshold: 0)
        kernel.primeSlices = 1
        kernel.inputCycleFrames = cycleFrames
        kernelPointer.initialize(to: kernel)
    }

    public var kernel: RenderStep.Kernel { .stream(kernelPointer) }
    /// Slices that found no input (the stream was late or stopped).
    public var dropouts: Int { counters.underruns.load(ordering: .relaxed) }

    public func check(_ command: NodeCommand) throws {
        throw CommandError("'\(id)' is a live input; it has no parameters or presets")
    }

    public func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }

    /// What the PipeWire backend needs to make the node's stream.
    public var spec: LiveInputSpec { LiveInputSpec(id: id, source: source, ring: ring, resamplerFrames: resamplerFrames, cycleFrames: cycleFrames) }

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
}

/// The rings of live inputs, one per node id, kept for the life of the process: a PipeWire stream's callback never
/// writes into freed memory, and a graph loaded later finds its node's ring again.
final class LiveInputRings: Sendable {
    static let shared = LiveInputRings()
    private let rings = Mutex<[String: (PCMRing, UnsafeAtomic<Int>, UnsafeAtomic<Int>)]>([:])

    /// The ring of node `id`, and the atomics its stream reports its resampler's delay and its cycle's frames in.
    func ring(for id: String, format: GraphFormat) -> (PCMRing, UnsafeAtomic<Int>, UnsafeAtomic<Int>) {
        rings.withLock { rings in
            if let entry = rings[id], entry.0.channels == format.channels { return entry }
            let entry = (PCMRing.allocate(minimumFrames: max(format.sampleRate / 2, 4 * format.maxFrames), channels: format.channels),
                         UnsafeAtomic<Int>.create(0), UnsafeAtomic<Int>.create(0))
            rings[id] = entry
            return entry
        }
    }
}
