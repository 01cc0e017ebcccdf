/// One message from the page (a JSON object with an `op` and, optionally, an `id` the reply repeats), decoded into
/// what it asks: a typed command for `LiveControl.perform`, a feed subscription, the graph, or an EQ's response.
/// docs/control.md ("The web page's protocol") lists every form.
public enum WebRequest: Equatable, Sendable {
    case command(Command)
    case subscribe(WebFeed, rate: Double)
    case unsubscribe(WebFeed)
    /// The graph as the page draws it (`WebGraph`).
    case graph
    /// A node's frequency response (a node whose effect is a fixed filter: the EQs).
    case response(node: String)

    /// What a page can subscribe to: a control feed, or the transport (play state, position and streams, as
    /// `status` gives them).
    public enum WebFeed: Hashable, Sendable {
        case feed(Feed)
        case transport
    }

    /// Why a message was refused, for the reply's `error`.
    public struct Refusal: Error, Equatable, Sendable {
        public var message: String
        init(_ message: String) { self.message = message }
    }

    /// The highest rate a page may ask for, per second.
    public static let maxRate = 60.0

    /// Decodes one message; `id` is the message's `id` when it has one (even when the rest is refused).
    public static func decode(_ text: String) -> (id: JSONValue?, request: Result<WebRequest, Refusal>) {
        let message: JSONValue
        do { message = try JSONParser.parse(text) } catch {
            let reason = (error as? JSONSyntaxError).map { ": \($0.message) at column \($0.column)" } ?? ""
            return (nil, .failure(Refusal("a message must be one JSON object\(reason)")))
        }
        guard message.objectMembers != nil else { return (nil, .failure(Refusal("a message must be a JSON object"))) }
        do throws(Refusal) {
            return (message["id"], .success(try decode(message)))
        } catch {
            return (message["id"], .failure(error))
        }
    }

    static func decode(_ m: JSONValue) throws(Refusal) -> WebRequest {
        guard let op = m["op"]?.stringValue else { throw Refusal("'op' must be a string") }
        func text(_ key: String) throws(Refusal) -> String {
            guard let value = m[key]?.stringValue, !value.isEmpty else {
                throw Refusal("'\(op)' needs '\(key)', a string")
            }
            return value
        }
        func number(_ key: String) throws(Refusal) -> Double {
            guard let value = m[key]?.numberValue, value.isFinite else {
                throw Refusal("'\(op)' needs '\(key)', a number")
            }
            return value
        }
        func flag(_ key: String) throws(Refusal) -> Bool {
            guard let value = m[key]?.boolValue else { throw Refusal("'\(op)' needs '\(key)', true or false") }
            return value
        }
        func node(_ action: NodeCommand) throws(Refusal) -> WebRequest {
            .command(.node(NodeRequest(node: try text("node"), action: action)))
        }
        switch op {
        case "set":
            let parameter = ParameterID(try text("parameter"))
            if let label = m["value"]?.stringValue { return try node(.choose(parameter: parameter, label: label)) }
            if let on = m["value"]?.boolValue { return try node(.set(parameter: parameter, value: on ? 1 : 0)) }
            return try node(.set(parameter: parameter, value: try number("value")))
        case "preset": return try node(.preset(try text("name")))
        case "bypass": return try node(.bypass(try flag("on")))
        case "seek": return try node(.seek(try number("seconds")))
        case "chain": return .command(.chain(node: try text("node"), name: try text("name")))
        case "load": return .command(.load(path: try text("path")))
        case "meter": return .command(.meter(node: try text("node"), on: try flag("on")))
        case "tempo": return .command(.tempo(try number("bpm")))
        case "pause": return .command(.pause)
        case "play": return .command(.play)
        case "graph": return .graph
        case "response": return .response(node: try text("node"))
        case "subscribe":
            let rate = try number("rate")
            guard rate > 0, rate <= maxRate else {
                throw Refusal("'rate' must be above 0 and at most \(Format.number(maxRate)) a second")
            }
            return .subscribe(try feed(m, text), rate: rate)
        case "unsubscribe": return .unsubscribe(try feed(m, text))
        default:
            throw Refusal(
                "unknown op '\(op)'; ops: set, preset, bypass, seek, chain, load, meter, tempo, pause, play, graph, "
                    + "response, subscribe, unsubscribe")
        }
    }

    private static func feed(_ m: JSONValue, _ text: (String) throws(Refusal) -> String) throws(Refusal) -> WebFeed {
        switch try text("feed") {
        case "meters": return .feed(.meters)
        case "loudness": return .feed(.loudness)
        case "load": return .feed(.load)
        case "spectrum": return .feed(.spectrum(node: try text("node")))
        case "transport": return .transport
        case let other:
            throw Refusal("unknown feed '\(other)'; feeds: meters, loudness, spectrum (with node), load, transport")
        }
    }
}
