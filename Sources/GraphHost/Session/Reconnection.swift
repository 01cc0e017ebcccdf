import FoundationEssentials
import Glibc

/// When to try PipeWire again after the daemon went away or had no sink: backoff from 0.1 s up to 2 s; a missing
/// sink is waited for up to `noSinkLimit` seconds, a missing daemon for as long as it takes.
public struct Reconnection {
    public static let noSinkLimit = 30.0
    public private(set) var backoff = 0.1
    private var lostAt: Date?
    private var noSinkSince: Date?
    private var nextAttempt = Date.distantPast

    public init() {}

    public var isLost: Bool { lostAt != nil }
    public var isWaitingForSink: Bool { noSinkSince != nil }

    public enum Step { case wait, retry, giveUp }

    /// Called while the stream is down; says whether to try again now.
    public mutating func lost(noSink: Bool, now: Date = Date()) -> Step {
        if lostAt == nil {
            lostAt = now
            nextAttempt = now.addingTimeInterval(backoff)
        }
        if noSink, noSinkSince == nil { noSinkSince = now }
        if !noSink { noSinkSince = nil }
        if let since = noSinkSince, now.timeIntervalSince(since) > Self.noSinkLimit { return .giveUp }
        guard now >= nextAttempt else { return .wait }
        backoff = min(backoff * 2, 2)
        nextAttempt = now.addingTimeInterval(backoff)
        return .retry
    }

    /// The stream plays again; returns the seconds it was down.
    public mutating func recovered(now: Date = Date()) -> Double {
        defer { self = Reconnection() }
        return now.timeIntervalSince(lostAt ?? now)
    }
}
