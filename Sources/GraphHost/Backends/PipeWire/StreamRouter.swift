import CPipeWireGlue
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// Moves applications' playback streams into the graph's sinks by its `routes`, as pavucontrol moves them (the
/// stream's target.object in PipeWire's default metadata, which WirePlumber follows), when it starts and whenever a
/// stream appears; `stop()` puts them back. A connection of its own, on a thread loop of its own. graphhost's own
/// streams are never moved (a monitor of its output is a capture stream, which no rule considers), nor a stream that
/// names its own target. A graph that a swap brings in (`load`, the service's device change) brings its routes, or the
/// default routes when it has none; they decide for the streams that appear from then on.
public final class StreamRouter: ControlSurface, @unchecked Sendable {
    /// A stream the routes moved.
    public struct Move: Sendable, Equatable {
        public var nodeID: UInt32
        public var application: String
        public var sink: String
    }

    /// The rules in force and each sink node's PipeWire node.name, by node id.
    private struct Rules {
        var routes: StreamRoutes
        var sinkNames: [String: String]
        /// For a graph without routes (the service configuration's).
        var defaults: StreamRoutes?
    }
    private let rules: Mutex<Rules>
    private let graphName: String
    private let logger: Logger
    private var control: LiveControl?
    private var watch: RegistryWatch?
    private let moved = Mutex<[Move]>([])
    private let ownProcess = "\(getpid())"

    /// The streams moved so far (those still playing and those gone).
    public var moves: [Move] { moved.withLock { $0 } }

    /// The routes in force.
    public var routes: StreamRoutes { rules.withLock { $0.routes } }

    /// The router of `document`'s routes (or `defaults` when it has none), its sinks named as `run` names them under
    /// `graphName`.
    public init(_ document: GraphDocument, defaults: StreamRoutes? = nil, graphName: String, logger: Logger) {
        self.graphName = graphName
        self.logger = logger
        rules = Mutex(Rules(routes: StreamRoutes(rules: []), sinkNames: [:], defaults: defaults))
        follow(document)
    }

    /// Takes the routes of `document` (a swap brought it in), or the defaults when it has none.
    public func follow(_ document: GraphDocument) {
        let sinks = document.nodes.compactMap { node in
            node.definition.virtualSinkName(id: node.id, graphName: graphName).map { (node.id, $0) }
        }
        rules.withLock {
            $0.routes = document.routes ?? $0.defaults ?? StreamRoutes(rules: [])
            $0.sinkNames = Dictionary(uniqueKeysWithValues: sinks)
        }
    }

    /// Sets the routes for graphs without their own (a reloaded service configuration), and `document`'s in force.
    public func setDefaults(_ defaults: StreamRoutes?, for document: GraphDocument) {
        rules.withLock { $0.defaults = defaults }
        follow(document)
    }

    /// Starts watching the registry; moves are published as `routed` events.
    public func start(control: LiveControl) throws {
        self.control = control
        control.addStatusPart { [weak self] status in
            if let self { status.routes = .init(rules: routes, moved: moves) }
        }
        control.addSwapListener { [weak self] document in self?.follow(document) }
        let watch = RegistryWatch(logger: logger, decide: { [unowned self] in decide($0, $1) })
        self.watch = watch
        try watch.start()
    }

    /// The sink node.name a new playback stream goes to, or nil.
    private func decide(_ id: UInt32, _ property: (String) -> String?) -> String? {
        // A stream that names its own target (as `pw-play --target` does) goes where it asked.
        let (routes, sinkNames) = rules.withLock { ($0.routes, $0.sinkNames) }
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
