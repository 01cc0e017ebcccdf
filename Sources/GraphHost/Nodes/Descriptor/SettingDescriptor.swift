/// One JSON setting of a node kind: its key, JSON type, allowed values, default and a line of doc. The parser's checks,
/// the JSON schema and the doc tables all come from it.
public struct SettingDescriptor: Sendable {
    /// The JSON shape a setting takes.
    public enum ValueType: Sendable {
        case string, boolean, number, integer
        /// An array of numbers.
        case numbers
        /// An array of arrays of numbers (rows).
        case numberRows
        /// A string or a whole number (a name or an index).
        case stringOrInteger
        /// An object whose members map names to a value of `members`' JSON types ("number", "string", "boolean").
        case object(members: [String])
        /// An array of objects, each with these fields (a `peq` node's bands).
        case records(fields: [SettingDescriptor])
    }

    public var key: String
    public var type: ValueType
    /// The range of a number, of each array item, or of an integer.
    public var range: ClosedRange<Double>?
    /// The values a string may take (nil: any).
    public var allowed: [String]?
    public var defaultValue: JSONValue?
    /// Whether a node of the kind must give it.
    public var isRequired = false
    /// A regular expression a string must match (for the schema; the parser says what is wrong in words).
    public var pattern: String?
    /// How many items an array has at least and at most (rows, for `numberRows`).
    public var itemCount: ClosedRange<Int>?
    /// One line of doc.
    public var doc: String

    public init(
        _ key: String, _ type: ValueType, range: ClosedRange<Double>? = nil, allowed: [String]? = nil,
        default defaultValue: JSONValue? = nil, required: Bool = false, pattern: String? = nil,
        itemCount: ClosedRange<Int>? = nil, doc: String
    ) {
        (self.key, self.type, self.range, self.allowed, self.defaultValue, self.isRequired, self.doc) =
            (key, type, range, allowed, defaultValue, required, doc)
        (self.pattern, self.itemCount) = (pattern, itemCount)
    }

    /// The integer range, for `integer` settings.
    public var integerRange: ClosedRange<Int> { Int(range?.lowerBound ?? -1e15)...Int(range?.upperBound ?? 1e15) }
}
