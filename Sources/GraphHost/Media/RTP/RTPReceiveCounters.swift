import Synchronization

/// What an RTP receiver has seen: packets taken, packets missing from the sequence (lost, and concealed), packets
/// that came too late or twice (dropped), and the frames filled in for the lost ones; the times its jitter buffer was
/// put back to its target, with the frames filled in and left out for it (the session's frames), and the buffer's
/// average level (`JitterBufferKeeper`). Any thread may read them.
public final class RTPReceiveCounters: Sendable {
    public struct Snapshot: Equatable, Sendable {
        public var received = 0
        public var lost = 0
        public var late = 0
        public var malformed = 0
        public var concealedFrames = 0
        public var resyncs = 0
        public var insertedFrames = 0
        public var droppedFrames = 0
        /// The jitter buffer's average level over the latest half second, graph frames (nil before it is known).
        public var bufferedFrames: Int?
    }

    private let counts = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { counts.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) { counts.withLock { change(&$0) } }
}
