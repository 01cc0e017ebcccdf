import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The service's surface: follows PipeWire's default sink and loads the graph the configuration maps it to (the
/// graph's usual crossfaded swap; the outputs, which name no target, follow the default sink with WirePlumber), and
/// reloads the configuration when its file is saved, keeping the running one when the new one is broken.
public final class OutputDeviceFollower: ControlSurface, @unchecked Sendable {
    /// The default sink's properties (nil: none) and the graph chosen for it.
    public struct State: Sendable {
        public var config: ServiceConfig
        public var device: [String: String]?
        public var graph: String
    }

    private let state: Mutex<State>
    private let logger: Logger
    private let queue = DispatchQueue(label: "graphhost-service")
    private var watch: RegistryWatch?
    private var fileWatch: FileWatch?
    private var control: LiveControl?
    private var stamp: [Double]
    private let stopped = Mutex(false)

    /// Moves applications by the configuration's routes (or the playing graph's own).
    private let router: StreamRouter?

    /// `config` is running with `graph` (the graph the run started with); `router` takes the configuration's routes
    /// when it is reloaded.
    public init(config: ServiceConfig, graph: String, router: StreamRouter? = nil, logger: Logger) {
        state = Mutex(State(config: config, device: nil, graph: graph))
        self.router = router
        self.logger = logger
        stamp = LiveRunner.modificationStamp(config.file)
    }

    public var current: State { state.withLock { $0 } }

    public func start(control: LiveControl) throws {
        self.control = control
        control.addStatusPart { [weak self] status in
            guard let s = self?.current else { return }
            status.device = .init(
                name: s.device?["node.name"], description: s.device?["node.description"],
                route: s.device?["device.route.description"], graph: s.graph)
        }
        let watch = RegistryWatch(
            logger: logger,
            defaultSink: { [unowned self] properties in
                queue.async { self.follow(properties) }
            })
        self.watch = watch
        try watch.start()
        let file = state.withLock { $0.config.file }
        fileWatch = try FileWatch(path: file) { [weak self] in
            guard let self else { return }
            queue.async { self.lookAtConfig() }
        }
    }

    /// Loads the graph for the default sink `device` if it is not the one playing.
    private func follow(_ device: [String: String]?) {
        // A change queued just before `stop()` loads nothing: the run is shutting down.
        guard !stopped.withLock({ $0 }) else { return }
        let (graph, changed) = state.withLock { s -> (String, Bool) in
            s.device = device
            let graph = s.config.graph(for: device)
            return (graph, graph != s.graph)
        }
        let name = (device?["node.name"] ?? "none") + (device?["device.route.name"].map { " (\($0))" } ?? "")
        guard changed, let control else {
            logger.info("service: output device \(name), graph \(graph)")
            control?.publish(.device(name: device?["node.name"], graph: graph))
            return
        }
        do {
            _ = try control.perform(.load(path: graph, swap: .crossfade))
            state.withLock { $0.graph = graph }
            logger.info("service: output device \(name): loaded \(graph)")
            control.publish(.device(name: device?["node.name"], graph: graph))
        } catch {
            logger.error("service: output device \(name): loading \(graph) failed: \(error)")
        }
    }

    /// Reloads the configuration when its file changed; a broken one is logged and the running one kept.
    private func lookAtConfig() {
        guard !stopped.withLock({ $0 }) else { return }
        let file = state.withLock { $0.config.file }
        let now = LiveRunner.modificationStamp(file)
        guard now != stamp else { return }
        stamp = now
        do {
            let config = try ServiceConfig.load(path: file)
            let device = state.withLock { s -> [String: String]? in
                s.config = config
                return s.device
            }
            logger.info("service: reloaded \(file)")
            if let router, let playing = control?.withSession({ $0.graph.document }) {
                router.setDefaults(config.routes, for: playing)
            }
            follow(device)
        } catch {
            logger.error("service: \(file) not reloaded, the running configuration stays: \(error)")
        }
    }

    public func stop() {
        stopped.withLock { $0 = true }
        fileWatch?.stop()
        watch?.stop()
        queue.sync {}
    }
}
