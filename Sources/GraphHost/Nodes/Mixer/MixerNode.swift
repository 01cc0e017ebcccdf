/// `mixer`: sums `inputs` buses with per-input `volumes` and a master `volume` (linear), each change smoothed.
public struct MixerNode: NodeDefinition {
    public static let typeName = "mixer"
    /// Volume changes glide over this long.
    public static let rampSeconds = 0.010

    public var inputs: Int
    public var volumes: [Double]
    public var volume: Double

    public var inputBuses: Int { inputs }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [
            ("inputs", "\(inputs)"), ("volumes", "[" + volumes.map { Format.number($0) }.joined(separator: ", ") + "]"),
            ("volume", Format.number(volume)),
        ]
    }

    static let volumeRange = 0.0...16.0

    static let inputsSetting = SettingDescriptor(
        "inputs", .integer, range: 1...64, default: .number(2), doc: "How many input buses it sums.")
    static let volumesSetting = SettingDescriptor(
        "volumes", .numbers, range: volumeRange,
        doc: "Linear gain per input, in input order (missing ones are 1).")
    static let volumeSetting = SettingDescriptor(
        "volume", .number, range: volumeRange, default: .number(1), doc: "The master volume (linear gain).")

    public static let descriptor = NodeDescriptor(
        typeName: typeName, summary: "Sums its inputs with a volume each and a master volume, every change smoothed.",
        ports: [PortDescriptor(.audio, .input, name: "in.N"), PortDescriptor(.audio, .output, name: "out")],
        parameters: [volumeParameter(.volume, label: "volume")], traits: [.mixesInputs],
        settings: [inputsSetting, volumesSetting, volumeSetting])

    static func volumeParameter(_ id: ParameterID, label: String) -> ParameterDescriptor {
        ParameterDescriptor(
            id: id, label: label, unit: "linear", minimum: volumeRange.lowerBound, maximum: volumeRange.upperBound,
            defaultValue: 1, curve: .decibel, smoothingSeconds: rampSeconds)
    }

    /// The mixer with its inputs: a volume parameter and an input port each.
    static func descriptor(inputs: Int) -> NodeDescriptor {
        var descriptor = Self.descriptor
        descriptor.ports =
            (0..<inputs).map { PortDescriptor(.audio, .input, name: "in.\($0)") } + [
                PortDescriptor(.audio, .output, name: "out")
            ]
        descriptor.parameters += (0..<inputs).map { volumeParameter(.volume(input: $0), label: "input \($0) volume") }
        return descriptor
    }

    public var descriptor: NodeDescriptor { Self.descriptor(inputs: inputs) }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> MixerNode? {
        let inputs = settings.integer(inputsSetting, issues: &issues) ?? 2
        var volumes = settings.numbers(volumesSetting, issues: &issues) ?? []
        if volumes.count > inputs {
            issues.report(
                settings.path("volumes"), "\(volumes.count) volumes for \(inputs) inputs",
                at: settings.object["volumes"])
        }
        volumes += Array(repeating: 1, count: max(0, inputs - volumes.count))
        let volume = settings.number(volumeSetting, issues: &issues) ?? 1
        return MixerNode(inputs: inputs, volumes: Array(volumes.prefix(inputs)), volume: volume)
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        MixerInstance(node: self, id: id, format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? MixerNode, old.inputs == inputs else { return nil }
        var commands = volumes.indices.filter { volumes[$0] != old.volumes[$0] }.map {
            NodeCommand.set(parameter: .volume(input: $0), value: volumes[$0])
        }
        if volume != old.volume { commands.append(.set(parameter: .volume, value: volume)) }
        return commands
    }

    public func value(of parameter: ParameterID) -> Double? {
        switch Self.input(of: parameter, inputs: inputs) {
        case .some(.some(let i)): return volumes[i]
        case .some(.none): return volume
        case .none: return nil
        }
    }

    /// The input a volume parameter sets: nil for the master volume; nil outside when `parameter` is none of the
    /// mixer's.
    static func input(of parameter: ParameterID, inputs: Int) -> Int?? {
        guard parameter.name == ParameterID.volume.name else { return nil }
        guard let i = parameter.index else { return .some(nil) }
        return (0..<inputs).contains(i) ? .some(i) : nil
    }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        guard case .set(let parameter, let value) = command else { return self }
        var next = self
        switch Self.input(of: parameter, inputs: inputs) {
        case .some(.some(let i)): next.volumes[i] = value
        case .some(.none): next.volume = value
        case .none: break
        }
        return next
    }

    public var liveSettings: [(key: String, value: JSONValue?)] {
        [("volumes", .array(volumes.map { .number($0) })), ("volume", volume == 1 ? nil : .number(volume))]
    }
}

final class MixerInstance: NodeInstance {
    let id: String
    let kernelPointer: UnsafeMutablePointer<MixerKernel>
    let gains: UnsafeMutablePointer<SmoothedGain>
    let inputs: Int

    init(node: MixerNode, id: String, format: GraphFormat) {
        self.id = id
        inputs = node.inputs
        gains = .allocateRender(capacity: node.inputs + 1)
        for (i, v) in (node.volumes + [node.volume]).enumerated() { (gains + i).initialize(to: SmoothedGain(Float(v))) }
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: MixerKernel(
                inputCount: node.inputs, gains: gains,
                rampSamples: Int(MixerNode.rampSeconds * Double(format.sampleRate))))
    }

    var kernel: RenderStep.Kernel { .mixer(kernelPointer) }

    /// The frames each input can be delayed by at most (latency compensation), once it needs any.
    private(set) var delayCapacity = 0

    /// Gives the inputs the compensating delays `frames` before the mixer renders: delay lines are made once an
    /// input needs a delay, with room for twice the largest (at least 4096 frames).
    func compensate(_ frames: [Int], format: GraphFormat) {
        let largest = frames.max() ?? 0
        guard largest > 0 || delayCapacity > 0 else { return }
        if delayCapacity == 0 {
            var capacity = 4096
            while capacity < 2 * largest + 1 { capacity *= 2 }
            let delays = UnsafeMutablePointer<InputDelay>.allocateRender(capacity: inputs)
            for i in 0..<inputs {
                let ring = UnsafeMutablePointer<Float>.allocateRender(capacity: capacity * format.channels)
                ring.initialize(repeating: 0, count: capacity * format.channels)
                (delays + i).initialize(to: InputDelay(ring: ring, capacity: capacity, frames: 0))
            }
            let delayed = UnsafeMutablePointer<Float>.allocateRender(capacity: format.channels * format.maxFrames)
            delayed.initialize(repeating: 0, count: format.channels * format.maxFrames)
            kernelPointer.pointee.delays = delays
            kernelPointer.pointee.delayed = delayed
            delayCapacity = capacity - 1
        }
        for (i, f) in frames.enumerated() where i < inputs { kernelPointer.pointee.apply(.delay(input: i, frames: f)) }
    }

    var parameters: [ParameterDescriptor] { MixerNode.descriptor(inputs: inputs).parameters }

    func delayMessages(_ frames: [Int]) -> [ControlMessage]? {
        guard delayCapacity >= (frames.max() ?? 0) else { return nil }
        return frames.enumerated().map { .kernel(.mixer(kernelPointer, .delay(input: $0.offset, frames: $0.element))) }
    }

    /// The kernel change a command asks for.
    func change(for command: NodeCommand) throws -> MixerKernel.Change {
        let valid = parameters.map(\.name).joined(separator: ", ")
        if case .bypass = command {
            throw NodeCommandError.notSupported("mixer '\(id)' cannot be bypassed (set its volumes instead)")
        }
        if case .choose(let parameter, let label) = command {
            throw NodeCommandError.numbersOnly(node: id, parameter: parameter, label: label)
        }
        guard case .set(let parameter, let value) = command else {
            throw NodeCommandError.notSupported("mixer '\(id)' has no presets; parameters: \(valid)")
        }
        guard let input = MixerNode.input(of: parameter, inputs: inputs) else {
            throw NodeCommandError.unknownParameter(
                node: "mixer '\(id)'", parameter: parameter, known: "parameters: \(valid)")
        }
        guard MixerNode.volumeRange.contains(value) else {
            throw NodeCommandError.outOfRange(
                parameter: "volume", value: value, range: MixerNode.volumeRange, note: "linear gain")
        }
        return input.map { .volume(input: $0, gain: Float(value)) } ?? .master(gain: Float(value))
    }

    func check(_ command: NodeCommand) throws { _ = try change(for: command) }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        [.kernel(.mixer(kernelPointer, try change(for: command)))]
    }

    func close() {
        if let delays = kernelPointer.pointee.delays {
            for i in 0..<inputs { delays[i].ring.deallocateRender() }
            delays.deallocateRender()
            kernelPointer.pointee.delayed?.deallocateRender()
        }
        kernelPointer.deinitialize(count: 1).deallocateRender()
        gains.deinitialize(count: inputs + 1).deallocateRender()
    }
}

extension ParameterID {
    /// A mixer's master volume.
    public static let volume = ParameterID(name: "volume")
    /// A mixer's volume of input `input`.
    public static func volume(input: Int) -> ParameterID { ParameterID(name: "volume", index: input) }
}
