/// Something that happened in a run, sent to every listener (socket subscribers, OSC subscribers, MPRIS, PipeWire
/// params). Positions are the run's, in seconds.
public enum ControlEvent: Sendable, Equatable {
    /// A command was carried out (its line).
    case command(String)
    case learned(channel: Int, controller: Int, node: String, parameter: ParameterID)
    case reconnected(position: Double, gapSeconds: Double)
    case finished(position: Double)
    /// The watched graph file changed and was loaded (`ok`) or not.
    case reload(ok: Bool)
    case latency(frames: Int, position: Double)
    case streamFailed(node: String, error: String, position: Double)
    case streamRetrying(node: String, reason: String, position: Double)
    case streamRecovered(node: String, position: Double)
    case title(node: String, title: String, artist: String?, position: Double)
    case damaged(node: String, silencedFrames: Int, skippedBytes: Int, position: Double)
    case overrun(node: String, milliseconds: Double, count: Int)
    /// A node took more than half the render call's time while the call took more than half the budget (averages
    /// over a second): `share` of the call's time, the call's `load` (share of the budget).
    case loadDominated(node: String, share: Double, load: Double, position: Double)
    case xruns(count: Int, position: Double)
    case underruns(count: Int, position: Double)
    case silenced(node: String, slices: Int, position: Double)
    /// The helper process of an isolated plugin crashed or hung, runs again, or stays off: `message` says which.
    case pluginProcess(node: String, message: String, position: Double)
    case memoryNotLocked(bytes: Int)
    case recordingDropped(frames: Int, position: Double)
    /// The routes moved an application's playback stream (PipeWire node id) into a sink node.
    case routed(node: UInt32, application: String, sink: String)
    /// `service run` follows a new default sink (nil: none) with `graph`.
    case device(name: String?, graph: String)
}

extension ControlEvent {
    /// The event as one JSON line: `{"event":NAME, ...}`.
    public var line: String { json.compact }

    public var json: JSONValue {
        func event(_ name: String, _ members: [(String, JSONValue?)]) -> JSONValue {
            .members([("event", .string(name))] + members)
        }
        switch self {
        case .command(let line): return event("command", [("command", .string(line))])
        case .learned(let channel, let controller, let node, let parameter):
            return event(
                "learned",
                [
                    ("channel", .number(channel)), ("cc", .number(controller)), ("node", .string(node)),
                    ("param", .string(parameter.description)),
                ])
        case .reconnected(let position, let gap):
            return event("reconnected", [("position", .number(position)), ("gapSeconds", .number(gap))])
        case .finished(let position): return event("finished", [("position", .number(position))])
        case .reload(let ok): return event("reload", [("ok", .bool(ok))])
        case .latency(let frames, let position):
            return event("latency", [("frames", .number(frames)), ("position", .number(position))])
        case .streamFailed(let node, let error, let position):
            return event(
                "streamFailed", [("node", .string(node)), ("error", .string(error)), ("position", .number(position))])
        case .streamRetrying(let node, let reason, let position):
            return event(
                "streamRetrying",
                [("node", .string(node)), ("reason", .string(reason)), ("position", .number(position))])
        case .streamRecovered(let node, let position):
            return event("streamRecovered", [("node", .string(node)), ("position", .number(position))])
        case .title(let node, let title, let artist, let position):
            return event(
                "title",
                [
                    ("node", .string(node)), ("title", .string(title)), ("artist", artist.map(JSONValue.string)),
                    ("position", .number(position)),
                ])
        case .damaged(let node, let silenced, let skipped, let position):
            return event(
                "damaged",
                [
                    ("node", .string(node)), ("silencedFrames", .number(silenced)), ("skippedBytes", .number(skipped)),
                    ("position", .number(position)),
                ])
        case .overrun(let node, let milliseconds, let count):
            return event(
                "overrun",
                [("node", .string(node)), ("milliseconds", .number(milliseconds)), ("count", .number(count))])
        case .loadDominated(let node, let share, let load, let position):
            return event(
                "loadDominated",
                [
                    ("node", .string(node)), ("share", .number(share)), ("load", .number(load)),
                    ("position", .number(position)),
                ])
        case .xruns(let count, let position):
            return event("xruns", [("count", .number(count)), ("position", .number(position))])
        case .underruns(let count, let position):
            return event("underruns", [("count", .number(count)), ("position", .number(position))])
        case .silenced(let node, let slices, let position):
            return event(
                "silenced", [("node", .string(node)), ("slices", .number(slices)), ("position", .number(position))])
        case .pluginProcess(let node, let message, let position):
            return event(
                "pluginProcess",
                [("node", .string(node)), ("message", .string(message)), ("position", .number(position))])
        case .memoryNotLocked(let bytes): return event("memoryNotLocked", [("bytes", .number(bytes))])
        case .recordingDropped(let frames, let position):
            return event("recordingDropped", [("frames", .number(frames)), ("position", .number(position))])
        case .device(let name, let graph):
            return event("device", [("name", name.map(JSONValue.string)), ("graph", .string(graph))])
        case .routed(let node, let application, let sink):
            return event(
                "routed",
                [("node", .number(Double(node))), ("application", .string(application)), ("sink", .string(sink))])
        }
    }
}
