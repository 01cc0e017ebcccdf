import FoundationEssentials

/// When a network stream tries again after its connection ended, broke or was refused: waits that double from
/// `firstDelay` up to `maxDelay`, for at most `limit` seconds from the first failure of a series. A series ends (the
/// next failure starts afresh) only with a connection that stayed up `healthySeconds`, or one that moved a finite
/// download on; so a server that answers and hangs up at once is retried with backoff, and given up on in time.
public struct StreamRetry: Sendable {
    public static let firstDelay = 0.25, maxDelay = 4.0, healthySeconds = 10.0
    /// Seconds a series of failures may last before the stream is given up.
    public let limit: Double
    /// The wait before the next attempt.
    public private(set) var delay = firstDelay
    private var since: Date?

    public init(limit: Double) { self.limit = limit }

    /// A connection ended after `connectedFor` seconds (0: it never got an answer); `progressed`: it moved a finite
    /// download on. Returns the seconds to wait before the next attempt, or nil to give up.
    public mutating func failed(connectedFor: Double, progressed: Bool, now: Date = Date()) -> Double? {
        if connectedFor >= Self.healthySeconds || progressed {
            since = nil
            delay = Self.firstDelay
        }
        let start = since ?? now
        since = start
        let wait = delay
        guard now.timeIntervalSince(start) + wait <= limit else { return nil }
        delay = min(delay * 2, Self.maxDelay)
        return wait
    }
}
