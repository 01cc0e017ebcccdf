/// The live parameters of a `peq` node, in one table: `band.N.frequency`, `band.N.gain`, `band.N.q`, `band.N.type`
/// (an enumeration of the band shapes) and `preamp`, with their units, ranges and defaults. The band keys of graph
/// files are the field names.
enum PEQParameter: Hashable {
    case band(Int, Field)
    case preamp

    /// A band's settings.
    enum Field: String, CaseIterable {
        case type, frequency, gain, q

        var unit: String {
            switch self {
            case .frequency: return "Hz"
            case .gain: return "dB"
            case .q, .type: return ""
            }
        }

        /// Allowed values; `type` takes the index of a shape in `ParametricBand.Shape.allCases` (or its name).
        var range: ClosedRange<Double> {
            switch self {
            case .type: return 0...Double(ParametricBand.Shape.allCases.count - 1)
            case .frequency: return 10...20_000
            case .gain: return -24...24
            case .q: return 0.1...20
            }
        }
    }

    static let maxBands = 16
    static let preampRange = -24.0...24.0
    /// A band's gain and Q when a graph file leaves them out.
    static let defaultGain = 0.0
    static let defaultQ = 0.7071067811865476
    static var shapeNames: String { ParametricBand.Shape.allCases.map(\.rawValue).joined(separator: ", ") }

    /// The parameter `id` names on a node of `bands` bands.
    init?(_ id: ParameterID, bands: Int) {
        if id == .preamp {
            self = .preamp
            return
        }
        guard id.name == "band", let b = id.index, (0..<bands).contains(b),
            let field = id.field.flatMap(Field.init(rawValue:))
        else { return nil }
        self = .band(b, field)
    }

    var id: ParameterID {
        switch self {
        case .band(let b, let field): return .band(b, field)
        case .preamp: return .preamp
        }
    }

    var range: ClosedRange<Double> {
        switch self {
        case .band(_, let field): return field.range
        case .preamp: return Self.preampRange
        }
    }

    var unit: String {
        switch self {
        case .band(_, let field): return field.unit
        case .preamp: return "dB"
        }
    }

    /// Every parameter of a node of `bands` bands, band by band, then `preamp`.
    static func all(bands: Int) -> [PEQParameter] {
        (0..<bands).flatMap { b in Field.allCases.map { PEQParameter.band(b, $0) } } + [.preamp]
    }

    var descriptor: ParameterDescriptor {
        switch self {
        case .preamp:
            return ParameterDescriptor(
                id: id, label: "preamp", unit: unit, minimum: range.lowerBound, maximum: range.upperBound,
                defaultValue: 0, smoothingSeconds: PEQKernel.rampSeconds)
        case .band(let b, .type):
            return ParameterDescriptor(
                id: id, label: "band \(b) type", minimum: range.lowerBound, maximum: range.upperBound,
                valueType: .enumeration,
                labels: ParametricBand.Shape.allCases.enumerated().map {
                    ParameterDescriptor.ValueLabel(label: $0.element.rawValue, value: Double($0.offset))
                })
        case .band(let b, let field):
            return ParameterDescriptor(
                id: id, label: "band \(b) \(field.rawValue)", unit: unit, minimum: range.lowerBound,
                maximum: range.upperBound,
                defaultValue: field == .gain ? Self.defaultGain : field == .q ? Self.defaultQ : nil,
                curve: field == .frequency || field == .q ? .log : .linear, smoothingSeconds: PEQKernel.rampSeconds)
        }
    }

    /// The names for an error listing what a node of `bands` bands takes.
    static func list(bands: Int) -> String {
        let fields = Field.allCases.map(\.rawValue).joined(separator: "|")
        return bands == 0 ? "preamp" : "band.N.\(fields) (N = 0…\(bands - 1)), preamp"
    }

    /// The settings of one band in a graph file (`bands[]`).
    static let bandFields = [
        SettingDescriptor(
            "type", .string, allowed: ParametricBand.Shape.allCases.map(\.rawValue), required: true,
            doc: "The band's shape."),
        SettingDescriptor(
            "frequency", .number, range: Field.frequency.range, required: true,
            doc: "Centre or corner frequency in Hz, below 0.49 × the sample rate."),
        SettingDescriptor(
            "gain", .number, range: Field.gain.range, default: .number(defaultGain),
            doc: "Gain in dB (peaking and shelves; kept but unused by the others)."),
        SettingDescriptor(
            "q", .number, range: Field.q.range, default: .number(defaultQ),
            doc: "Q (for shelves the cookbook's shelf Q)."),
    ]
}

extension ParameterID {
    /// One field of a `peq` band (`band.3.gain`).
    static func band(_ b: Int, _ field: PEQParameter.Field) -> ParameterID {
        ParameterID(name: "band", index: b, field: field.rawValue)
    }
}

extension ParametricBand {
    /// The value of one field (`type`: the shape's index).
    func value(of field: PEQParameter.Field) -> Double {
        switch field {
        case .type: return Double(Shape.allCases.firstIndex(of: shape)!)
        case .frequency: return frequency
        case .gain: return gain
        case .q: return q
        }
    }

    /// The band with one field set (`type`: a shape's index, in range).
    func setting(_ field: PEQParameter.Field, to value: Double) -> ParametricBand {
        var next = self
        switch field {
        case .type: next.shape = Shape.allCases[Int(value)]
        case .frequency: next.frequency = value
        case .gain: next.gain = value
        case .q: next.q = value
        }
        return next
    }

    /// The band as a graph file writes it (with its gain whatever its shape, so a later change of shape finds it).
    var json: JSONValue {
        .object([
            ("type", .string(shape.rawValue)), ("frequency", .number(frequency)), ("gain", .number(gain)),
            ("q", .number(q)),
        ])
    }

    /// The kernel's section for this band at `sampleRate`.
    func section(sampleRate: Int) -> PEQSection {
        let c = coefficients(sampleRate: Double(sampleRate))
        return PEQSection(b0: c.b0, b1: c.b1, b2: c.b2, a1: c.a1, a2: c.a2, settleFrames: c.settleFrames())
    }
}
