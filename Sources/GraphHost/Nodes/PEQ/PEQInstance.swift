import Glibc

/// A running `peq` node: owns its kernel's memory and turns commands into band, preamp and bypass changes.
final class PEQInstance: NodeInstance {
    let id: String
    let format: GraphFormat
    private(set) var node: PEQNode
    let kernelPointer: UnsafeMutablePointer<PEQKernel>
    let sections: UnsafeMutablePointer<PEQSection>
    let state: UnsafeMutablePointer<SIMD2<Double>>
    let workspace: PEQWorkspace

    init(id: String, node: PEQNode, format: GraphFormat) {
        self.id = id
        self.node = node
        self.format = format
        let bands = node.bands.count
        sections = .allocateRender(capacity: PEQKernel.sectionCount(bands: bands))
        state = .allocateRender(capacity: PEQKernel.stateCount(bands: bands, channels: format.channels))
        workspace = .allocate(channels: format.channels, bands: bands)
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: PEQKernel(
                bank: node.bands.map { $0.section(sampleRate: format.sampleRate) }, channels: format.channels,
                preamp: Self.linear(node.preamp), rampFrames: Int(PEQKernel.rampSeconds * Double(format.sampleRate)),
                sections: sections, state: state, workspace: workspace))
    }

    static func linear(_ dB: Double) -> Float { Float(pow(10, dB / 20)) }

    var kernel: RenderStep.Kernel { .peq(kernelPointer) }

    var parameters: [ParameterDescriptor] { node.descriptor.parameters }

    func check(_ command: NodeCommand) throws { _ = try node.applied(command, id: id, sampleRate: format.sampleRate) }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        let next = try node.applied(command, id: id, sampleRate: format.sampleRate)
        defer { node = next }
        if case .bypass(let on) = command { return [.kernel(.peq(kernelPointer, .bypass(on)))] }
        var changes: [PEQKernel.Change] = next.bands.indices.filter { next.bands[$0] != node.bands[$0] }
            .map { .band($0, next.bands[$0].section(sampleRate: format.sampleRate)) }
        if next.preamp != node.preamp { changes.append(.preamp(Self.linear(next.preamp))) }
        return changes.map { .kernel(.peq(kernelPointer, $0)) }
    }

    /// A changed bank goes warmed here on the input history, so the callback that takes it crossfades at once; when
    /// that fails, its bands go one by one and the bank warms on the live input (`PEQKernel`).
    func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        let before = node.bands
        var messages = try messages(for: command)
        if node.bands != before,
            let warmed = workspace.warm(node.bands.map { $0.section(sampleRate: format.sampleRate) })
        {
            messages.removeAll { if case .kernel(.peq(_, .band)) = $0 { true } else { false } }
            do {
                try send(.kernel(.peq(kernelPointer, .warmed(slot: warmed.slot, through: warmed.through))))
            } catch {
                workspace.slots.release(slot: warmed.slot)
                throw error
            }
        }
        for message in messages { try send(message) }
    }

    func close() {
        kernelPointer.deinitialize(count: 1).deallocateRender()
        sections.deinitialize(count: PEQKernel.sectionCount(bands: node.bands.count)).deallocateRender()
        state.deinitialize(count: PEQKernel.stateCount(bands: node.bands.count, channels: format.channels))
            .deallocateRender()
        workspace.deallocate()
    }
}
