/// A parameter a node takes in `set`: its id, words, range and how its values are spread and typed.
public struct ParameterDescriptor: Sendable, Equatable {
    /// How values are spread over the range (what a controller's travel maps to).
    public enum Curve: String, Sendable {
        case linear, log
        case decibel = "dB"
    }

    /// A named value of an enumeration.
    public struct ValueLabel: Sendable, Equatable {
        public var label: String
        public var value: Double
    }

    /// What values the parameter holds: any number in the range, whole numbers, off or on, one of `labels`' values,
    /// or text (an LV2 property: a path or a string).
    public enum ValueType: String, Sendable { case float, int, bool, enumeration, text }

    public var id: ParameterID
    public var label: String
    /// The unit values are in ("dB", "Hz"; "" for none).
    public var unit: String
    public var minimum: Double
    public var maximum: Double
    public var defaultValue: Double?
    public var curve = Curve.linear
    public var valueType = ValueType.float
    /// Named values `set` takes by label (an enumeration's, or an LV2 port's scale points).
    public var labels: [ValueLabel] = []
    /// How long the render world glides to a new value (nil: it jumps).
    public var smoothingSeconds: Double?

    public init(
        id: ParameterID, label: String, unit: String = "", minimum: Double = -.infinity, maximum: Double = .infinity,
        defaultValue: Double? = nil, curve: Curve = .linear, valueType: ValueType = .float, labels: [ValueLabel] = [],
        smoothingSeconds: Double? = nil
    ) {
        (self.id, self.label, self.unit, self.minimum, self.maximum) = (id, label, unit, minimum, maximum)
        (self.defaultValue, self.curve, self.valueType, self.labels, self.smoothingSeconds) = (
            defaultValue, curve, valueType, labels, smoothingSeconds
        )
    }

    /// The text form of the id (`band.3`).
    public var name: String { id.description }

    public var range: ClosedRange<Double> { minimum...maximum }

    /// Whether the range is bounded on both ends (a controller can sweep it).
    public var isBounded: Bool { minimum.isFinite && maximum.isFinite }

    /// The names `set` takes instead of a number: an enumeration's labels, on/off for a toggle.
    public var valueNames: [String] { labels.map(\.label) + (valueType == .bool ? ["on", "off"] : []) }

    /// Whether every value it takes is a whole number (an int, a bool, an enumeration of whole numbers).
    public var isWhole: Bool {
        switch valueType {
        case .int, .bool: return true
        case .enumeration: return labels.allSatisfy { $0.value == $0.value.rounded() }
        case .float, .text: return false
        }
    }

    /// The id with what it takes (`band.3 -12…12 dB`, `ir text`), for `show`.
    public var summary: String { "\(name) " + (valueType == .text ? "text" : rangeText) }

    /// The range in words with its unit (`-12…12 dB`).
    public var rangeText: String {
        let low = minimum.isFinite ? Format.number(minimum) : "-∞"
        let high = maximum.isFinite ? Format.number(maximum) : "∞"
        return "\(low)…\(high)" + (unit.isEmpty ? "" : " \(unit)")
    }
}
