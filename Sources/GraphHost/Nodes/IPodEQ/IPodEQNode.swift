import FoundationEssentials
import Glibc

/// `ipod-eq`: the 10-band iPod-style graphic EQ with its factory presets, a `preamp` in dB and
/// automatic headroom (the output is lowered by the curve's peak gain, so boosting presets do not clip). `bands`
/// gives the ten gains in dB instead of the preset's (the preset then only names the starting point), and
/// `bypass` starts the node bypassed.
public struct IPodEQNode: NodeDefinition {
    public static let typeName = "ipod-eq"
    /// Preset and parameter changes crossfade over this long.
    public static let rampSeconds = IPodEQKernel.rampSeconds

    public var preset: IPodEQPreset
    public var preamp: Double
    /// The band gains in dB: the preset's, or `bands`.
    public var gains: [Double]
    public var bypass = false

    public init(preset: IPodEQPreset, preamp: Double, gains: [Double]? = nil, bypass: Bool = false) {
        self.preset = preset
        self.preamp = preamp
        self.gains = gains ?? preset.gains
        self.bypass = bypass
    }

    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        let curve = IPodEQSettings(gains: gains, preamp: preamp)
        var items = [
            ("preset", "\(preset.name) (#\(preset.index))"), ("preamp", Format.number(preamp) + " dB"),
            ("headroom", Format.printf("%.2f dB", curve.headroomDB(sampleRate: 48000))),
        ]
        if gains != preset.gains {
            items.insert(("bands", gains.map { Format.number($0) }.joined(separator: " ")), at: 1)
        }
        if bypass { items.append(("bypass", "on")) }
        return items
    }

    static let preampRange = -24.0...24.0
    static var presetList: String { IPodEQPreset.all.map(\.name).joined(separator: ", ") }

    static let presetSetting = SettingDescriptor(
        "preset", .stringOrInteger, range: 0...Double(IPodEQPreset.all.count - 1),
        allowed: IPodEQPreset.all.map(\.name), default: .string(IPodEQPreset.all[0].name),
        doc: "A factory preset: its name (case-insensitive) or index.")
    static let preampSetting = SettingDescriptor(
        "preamp", .number, range: preampRange, default: .number(0), doc: "Gain before the EQ, in dB.")
    static let bandsSetting = SettingDescriptor(
        "bands", .numbers, range: bandRange, itemCount: 10...10,
        doc: "The ten band gains in dB (32 Hz … 16 kHz), instead of the preset's.")
    static let bypassSetting = SettingDescriptor("bypass", .boolean, default: .bool(false), doc: "Starts bypassed.")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "The 10-band iPod-style graphic EQ with its factory presets and automatic headroom.",
        ports: [PortDescriptor(.audio, .input, name: "in"), PortDescriptor(.audio, .output, name: "out")],
        parameters: [
            ParameterDescriptor(
                id: .preamp, label: "preamp", unit: "dB", minimum: preampRange.lowerBound,
                maximum: preampRange.upperBound, defaultValue: 0, smoothingSeconds: rampSeconds)
        ]
            + IPodEQPreset.bandCenters.indices.map { b in
                ParameterDescriptor(
                    id: .band(b), label: "\(Format.number(IPodEQPreset.bandCenters[b])) Hz band", unit: "dB",
                    minimum: bandRange.lowerBound, maximum: bandRange.upperBound, defaultValue: 0,
                    smoothingSeconds: rampSeconds)
            },
        presets: IPodEQPreset.all.map(\.name), traits: [.hasPresets, .numberedPresets, .canBypass],
        settings: [presetSetting, preampSetting, bandsSetting, bypassSetting])

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> IPodEQNode? {
        var preset = IPodEQPreset.all[0]
        if let value = settings.object["preset"] {
            var text = value.typeName
            var found: IPodEQPreset?
            if let name = value.stringValue {
                text = "'\(name)'"
                found = IPodEQPreset.named(name)
            } else if let number = value.numberValue {
                text = "'\(Format.number(number))'"
                found = IPodEQPreset.named(Format.number(number))
            }
            guard let found else {
                issues.report(
                    settings.path("preset"),
                    "unknown preset \(text); valid presets (name or index "
                        + "0…\(IPodEQPreset.all.count - 1)): \(presetList)",
                    at: value)
                return nil
            }
            preset = found
        }
        let preamp = settings.number(preampSetting, issues: &issues) ?? 0
        let bands = settings.numbers(bandsSetting, issues: &issues)
        if let bands, bands.count != GraphicEQDesign.bandCount {
            issues.report(
                settings.path("bands"), "\(bands.count) gains for \(GraphicEQDesign.bandCount) bands (32 Hz … 16 kHz)",
                at: settings.object["bands"])
        }
        return IPodEQNode(
            preset: preset, preamp: preamp, gains: bands, bypass: settings.bool(bypassSetting, issues: &issues) ?? false
        )
    }

    static let bandRange = -12.0...12.0

    public func value(of parameter: ParameterID) -> Double? {
        if parameter == .preamp { return preamp }
        guard parameter.name == "band", let b = parameter.index, gains.indices.contains(b) else { return nil }
        return gains[b]
    }

    public var presetName: String? { preset.name }

    public func hasPreset(_ name: String) -> Bool { IPodEQPreset.named(name) != nil }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        IPodEQInstance(id: id, settings: IPodEQSettings(gains: gains, preamp: preamp), format: format)
    }

    public var initialCommands: [NodeCommand] { bypass ? [.bypass(true)] : [] }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? IPodEQNode else { return nil }
        var commands: [NodeCommand] = []
        if old.gains != gains {
            // One coefficient change: the preset when the gains are its own, else the bands that differ.
            if gains == preset.gains {
                commands.append(.preset(preset.name))
            } else {
                commands += gains.indices.filter { gains[$0] != old.gains[$0] }.map {
                    .set(parameter: .band($0), value: gains[$0])
                }
            }
        }
        if old.preamp != preamp { commands.append(.set(parameter: .preamp, value: preamp)) }
        if old.bypass != bypass { commands.append(.bypass(bypass)) }
        return commands
    }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        var next = self
        switch command {
        case .preset(let name):
            if let found = IPodEQPreset.named(name) {
                next.preset = found
                next.gains = found.gains
            }
        case .set(let parameter, let value):
            if parameter == .preamp { next.preamp = value }
            if parameter.name == "band", let b = parameter.index, gains.indices.contains(b) { next.gains[b] = value }
        case .bypass(let on): next.bypass = on
        case .choose, .seek: break
        }
        return next
    }

    public var liveSettings: [(key: String, value: JSONValue?)] {
        [
            ("preset", .string(preset.name)), ("preamp", preamp == 0 ? nil : .number(preamp)),
            ("bands", gains == preset.gains ? nil : .array(gains.map { .number($0) })),
            ("bypass", bypass ? .bool(true) : nil),
        ]
    }
}

extension IPodEQSettings {
    /// The coefficients `IPodEQKernel` runs for these settings.
    public func coefficients(sampleRate: Int) -> ParallelEQCoefficients {
        ParallelEQCoefficients(sections: GraphicEQDesign.bandCount, values: kernelValues(sampleRate: sampleRate))
    }
}

final class IPodEQInstance: NodeInstance {
    let id: String
    let format: GraphFormat
    private(set) var settings: IPodEQSettings
    let kernelPointer: UnsafeMutablePointer<IPodEQKernel>
    let state: UnsafeMutablePointer<SIMD16<Float>>
    let workspace: IPodEQWorkspace

    init(id: String, settings: IPodEQSettings, format: GraphFormat) {
        self.id = id
        self.format = format
        self.settings = settings
        state = .allocateRender(capacity: IPodEQKernel.stateVectors * format.channels)
        state.initialize(repeating: SIMD16<Float>(), count: IPodEQKernel.stateVectors * format.channels)
        workspace = .allocate(channels: format.channels, maxFrames: format.maxFrames)
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: IPodEQKernel(
                state: state, coefficients: settings.coefficients(sampleRate: format.sampleRate),
                rampSamples: Int(IPodEQNode.rampSeconds * Double(format.sampleRate)), workspace: workspace))
    }

    var kernel: RenderStep.Kernel { .ipodEQ(kernelPointer) }

    /// Live, a new filter bank warms over the callbacks after a change rather than in one (`IPodEQKernel.warmPace`).
    func setRealTime(_ live: Bool) {
        kernelPointer.pointee.warmPace = live ? IPodEQKernel.liveWarmPace : 0
    }

    var parameters: [ParameterDescriptor] { IPodEQNode.descriptor.parameters }

    var presetNames: [String] { IPodEQPreset.all.map(\.name) }

    /// The settings after `command`, without applying them.
    func settings(after command: NodeCommand) throws -> IPodEQSettings {
        var next = settings
        switch command {
        case .preset(let name):
            guard let preset = IPodEQPreset.named(name) else {
                throw NodeCommandError.unknownPreset(
                    node: id, name: name, heading: "valid presets (name or index)", known: IPodEQNode.descriptor.presets
                )
            }
            next.gains = preset.gains
        case .bypass:
            break
        case .choose(let parameter, let label):
            throw NodeCommandError.numbersOnly(node: id, parameter: parameter, label: label)
        case .seek:
            throw NodeCommandError.seekNotSupported(node: id)
        case .set(let parameter, let value):
            if parameter == .preamp {
                guard IPodEQNode.preampRange.contains(value) else {
                    throw NodeCommandError.outOfRange(
                        parameter: "preamp", value: value, range: IPodEQNode.preampRange, unit: "dB")
                }
                next.preamp = value
            } else if parameter.name == "band", let b = parameter.index, (0..<GraphicEQDesign.bandCount).contains(b) {
                guard IPodEQNode.bandRange.contains(value) else {
                    throw NodeCommandError.outOfRange(
                        parameter: "band gain", value: value, range: IPodEQNode.bandRange, unit: "dB")
                }
                next.gains[b] = value
            } else {
                throw NodeCommandError.unknownParameter(
                    node: "'\(id)'", parameter: parameter,
                    known: "parameters: preamp, band.0 … band.9 (32 Hz … 16 kHz)")
            }
        }
        return next
    }

    func check(_ command: NodeCommand) throws { _ = try settings(after: command) }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        if case .bypass(let on) = command {
            return [.kernel(.ipodEQ(kernelPointer, .bypass(on)))]
        }
        settings = try settings(after: command)
        return [.kernel(.ipodEQ(kernelPointer, .coefficients(settings.coefficients(sampleRate: format.sampleRate))))]
    }

    /// New coefficients go with a bank warmed here on the input history, so the callback that takes them runs only
    /// the frames that came since; when that fails the render world warms it (`IPodEQKernel.warmPace`).
    func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        for message in try messages(for: command) {
            guard case .kernel(.ipodEQ(let kernel, .coefficients(let coefficients))) = message,
                let warmed = workspace.warm(coefficients)
            else {
                try send(message)
                continue
            }
            do {
                try send(.kernel(.ipodEQ(kernel, .warmed(coefficients, through: warmed.through, slot: warmed.slot))))
            } catch {
                workspace.slots.release(slot: warmed.slot)
                throw error
            }
        }
    }

    func close() {
        kernelPointer.deinitialize(count: 1).deallocateRender()
        state.deinitialize(count: IPodEQKernel.stateVectors * format.channels).deallocateRender()
        workspace.deallocate()
    }
}

extension ParameterID {
    /// An iPod EQ's gain before the bands.
    public static let preamp = ParameterID(name: "preamp")
    /// An iPod EQ's band `band` (0 is 32 Hz, 9 is 16 kHz).
    public static func band(_ band: Int) -> ParameterID { ParameterID(name: "band", index: band) }
}

extension IPodEQNode: FrequencyResponding {
    public var responseTitle: String {
        "ipod-eq \(preset.name)" + (gains == preset.gains ? "" : " with its bands moved")
    }

    /// The achieved response (what the kernel plays, measured from its impulse response) without the automatic
    /// headroom, as `graphhost eq-curve` draws it; the preamp included.
    public func responseDB(at frequency: Double, sampleRate: Int) -> Double {
        responseDB(at: [frequency], sampleRate: sampleRate)[0]
    }

    public func responseDB(at frequencies: [Double], sampleRate: Int) -> [Double] {
        let settings = IPodEQSettings(gains: gains, preamp: preamp)
        let headroom = settings.headroomDB(sampleRate: sampleRate)
        // 8192 samples: the lowest band's ring has decayed by over 100 dB.
        let ir = EQKernelResponse.impulseResponse(settings.coefficients(sampleRate: sampleRate), length: 1 << 13)
        return frequencies.map { EQKernelResponse.magnitudeDB(ir, at: $0, sampleRate: Double(sampleRate)) - headroom }
    }
}
