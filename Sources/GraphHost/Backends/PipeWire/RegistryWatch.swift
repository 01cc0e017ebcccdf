import CPipeWireGlue
import FoundationEssentials
import Glibc
import Logging

/// A PipeWire connection of its own, on a thread loop of its own, that watches the registry and the default metadata
/// (gh_router): it moves playback streams where `decide` says (a sink's node.name, or nil to leave one), and reports
/// the default sink's properties whenever it changes (`defaultSink`, nil: none). Both run on the loop's thread.
final class RegistryWatch: @unchecked Sendable {
    typealias Decide = (_ node: UInt32, _ property: (String) -> String?) -> String?
    typealias DefaultSink = (_ properties: [String: String]?) -> Void

    private let decide: Decide?
    private let defaultSink: DefaultSink?
    private let logger: Logger
    private var loop: OpaquePointer?
    private var context: OpaquePointer?
    private var core: OpaquePointer?
    private var router: OpaquePointer?

    init(logger: Logger, decide: Decide? = nil, defaultSink: DefaultSink? = nil) {
        self.logger = logger
        self.decide = decide
        self.defaultSink = defaultSink
    }

    func start() throws {
        _ = PipeWirePlayer.pipewireInitialized
        guard let loop = pw_thread_loop_new("graphhost-watch", nil) else {
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
        let decideCallback: gh_router_decide? =
            decide == nil
            ? nil
            : { data, id, props, target, size in
                let me = Unmanaged<RegistryWatch>.fromOpaque(data!).takeUnretainedValue()
                guard let props,
                    let name = me.decide?(id, { key in spa_dict_lookup(props, key).map { String(cString: $0) } })
                else { return 0 }
                _ = name.withCString { strncpy(target!, $0, size) }
                target![size - 1] = 0
                return 1
            }
        let sinkCallback: gh_router_default_sink? =
            defaultSink == nil
            ? nil
            : { data, props in
                let me = Unmanaged<RegistryWatch>.fromOpaque(data!).takeUnretainedValue()
                me.defaultSink?(props.map(RegistryWatch.properties))
            }
        router = gh_router_new(loop, core, decideCallback, sinkCallback, Unmanaged.passUnretained(self).toOpaque())
        if router == nil { throw PlaybackError.stream("cannot watch the registry") }
    }

    static func properties(_ dict: UnsafePointer<spa_dict>) -> [String: String] {
        var result: [String: String] = [:]
        for i in 0..<Int(dict.pointee.n_items) {
            let item = dict.pointee.items[i]
            if let key = item.key, let value = item.value { result[String(cString: key)] = String(cString: value) }
        }
        return result
    }

    /// Puts every moved stream's target back as it was, then disconnects. Safe to call more than once.
    func stop() {
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
