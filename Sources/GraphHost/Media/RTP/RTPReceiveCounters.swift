import Synchronization

/// What an RTP receiver has seen: packets taken, packets missing from the sequence (lost, and concealed), packets
/// that came too late or twice (dropped), and the frames filled in for the lost ones. Any thread may read them.
public final class RTPReceiveCounters: Sendable {
    public struct Snapshot: Equatable, Sendable {
        public var received = 0
        public var lost = 0
        public var late = 0
        public var malformed = 0
        public var concealedFrames = 0
    }

    private let counts = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { counts.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) { counts.withLock { change(&$0) } }
}
