/// What a node kind says of itself: its ports, parameters, presets, traits and JSON settings. Each kind owns a static
/// table in its `Nodes/` folder (`NodeDefinition.descriptor`); kinds whose shape depends on their settings (a mixer's
/// input count, an LV2 plugin read from lilv) describe a configured node too.
public struct NodeDescriptor: Sendable {
    /// The `type` string in graph files.
    public var typeName: String
    /// One line saying what the kind does.
    public var summary: String
    public var ports: [PortDescriptor]
    public var parameters: [ParameterDescriptor]
    /// The preset names `preset` takes.
    public var presets: [String]
    public var traits: NodeTraits
    public var settings: [SettingDescriptor]
    /// Settings of which a node must give at least one (a `midi` node's `file` or `port`).
    public var requiresAnyOf: [String] = []

    public init(
        typeName: String, summary: String, ports: [PortDescriptor], parameters: [ParameterDescriptor] = [],
        presets: [String] = [], traits: NodeTraits = [], settings: [SettingDescriptor], requiresAnyOf: [String] = []
    ) {
        (self.typeName, self.summary, self.ports, self.parameters) = (typeName, summary, ports, parameters)
        (self.presets, self.traits, self.settings, self.requiresAnyOf) = (presets, traits, settings, requiresAnyOf)
    }

    /// The JSON keys a node of this kind accepts besides `id`, `type` and the common settings.
    public var settingKeys: [String] { settings.map(\.key) }

    /// Settings every kind accepts, read where the parser reads `id` and `type`.
    public static let commonSettings = [
        SettingDescriptor(
            "meter", .boolean, default: .bool(false),
            doc: "Meters the node's output (peak, held peak, RMS over 300 ms, clips) for `status`; "
                + "output nodes are always metered.")
    ]

    public func setting(_ key: String) -> SettingDescriptor? { settings.first { $0.key == key } }

    public func parameter(_ id: ParameterID) -> ParameterDescriptor? { parameters.first { $0.id == id } }

    /// The parameters' ids as text, for messages.
    public var parameterNames: [String] { parameters.map(\.name) }
}
