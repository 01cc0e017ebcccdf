/// A `chain` node: which of the graph's named chains runs in its place.
public struct ChainPlacement: Equatable, Sendable {
    public var id: String
    public var chain: String
}
