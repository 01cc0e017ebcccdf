import FoundationEssentials
import Glibc

/// `peq`: a parametric EQ of up to 16 bands in series, each peaking, low or high shelf, low or high pass, band pass
/// or notch (`bands`: `{"type", "frequency", "gain", "q"}`, or a headphone correction's `file` in Equalizer APO's or
/// AutoEQ's format), then a `preamp` in dB; `bypass` starts it bypassed. Every band is the Audio EQ Cookbook's
/// biquad; changes crossfade to a settled new bank (`PEQKernel`).
public struct PEQNode: NodeDefinition {
    public static let typeName = "peq"

    static let bandsSetting = SettingDescriptor(
        "bands", .records(fields: PEQParameter.bandFields), itemCount: 0...PEQParameter.maxBands,
        doc: "The bands, in series, each the Audio EQ Cookbook's biquad.")
    static let preampSetting = SettingDescriptor(
        "preamp", .number, range: PEQParameter.preampRange, default: .number(0),
        doc: "Gain after the bands, in dB.")
    static let bypassSetting = SettingDescriptor("bypass", .boolean, default: .bool(false), doc: "Starts bypassed.")
    static let fileSetting = SettingDescriptor(
        "file", .string, pattern: "^.+$",
        doc:
            "In place of `bands`: an Equalizer APO configuration or an AutoEQ `ParametricEQ.txt` (relative to the "
            + "graph file's folder); its `Preamp:` adds to `preamp`.")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "A parametric EQ of up to 16 bands: peaking, shelves, passes, band pass and notch.",
        ports: [PortDescriptor(.audio, .input, name: "in"), PortDescriptor(.audio, .output, name: "out")],
        parameters: [PEQParameter.preamp.descriptor], traits: [.canBypass],
        settings: [bandsSetting, fileSetting, preampSetting, bypassSetting])

    /// The descriptor of a node of `bands` bands: its parameters band by band.
    static func descriptor(bands: Int) -> NodeDescriptor {
        var descriptor = Self.descriptor
        descriptor.parameters = PEQParameter.all(bands: bands).map(\.descriptor)
        return descriptor
    }

    public var descriptor: NodeDescriptor { Self.descriptor(bands: bands.count) }

    public var bands: [ParametricBand]
    public var preamp: Double
    public var bypass: Bool
    /// The configuration file the bands and preamp came from (as the graph gave it), until a band or the preamp is
    /// changed live, and the preamp the graph added to the file's.
    public var file: (given: String, path: String, extraPreamp: Double)?

    public init(bands: [ParametricBand], preamp: Double = 0, bypass: Bool = false) {
        self.bands = bands
        self.preamp = preamp
        self.bypass = bypass
    }

    /// The EQ of a configuration file (`given` as the graph or command named it, `path` resolved), with `preamp` dB
    /// added to the file's.
    public init(file: EqualizerAPOFile, given: String, path: String, preamp: Double = 0, bypass: Bool = false) {
        self.init(bands: file.bands, preamp: file.preamp + preamp, bypass: bypass)
        self.file = (given, path, preamp)
    }

    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        var items = bands.enumerated().map { b, band in
            (
                "band.\(b)",
                "\(band.shape.rawValue) \(Format.number(band.frequency)) Hz"
                    + (band.shape.hasGain ? " \(Format.number(band.gain)) dB" : "") + " q \(Format.number(band.q))"
            )
        }
        items.append(("preamp", Format.number(preamp) + " dB"))
        if bypass { items.append(("bypass", "on")) }
        return items
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> PEQNode? {
        let before = issues.errors.count
        var bands: [ParametricBand] = []
        if let given = settings.object["bands"] {
            if let items = given.arrayValue {
                if items.count > PEQParameter.maxBands {
                    issues.report(
                        settings.path("bands"), "\(items.count) bands; a peq node has at most \(PEQParameter.maxBands)",
                        at: given)
                }
                for (i, item) in items.enumerated() {
                    let band = NodeSettings(object: item, path: "\(settings.path("bands"))[\(i)]")
                    if let parsed = parseBand(band, sampleRate: context.format.sampleRate, issues: &issues) {
                        bands.append(parsed)
                    }
                }
            } else {
                issues.report(
                    settings.path("bands"), "expected an array of bands (\(bandShape)), found \(given.typeName)",
                    at: given)
            }
        }
        let preamp = settings.number(preampSetting, issues: &issues) ?? 0
        let bypass = settings.bool(bypassSetting, issues: &issues) ?? false
        var file: (EqualizerAPOFile, given: String, path: String)?
        if let given = settings.string(fileSetting, issues: &issues) {
            if settings.object["bands"] != nil {
                issues.report(settings.path("file"), "give either \"bands\" or \"file\", not both", at: settings.object)
            }
            do {
                let path = try context.files.confine(
                    given.hasPrefix("/")
                        ? given : context.baseDirectory.appendingPathComponent(given).standardizedFileURL.path,
                    given: given)
                file = (try loadFile(path, sampleRate: context.format.sampleRate, preamp: preamp), given, path)
            } catch {
                issues.report(settings.path("file"), "\(error)", at: settings.object["file"])
            }
        }
        guard issues.errors.count == before else { return nil }
        if let file {
            return PEQNode(file: file.0, given: file.given, path: file.path, preamp: preamp, bypass: bypass)
        }
        return PEQNode(bands: bands, preamp: preamp, bypass: bypass)
    }

    static let bandShape = #"{"type", "frequency", "gain", "q"}"#

    /// Reads a configuration file for a node at `sampleRate` whose graph adds `preamp` dB; throws what does not fit.
    public static func loadFile(_ path: String, sampleRate: Int, preamp: Double) throws -> EqualizerAPOFile {
        let file = try EqualizerAPOFile.load(path)
        for (band, line) in zip(file.bands, file.bandLines) {
            if let problem = frequencyProblem(band.frequency, sampleRate: sampleRate) {
                throw EqualizerAPOFile.Failure(file: path, problems: [.init(line: line, message: problem)])
            }
        }
        let total = file.preamp + preamp
        guard PEQParameter.preampRange.contains(total) else {
            throw NodeCommandError.invalidValue(
                "\(path): its preamp and the node's add up to \(Format.number(total)) dB, outside "
                    + "\(Format.number(PEQParameter.preampRange.lowerBound))…"
                    + "\(Format.number(PEQParameter.preampRange.upperBound)) dB")
        }
        return file
    }

    static func parseBand(_ band: NodeSettings, sampleRate: Int, issues: inout GraphIssues) -> ParametricBand? {
        guard band.object.objectMembers != nil else {
            issues.report(
                band.path, "expected a band object (\(bandShape)), found \(band.object.typeName)", at: band.object)
            return nil
        }
        let before = issues.errors.count
        band.rejectUnknownKeys(PEQParameter.Field.allCases.map(\.rawValue), issues: &issues)
        var shape: ParametricBand.Shape?
        if let name = band.string("type", issues: &issues) {
            shape = ParametricBand.Shape(rawValue: name)
            if shape == nil {
                issues.report(
                    band.path("type"), "unknown band type '\(name)'; valid types: \(PEQParameter.shapeNames)",
                    at: band.object["type"])
            }
        } else if band.object["type"] == nil {
            issues.report(band.path("type"), "missing; valid types: \(PEQParameter.shapeNames)", at: band.object)
        }
        let frequency = band.number("frequency", in: PEQParameter.Field.frequency.range, issues: &issues)
        if band.object["frequency"] == nil {
            issues.report(band.path("frequency"), "missing; a frequency in Hz, 10…20000", at: band.object)
        } else if let frequency, let problem = Self.frequencyProblem(frequency, sampleRate: sampleRate) {
            issues.report(band.path("frequency"), problem, at: band.object["frequency"])
        }
        let gain = band.number("gain", in: PEQParameter.Field.gain.range, issues: &issues) ?? PEQParameter.defaultGain
        let q = band.number("q", in: PEQParameter.Field.q.range, issues: &issues) ?? PEQParameter.defaultQ
        guard issues.errors.count == before, let shape, let frequency else { return nil }
        return ParametricBand(shape: shape, frequency: frequency, gain: gain, q: q)
    }

    /// Why a frequency in range cannot be designed at `sampleRate`, or nil.
    static func frequencyProblem(_ frequency: Double, sampleRate: Int) -> String? {
        let limit = 0.49 * Double(sampleRate)
        guard frequency >= limit else { return nil }
        return "\(Format.number(frequency)) Hz must be below \(Format.number(limit)) Hz"
            + " (just under half the sample rate, \(sampleRate) Hz)"
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        PEQInstance(id: id, node: self, format: format)
    }

    public func value(of parameter: ParameterID) -> Double? {
        switch PEQParameter(parameter, bands: bands.count) {
        case .band(let b, let field): return bands[b].value(of: field)
        case .preamp: return preamp
        case nil: return nil
        }
    }

    public var initialCommands: [NodeCommand] { bypass ? [.bypass(true)] : [] }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? PEQNode, old.bands.count == bands.count else { return nil }
        var commands: [NodeCommand] = []
        for (b, band) in bands.enumerated() {
            for field in PEQParameter.Field.allCases where band.value(of: field) != old.bands[b].value(of: field) {
                let id = ParameterID.band(b, field)
                commands.append(
                    field == .type
                        ? .choose(parameter: id, label: band.shape.rawValue)
                        : .set(parameter: id, value: band.value(of: field)))
            }
        }
        if old.preamp != preamp { commands.append(.set(parameter: .preamp, value: preamp)) }
        if old.bypass != bypass { commands.append(.bypass(bypass)) }
        return commands
    }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        (try? applied(command)) ?? self
    }

    /// This definition after `command`; throws what does not fit (`id` names the node; frequencies are checked against
    /// `sampleRate` when given).
    func applied(
        _ command: NodeCommand, id: String = typeName, sampleRate: Int? = nil, files: FileAccess = .owner
    ) throws -> PEQNode {
        var next = self
        switch command {
        case .bypass(let on):
            next.bypass = on
        case .preset:
            throw NodeCommandError.notSupported("'\(id)' has no presets")
        case .seek:
            throw NodeCommandError.seekNotSupported(node: id)
        case .set(let name, let value):
            guard let parameter = PEQParameter(name, bands: bands.count) else { throw unknown(name, id: id) }
            guard parameter.range.contains(value) else {
                throw NodeCommandError.outOfRange(
                    parameter: name.description, value: value, range: parameter.range, unit: parameter.unit)
            }
            switch parameter {
            case .preamp: next.preamp = value
            case .band(let b, let field):
                if field == .type && value != value.rounded() {
                    throw NodeCommandError.invalidValue(
                        "\(name) takes a type's index or name: \(PEQParameter.shapeNames)")
                }
                if field == .frequency, let sampleRate,
                    let problem = Self.frequencyProblem(value, sampleRate: sampleRate)
                {
                    throw NodeCommandError.invalidValue("\(name): \(problem)")
                }
                next.bands[b] = bands[b].setting(field, to: value)
            }
        case .choose(let name, let label) where name == Self.fileParameter:
            let path = try files.commandPath(label)
            let extra = file?.extraPreamp ?? 0
            return PEQNode(
                file: try Self.loadFile(path, sampleRate: sampleRate ?? 48000, preamp: extra), given: path, path: path,
                preamp: extra, bypass: bypass)
        case .choose(let name, let label):
            guard let parameter = PEQParameter(name, bands: bands.count) else { throw unknown(name, id: id) }
            guard case .band(let b, .type) = parameter else {
                throw NodeCommandError.numbersOnly(node: id, parameter: name, label: label)
            }
            guard let shape = ParametricBand.Shape(rawValue: label) else {
                throw NodeCommandError.unknownLabel(
                    node: id, parameter: name, label: label, known: "valid types: \(PEQParameter.shapeNames)")
            }
            next.bands[b].shape = shape
        }
        if next.bands != bands || next.preamp != preamp { next.file = nil }
        return next
    }

    /// `set NODE file PATH`: a configuration file in place of the bands (a path relative to graphhost's folder).
    static let fileParameter = ParameterID(name: "file")

    /// A new configuration file is a new bank: the swap keeps the node when the file has as many bands (the bank
    /// crossfades), else builds it afresh and crossfades to it.
    public func settingFile(_ command: NodeCommand, files: FileAccess) throws -> (any NodeDefinition)? {
        guard case .choose(let name, _) = command, name == Self.fileParameter else { return nil }
        return try applied(command, files: files)
    }

    func unknown(_ name: ParameterID, id: String) -> NodeCommandError {
        .unknownParameter(
            node: "'\(id)'", parameter: name,
            known: "parameters: \(PEQParameter.list(bands: bands.count)); or file PATH")
    }

    public var liveSettings: [(key: String, value: JSONValue?)] {
        if let file {
            return [
                ("file", .string(file.given)), ("preamp", file.extraPreamp == 0 ? nil : .number(file.extraPreamp)),
                ("bypass", bypass ? .bool(true) : nil),
            ]
        }
        return [
            ("bands", .array(bands.map(\.json))), ("preamp", preamp == 0 ? nil : .number(preamp)),
            ("bypass", bypass ? .bool(true) : nil),
        ]
    }
}

extension PEQNode: FrequencyResponding {
    public var responseTitle: String { "peq, \(bands.count) bands" }

    public func responseDB(at frequency: Double, sampleRate: Int) -> Double {
        bands.reduce(preamp) {
            $0
                + $1.coefficients(sampleRate: Double(sampleRate)).magnitudeDB(
                    at: frequency, sampleRate: Double(sampleRate))
        }
    }
}
