/// A parameter's stable id: a name, and an index for parameters that come in numbered sets (`band.3`, `volume.1`).
/// Kinds define typed constructors (`.band(3)`, `.volume(input: 1)`, `.preamp`); the text form is read once, at the
/// edge, and checked against the node's descriptor.
public struct ParameterID: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var index: Int?

    public init(name: String, index: Int? = nil) {
        self.name = name
        self.index = index
    }

    /// Reads the text form: `NAME.N` is name NAME with index N, anything else a name (an LV2 port symbol).
    public init(_ text: String) {
        if let dot = text.lastIndex(of: "."), dot != text.startIndex, let index = Int(text[text.index(after: dot)...]), index >= 0,
           String(index) == text[text.index(after: dot)...] {
            self.init(name: String(text[..<dot]), index: index)
        } else {
            self.init(name: text)
        }
    }

    /// The text form (`band.3`).
    public var description: String { index.map { "\(name).\($0)" } ?? name }
}
