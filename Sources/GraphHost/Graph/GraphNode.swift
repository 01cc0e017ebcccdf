/// One node of a checked graph.
public struct GraphNode: Sendable {
    public var id: String
    /// Position in `GraphDocument.nodes`.
    public var index: Int
    public var definition: any NodeDefinition
    /// Where the node is written in the file (`nodes[2]`, or `chains.warm[0]` for a member of a chain).
    public var path: String
    /// Whether its output is metered (`"meter": true`, or `meter NODE on`); output nodes are metered unless turned off.
    public var meter = false
}
