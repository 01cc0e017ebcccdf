/// One update of a feed (`Feed`), as `LiveControl.read` answers it.
public enum FeedReading: Sendable, Equatable {
    case meters([RunStatus.Meter])
    case loudness([RunStatus.Loudness])
    case spectrum(RunStatus.Spectrum)
    /// nil until a second was measured.
    case load(DSPLoad?)

    /// The update as a socket line's JSON, `time` being when it was read (seconds on the monotonic clock):
    /// `{"event":"meters","time":12.345,"meters":[...]}`.
    public func json(time: Double) -> JSONValue {
        let head: [(key: String, value: JSONValue)] = [("event", .string(name)), ("time", .number(time))]
        switch self {
        case .meters(let meters): return .object(head + [("meters", .array(meters.map(\.json)))])
        case .loudness(let loudness): return .object(head + [("loudness", .array(loudness.map(\.json)))])
        case .spectrum(let spectrum): return .object(head + [("spectrum", spectrum.json)])
        case .load(let load): return .object(head + [("load", load?.json ?? JSONValue(.null))])
        }
    }

    /// `json(time:).compact`, written straight into text for the meters, which pages and sockets ask for 30 times a
    /// second (no tree of values built and sorted first).
    public func compactJSON(time: Double) -> String {
        guard case .meters(let meters) = self else { return json(time: time).compact }
        var out = #"{"event":"meters","meters":["#
        out.reserveCapacity(64 + 128 * meters.count)
        for (m, meter) in meters.enumerated() {
            out += m > 0 ? #",{"channels":["# : #"{"channels":["#
            for (c, level) in meter.channels.enumerated() {
                if c > 0 { out += "," }
                out += #"{"clips":"# + Format.number(Double(level.clips))
                for (key, value) in [("heldPeak", level.heldPeak), ("peak", level.peak), ("rms", level.rms)] {
                    out += #",""# + key + #"":"# + (value.isFinite ? Format.number(value) : "null")
                }
                out += "}"
            }
            out += #"],"node":"#
            JSONValue.appendQuoted(meter.node, to: &out)
            out += "}"
        }
        return out + #"],"time":"# + (time.isFinite ? Format.number(time) : "null") + "}"
    }

    /// The feed's name, as `subscribe` takes it.
    public var name: String {
        switch self {
        case .meters: return "meters"
        case .loudness: return "loudness"
        case .spectrum: return "spectrum"
        case .load: return "load"
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
        try watch(feed, on: true)
    }

    public func unwatch(_ feed: Feed) {
        try? watch(feed, on: false)
    }

    private func watch(_ feed: Feed, on: Bool) throws(ControlError) {
        let done = withSession { session -> Result<Void, ControlError> in
            do throws(ControlError) {
                switch feed {
                case .meters, .load: break
                case .loudness: try session.watch(.loudness, node: nil, on: on)
                case .spectrum(let node): try session.watch(.spectrum, node: node, on: on)
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try done.get()
    }

    public func read(_ feed: Feed) throws(ControlError) -> FeedReading {
        switch feed {
        case .meters: return .meters(withSession { $0.meterReadings })
        case .loudness: return .loudness(withSession { $0.analysis.loudness })
        case .spectrum(let node):
            let bands = withSession { session in
                session.analysis.withConsumer(.spectrum, node: node) { ($0 as? SpectrumAnalyzer)?.reading() ?? [] }
            }
            return .spectrum(RunStatus.Spectrum(node: node, bands: bands ?? []))
        case .load:
            guard case .status(let status) = try perform(.status) else { return .load(nil) }
            return .load(status.load)
        }
    }
}
