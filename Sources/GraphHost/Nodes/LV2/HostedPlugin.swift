import Logging

/// The plugin an `lv2` or `ladspa` node hosts, as the session, the plan and `status` see it
/// (`NodeInstance.hostedPlugin`).
public protocol HostedPlugin: AnyObject {
    /// The slice length the plugin was told it mostly runs.
    var nominalBlockLength: Int { get }
    /// Whether it takes a new nominal block length while it runs (the options interface).
    var takesNominalBlockLength: Bool { get }
    /// Tells it a new nominal block length; false when it refused (its options interface's set() failed), which
    /// leaves the length it was told as it was, so the session makes it afresh.
    func setNominalBlockLength(_ frames: Int, concurrent: Bool, send: (ControlMessage) throws -> Void) throws -> Bool
    /// Whether it loads a file before it is heard (a convolver's impulse response).
    var loadsFiles: Bool { get }
    /// Slices silenced because the plugin output NaN, Inf or a burst.
    var silencedSlices: Int { get }
    /// Moves what the plugin logged into swift-log.
    func drainLog()
    /// Whether it reports a latency through a port.
    var reportsLatency: Bool { get }
    /// The latency it reports, after running once on silence (nil when it reports none).
    func measuredLatency(maxFrames: Int, channels: Int) -> Float?
    /// The values given to its properties (patch:Set), by property symbol.
    var propertyValues: [String: String] { get }
    /// Its control output values (latency, meters) by port symbol.
    var controlOutputs: [String: Float] { get }
    /// What happened to the helper process of a plugin isolated in one (crashes, hangs, restarts), each a sentence
    /// naming the node and the plugin, oldest first.
    var processEvents: [String] { get }
}

extension HostedPlugin {
    var processEvents: [String] { [] }

    /// Logs, naming the node and its plugin, the slices silenced since `reported` for NaN, Inf or a burst above
    /// +24 dBFS, and returns the count now reported.
    func reportSilenced(node id: String, plugin: String, since reported: Int, to logger: Logger) -> Int {
        let silenced = silencedSlices
        guard silenced > reported else { return reported }
        logger.error(
            """
            node '\(id)' (\(plugin)) produced NaN, Inf or a burst above +24 \
            dBFS: silenced \(silenced) slice(s) so far, fading back in after each
            """
        )
        return silenced
    }
}
