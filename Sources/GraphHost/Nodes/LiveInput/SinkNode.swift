/// `sink`: a virtual PipeWire Audio/Sink that applications play into (it shows in `wpctl status` and pavucontrol
/// under `description`); its sound enters the graph here. `name` is its node.name (default GRAPHNAME.ID), which
/// `wpctl set-default` and `pw-play --target` take. Offline, `render --input NODE=FILE` feeds it from a file.
public struct SinkNode: NodeDefinition {
    public static let typeName = "sink"

    static let nameSetting = SettingDescriptor(
        "name", .string, pattern: #"^\S+$"#,
        doc: "The virtual sink's node.name (default GRAPHNAME.ID; `pw-play --target NAME`, `wpctl set-default`).")
    static let descriptionSetting = SettingDescriptor(
        "description", .string, doc: "What `wpctl status` and pavucontrol show (default: the id).")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "A virtual PipeWire sink that applications play into; its sound enters the graph here.",
        ports: [PortDescriptor(.audio, .output, name: "out")], traits: [.isSource, .isLiveInput],
        settings: [nameSetting, descriptionSetting])

    public var name: String?
    public var description: String?

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("name", name ?? "GRAPHNAME.ID"), ("description", description ?? "(the node id)")]
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> SinkNode? {
        let name = settings.string(nameSetting, issues: &issues)
        if let name, name.isEmpty || name.contains(where: \.isWhitespace) {
            issues.report(
                settings.path("name"), "'\(name)': a node name is a word without spaces", at: settings.object["name"])
            return nil
        }
        return SinkNode(name: name, description: settings.string(descriptionSetting, issues: &issues))
    }

    public func virtualSinkName(id: String, graphName: String) -> String? { name ?? "\(graphName).\(id)" }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        LiveInputInstance(id: id, source: .sink(name: name, description: description), format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? SinkNode, old.name == name, old.description == description else { return nil }
        return []
    }
}
