/// A parameter's stable id: a name, an index for parameters that come in numbered sets (`band.3`, `volume.1`), and a
/// field for sets whose members have several parameters (`band.3.gain`). Kinds define typed constructors (`.band(3)`,
/// `.volume(input: 1)`, `.preamp`); the text form is read once, at the edge, and checked against the node's descriptor.
public struct ParameterID: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var index: Int?
    public var field: String?

    public init(name: String, index: Int? = nil, field: String? = nil) {
        self.name = name
        self.index = index
        self.field = index == nil ? nil : field
    }

    /// Reads the text form: `NAME.N` is name NAME with index N, `NAME.N.FIELD` adds a field, anything else is a name
    /// (an LV2 port symbol).
    public init(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func index(_ part: String) -> Int? { Int(part).flatMap { $0 >= 0 && String($0) == part ? $0 : nil } }
        if parts.count >= 2, let i = index(parts[parts.count - 1]),
            !parts[..<(parts.count - 1)].joined(separator: ".").isEmpty
        {
            self.init(name: parts[..<(parts.count - 1)].joined(separator: "."), index: i)
        } else if parts.count >= 3, let i = index(parts[parts.count - 2]), !parts[parts.count - 1].isEmpty,
            !parts[..<(parts.count - 2)].joined(separator: ".").isEmpty
        {
            self.init(name: parts[..<(parts.count - 2)].joined(separator: "."), index: i, field: parts[parts.count - 1])
        } else {
            self.init(name: text)
        }
    }

    /// The text form (`band.3`, `band.3.gain`).
    public var description: String {
        guard let index else { return name }
        return "\(name).\(index)" + (field.map { ".\($0)" } ?? "")
    }
}
