import Atomics
import CLADSPAGlue
import CLV2
import FoundationEssentials
import Glibc
import Logging

/// A running `ladspa` node: its plugin instances behind the LV2 descriptor of `CLADSPAGlue`, run by the LV2 kernel
/// (the same wiring, bypass, pause and output guard as an `lv2` node), and `set`/`bypass` commands as its messages.
/// As a `HostedPlugin` it reports its silenced slices and control outputs; LADSPA has no block-length option (any
/// length is taken as it comes), no files, no properties, and its latency port (by convention) is not read yet.
final class LADSPAInstance: NodeInstance, HostedPlugin {
    let id: String
    let node: LADSPANode
    let kernelPointer: UnsafeMutablePointer<LV2Kernel>
    private var handles: [LV2_Handle] = []
    private var allocations: [UnsafeMutableRawPointer] = []
    private let wet: UnsafeMutablePointer<SmoothedGain>
    private let paused: UnsafeAtomic<Bool>
    private let runsWhenSilent: UnsafeMutablePointer<Bool>
    static let fadeSeconds = 0.02
    static let logger = Logger(label: "graphhost.ladspa")
    private(set) var nominalBlockLength: Int
    private var reportedNonFinite = 0

    init(id: String, node: LADSPANode, format: GraphFormat) throws {
        self.id = id
        self.node = node
        nominalBlockLength = format.nominalBlockLength
        let plugin = node.plugin
        let copies = node.copies
        let portCount = plugin.ports.count
        var owned: [UnsafeMutableRawPointer] = []
        func alloc<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocateRender(capacity: max(1, count))
            owned.append(UnsafeMutableRawPointer(p))
            return p
        }
        let shim = gh_ladspa_lv2_descriptor()!
        let handles = alloc(LV2_Handle?.self, copies)
        let descriptors = alloc(UnsafePointer<LV2_Descriptor>.self, copies)
        let audioInputs = alloc(UInt32.self, copies * node.mainInputs.count)
        let audioOutputs = alloc(UInt32.self, copies * node.mainOutputs.count)
        var downmix: UnsafeMutablePointer<Float>?
        if copies == 1 && node.mainInputs.count == 1 && format.channels > 1 {
            downmix = alloc(Float.self, format.maxFrames)
            downmix!.initialize(repeating: 0, count: format.maxFrames)
        }
        let controls = alloc(Float.self, copies * portCount)
        controls.initialize(repeating: 0, count: max(1, copies * portCount))
        let silence = alloc(Float.self, format.maxFrames)
        silence.initialize(repeating: 0, count: format.maxFrames)
        let scratch = alloc(Float.self, format.maxFrames)
        scratch.initialize(repeating: 0, count: format.maxFrames)
        var made: [LV2_Handle] = []
        for copy in 0..<copies {
            guard let handle = gh_ladspa_instantiate(plugin.ladspa, UInt(format.sampleRate)) else {
                made.forEach { shim.pointee.cleanup($0) }
                owned.forEach { $0.deallocateRender() }
                throw NodeCommandError.failed("LADSPA plugin \(node.name) failed to instantiate (node '\(id)')")
            }
            made.append(handle)
            handles[copy] = handle
            descriptors[copy] = shim
            for (i, port) in node.mainInputs.enumerated() {
                audioInputs[copy * node.mainInputs.count + i] = UInt32(port)
            }
            for (i, port) in node.mainOutputs.enumerated() {
                audioOutputs[copy * node.mainOutputs.count + i] = UInt32(port)
            }
            let values = controls + copy * portCount
            for port in plugin.ports {
                let target: UnsafeMutablePointer<Float>
                if port.kind == .control {
                    values[port.index] = port.isInput ? node.controlValues[port.index] ?? 0 : 0
                    target = values + port.index
                } else {
                    // Main audio ports are connected every cycle by the kernel; the others read silence.
                    target = port.isInput ? silence : scratch
                }
                shim.pointee.connect_port(handle, UInt32(port.index), target)
            }
            shim.pointee.activate(handle)
        }
        let none = alloc(UnsafeMutablePointer<LV2_Atom_Sequence>.self, 0)
        wet = .allocateRender(capacity: 2)
        wet.initialize(repeating: SmoothedGain(1), count: 2)
        paused = .create(false)
        runsWhenSilent = .allocateRender(capacity: 1)
        runsWhenSilent.initialize(to: false)
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: LV2Kernel(
                copies: copies, handles: handles, descriptors: descriptors, audioInputs: audioInputs,
                audioOutputs: audioOutputs, inputsPerCopy: node.mainInputs.count,
                outputsPerCopy: node.mainOutputs.count, downmix: downmix, controls: controls, portCount: portCount,
                atomBuffers: none, atomIsInput: alloc(Bool.self, 0), atomCapacities: alloc(UInt32.self, 0),
                atomCount: 0, sequenceType: 0, chunkType: 0, workers: nil, wet: wet, paused: paused,
                fadeSamples: Int(Self.fadeSeconds * Double(format.sampleRate)), runsWhenSilent: runsWhenSilent,
                silencedSlices: .create(0)))
        let connected = alloc(UnsafeMutableRawPointer?.self, copies * portCount)
        connected.initialize(repeating: nil, count: max(1, copies * portCount))
        kernelPointer.pointee.connected = connected
        self.handles = made
        allocations = owned
    }

    var kernel: RenderStep.Kernel { .lv2(kernelPointer) }

    var hostedPlugin: (any HostedPlugin)? { self }
    var takesNominalBlockLength: Bool { true }
    func setNominalBlockLength(_ frames: Int, concurrent: Bool, send: (ControlMessage) throws -> Void) throws -> Bool {
        nominalBlockLength = frames
        return true
    }
    var loadsFiles: Bool { false }
    var silencedSlices: Int { kernelPointer.pointee.silencedSlices.load(ordering: .relaxed) }
    func drainLog() {
        reportedNonFinite = reportSilenced(node: id, plugin: node.name, since: reportedNonFinite, to: Self.logger)
    }
    var reportsLatency: Bool { false }
    func measuredLatency(maxFrames: Int, channels: Int) -> Float? { nil }
    var propertyValues: [String: String] { [:] }
    /// Control output values of the first instance, by symbol.
    var controlOutputs: [String: Float] {
        Dictionary(
            uniqueKeysWithValues: node.plugin.ports.filter { $0.kind == .control && !$0.isInput }
                .map { ($0.symbol, kernelPointer.pointee.controls[$0.index]) })
    }

    var parameters: [ParameterDescriptor] { node.descriptor.parameters }

    /// Port values a command sets, fitted to the port; throws the reason when it does not fit.
    func targets(of command: NodeCommand) throws -> [(port: Int, value: Float)] {
        func control(_ parameter: ParameterID) throws -> LV2Port {
            guard let port = node.plugin.controlInputs.first(where: { $0.symbol == parameter.description }) else {
                throw NodeCommandError.unknownParameter(
                    node: "'\(id)' (\(node.name))", parameter: parameter, noun: "control",
                    known: "controls: \(node.plugin.controlInputs.map(\.symbol).joined(separator: ", "))")
            }
            return port
        }
        switch command {
        case .set(let parameter, let value):
            let port = try control(parameter)
            return [(port.index, port.conform(Float(value)))]
        case .choose(let parameter, let label):
            let port = try control(parameter)
            return [(port.index, try port.value(named: label, node: id, parameter: parameter))]
        case .bypass:
            return []
        case .seek:
            throw NodeCommandError.seekNotSupported(node: id)
        case .preset(let name):
            throw NodeCommandError.unknownPreset(node: id, name: name, known: [])
        }
    }

    func check(_ command: NodeCommand) throws { _ = try targets(of: command) }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        if case .bypass(let on) = command { return [.kernel(.lv2(kernelPointer, .bypass(on)))] }
        return try targets(of: command).map { .kernel(.lv2(kernelPointer, .control(port: $0.port, value: $0.value))) }
    }

    func close() {
        let shim = gh_ladspa_lv2_descriptor()!
        for handle in handles {
            shim.pointee.deactivate(handle)
            shim.pointee.cleanup(handle)
        }
        handles = []
        kernelPointer.pointee.silencedSlices.destroy()
        kernelPointer.deinitialize(count: 1).deallocateRender()
        allocations.forEach { $0.deallocateRender() }
        allocations = []
        wet.deallocateRender()
        paused.destroy()
        runsWhenSilent.deallocateRender()
    }
}
