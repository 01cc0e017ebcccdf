import FoundationEssentials
import Glibc

extension JSONValue {
    /// A value made in code (no source position).
    public init(_ kind: Kind) { self.init(kind: kind, line: 0, column: 0) }

    public static func number(_ x: Double) -> JSONValue { JSONValue(.number(x)) }
    public static func string(_ s: String) -> JSONValue { JSONValue(.string(s)) }
    public static func bool(_ b: Bool) -> JSONValue { JSONValue(.bool(b)) }
    public static func array(_ items: [JSONValue]) -> JSONValue { JSONValue(.array(items)) }
    public static func object(_ members: [(key: String, value: JSONValue)]) -> JSONValue { JSONValue(.object(members)) }

    /// The object with `key` set to `value` (replaced in place, or appended), or removed when `value` is nil.
    public func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard var members = objectMembers else { return self }
        if let value {
            if let i = members.lastIndex(where: { $0.key == key }) {
                members[i].value = value
            } else {
                members.append((key, value))
            }
        } else {
            members.removeAll { $0.key == key }
        }
        var copy = self
        copy.kind = .object(members)
        return copy
    }

    /// The value with the one at `path` (as graph errors name them: `nodes[2]`, `chains.warm[0]`, `transport`)
    /// replaced by `change` of it; unchanged when the path does not lead anywhere.
    public func updating(path: String, _ change: (JSONValue) -> JSONValue) -> JSONValue {
        var steps: [Either] = []
        for part in path.split(separator: ".") {
            var rest = Substring(part)
            if let bracket = rest.firstIndex(of: "[") {
                if bracket > rest.startIndex { steps.append(.key(String(rest[..<bracket]))) }
                rest = rest[bracket...]
                while rest.hasPrefix("["), let close = rest.firstIndex(of: "]"),
                    let i = Int(rest[rest.index(after: rest.startIndex)..<close])
                {
                    steps.append(.index(i))
                    rest = rest[rest.index(after: close)...]
                }
            } else {
                steps.append(.key(String(rest)))
            }
        }
        return updating(steps[...], change)
    }

    private enum Either {
        case key(String)
        case index(Int)
    }

    private func updating(_ steps: ArraySlice<Either>, _ change: (JSONValue) -> JSONValue) -> JSONValue {
        guard let step = steps.first else { return change(self) }
        var copy = self
        switch (step, kind) {
        case (.key(let key), .object(var members)):
            guard let i = members.lastIndex(where: { $0.key == key }) else { return self }
            members[i].value = members[i].value.updating(steps.dropFirst(), change)
            copy.kind = .object(members)
        case (.index(let i), .array(var items)) where items.indices.contains(i):
            items[i] = items[i].updating(steps.dropFirst(), change)
            copy.kind = .array(items)
        default:
            return self
        }
        return copy
    }

    /// The value as indented JSON text: objects one member a line, arrays of plain values on one line.
    public func text(indent: String = "") -> String {
        let inner = indent + "  "
        switch kind {
        case .object(let members):
            if members.isEmpty { return "{}" }
            let line =
                "{ " + members.map { Self.quoted($0.key) + ": " + $0.value.text() }.joined(separator: ", ") + " }"
            if members.allSatisfy({
                $0.value.objectMembers == nil
                    && $0.value.arrayValue?.contains { $0.objectMembers != nil || $0.arrayValue != nil } != true
            })
                && line.count + indent.count <= 110
            {
                return line
            }
            return "{\n"
                + members.map { inner + Self.quoted($0.key) + ": " + $0.value.text(indent: inner) }.joined(
                    separator: ",\n") + "\n\(indent)}"
        case .array(let items):
            if items.isEmpty { return "[]" }
            if items.allSatisfy({ $0.objectMembers == nil && $0.arrayValue == nil }) {
                return "[" + items.map { $0.text() }.joined(separator: ", ") + "]"
            }
            return "[\n" + items.map { inner + $0.text(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .string(let s): return Self.quoted(s)
        case .number(let n): return Format.number(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    /// `s` as a JSON string ("/" is written as it is).
    static func quoted(_ s: String) -> String {
        var out = ""
        appendQuoted(s, to: &out)
        return out
    }

    /// Appends `s` as a JSON string.
    static func appendQuoted(_ s: String, to out: inout String) {
        out += "\""
        defer { out += "\"" }
        guard s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out += s
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}
