/// `output`: where the graph's sound leaves. `render` writes it to a file, `run` plays it through a PipeWire stream
/// of its own, to `target` (a node.name or object.serial) or the default sink; `run --target` sets the first output's.
/// A graph may have several.
public struct OutputNode: NodeDefinition {
    public static let typeName = "output"
    static let targetSetting = SettingDescriptor(
        "target", .string,
        doc:
            "A PipeWire node.name or object.serial (default: the default "
            + "sink; `run --target` overrides the first output's)."
    )
    static let rtpSetting = SettingDescriptor(
        "rtp", .string, pattern: "^rtp://.+$",
        doc:
            "Send this output over the network as RTP when running: `rtp://DESTINATION:PORT?format=L16&ptime=4` "
            + "(L16 or L24, milliseconds per packet), through PipeWire's own RTP sink, loaded into graphhost's "
            + "PipeWire context (the daemon's configuration stays as it is); it is announced by SAP to the "
            + "destination under `session=NAME` (default: graphhost DESTINATION:PORT)."
    )
    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "Where the graph's sound leaves: a file when rendering, a PipeWire stream when running.",
        ports: [PortDescriptor(.audio, .input, name: "in")], traits: [.isOutput],
        settings: [targetSetting, rtpSetting])
    public var target: String?
    /// The RTP session this output is sent as (`run` only).
    public var rtp: RTPSession?
    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 0 }
    public var summary: [(String, String)] {
        (target.map { [("target", $0)] } ?? [])
            + (rtp.map {
                [("rtp", "\($0.address):\($0.port), \($0.format.rawValue), \($0.ptime) ms, '\($0.announcedName)'")]
            } ?? [])
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> OutputNode? {
        let target = settings.string(targetSetting, issues: &issues)
        guard let url = settings.string(rtpSetting, issues: &issues) else {
            return OutputNode(target: target)
        }
        let path = settings.path("rtp")
        do {
            let session = try RTPSession(url: url)
            if target != nil {
                issues.report(
                    path, "an output sent as RTP plays to its RTP sink; leave out \"target\"",
                    at: settings.object["rtp"])
                return nil
            }
            if session.givesRate && session.rate != context.format.sampleRate
                || session.givesChannels && session.channels != context.format.channels
            {
                issues.report(
                    path,
                    "an output is sent at the graph's \(context.format.sampleRate) Hz and \(context.format.channels) "
                        + "channels; leave out rate and channels, or give the graph's",
                    at: settings.object["rtp"])
                return nil
            }
            return OutputNode(target: nil, rtp: session)
        } catch {
            issues.report(path, "\(error)", at: settings.object["rtp"])
            return nil
        }
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance { OutputInstance() }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        (old as? OutputNode).map { $0.target == target && $0.rtp == rtp } ?? false ? [] : nil
    }

    public var outputTarget: String? { rtp?.sinkNodeName ?? target }
    public var rtpOutput: RTPSession? { rtp }
}

final class OutputInstance: NodeInstance {
    var kernel: RenderStep.Kernel { .output }
    func check(_ command: NodeCommand) throws {
        throw NodeCommandError.notSupported("the output node has no parameters or presets")
    }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }
    func close() {}
}
