import Foundation

/// Answers live-control lines (from the socket or a console) for a playing graph, one at a time.
public final class LiveControl {
    let graph: CompiledGraph
    let status: () -> [String: Any]
    let quit: () -> Void
    /// Receives events for subscribers (e.g. the socket server's publish).
    public var publish: ([String: Any]) -> Void = { _ in }
    private let lock = NSLock()

    public init(graph: CompiledGraph, status: @escaping () -> [String: Any], quit: @escaping () -> Void) {
        self.graph = graph
        self.status = status
        self.quit = quit
    }

    /// Carries out one line and returns the JSON reply (`{"ok":true,...}` or `{"ok":false,"error":...}`).
    public func handle(_ line: String) -> String {
        lock.withLock {
            do {
                let request = try ControlRequest.parse(line)
                switch request {
                case .node, .pause, .play:
                    try graph.apply(request)
                    publish(["event": "command", "command": request.description])
                    return CommandServer.json(["ok": true, "command": request.description])
                case .status:
                    return CommandServer.json(["ok": true, "status": status()])
                case .list:
                    return CommandServer.json(["ok": true, "nodes": nodeList])
                case .quit:
                    quit()
                    return CommandServer.json(["ok": true])
                }
            } catch {
                return CommandServer.error("\(error)")
            }
        }
    }

    var nodeList: [[String: Any]] {
        graph.document.order.map { index in
            let node = graph.document.nodes[index]
            let instance = graph.instances[node.id]!
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
    }
}
