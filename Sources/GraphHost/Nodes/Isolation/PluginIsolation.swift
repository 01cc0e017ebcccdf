import FoundationEssentials
import Synchronization

/// Running plugin nodes in helper processes: the `isolate` setting, `--isolate-plugins`, and the bounds the
/// supervisor keeps (how many blocks without an answer make a hang, how many restarts it tries).
public enum PluginIsolation {
    static let setting = SettingDescriptor(
        "isolate", .boolean, default: .bool(false),
        doc:
            "Runs the plugin in a helper process: a crash or a hang of the plugin fades the node to its dry "
            + "input and restarts it, and nothing else stops. The node then plays one block later (its latency).")

    private static let flags = Mutex((everyPlugin: false, inHelper: false))

    /// Isolates every plugin node (`run --isolate-plugins`, `render --isolate-plugins`).
    public static var everyPlugin: Bool {
        get { flags.withLock { $0.everyPlugin } }
        set { flags.withLock { $0.everyPlugin = newValue } }
    }

    /// Set in the helper process itself, which hosts the plugin in place.
    static var inHelper: Bool {
        get { flags.withLock { $0.inHelper } }
        set { flags.withLock { $0.inHelper = newValue } }
    }

    /// Whether a node that says `isolate: asked` runs its plugin in a helper.
    static func applies(_ asked: Bool) -> Bool { (asked || everyPlugin) && !inHelper }

    /// Blocks in a row without an answer that make a live helper hung (about 85 ms at a 256-frame quantum).
    static let hangBlocks = 16
    /// The SCHED_FIFO priority of a live helper's render thread (PipeWire's data threads default to 88).
    static let realTimePriority: Int32 = 80
    /// Milliseconds an offline render waits for a block (twice, then the helper is hung).
    static let offlineWaitMillis: Int32 = 1000
    /// Restarts tried after faults within `restartWindowSeconds` before the node stays dry.
    static let maxRestarts = 5
    static let restartWindowSeconds = 60.0
    /// Seconds a helper may take to start (load and instantiate its plugin) or to answer a command.
    static let startSeconds = 20.0
    static let answerSeconds = 5.0
    /// Seconds between the saves of a plugin's own state while no command comes (a save follows every command).
    static let saveSeconds = 2.0
}
