import Synchronization

/// What an RTP receiver has seen: packets taken, packets missing from the sequence (lost, and concealed), packets
/// that came too late or twice (dropped), datagrams that are no RTP packet (malformed) or not the session's (dropped,
/// by reason), the times another sender took the session over, and the frames filled in for the lost packets; the times
/// its jitter buffer was put back to its target, with the frames filled in and left out for it (the session's
/// frames), and the buffer's average level (`JitterBufferKeeper`). Any thread may read them.
public final class RTPReceiveCounters: Sendable {
    /// RTP packets dropped unplayed because they are not the session's, by reason.
    public struct Dropped: Equatable, Sendable {
        /// From another source address, port or SSRC than the sender the session is locked to (announced, from another
        /// address than the announcement's; before a sender is locked, an empty one, which locks nothing).
        public var foreignSender = 0
        /// Of another payload type than the session's.
        public var payloadType = 0
        /// A payload that is not whole frames (its bytes not a multiple of channels × sample size).
        public var partialFrames = 0
        /// More frames than a packet of the session may carry (`RTPSession.maxPacketFrames`).
        public var oversized = 0

        public var total: Int { foreignSender + payloadType + partialFrames + oversized }
    }

    public struct Snapshot: Equatable, Sendable {
        public var received = 0
        public var lost = 0
        public var late = 0
        public var malformed = 0
        public var dropped = Dropped()
        public var takeovers = 0
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
