/// What a client asks of a stream of updates: events as they happen, or a feed at a rate (`subscribe`,
/// `subscribe meters 30`, `unsubscribe meters`).
public struct Subscription: Equatable, Sendable {
    /// nil: the events (`ControlEvent`).
    public var feed: Feed?
    /// Updates a second.
    public var rate: Double

    /// The rates a feed may ask for, updates a second.
    public static let rates = 1.0...60.0

    public init(feed: Feed?, rate: Double = 0) {
        self.feed = feed
        self.rate = rate
    }

    public static let usage =
        "subscribe [FEED RATE] (FEED: \(Feed.names.joined(separator: ", ")); RATE: 1…60 updates a second), "
        + "unsubscribe [FEED]"

    /// Reads `subscribe`, `subscribe FEED [NODE] RATE`, `unsubscribe` or `unsubscribe FEED [NODE]`; returns the
    /// subscription and whether it is a subscribe, or nil when the line is neither.
    public static func parse(_ line: String) throws(CommandError) -> (subscription: Subscription, on: Bool)? {
        var words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first, verb == "subscribe" || verb == "unsubscribe" else { return nil }
        let on = verb == "subscribe"
        words.removeFirst()
        guard !words.isEmpty else { return (Subscription(feed: nil), on) }
        var rate = 0.0
        if on {
            guard words.count >= 2, let asked = Double(words.removeLast()), rates.contains(asked) else {
                throw CommandError("usage: \(usage)")
            }
            rate = asked
        }
        return (Subscription(feed: try feed(words), rate: rate), on)
    }

    static func feed(_ words: [String]) throws(CommandError) -> Feed {
        switch words.first {
        case "meters" where words.count == 1: return .meters
        case "loudness" where words.count == 1: return .loudness
        case "spectrum" where words.count == 2: return .spectrum(node: words[1])
        case "load" where words.count == 1: return .load
        default:
            throw CommandError(
                "unknown feed '\(words.joined(separator: " "))'; feeds: \(Feed.names.joined(separator: ", "))")
        }
    }
}
