/// One step of a plan being compiled: a kernel, where each input comes from (an output bus of a producing step, or
/// silence), and how many output buses it writes (0, 1, or more for an LV2 node with outputs linked by port name).
struct PlanStepSource {
    /// An output bus of an earlier step in the list.
    struct Source: Hashable {
        var step: Int
        var bus = 0
    }
    var kernel: RenderStep.Kernel
    /// For each input bus, its producer, or nil for silence.
    var inputs: [Source?]
    var outputs: Int
    /// Measures the first output bus after each slice while it is on.
    var meter: UnsafeMutablePointer<LevelMeter>? = nil
    /// Captures the first output bus for analysis while it is on.
    var tap: UnsafeMutablePointer<AnalysisTap>? = nil
}

/// The memory of a `RenderPlan`, owned by the control world: steps, input and output tables and bus buffers.
/// Steps come in render order; bus slot 0 is silence, and an output bus is reused once the last step
/// reading it has run, so it never aliases a step's own inputs.
final class CompiledPlan {
    let plan: RenderPlan
    /// Number of distinct bus buffers the plan uses (after reuse).
    let busCount: Int
    /// The steps as a dependency graph, when some can render at once, and what each step waits for.
    let schedule: StepSchedule?
    let predecessors: [[Int]]
    private let busMemory: UnsafeMutablePointer<Float>
    private let tables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>]

    /// `outputs`: the bus each output plays (nil: silence), at least one; `outputMeters` and `outputTaps`: a meter
    /// and an analysis tap for each.
    init(
        steps sources: [PlanStepSource], outputs: [PlanStepSource.Source?], channels: Int, maxFrames: Int,
        outputMeters: UnsafeMutablePointer<UnsafeMutablePointer<LevelMeter>>? = nil,
        outputTaps: UnsafeMutablePointer<UnsafeMutablePointer<AnalysisTap>>? = nil
    ) {
        typealias Source = PlanStepSource.Source
        var lastUse: [Source: Int] = [:]  // producing bus → last step reading it
        for (p, s) in sources.enumerated() {
            for case let i? in s.inputs { lastUse[i] = max(lastUse[i] ?? -1, p) }
        }
        for case let output? in outputs { lastUse[output] = sources.count }
        var free: [Int] = []
        var live: [(slot: Int, until: Int)] = []
        var slotCount = 1
        var slotOf: [Source: Int] = [:]
        var readers: [Source: [Int]] = [:]
        for (p, s) in sources.enumerated() {
            for case let i? in s.inputs { readers[i, default: []].append(p) }
        }
        // What each step waits for when steps render at once: the producers of its inputs and an earlier step of its
        // own kernel. A bus is reused only by a step that waits (directly or not) for everything that used it before,
        // so reuse never keeps two branches from rendering at once.
        var predecessors = sources.map { $0.inputs.compactMap { $0?.step } }
        var lastOfKernel: [Int: Int] = [:]
        var ancestors: [Set<Int>] = []
        for (p, s) in sources.enumerated() {
            if let address = s.kernel.address.map({ Int(bitPattern: $0) }) {
                if let earlier = lastOfKernel[address] { predecessors[p].append(earlier) }
                lastOfKernel[address] = p
            }
            ancestors.append(predecessors[p].reduce(into: Set(predecessors[p])) { $0.formUnion(ancestors[$1]) })
        }
        var usersOf: [Int: [Int]] = [:]  // slot → the producer and readers of what it holds
        for (p, s) in sources.enumerated() where s.outputs > 0 {
            free += live.filter { $0.until < p }.map(\.slot)
            live.removeAll { $0.until < p }
            for b in 0..<s.outputs {
                let slot: Int
                if let k = free.lastIndex(where: { (usersOf[$0] ?? []).allSatisfy(ancestors[p].contains) }) {
                    slot = free.remove(at: k)
                } else {
                    slotCount += 1
                    slot = slotCount - 1
                }
                let source = Source(step: p, bus: b)
                usersOf[slot] = [p] + (readers[source] ?? [])
                slotOf[source] = slot
                live.append((slot, lastUse[source] ?? p))
            }
        }
        self.predecessors = predecessors.map { Array(Set($0)).sorted() }
        schedule = Self.rendersInOrder(predecessors) ? nil : StepSchedule(predecessors: predecessors)
        busCount = slotCount
        let busSize = channels * maxFrames
        let memory = UnsafeMutablePointer<Float>.allocateRender(capacity: slotCount * busSize)
        memory.initialize(repeating: 0, count: slotCount * busSize)
        busMemory = memory
        func bus(_ slot: Int) -> UnsafeMutablePointer<Float> { memory + slot * busSize }
        var tables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>] = []
        func table(_ buses: [UnsafeMutablePointer<Float>]) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: max(1, buses.count))
            table.initialize(repeating: bus(0), count: max(1, buses.count))
            for (i, b) in buses.enumerated() { table[i] = b }
            tables.append(table)
            return table
        }
        let steps = UnsafeMutableBufferPointer<RenderStep>.allocateRender(capacity: sources.count)
        for (p, s) in sources.enumerated() {
            let inputs = table(s.inputs.map { $0.map { bus(slotOf[$0]!) } ?? bus(0) })
            let extra = s.outputs > 1 ? table((1..<s.outputs).map { bus(slotOf[Source(step: p, bus: $0)]!) }) : nil
            (steps.baseAddress! + p).initialize(
                to: RenderStep(
                    kernel: s.kernel, inputs: inputs, inputCount: s.inputs.count,
                    output: slotOf[Source(step: p)].map { bus($0) }, extraOutputs: extra, meter: s.meter,
                    tap: s.tap))
        }
        let outputTable = table(outputs.map { $0.flatMap { slotOf[$0] }.map { bus($0) } ?? bus(0) })
        self.tables = tables
        plan = RenderPlan(
            steps: steps, channels: channels, maxFrames: maxFrames, outputBuses: outputTable,
            outputCount: max(1, outputs.count), outputMeters: outputs.isEmpty ? nil : outputMeters,
            outputTaps: outputs.isEmpty ? nil : outputTaps, schedule: schedule)
    }

    /// Whether every step waits, directly or not, for the step before it: then no two can render at once.
    static func rendersInOrder(_ predecessors: [[Int]]) -> Bool {
        var ancestors: [Set<Int>] = []
        for (i, before) in predecessors.enumerated() {
            var mine = Set(before)
            for p in before { mine.formUnion(ancestors[p]) }
            if i > 0 && !mine.contains(i - 1) { return false }
            ancestors.append(mine)
        }
        return true
    }

    deinit {
        schedule?.deallocate()
        plan.steps.deallocateRender()
        tables.forEach { $0.deallocateRender() }
        busMemory.deallocateRender()
    }
}
