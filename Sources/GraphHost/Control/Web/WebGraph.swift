/// The graph as the page draws it and builds its controls: every node in render order with its kind's descriptor
/// (ports, parameters with units, ranges, curves and labels, presets, traits) and the values it plays now, the links,
/// the chains with their active member, and the meters that are on. The page generates every control from this.
public struct WebGraph: Sendable {
    public var json: JSONValue

    /// The graph `session` plays now.
    public init(_ session: GraphSession, version: String) {
        let document = session.graph.document
        let nodes = document.order.enumerated().map { step, index -> JSONValue in
            let node = document.nodes[index]
            return Self.node(node, step: step, curve: node.definition is any FrequencyResponding)
        }
        let links = document.links.map { link -> JSONValue in
            .object([
                ("from", .string(document.nodes[link.from].id)), ("fromBus", .number(Double(link.fromBus))),
                ("to", .string(document.nodes[link.to].id)), ("toBus", .number(Double(link.toBus))),
            ])
        }
        let chains = document.chainNodes.map { placement -> JSONValue in
            .object([
                ("id", .string(placement.id)), ("chain", .string(placement.chain)),
                ("chains", .array(document.chains.keys.sorted().map(JSONValue.string))),
                ("members", .array((document.chains[placement.chain] ?? []).map(JSONValue.string))),
            ])
        }
        json = .object([
            ("type", .string("graph")), ("version", .string(version)), ("name", .string(document.displayName)),
            ("sampleRate", .number(Double(document.format.sampleRate))),
            ("nodes", .array(nodes)), ("links", .array(links)), ("chains", .array(chains)),
        ])
    }

    /// The values every node plays now (parameters, preset, bypass, meter), for the `values` message sent after
    /// any command from any surface.
    public static func values(_ session: GraphSession) -> JSONValue {
        let document = session.graph.document
        return .object([
            ("type", .string("values")),
            ("nodes", .object(document.order.map { document.nodes[$0] }.map { ($0.id, state($0)) })),
        ])
    }

    static func node(_ node: GraphNode, step: Int, curve: Bool) -> JSONValue {
        let descriptor = node.definition.descriptor
        return .object([
            ("id", .string(node.id)), ("type", .string(descriptor.typeName)), ("summary", .string(descriptor.summary)),
            ("step", .number(Double(step))), ("traits", .array(descriptor.traits.names.map(JSONValue.string))),
            (
                "ports",
                .array(
                    descriptor.ports.map { port in
                        .object([
                            ("name", .string(port.name)), ("direction", .string(port.direction.rawValue)),
                            ("signal", .string(port.signal.rawValue)), ("role", .string(port.role.rawValue)),
                        ])
                    })
            ),
            ("parameters", .array(descriptor.parameters.map(parameter))),
            ("presets", .array(descriptor.presets.map(JSONValue.string))),
            ("response", .bool(curve)),
            ("state", state(node)),
        ])
    }

    static func state(_ node: GraphNode) -> JSONValue {
        let definition = node.definition
        let values = definition.descriptor.parameters.compactMap { p -> (String, JSONValue)? in
            definition.value(of: p.id).map { (p.name, .number($0)) }
        }
        return .members([
            ("values", .object(values)),
            ("preset", definition.presetName.map(JSONValue.string)),
            ("bypass", .bool(definition.liveSettings.first { $0.key == "bypass" }?.value?.boolValue ?? false)),
            ("meter", .bool(node.meter || definition.traits.contains(.isOutput))),
        ])
    }

    static func parameter(_ p: ParameterDescriptor) -> JSONValue {
        .members([
            ("id", .string(p.name)), ("label", .string(p.label)), ("unit", .string(p.unit)),
            ("type", .string(p.valueType.rawValue)), ("curve", .string(p.curve.rawValue)),
            ("minimum", p.minimum.isFinite ? .number(p.minimum) : nil),
            ("maximum", p.maximum.isFinite ? .number(p.maximum) : nil),
            ("default", p.defaultValue.map(JSONValue.number)),
            (
                "labels",
                p.labels.isEmpty
                    ? nil
                    : .array(p.labels.map { .object([("label", .string($0.label)), ("value", .number($0.value))]) })
            ),
            ("smoothing", p.smoothingSeconds.map(JSONValue.number)),
        ])
    }
}
