/// `mixer`: sums `inputs` buses with per-input `volumes` and a master `volume` (linear), each change smoothed.
public struct MixerNode: NodeDefinition {
    public static let typeName = "mixer"
    public static let settingKeys = ["inputs", "volumes", "volume"]
    /// Volume changes glide over this long.
    public static let rampSeconds = 0.010

    public var inputs: Int
    public var volumes: [Double]
    public var volume: Double

    public var inputBuses: Int { inputs }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("inputs", "\(inputs)"), ("volumes", "[" + volumes.map { Format.number($0) }.joined(separator: ", ") + "]"),
         ("volume", Format.number(volume))]
    }

    static let volumeRange = 0.0...16.0

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> MixerNode? {
        let inputs = settings.integer("inputs", in: 1...64, issues: &issues) ?? 2
        var volumes = settings.numbers("volumes", in: volumeRange, issues: &issues) ?? []
        if volumes.count > inputs {
            issues.report(settings.path("volumes"), "\(volumes.count) volumes for \(inputs) inputs", at: settings.object["volumes"])
        }
        volumes += Array(repeating: 1, count: max(0, inputs - volumes.count))
        let volume = settings.number("volume", in: volumeRange, issues: &issues) ?? 1
        return MixerNode(inputs: inputs, volumes: Array(volumes.prefix(inputs)), volume: volume)
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        MixerInstance(node: self, id: id, format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? MixerNode, old.inputs == inputs else { return nil }
        var commands = volumes.indices.filter { volumes[$0] != old.volumes[$0] }.map { NodeCommand.set(parameter: "volume.\($0)", value: volumes[$0]) }
        if volume != old.volume { commands.append(.set(parameter: "volume", value: volume)) }
        return commands
    }

    public var parameters: [ParameterInfo] { Self.parameters(inputs: inputs) }

    public func value(of parameter: String) -> Double? {
        if parameter == "volume" { return volume }
        guard parameter.hasPrefix("volume."), let i = Int(parameter.dropFirst(7)), volumes.indices.contains(i) else { return nil }
        return volumes[i]
    }

    static func parameters(inputs: Int) -> [ParameterInfo] {
        (["volume"] + (0..<inputs).map { "volume.\($0)" }).map { ParameterInfo(name: $0, minimum: volumeRange.lowerBound, maximum: volumeRange.upperBound) }
    }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        guard case .set(let parameter, let value) = command else { return self }
        var next = self
        if parameter == "volume" { next.volume = value }
        if parameter.hasPrefix("volume."), let i = Int(parameter.dropFirst(7)), volumes.indices.contains(i) { next.volumes[i] = value }
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
        kernelPointer.initialize(to: MixerKernel(inputCount: node.inputs, gains: gains,
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

    var parameters: [ParameterInfo] { MixerNode.parameters(inputs: inputs) }

    /// The kernel change a command asks for.
    func change(for command: NodeCommand) throws -> MixerKernel.Change {
        let valid = "volume, " + (0..<inputs).map { "volume.\($0)" }.joined(separator: ", ")
        if case .bypass = command { throw CommandError("mixer '\(id)' cannot be bypassed (set its volumes instead)") }
        if case .choose(let parameter, let label) = command { throw NodeCommand.numbersOnly(id, parameter, label) }
        guard case .set(let parameter, let value) = command else {
            throw CommandError("mixer '\(id)' has no presets; parameters: \(valid)")
        }
        let input: Int?
        if parameter == "volume" {
            input = nil
        } else if parameter.hasPrefix("volume."), let i = Int(parameter.dropFirst(7)), (0..<inputs).contains(i) {
            input = i
        } else {
            throw CommandError("mixer '\(id)' has no parameter '\(parameter)'; parameters: \(valid)")
        }
        guard MixerNode.volumeRange.contains(value) else {
            throw CommandError("volume \(Format.number(value)) is out of range 0…16 (linear gain)")
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
