/// `sink`: a virtual PipeWire Audio/Sink that applications play into (it shows in `wpctl status` and pavucontrol
/// under `description`); its sound enters the graph here. `name` is its node.name (default GRAPHNAME.ID), which
/// `wpctl set-default` and `pw-play --target` take. Offline, `render --input NODE=FILE` feeds it from a file.
public struct SinkNode: NodeDefinition {
    public static let typeName = "sink"
    public static let settingKeys = ["name", "description"]

    public var name: String?
    public var description: String?

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("name", name ?? "GRAPHNAME.ID"), ("description", description ?? "(the node id)")]
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> SinkNode? {
        let name = settings.string("name", issues: &issues)
        if let name, name.isEmpty || name.contains(where: \.isWhitespace) {
            issues.report(settings.path("name"), "'\(name)': a node name is a word without spaces", at: settings.object["name"])
            return nil
        }
        return SinkNode(name: name, description: settings.string("description", issues: &issues))
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        LiveInputInstance(id: id, source: .sink(name: name, description: description), format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? SinkNode, old.name == name, old.description == description else { return nil }
        return []
    }
}
