/// One of the graph's parameters as the PipeWire node publishes it: `NODE:PARAM`, its value as it plays and its
/// range. Besides each node's `set` parameters with a range, an EQ publishes `preset` (the index, 0…21) and EQ and
/// LV2 nodes `bypass` (a bool).
public struct PublishedParameter: Equatable, Sendable {
    public var name: String
    public var value: Double
    public var minimum: Double
    public var maximum: Double
    public var isBool = false

    /// Every published parameter of `document`, in render order.
    public static func all(_ document: GraphDocument) -> [PublishedParameter] {
        document.order.flatMap { n -> [PublishedParameter] in
            let node = document.nodes[n], definition = node.definition
            var list: [PublishedParameter] = []
            if let eq = definition as? IPodEQNode {
                list.append(PublishedParameter(name: "\(node.id):preset", value: Double(eq.preset.index), minimum: 0,
                                               maximum: Double(IPodEQPreset.all.count - 1)))
            }
            for p in definition.parameters where p.minimum.isFinite && p.maximum.isFinite {
                guard let value = definition.value(of: p.name) else { continue }
                list.append(PublishedParameter(name: "\(node.id):\(p.name)", value: value, minimum: p.minimum, maximum: p.maximum))
            }
            if let eq = definition as? IPodEQNode { list.append(.toggle("\(node.id):bypass", eq.bypass)) }
            if let lv2 = definition as? LV2Node { list.append(.toggle("\(node.id):bypass", lv2.bypass)) }
            return list
        }
    }

    static func toggle(_ name: String, _ on: Bool) -> PublishedParameter {
        PublishedParameter(name: name, value: on ? 1 : 0, minimum: 0, maximum: 1, isBool: true)
    }

    /// The control line that sets `NODE:PARAM` to `value` (from a Props change), or the reason it cannot.
    public static func line(name: String, value: Double) throws -> String {
        guard let colon = name.firstIndex(of: ":"), colon != name.startIndex, name.index(after: colon) != name.endIndex else {
            throw CommandError("'\(name)' is not NODE:PARAM")
        }
        let node = name[..<colon], parameter = name[name.index(after: colon)...]
        guard value.isFinite else { throw CommandError("\(name): the value is not a finite number") }
        switch parameter {
        case "bypass": return "bypass \(node) \(value > 0.5 ? "on" : "off")"
        case "preset": return "preset \(node) \(Int(value.rounded()))"
        default: return "set \(node) \(parameter) \(Format.number(value))"
        }
    }
}
