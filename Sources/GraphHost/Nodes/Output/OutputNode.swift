/// `output`: the graph's sink. `render` writes it to a file, `run` to PipeWire.
public struct OutputNode: NodeDefinition {
    public static let typeName = "output"
    public static let settingKeys: [String] = []
    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 0 }
    public var summary: [(String, String)] { [] }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> OutputNode? {
        OutputNode()
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance { OutputInstance() }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? { old is OutputNode ? [] : nil }
}

final class OutputInstance: NodeInstance {
    var kernel: RenderStep.Kernel { .output }
    func check(_ command: NodeCommand) throws {
        throw CommandError("the output node has no parameters or presets")
    }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }
    func close() {}
}
