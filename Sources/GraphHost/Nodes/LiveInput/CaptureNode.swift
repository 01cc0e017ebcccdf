/// `capture`: live sound from a PipeWire source: a microphone, or a sink's monitor (what another node plays). `target`
/// is a node.name or object.serial; without it the default source. Offline, `render --input NODE=FILE` feeds it from
/// a file; without one it is silent.
public struct CaptureNode: NodeDefinition {
    public static let typeName = "capture"

    static let targetSetting = SettingDescriptor(
        "target", .string, doc: "A PipeWire node.name or object.serial (default: the default source).")
    static let monitorSetting = SettingDescriptor(
        "monitor", .boolean, default: .bool(false),
        doc: "Record a sink's monitor, what is played into it, rather than a source.")

    public static let descriptor = NodeDescriptor(
        typeName: typeName, summary: "Live sound from a PipeWire source or a sink's monitor.",
        ports: [PortDescriptor(.audio, .output, name: "out")], traits: [.isSource, .isLiveInput],
        settings: [targetSetting, monitorSetting])

    public var target: String?
    /// Capture a sink's monitor (what is played into it) rather than a source.
    public var monitor: Bool

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("target", target ?? "the default source"), ("monitor", "\(monitor)")]
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> CaptureNode?
    {
        CaptureNode(
            target: settings.string(targetSetting, issues: &issues),
            monitor: settings.bool(monitorSetting, issues: &issues) ?? false)
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        LiveInputInstance(id: id, source: .capture(target: target, monitor: monitor), format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? CaptureNode, old.target == target, old.monitor == monitor else { return nil }
        return []
    }
}
