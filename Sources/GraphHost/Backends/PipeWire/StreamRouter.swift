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
    private var watch: RegistryWatch?
    private let moved = Mutex<[Move]>([])
    private let ownProcess = "\(getpid())"

    /// The streams moved so far (those still playing and those gone).
    public var moves: [Move] { moved.withLock { $0 } }

    /// The router of `document`'s routes, its sinks named as `run` names them under `graphName`.
    public convenience init(_ document: GraphDocument, graphName: String, logger: Logger) {
        let sinks = document.nodes.compactMap { node in
            node.definition.virtualSinkName(id: node.id, graphName: graphName).map { (node.id, $0) }
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

    /// Starts watching the registry; moves are published as `routed` events.
    public func start(control: LiveControl) throws {
        self.control = control
        control.addStatusPart { [weak self] status in
            if let self { status.routes = .init(rules: routes, moved: moves) }
        }
        let watch = RegistryWatch(logger: logger, decide: { [unowned self] in decide($0, $1) })
        self.watch = watch
        try watch.start()
    }

    /// The sink node.name a new playback stream goes to, or nil.
    private func decide(_ id: UInt32, _ property: (String) -> String?) -> String? {
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
    public func stop() { watch?.stop() }
}
