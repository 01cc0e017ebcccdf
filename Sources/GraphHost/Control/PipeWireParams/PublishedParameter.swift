import GraphHostDSP

/// One of the graph's parameters as the PipeWire node publishes it: `NODE:PARAM`, what it is, its value as it
/// plays and its range. Besides each node's `set` parameters with a range, an EQ publishes `preset` (the index, an
/// int 0…21) and EQ and LV2 nodes `bypass` (a bool); an LV2 toggle is a bool, an integer port or an enumeration of
/// whole numbers an int.
public struct PublishedParameter: Equatable, Sendable {
    /// How the value is typed in PipeWire's PropInfo and Props.
    public enum Kind: Sendable { case float, int, bool }
    /// The command a change becomes: `set NODE PARAM VALUE`, `preset NODE INDEX` (an EQ's preset) or
    /// `bypass NODE on|off` (the host's bypass of an EQ or LV2 node).
    public enum Action: Sendable { case set, preset, bypass }

    public var name: String
    public var description: String
    public var value: Double
    public var minimum: Double
    public var maximum: Double
    public var kind = Kind.float
    public var action = Action.set

    /// Every published parameter of `document`, in render order: read from each node's descriptor.
    public static func all(_ document: GraphDocument) -> [PublishedParameter] {
        document.order.flatMap { n -> [PublishedParameter] in
            let node = document.nodes[n]
            let definition = node.definition
            let id = node.id
            let descriptor = definition.descriptor
            var list: [PublishedParameter] = []
            if descriptor.traits.contains(.numberedPresets), let name = definition.presetName,
                let index = descriptor.presets.firstIndex(of: name)
            {
                list.append(
                    PublishedParameter(
                        name: "\(id):preset", description: presetDescription(id, descriptor.presets),
                        value: Double(index), minimum: 0, maximum: Double(descriptor.presets.count - 1),
                        kind: .int, action: .preset))
            }
            for p in descriptor.parameters where p.isBounded {
                guard let value = definition.value(of: p.id) else { continue }
                list.append(
                    PublishedParameter(
                        name: "\(id):\(p.name)",
                        description: "\(id): \(p.label)" + (p.unit.isEmpty ? "" : " (\(p.unit))"),
                        value: value, minimum: p.minimum, maximum: p.maximum,
                        kind: p.valueType == .bool ? .bool : p.isWhole ? .int : .float))
            }
            // A plugin's own control named `bypass` keeps the name.
            if descriptor.traits.contains(.canBypass) && descriptor.parameter(ParameterID("bypass")) == nil {
                let bypassed = definition.liveSettings.first { $0.key == "bypass" }?.value?.boolValue ?? false
                list.append(.toggle(id, bypassed))
            }
            return list
        }
    }

    private static func presetDescription(_ node: String, _ presets: [String]) -> String {
        "\(node): preset number (0 \(presets[0]) … \(presets.count - 1) \(presets[presets.count - 1]))"
    }

    static func toggle(_ node: String, _ on: Bool) -> PublishedParameter {
        PublishedParameter(
            name: "\(node):bypass", description: "\(node): bypass", value: on ? 1 : 0, minimum: 0, maximum: 1,
            kind: .bool, action: .bypass)
    }

    /// Whether `value`, as a Props change carries it (a float, an int or a bool), is what the parameter holds now.
    func holds(_ value: Double) -> Bool {
        switch kind {
        case .bool: (value > 0.5) == (self.value > 0.5)
        case .int: value.rounded() == self.value.rounded()
        case .float: Float(value) == Float(self.value)
        }
    }

    /// The request that sets this parameter to `value` (from a Props change), or the reason it cannot.
    public func request(_ value: Double) throws(PropsError) -> Command {
        try Self.request(name: name, value: value, action: action)
    }

    /// Why a Props change names no parameter graphhost can set.
    public enum PropsError: Error, CustomStringConvertible {
        case notNodeParameter(String)
        case notFinite(String)

        public var description: String {
            switch self {
            case .notNodeParameter(let name): return "'\(name)' is not NODE:PARAM"
            case .notFinite(let name): return "\(name): the value is not a finite number"
            }
        }
    }

    /// The request that sets `NODE:PARAM` to `value` (from a Props change), or the reason it cannot.
    public static func request(name: String, value: Double, action: Action = .set) throws(PropsError) -> Command {
        guard let colon = name.firstIndex(of: ":"), colon != name.startIndex, name.index(after: colon) != name.endIndex
        else {
            throw .notNodeParameter(name)
        }
        let node = String(name[..<colon])
        let parameter = ParameterID(String(name[name.index(after: colon)...]))
        guard value.isFinite else { throw .notFinite(name) }
        switch action {
        case .bypass: return .node(NodeRequest(node: node, action: .bypass(value > 0.5)))
        case .preset: return .node(NodeRequest(node: node, action: .preset(String(Int(value.rounded())))))
        case .set:
            // A float pod's value is taken as its shortest decimal (6.1, not 6.099999904632568).
            let shortest = Double(Float(value)) == value ? Double(Format.number(Float(value))) ?? value : value
            return .node(NodeRequest(node: node, action: .set(parameter: parameter, value: shortest)))
        }
    }
}
