import Foundation

/// Answers live-control lines (from the socket, the console or a watched file) for a playing graph, one at a time.
public final class LiveControl {
    let session: GraphSession
    let status: () -> [String: Any]
    let quit: () -> Void
    /// Receives events for subscribers (e.g. the socket server's publish).
    public var publish: ([String: Any]) -> Void = { _ in }
    private let lock = NSLock()

    public init(session: GraphSession, status: @escaping () -> [String: Any], quit: @escaping () -> Void) {
        self.session = session
        self.status = status
        self.quit = quit
    }

    /// Carries out one line and returns the JSON reply (`{"ok":true,...}` or `{"ok":false,"error":...}`).
    public func handle(_ line: String) -> String {
        let arrival = MonotonicClock.nanos()
        return lock.withLock {
            do {
                let request = try ControlRequest.parse(line)
                switch request {
                case .status:
                    return CommandServer.json(["ok": true, "status": status()])
                case .list:
                    return CommandServer.json(["ok": true, "nodes": nodeList, "chains": session.graph.document.chains])
                case .quit:
                    quit()
                    return CommandServer.json(["ok": true])
                default:
                    let applied = session.appliedMessages.load(ordering: .acquiring)
                    try session.apply(request)
                    publish(["event": "command", "command": request.description])
                    return CommandServer.json(["ok": true, "command": request.description, "arrival": arrival, "appliedBefore": applied])
                }
            } catch {
                return CommandServer.error("\(error)")
            }
        }
    }

    /// Runs `body` with the session while no command is being carried out.
    @discardableResult
    public func withSession<T>(_ body: (GraphSession) -> T) -> T { lock.withLock { body(session) } }

    /// Every node with its parameters and presets; chain nodes with their chain and the choices.
    var nodeList: [[String: Any]] {
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
