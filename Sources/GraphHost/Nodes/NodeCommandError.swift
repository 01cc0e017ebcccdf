/// Why a node cannot carry out a command (or be built); the description says it in the words `set`, `preset`,
/// `bypass` and `seek` answer with.
public enum NodeCommandError: Error, CustomStringConvertible, Sendable, Equatable {
    /// `node` (as messages name it: "mixer 'mix'", "'fx' (URI)") has no `noun` (parameter, control) `parameter`;
    /// `known` lists what it has, as the message shows it ("parameters: volume, volume.0").
    case unknownParameter(node: String, parameter: ParameterID, noun: String = "parameter", known: String)
    /// `value` is outside the range of `parameter` (as messages name it: "band gain"), in `unit`; `note` says more.
    case outOfRange(
        parameter: String, value: Double, range: ClosedRange<Double>, unit: String = "", note: String? = nil)
    /// `node` has no preset `name`; `heading` introduces the `known` names ("presets").
    case unknownPreset(node: String, name: String, heading: String = "presets", known: [String])
    /// `parameter` of `node` has no value named `label`; `known` says what it takes.
    case unknownLabel(node: String, parameter: ParameterID, label: String, known: String)
    /// `parameter` of `node` takes a number, not `label`.
    case numbersOnly(node: String, parameter: ParameterID, label: String)
    /// `seek` to a node that does not play media.
    case seekNotSupported(node: String)
    /// A seek a stream cannot make, with the reason.
    case cannotSeek(node: String, reason: String)
    /// The node does not take the command (bypass on a mixer, parameters on an output), with the reason.
    case notSupported(String)
    /// A value the node cannot use (a property's text, a file), with the reason.
    case invalidValue(String)
    /// The node could not be built or could not carry the command out, with the reason.
    case failed(String)

    public var description: String {
        switch self {
        case .unknownParameter(let node, let parameter, let noun, let known):
            return "\(node) has no \(noun) '\(parameter)'; \(known)"
        case .outOfRange(let parameter, let value, let range, let unit, let note):
            return "\(parameter) \(Format.number(value))\(unit.isEmpty ? "" : " " + unit) is out of range "
                + "\(Format.number(range.lowerBound))…\(Format.number(range.upperBound))"
                + (note.map { " (\($0))" } ?? "")
        case .unknownPreset(let node, let name, let heading, let known):
            return
                "unknown preset '\(name)' for '\(node)'; \(heading): "
                + "\(known.isEmpty ? "none" : known.joined(separator: ", "))"
        case .unknownLabel(let node, let parameter, let label, let known):
            return "'\(node)' \(parameter) has no value named '\(label)'; \(known)"
        case .numbersOnly(let node, let parameter, let label):
            return "'\(label)' is not a number ('\(node)' \(parameter) takes a number)"
        case .seekNotSupported(let node):
            return "'\(node)' does not play media; only stream nodes seek"
        case .cannotSeek(let node, let reason):
            return "seek \(node): \(reason)"
        case .notSupported(let reason), .invalidValue(let reason), .failed(let reason):
            return reason
        }
    }
}
