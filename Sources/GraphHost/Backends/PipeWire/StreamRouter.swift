import CPipeWireGlue
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// Moves applications' playback streams into the graph's sinks by its `routes`, as pavucontrol moves them (the
/// stream's target.object in PipeWire's default metadata, which WirePlumber follows), when it starts and whenever a
/// stream appears; `stop()` puts them back. A connection of its own, on a thread loop of its own. graphhost's own
/// streams are never moved (a monitor of its output is a capture stream, which no rule considers), nor a stream that
/// names its own target.
public final class StreamRouter: ControlSurface, @unchecked Sendable {
    /// A stream the routes moved.
    public struct Move: Sendable, Equatable {
        public var nodeID: UInt32
        public var application: String
        public var sink: String
    }

    public let routes: StreamRoutes
    /// Each sink node's PipeWire node.name, by node id.
    let sinkNames: [String: String]
    private let logger: Logger
    private var control: LiveControl?
    private var loop: OpaquePointer?
    private var context: OpaquePointer?
    private var core: OpaquePointer?
    private var router: OpaquePointer?
    private let moved = Mutex<[Move]>([])
    private let ownProcess = "\(getpid())"

    /// The streams moved so far (those still playing and those gone).
    public var moves: [Move] { moved.withLock { $0 } }

    /// The router of `document`'s routes, its sinks named as `run` names them under `graphName`.
    public convenience init(_ document: GraphDocument, graphName: String, logger: Logger) {
        let sinks = document.nodes.compactMap { node in
            (node.definition as? SinkNode).map { (node.id, $0.nodeName(id: node.id, graphName: graphName)) }
        }
        self.init(
            routes: document.routes ?? StreamRoutes(rules: []), sinkNames: Dictionary(uniqueKeysWithValues: sinks),
            logger: logger)
    }

    public init(routes: StreamRoutes, sinkNames: [String: String], logger: Logger) {
        self.routes = routes
        self.sinkNames = sinkNames
        self.logger = logger
    }

    /// Connects on a thread loop of its own and starts watching the registry; moves are published as `routed`
    /// events.
    public func start(control: LiveControl) throws {
        _ = PipeWirePlayer.pipewireInitialized
        self.control = control
        guard let loop = pw_thread_loop_new("graphhost-routes", nil) else {
            throw PlaybackError.stream("cannot create a thread loop")
        }
        self.loop = loop
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            throw PlaybackError.stream("cannot create a context")
        }
        self.context = context
        pw_thread_loop_start(loop)
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        guard let core = pw_context_connect(context, nil, 0) else {
            throw PlaybackError.noDaemon(socket: PlaybackError.socketPath, reason: String(cString: strerror(errno)))
        }
        self.core = core
        router = gh_router_new(
            loop, core,
            { data, id, props, target, size in
                let me = Unmanaged<StreamRouter>.fromOpaque(data!).takeUnretainedValue()
                guard let props, let name = me.decide(id, props) else { return 0 }
                _ = name.withCString { strncpy(target!, $0, size) }
                target![size - 1] = 0
                return 1
            }, Unmanaged.passUnretained(self).toOpaque())
        if router == nil { throw PlaybackError.stream("cannot watch the registry") }
    }

    /// The sink node.name a new playback stream goes to, or nil.
    private func decide(_ id: UInt32, _ props: UnsafePointer<spa_dict>) -> String? {
        let property = { (key: String) in spa_dict_lookup(props, key).map { String(cString: $0) } }
        // A stream that names its own target (as `pw-play --target` does) goes where it asked.
        guard property(PW_KEY_APP_PROCESS_ID) != ownProcess, property("target.object") == nil,
            property("node.target") == nil, let sink = routes.sink(for: property),
            let name = sinkNames[sink]
        else { return nil }
        let move = Move(
            nodeID: id, application: property(PW_KEY_APP_NAME) ?? property(PW_KEY_NODE_NAME) ?? "node \(id)",
            sink: sink)
        moved.withLock { $0.append(move) }
        logger.info("routes: '\(move.application)' (node \(id)) to sink '\(sink)'")
        control?.publish(.routed(node: id, application: move.application, sink: sink))
        return name
    }

    /// Puts every moved stream back where it was, then disconnects.
    public func stop() {
        guard let loop else { return }
        pw_thread_loop_lock(loop)
        if let router {
            if gh_router_restore(router, 2000) < 0 { logger.warning("routes: the daemon did not confirm the return") }
            gh_router_destroy(router)
            self.router = nil
        }
        if let core {
            pw_core_disconnect(core)
            self.core = nil
        }
        pw_thread_loop_unlock(loop)
        pw_thread_loop_stop(loop)
        if let context { pw_context_destroy(context) }
        pw_thread_loop_destroy(loop)
        (self.loop, self.context) = (nil, nil)
    }

    deinit { stop() }
}
