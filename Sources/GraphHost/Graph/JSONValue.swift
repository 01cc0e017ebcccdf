/// A parsed JSON value that remembers where it stood in its source text, so errors can name a line.
public struct JSONValue: Sendable {
    /// The kinds of JSON value; objects keep their keys in source order.
    public enum Kind: Sendable {
        case object([(key: String, value: JSONValue)])
        case array([JSONValue])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    public var kind: Kind
    public var line: Int
    public var column: Int

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = kind { return members.last(where: { $0.key == key })?.value }
        return nil
    }

    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let items) = kind { return items }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = kind { return s }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let n) = kind { return n }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = kind { return b }
        return nil
    }

    /// A word for the value's kind, for error messages.
    public var typeName: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}
