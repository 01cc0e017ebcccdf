/// One link from a node's output bus to another node's input bus. A link to an LV2 node's port by symbol
/// (`"to": "comp:sidechain"`) feeds that port alone, on an input bus of its own (`toPort` names it); a link from
/// output ports by symbol (`"from": "xover:lo_l,lo_r"`) reads an output bus made of those ports (`fromPort`).
public struct GraphLink: Equatable, Sendable {
    public var from: Int
    public var fromBus: Int
    public var to: Int
    public var toBus: Int
    public var toPort: String?
    public var fromPort: String?

    public init(from: Int, fromBus: Int, to: Int, toBus: Int, toPort: String? = nil, fromPort: String? = nil) {
        (self.from, self.fromBus, self.to, self.toBus, self.toPort, self.fromPort) = (
            from, fromBus, to, toBus, toPort, fromPort
        )
    }
}
