import Synchronization

/// PipeWire's figure for graphhost's node over a window, or why there is none.
public enum PipeWireLoadReading: Sendable, Equatable {
    case figure(DSPLoad.PipeWireFigure)
    case unavailable(String)
}

/// Reads a live run's DSP load once a second: keeps the latest `DSPLoad` for `status`, and names a node the moment it
/// dominates (`DSPLoad.dominant`), once per episode: the episode ends when no node, or another one, dominates.
public final class DSPLoadMonitor: Sendable {
    struct State {
        var previous: DSPLoadRecorder.Snapshot?
        var latest: DSPLoad?
        var dominant: String?
    }
    let state = Mutex(State())

    public init() {}

    /// The reading of the last whole window (nil before the first).
    public var latest: DSPLoad? { state.withLock { $0.latest } }

    /// Reads the figures since the previous update (the session's engine and graph) with PipeWire's; returns the
    /// reading and the node that began to dominate, if one did.
    public func update(_ session: GraphSession, pipeWire: PipeWireLoadReading) -> (DSPLoad, dominated: String?)? {
        let recorder = session.engine.pointee.timing.pointee.load
        guard let snapshot = recorder.snapshot() else { return nil }
        recorder.startWindow()
        return update(
            snapshot, names: session.graph.kernelNames, sampleRate: Double(session.format.sampleRate),
            pipeWire: pipeWire)
    }

    /// The reading from the previous snapshot to `snapshot` (nil for the first, or when nothing rendered between).
    func update(
        _ snapshot: DSPLoadRecorder.Snapshot, names: [(id: String, kernel: Int)], sampleRate: Double,
        pipeWire: PipeWireLoadReading
    ) -> (DSPLoad, dominated: String?)? {
        state.withLock { state in
            defer { state.previous = snapshot }
            guard let previous = state.previous else { return nil }
            var reading = DSPLoad(from: previous, to: snapshot, sampleRate: sampleRate, names: names)
            guard reading.callback.calls > 0 else { return nil }
            switch pipeWire {
            case .figure(let figure):
                reading.pipeWire = figure
                reading.pipeWireProblem = nil
            case .unavailable(let why): reading.pipeWireProblem = why
            }
            state.latest = reading
            let dominant = reading.dominant?.id
            defer { state.dominant = dominant }
            return (reading, dominant != nil && dominant != state.dominant ? dominant : nil)
        }
    }
}
