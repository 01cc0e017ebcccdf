import Atomics
import Glibc
import Synchronization

/// The control world's analysis of a session's audio: counts who watches what (`watch`), keeps the analysis taps of
/// the watched nodes on, and drains them on a thread of its own into each node's consumers (a `LoudnessMeter` for
/// `.loudness`, what `register` makes for other kinds). The thread sleeps on one `RingSignal` that every tap it
/// turned on posts once `wakeFrames` frames are captured (all taps of a plan capture every slice, so it waits on
/// one of them); it starts with the first watch and runs until `stop`. Watches outlive swaps: `follow` moves the
/// watched nodes to the new graph's taps and keeps their consumers (integrated loudness goes on); a consumer starts
/// afresh when its kind starts being watched on a node. Unwatched, a node's tap is off and costs the render world one
/// relaxed load a slice.
public final class AudioAnalysis: Sendable {
    /// Frames the drain thread waits for between wakes (21 ms at 48 kHz).
    public static let wakeFrames = 1024

    /// Makes a consumer for `channels` channels at `sampleRate` Hz.
    public typealias ConsumerFactory = @Sendable (_ channels: Int, _ sampleRate: Int) -> any AnalysisConsumer

    /// A watched node's tap and consumers. Reached only under `state`'s lock, by one thread at a time.
    private final class Source: @unchecked Sendable {
        var tap: UnsafeMutablePointer<AnalysisTap>
        var consumers: [AnalysisKind: any AnalysisConsumer] = [:]
        init(tap: UnsafeMutablePointer<AnalysisTap>) { self.tap = tap }
    }

    /// What the lock guards. The taps' memory belongs to `meters`, which this keeps alive while it drains them.
    private struct State: @unchecked Sendable {
        var factories: [AnalysisKind: ConsumerFactory]
        /// Watchers per kind and node; a nil node watches every output.
        var counts: [AnalysisKind: [String?: Int]] = [:]
        var meters: GraphMeters?
        var nodeIDs: [String] = []
        var outputIDs: [String] = []
        var sources: [String: Source] = [:]
        var thread: JoinableThread?
        var buffer: UnsafeMutablePointer<Float>?
    }

    private let state: Mutex<State>
    private let signal = RingSignal.create()
    private let stopping = ManagedAtomic(false)
    private let channels: Int
    private let sampleRate: Int
    /// Frames read out of the taps at a time.
    private static let chunkFrames = 4096

    /// An analysis of `graph`'s nodes; nothing is watched and no thread runs until `watch`.
    init(_ graph: CompiledGraph) {
        let format = graph.document.format
        channels = format.channels
        sampleRate = format.sampleRate
        let loudness: ConsumerFactory = { LoudnessMeter(channels: $0, sampleRate: $1, bounded: true) }
        let spectrum: ConsumerFactory = { SpectrumAnalyzer(sampleRate: Double($1), channels: $0) }
        state = Mutex(State(factories: [.loudness: loudness, .spectrum: spectrum]))
        follow(graph)
    }

    deinit {
        stop()
        signal.destroy()
    }

    /// Makes `kind`'s consumers with `factory` from now on (the spectrum analyzer); nodes already watched keep theirs.
    public func register(_ kind: AnalysisKind, _ factory: @escaping ConsumerFactory) {
        state.withLock { $0.factories[kind] = factory }
    }

    /// Adds (`on`) or removes a watcher of `kind` on `node` (nil: every output). A node's tap is on while any kind
    /// has a watcher on it; its consumer of `kind` lives while `kind` has one. The caller checked that `node` has a
    /// tap in the current graph.
    func watch(_ kind: AnalysisKind, node: String?, on: Bool) throws(ControlError) {
        try state.withLock { state throws(ControlError) in
            guard state.factories[kind] != nil else { throw .noAnalyzer(kind.rawValue) }
            let count = state.counts[kind, default: [:]][node, default: 0]
            guard on || count > 0 else { throw .notWatched(kind: kind.rawValue, node: node) }
            state.counts[kind, default: [:]][node] = on ? count + 1 : (count > 1 ? count - 1 : nil)
            reconcile(&state)
            if state.thread == nil && !state.sources.isEmpty {
                state.buffer = .allocate(capacity: Self.chunkFrames * channels)
                state.thread = JoinableThread(name: "graphhost-analysis") { [self] in drain() }
            }
        }
        signal.post()
    }

    /// Watchers of `kind` on `node` (nil: the watchers of every output).
    public func watchers(_ kind: AnalysisKind, node: String?) -> Int {
        state.withLock { $0.counts[kind]?[node] ?? 0 }
    }

    /// Moves the watches to `graph`'s taps (after a swap): what the old taps hold is analysed first, then they are
    /// turned off; consumers stay.
    func follow(_ graph: CompiledGraph) {
        state.withLock { state in
            let previous = state.meters  // keeps the old taps alive until they are drained
            defer { withExtendedLifetime(previous) {} }
            state.meters = graph.meters
            state.nodeIDs = graph.document.nodes.map(\.id).filter { graph.meters.taps[$0] != nil }
            state.outputIDs = graph.document.outputIDs
            reconcile(&state)
        }
        signal.post()
    }

    /// The loudness of every node whose loudness is watched, in the graph's node order.
    public var loudness: [RunStatus.Loudness] {
        state.withLock { state in
            state.nodeIDs.compactMap { id in
                (state.sources[id]?.consumers[.loudness] as? LoudnessMeter).map { RunStatus.Loudness(node: id, $0) }
            }
        }
    }

    /// Runs `body` with `node`'s consumer of `kind` while nothing drains (nil when `kind` is not watched there).
    public func withConsumer<T: Sendable>(_ kind: AnalysisKind, node: String, _ body: (any AnalysisConsumer) -> T)
        -> T?
    {
        state.withLock { state in state.sources[node]?.consumers[kind].map(body) }
    }

    /// Frames the watched nodes' taps had no room for, by node id.
    public var droppedFrames: [String: Int] {
        state.withLock { state in
            state.sources.mapValues { $0.tap.pointee.droppedFrames.load(ordering: .relaxed) }
        }
    }

    /// Stops the drain thread and turns every tap off; the watch counts stay.
    func stop() {
        guard let thread = state.withLock({ $0.thread }) else { return }
        stopping.store(true, ordering: .releasing)
        signal.post()
        thread.join()
        state.withLock { state in
            for source in state.sources.values { source.tap.pointee.isOn.store(false, ordering: .relaxed) }
            state.sources = [:]
            state.meters = nil
            state.thread = nil
            state.buffer?.deallocate()
            state.buffer = nil
        }
    }

    /// Makes the sources match the watch counts and the current graph's taps.
    private func reconcile(_ state: inout State) {
        var wanted: [String: Set<AnalysisKind>] = [:]
        for (kind, counts) in state.counts {
            for (node, count) in counts where count > 0 {
                for id in node.map({ [$0] }) ?? state.outputIDs where state.meters?.taps[id] != nil {
                    wanted[id, default: []].insert(kind)
                }
            }
        }
        for (id, source) in state.sources where wanted[id] == nil {
            source.tap.pointee.isOn.store(false, ordering: .relaxed)
            state.sources[id] = nil
        }
        for (id, kinds) in wanted {
            let tap = state.meters!.taps[id]!
            let source: Source
            if let existing = state.sources[id] {
                source = existing
                if existing.tap != tap {
                    drain(existing, buffer: state.buffer)
                    existing.tap.pointee.isOn.store(false, ordering: .relaxed)
                    existing.tap = tap
                    AnalysisTap.turnOn(tap, signal: signal)
                }
            } else {
                source = Source(tap: tap)
                state.sources[id] = source
                AnalysisTap.turnOn(tap, signal: signal)
            }
            for kind in source.consumers.keys where !kinds.contains(kind) { source.consumers[kind] = nil }
            for kind in kinds where source.consumers[kind] == nil {
                source.consumers[kind] = state.factories[kind]!(channels, sampleRate)
            }
        }
    }

    /// Feeds everything `source`'s tap holds to its consumers.
    private func drain(_ source: Source, buffer: UnsafeMutablePointer<Float>?) {
        guard let buffer, let ring = source.tap.pointee.ring else { return }
        while true {
            let frames = ring.read(into: buffer, frames: Self.chunkFrames)
            guard frames > 0 else { return }
            for consumer in source.consumers.values {
                consumer.add(interleaved: buffer, frames: frames, channels: ring.channels)
            }
        }
    }

    /// The thread: drains every watched tap, then sleeps until one has `wakeFrames` more (or a `post`).
    private func drain() {
        while !stopping.load(ordering: .acquiring) {
            let waitOn = state.withLock { state -> SPSCIndex? in
                for source in state.sources.values { drain(source, buffer: state.buffer) }
                return state.sources.values.first?.tap.pointee.ring?.index
            }
            if let waitOn {
                signal.wait(untilReadable: Self.wakeFrames, in: waitOn)
            } else {
                while sem_wait(signal.semaphore) != 0 && errno == EINTR {}
            }
        }
    }
}
