import GraphHostCore

/// When a client's feeds (`Feed`, or a surface's own) are due: each feed's next update on the monotonic clock, kept
/// on a fixed grid of 1/rate so the rate holds however late a turn comes; a client that falls more than an update
/// behind skips ahead.
struct FeedSchedule<Key: Equatable> {
    struct Entry {
        var feed: Key
        var periodNanos: Int
        var dueNanos: Int

        /// The update after the one due now; one period from `now` for a client more than an update behind.
        func next(now: Int) -> Int {
            let next = dueNanos + periodNanos
            return next <= now ? now + periodNanos : next
        }
    }
    private(set) var entries: [Entry] = []

    var feeds: [Key] { entries.map(\.feed) }

    /// Subscribes `feed` at `rate` updates a second (a feed subscribed again takes the new rate); the first update
    /// is due at once.
    mutating func add(_ feed: Key, rate: Double, now: Int = MonotonicClock.nanos()) {
        let entry = Entry(feed: feed, periodNanos: Int(1e9 / rate), dueNanos: now)
        if let i = entries.firstIndex(where: { $0.feed == feed }) { entries[i] = entry } else { entries.append(entry) }
    }

    /// Ends `feed`'s updates; false when it was not subscribed.
    mutating func remove(_ feed: Key) -> Bool {
        guard let i = entries.firstIndex(where: { $0.feed == feed }) else { return false }
        entries.remove(at: i)
        return true
    }

    /// The feeds due by `now`, each moved on to its next time. A slower feed due before the fastest one's next turn
    /// goes out now, a little early and still on its grid: a client's feeds wake it no more often than its fastest.
    mutating func takeDue(now: Int = MonotonicClock.nanos()) -> [Key] {
        guard let fastest = entries.lazy.map(\.periodNanos).min() else { return [] }
        var nextTurn = Int.max
        for entry in entries where entry.periodNanos == fastest {
            nextTurn = min(nextTurn, entry.dueNanos > now ? entry.dueNanos : entry.next(now: now))
        }
        var due: [Key] = []
        for i in entries.indices where entries[i].dueNanos <= now || entries[i].dueNanos < nextTurn {
            due.append(entries[i].feed)
            entries[i].dueNanos = entries[i].next(now: now)
        }
        return due
    }

    /// Milliseconds until the next update is due, at most `cap` (poll's timeout).
    func timeout(cap: Int32, now: Int = MonotonicClock.nanos()) -> Int32 {
        guard let next = entries.lazy.map(\.dueNanos).min() else { return cap }
        let millis = (next - now + 999_999) / 1_000_000
        return Int32(max(0, min(Int(cap), millis)))
    }
}
