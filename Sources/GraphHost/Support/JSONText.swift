/// The control protocol's JSON: reply objects built as `[String: Any]` (String, Bool, integers, Double, arrays,
/// objects, nil) written as one line with sorted keys, and read back (numbers as Double). "/" is written as it is.
public enum JSONText {
    public static func line(_ value: Any) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    /// Indented for people: a member or item a line, keys sorted.
    public static func indented(_ value: Any, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case let object as [String: Any] where !object.isEmpty:
            return "{\n" + object.keys.sorted().map { inner + JSONValue.quoted($0) + " : " + indented(object[$0]!, indent: inner) }
                .joined(separator: ",\n") + "\n" + indent + "}"
        case let items as [Any] where !items.isEmpty && !(value is String):
            return "[\n" + items.map { inner + indented($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        default:
            return line(value)
        }
    }

    /// A reply's text as a value; nil when it is not JSON.
    public static func value(_ text: String) -> Any? {
        (try? JSONParser.parse(text)).map(any)
    }

    static func any(_ v: JSONValue) -> Any {
        switch v.kind {
        case .object(let members): return Dictionary(members.map { ($0.key, any($0.value)) }, uniquingKeysWith: { $1 })
        case .array(let items): return items.map(any)
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b
        case .null: return Optional<Any>.none as Any
        }
    }

    private static func write(_ value: Any, to out: inout String) {
        switch value {
        case let b as Bool: out += b ? "true" : "false"
        case let i as Int: out += String(i)
        case let i as any BinaryInteger: out += String(describing: i)
        case let d as Double: out += d.isFinite ? Format.number(d) : "null"
        case let f as Float: out += f.isFinite ? Format.number(f) : "null"
        case let s as String: out += JSONValue.quoted(s)
        case let s as Substring: out += JSONValue.quoted(String(s))
        case let object as [String: Any]:
            out += "{"
            for (k, key) in object.keys.sorted().enumerated() {
                if k > 0 { out += "," }
                out += JSONValue.quoted(key) + ":"
                write(object[key]!, to: &out)
            }
            out += "}"
        case let items as [Any]:
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        default:
            // nil (an Optional holding nothing), or a kind JSON has no word for.
            out += "null"
        }
    }
}
