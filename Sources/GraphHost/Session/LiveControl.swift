import FoundationEssentials
import Glibc
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

    /// Carries out one line and returns the JSON reply (`{"ok":true,...}` or `{"ok":false,"error":...}`). A swap
    /// (`load`, `chain`, a new file for a plugin) is built and warmed up without holding the session, so other
    /// lines, `status` and `quit` are answered meanwhile; one swap is built at a time.
    public func handle(_ line: String) -> String {
        let arrival = MonotonicClock.nanos()
        enum Step: Sendable {
            case done(reply: String, event: String?)
            case build(PendingSwap, ControlRequest, applied: Int)
        }
        let step = session.withLock { session -> Step in
            do {
                let request = try ControlRequest.parse(line)
                switch request {
                case .status:
                    return .done(reply: CommandServer.json(["ok": true, "status": status(session)]), event: nil)
                case .list:
                    return .done(reply: CommandServer.json(["ok": true, "nodes": Self.nodeList(session), "chains": session.graph.document.chains]), event: nil)
                case .help(let verb):
                    return .done(reply: CommandServer.json(["ok": true, "help": Self.help(verb)]), event: nil)
                case .quit:
                    session.cancelSwap()
                    quit()
                    return .done(reply: CommandServer.json(["ok": true]), event: nil)
                default:
                    let applied = session.appliedMessages.load(ordering: .acquiring)
                    if let document = try session.swapTarget(for: request) {
                        return .build(try session.prepareSwap(to: document, mode: request.swapMode), request, applied: applied)
                    }
                    try session.apply(request)
                    return .done(reply: Self.applied(request, arrival: arrival, before: applied), event: request.description)
                }
            } catch {
                return .done(reply: CommandServer.error("\(error)"), event: nil)
            }
        }
        var (reply, event): (String, String?)
        switch step {
        case .done(let r, let e):
            (reply, event) = (r, e)
        case .build(let pending, let request, let applied):
            do {
                try pending.build()
                try session.withLock { try $0.commit(pending) }
                (reply, event) = (Self.applied(request, arrival: arrival, before: applied), request.description)
            } catch {
                session.withLock { $0.abandon(pending) }
                (reply, event) = (CommandServer.error("\(error)"), nil)
            }
        }
        if let event { publish(["event": "command", "command": event]) }
        return reply
    }

    /// Tells the graph's plugins the slice length the stream now runs (`GraphSession.followBlockLength`), building the
    /// swap that renews plugins without the options interface without holding the session. Throws what failed.
    public func followBlockLength(_ frames: Int) throws {
        guard let pending = try session.withLock({ try $0.followBlockLength(frames) }) else { return }
        do {
            try pending.build()
            try session.withLock { try $0.commit(pending) }
        } catch {
            session.withLock { $0.abandon(pending) }
            throw error
        }
    }

    /// Stops waiting for a swap being built (the run is ending).
    public func cancelSwap() { session.withLock { $0.cancelSwap() } }

    static func applied(_ request: ControlRequest, arrival: Int, before: Int) -> String {
        CommandServer.json(["ok": true, "command": request.description, "arrival": arrival, "appliedBefore": before])
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
                    var entry: [String: Any] = ["name": p.name, "label": p.label, "type": p.valueType.rawValue]
                    if !p.unit.isEmpty { entry["unit"] = p.unit }
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

    /// Every command's synopsis and summary; for one verb, its arguments and example too.
    static func help(_ verb: String?) -> [[String: Any]] {
        CommandHelp.all.filter { verb == nil || $0.verb == verb }.map { help in
            var entry: [String: Any] = ["command": help.verb, "synopsis": help.synopsis, "summary": help.summary]
            if verb != nil {
                entry["arguments"] = help.arguments.map { ["name": $0.name, "meaning": $0.meaning] }
                entry["example"] = help.example
            }
            return entry
        }
    }

    /// A reply in words: the error, or the result without the bookkeeping fields.
    public static func describe(reply: String) -> String {
        guard let object = JSONText.value(reply) as? [String: Any] else { return reply }
        if let error = object["error"] as? String { return "error: " + error }
        var shown = object
        for key in ["ok", "arrival", "appliedBefore", "command"] { shown.removeValue(forKey: key) }
        if shown.isEmpty { return "ok" }
        return JSONText.indented(shown)
    }
}
