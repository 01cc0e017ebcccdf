/// One update of a feed (`Feed`), as `LiveControl.read` answers it.
public enum FeedReading: Sendable, Equatable {
    case meters([RunStatus.Meter])

    /// The update as a socket line's JSON, `time` being when it was read (seconds on the monotonic clock):
    /// `{"event":"meters","time":12.345,"meters":[...]}`.
    public func json(time: Double) -> JSONValue {
        let head: [(key: String, value: JSONValue)] = [("event", .string(name)), ("time", .number(time))]
        switch self {
        case .meters(let meters): return .object(head + [("meters", .array(meters.map(\.json)))])
        }
    }

    /// The feed's name, as `subscribe` takes it.
    public var name: String {
        switch self {
        case .meters: return Feed.meters.description
        }
    }
}

/// Where a surface reads feeds: `LiveControl`, or a test's stand-in.
public protocol FeedSource: Sendable {
    /// A client starts receiving `feed`: what it measures is turned on while anyone watches. Throws when the feed
    /// names something the graph does not have.
    func watch(_ feed: Feed) throws(ControlError)
    /// A client stops receiving `feed`.
    func unwatch(_ feed: Feed)
    /// The feed's latest update.
    func read(_ feed: Feed) throws(ControlError) -> FeedReading
}

extension LiveControl: FeedSource {
    public func watch(_ feed: Feed) throws(ControlError) {
        switch feed {
        case .meters: return
        }
    }

    public func unwatch(_ feed: Feed) {
        switch feed {
        case .meters: return
        }
    }

    public func read(_ feed: Feed) throws(ControlError) -> FeedReading {
        switch feed {
        case .meters: return .meters(withSession { $0.graph.meterReadings })
        }
    }
}
