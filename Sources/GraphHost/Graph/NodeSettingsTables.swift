/// The settings tables of docs/graph-format.md (`graphhost schema --doc-tables`), one per node kind, generated from the
/// descriptors between the doc's markers.
public enum NodeSettingsTables {
    public static let startMarker = "<!-- generated: node settings -->"
    public static let endMarker = "<!-- /generated -->"

    /// The tables in Markdown.
    public static var markdown: String {
        ([commonTable] + NodeKinds.all.map { $0.descriptor }.map(table)).joined(separator: "\n")
    }

    /// The settings every kind accepts besides `id` and `type`.
    static var commonTable: String {
        ([
            "**Every kind** accepts these besides `id` and `type`:", "",
            "| setting | type | values | default | meaning |",
            "|---|---|---|---|---|",
        ] + NodeDescriptor.commonSettings.map { row($0, key: $0.key) })
        .joined(separator: "\n") + "\n"
    }

    /// One kind: what it is, its ports and traits, and a row per setting.
    static func table(_ kind: NodeDescriptor) -> String {
        let ports = kind.ports.map {
            "\($0.name) (\($0.direction.rawValue)\($0.signal == .audio ? "" : ", " + $0.signal.rawValue))"
        }
        var lines = [
            "**`\(kind.typeName)`**: \(kind.summary) Ports: \(ports.joined(separator: ", "))."
                + (kind.traits.isEmpty ? "" : " Traits: \(kind.traits.names.joined(separator: ", ")).")
        ]
        if !kind.requiresAnyOf.isEmpty {
            lines[0] += " Give at least one of " + kind.requiresAnyOf.map { "`\($0)`" }.joined(separator: ", ") + "."
        }
        lines += ["", "| setting | type | values | default | meaning |", "|---|---|---|---|---|"]
        for setting in kind.settings {
            lines.append(row(setting, key: setting.key))
            if case .records(let fields) = setting.type {
                lines += fields.map { row($0, key: "\(setting.key)[].\($0.key)") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A table row for `setting`, named `key`.
    static func row(_ setting: SettingDescriptor, key: String) -> String {
        let cells = [
            "`\(key)`", typeName(setting), values(setting),
            setting.isRequired ? "required" : setting.defaultValue.map { $0.text() } ?? "", setting.doc,
        ]
        return "| " + cells.map { $0.replacing("|", with: "\\|") }.joined(separator: " | ") + " |"
    }

    static func typeName(_ setting: SettingDescriptor) -> String {
        switch setting.type {
        case .string: return "string"
        case .boolean: return "boolean"
        case .number: return "number"
        case .integer: return "integer"
        case .numbers: return "array of numbers"
        case .numberRows: return "array of arrays of numbers"
        case .stringOrInteger: return "string or integer"
        case .object(let members): return "object of " + members.joined(separator: ", ")
        case .records: return "array of objects"
        }
    }

    static func values(_ setting: SettingDescriptor) -> String {
        var parts: [String] = []
        if let count = setting.itemCount {
            parts.append(
                count.lowerBound == count.upperBound
                    ? "\(count.lowerBound) items" : "\(count.lowerBound)…\(count.upperBound) items")
        }
        if let range = setting.range {
            parts.append("\(Format.number(range.lowerBound))…\(Format.number(range.upperBound))")
        }
        if let allowed = setting.allowed { parts.append(allowed.joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }

    /// `text` (the doc) with the marked section replaced by the tables, or nil when it has no marked section.
    public static func replacingSection(in text: String) -> String? {
        guard let start = text.firstRange(of: startMarker),
            let end = text[start.upperBound...].firstRange(of: endMarker)
        else {
            return nil
        }
        return String(text[..<start.upperBound]) + "\n" + markdown + String(text[end.lowerBound...])
    }
}
