/// What `status` shows of a plugin that only its helper process can read: its control outputs (meters, latency), the
/// values of its properties, and the slices its output guard silenced; sent as one JSON line.
struct PluginReport {
    var outputs: [String: Float] = [:]
    var properties: [String: String] = [:]
    var silencedSlices = 0

    /// Read from the plugin itself (in the helper), after taking what it reported.
    init(_ plugin: (any HostedPlugin)?) {
        guard let plugin else { return }
        plugin.drainLog()
        outputs = plugin.controlOutputs.filter(\.value.isFinite)
        properties = plugin.propertyValues
        silencedSlices = plugin.silencedSlices
    }

    /// Read from the helper's answer.
    // Swift 6.3.1 crashes optimizing this initializer (CopyPropagation, "Found ownership error"); it runs per status.
    @_optimize(none)
    init(json: JSONValue) {
        for (key, value) in json["outputs"]?.objectMembers ?? [] {
            if let number = value.numberValue { outputs[key] = Float(number) }
        }
        for (key, value) in json["properties"]?.objectMembers ?? [] {
            if let text = value.stringValue { properties[key] = text }
        }
        silencedSlices = json["silencedSlices"]?.numberValue.map { Int($0) } ?? 0
    }

    var json: JSONValue {
        .object([
            ("outputs", .dictionary(outputs) { .number(Double($0)) }),
            ("properties", .dictionary(properties) { .string($0) }),
            ("silencedSlices", .number(silencedSlices)),
        ])
    }
}
