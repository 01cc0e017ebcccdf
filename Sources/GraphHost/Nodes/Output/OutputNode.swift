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
    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "Where the graph's sound leaves: a file when rendering, a PipeWire stream when running.",
        ports: [PortDescriptor(.audio, .input, name: "in")], traits: [.isOutput], settings: [targetSetting])
    public var target: String?
    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 0 }
    public var summary: [(String, String)] { target.map { [("target", $0)] } ?? [] }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> OutputNode? {
        OutputNode(target: settings.string(targetSetting, issues: &issues))
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance { OutputInstance() }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        (old as? OutputNode)?.target == target ? [] : nil
    }

    public var outputTarget: String? { target }
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
