import Foundation
import Synchronization

/// Answers live-control lines (from the socket, the console or a watched file) for a playing graph, one at a time.
/// It owns the session: every thread reaches it through `handle` or `withSession`, one at a time.
public final class LiveControl: Sendable {
    private let session: Mutex<GraphSession>
    private let status: @Sendable (GraphSession) -> [String: Any]
    private let quit: @Sendable () -> Void
    /// Receive every event: the socket's subscribers, OSC subscribers, MPRIS, the PipeWire params.
    private let listeners = Mutex<[@Sendable ([String: Any]) -> Void]>([])

    public init(session: sending GraphSession, status: @escaping @Sendable (GraphSession) -> [String: Any],
                quit: @escaping @Sendable () -> Void) {
        self.session = Mutex(session)
        self.status = status
        self.quit = quit
    }

    /// Asks the run to stop, as the `quit` command does.
    public func requestQuit() { quit() }

    /// Adds a receiver of every event (called on the thread that publishes; it must not call back into `handle`).
    public func addListener(_ listener: @escaping @Sendable ([String: Any]) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Sends an event to every listener.
    public func publish(_ event: [String: Any]) {
        for listener in listeners.withLock({ $0 }) { listener(event) }
    }

    /// Carries out one line and returns the JSON reply (`{"ok":true,...}` or `{"ok":false,"error":...}`).
    public func handle(_ line: String) -> String {
        let arrival = MonotonicClock.nanos()
        let (reply, event) = session.withLock { session -> (String, String?) in
            do {
                let request = try ControlRequest.parse(line)
                switch request {
                case .status:
                    return (CommandServer.json(["ok": true, "status": status(session)]), nil)
                case .list:
                    return (CommandServer.json(["ok": true, "nodes": Self.nodeList(session), "chains": session.graph.document.chains]), nil)
                case .quit:
                    quit()
                    return (CommandServer.json(["ok": true]), nil)
                default:
                    let applied = session.appliedMessages.load(ordering: .acquiring)
                    try session.apply(request)
                    return (CommandServer.json(["ok": true, "command": request.description, "arrival": arrival, "appliedBefore": applied]),
                            request.description)
                }
            } catch {
                return (CommandServer.error("\(error)"), nil)
            }
        }
        if let event { publish(["event": "command", "command": event]) }
        return reply
    }

    /// Runs `body` with the session while no command is being carried out.
    @discardableResult
    public func withSession<T: Sendable>(_ body: (GraphSession) throws -> T) rethrows -> T {
        try session.withLock { try body($0) }
    }

    /// Every node with its parameters and presets; chain nodes with their chain and the choices.
    static func nodeList(_ session: GraphSession) -> [[String: Any]] {
        let document = session.graph.document
        let nodes = document.order.map { index -> [String: Any] in
            let node = document.nodes[index]
            let instance = session.graph.instances[node.id]!
            return [
                "id": node.id, "type": node.definition.typeName,
                "parameters": instance.parameters.map { p -> [String: Any] in
                    var entry: [String: Any] = ["name": p.name]
                    if p.minimum.isFinite { entry["minimum"] = p.minimum }
                    if p.maximum.isFinite { entry["maximum"] = p.maximum }
                    return entry
                },
                "presets": instance.presetNames,
            ]
        }
        let chainNodes = document.chainNodes.map { p -> [String: Any] in
            ["id": p.id, "type": ChainDefinitions.typeName, "chain": p.chain, "chains": document.chains.keys.sorted()]
        }
        return nodes + chainNodes
    }

    /// A reply in words: the error, or the result without the bookkeeping fields.
    public static func describe(reply: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else { return reply }
        if let error = object["error"] as? String { return "error: " + error }
        var shown = object
        for key in ["ok", "arrival", "appliedBefore", "command"] { shown.removeValue(forKey: key) }
        if shown.isEmpty { return "ok" }
        guard let data = try? JSONSerialization.data(withJSONObject: shown, options: [.sortedKeys, .prettyPrinted]) else { return reply }
        return String(decoding: data, as: UTF8.self)
    }
}
