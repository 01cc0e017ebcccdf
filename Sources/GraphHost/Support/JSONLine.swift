/// The control protocol's JSON: one line, keys sorted, "/" written as it is, numbers as `Format.number` writes them
/// (a non-finite number as null).
extension JSONValue {
    /// The value as one line.
    public var compact: String {
        var out = ""
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    /// Indented for people: a member or item a line, keys sorted.
    public func indented(_ indent: String = "") -> String {
        let inner = indent + "  "
        switch kind {
        case .object(let members) where !members.isEmpty:
            return "{\n"
                + members.sorted { $0.key < $1.key }.map {
                    inner + Self.quoted($0.key) + " : " + $0.value.indented(inner)
                }
                .joined(separator: ",\n") + "\n" + indent + "}"
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { inner + $0.indented(inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        default:
            return compact
        }
    }

    private func write(to out: inout String) {
        switch kind {
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n.isFinite ? Format.number(n) : "null"
        case .string(let s): Self.appendQuoted(s, to: &out)
        case .null: out += "null"
        case .object(let members):
            out += "{"
            let inOrder = zip(members, members.dropFirst()).allSatisfy { $0.key < $1.key }
            for (k, member) in (inOrder ? members : members.sorted { $0.key < $1.key }).enumerated() {
                if k > 0 { out += "," }
                Self.appendQuoted(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        case .array(let items):
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        }
    }

    /// An object of the members whose value is not nil.
    public static func members(_ members: [(String, JSONValue?)]) -> JSONValue {
        .object(members.compactMap { key, value in value.map { (key, $0) } })
    }

    public static func number(_ x: Int) -> JSONValue { .number(Double(x)) }

    /// A level or loudness: the number, or null when it is not finite (silence's -infinity).
    public static func level(_ x: Double) -> JSONValue { x.isFinite ? .number(x) : JSONValue(.null) }

    /// A Float as its shortest decimal (0.45, not 0.44999998807907104).
    public static func number(_ x: Float) -> JSONValue { .number(Double(Format.number(x)) ?? Double(x)) }

    /// An object with a member per key, sorted.
    public static func dictionary<T>(_ values: [String: T], _ value: (T) -> JSONValue) -> JSONValue {
        .object(values.keys.sorted().map { ($0, value(values[$0]!)) })
    }
}
