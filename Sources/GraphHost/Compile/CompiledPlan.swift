/// One step of a plan being compiled: a kernel, where each input comes from (a producing step, or silence),
/// and whether it writes an output bus.
struct PlanStepSource {
    var kernel: RenderStep.Kernel
    /// For each input bus, the index of the producing step (earlier in the list), or nil for silence.
    var inputs: [Int?]
    var producesOutput: Bool
}

/// The memory of a `RenderPlan`, owned by the control world: steps, input tables and bus buffers.
/// Steps come in render order; bus slot 0 is silence, and an output bus is reused once the last step
/// reading it has run, so it never aliases a step's own inputs.
final class CompiledPlan {
    let plan: RenderPlan
    /// Number of distinct bus buffers the plan uses (after reuse).
    let busCount: Int
    private let busMemory: UnsafeMutablePointer<Float>
    private let inputTables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>]

    /// `output` is the step whose bus the plan outputs (nil: silence).
    init(steps sources: [PlanStepSource], output: Int?, channels: Int, maxFrames: Int) {
        var lastUse: [Int: Int] = [:]      // producing step → last step reading it
        for (p, s) in sources.enumerated() {
            for case let i? in s.inputs { lastUse[i] = max(lastUse[i] ?? -1, p) }
        }
        if let output { lastUse[output] = sources.count }
        var free: [Int] = []
        var live: [(slot: Int, until: Int)] = []
        var slotCount = 1
        var slotOf: [Int: Int] = [:]
        for (p, s) in sources.enumerated() where s.producesOutput {
            free += live.filter { $0.until < p }.map(\.slot)
            live.removeAll { $0.until < p }
            let slot = free.popLast() ?? { slotCount += 1; return slotCount - 1 }()
            slotOf[p] = slot
            live.append((slot, lastUse[p] ?? p))
        }
        busCount = slotCount
        let busSize = channels * maxFrames
        let memory = UnsafeMutablePointer<Float>.allocateRender(capacity: slotCount * busSize)
        memory.initialize(repeating: 0, count: slotCount * busSize)
        busMemory = memory
        func bus(_ slot: Int) -> UnsafeMutablePointer<Float> { memory + slot * busSize }

        var tables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>] = []
        let steps = UnsafeMutableBufferPointer<RenderStep>.allocateRender(capacity: sources.count)
        for (p, s) in sources.enumerated() {
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: max(1, s.inputs.count))
            table.initialize(repeating: bus(0), count: max(1, s.inputs.count))
            for (b, source) in s.inputs.enumerated() { if let source { table[b] = bus(slotOf[source]!) } }
            tables.append(table)
            (steps.baseAddress! + p).initialize(to: RenderStep(kernel: s.kernel, inputs: table, inputCount: s.inputs.count,
                                                               output: slotOf[p].map { bus($0) }))
        }
        inputTables = tables
        plan = RenderPlan(steps: steps, channels: channels, maxFrames: maxFrames,
                          outputBus: output.flatMap { slotOf[$0] }.map { bus($0) } ?? bus(0))
    }

    deinit {
        plan.steps.deallocateRender()
        inputTables.forEach { $0.deallocateRender() }
        busMemory.deallocateRender()
    }
}
