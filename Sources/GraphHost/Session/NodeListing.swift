/// What `list` answers: every node with its parameters and presets, chain nodes with their chain and the choices,
/// and the graph's chains.
public struct NodeListing: Sendable {
    public var nodes: [Node]
    /// The graph's chains with their member ids in order.
    public var chains: [String: [String]]

    /// One node as `list` shows it.
    public struct Node: Sendable {
        public var id: String
        public var type: String
        public var parameters: [ParameterDescriptor]
        public var presets: [String]
        public var chain: Chain?
    }

    /// What a chain node plays: its chain, and the graph's chains it can swap to.
    public struct Chain: Sendable, Equatable {
        public var current: String
        public var all: [String]
    }

    init(_ session: GraphSession) {
        let document = session.graph.document
        nodes = document.order.map { index in
            let node = document.nodes[index]
            let instance = session.graph.instances[node.id]!
            return Node(
                id: node.id, type: node.definition.typeName, parameters: instance.parameters,
                presets: instance.presetNames)
        }
        nodes += document.chainNodes.map { p in
            Node(
                id: p.id, type: ChainDefinitions.typeName, parameters: [], presets: [],
                chain: Chain(current: p.chain, all: document.chains.keys.sorted()))
        }
        chains = document.chains
    }
}

extension NodeListing.Node {
    public var json: JSONValue {
        if let chain {
            return .object([
                ("id", .string(id)), ("type", .string(type)), ("chain", .string(chain.current)),
                ("chains", .array(chain.all.map(JSONValue.string))),
            ])
        }
        return .object([
            ("id", .string(id)), ("type", .string(type)),
            (
                "parameters",
                .array(
                    parameters.map { p in
                        .members([
                            ("name", .string(p.name)), ("label", .string(p.label)),
                            ("type", .string(p.valueType.rawValue)),
                            ("unit", p.unit.isEmpty ? nil : .string(p.unit)),
                            ("minimum", p.minimum.isFinite ? .number(p.minimum) : nil),
                            ("maximum", p.maximum.isFinite ? .number(p.maximum) : nil),
                        ])
                    })
            ),
            ("presets", .array(presets.map(JSONValue.string))),
        ])
    }
}

extension NodeListing {
    public var json: [(key: String, value: JSONValue)] {
        [("nodes", .array(nodes.map(\.json))), ("chains", .dictionary(chains) { .array($0.map(JSONValue.string)) })]
    }
}
