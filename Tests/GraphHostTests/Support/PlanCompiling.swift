import XCTest

@testable import GraphHost

extension XCTestCase {
    /// Compiles `steps` (input sources and output counts) with a kernel of its own for each and returns the plan
    /// and the kernels in step order. `body` runs while both are alive.
    func compile(
        _ steps: [(inputs: [PlanStepSource.Source?], outputs: Int)], outputs: [PlanStepSource.Source?],
        _ body: (CompiledPlan, [UnsafeMutablePointer<CrossfadeKernel>]) throws -> Void
    ) rethrows {
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: 2)
        gains.initialize(from: [0, 1], count: 2)
        let clock = UnsafeMutablePointer<FadeClock>.allocate(capacity: 1)
        clock.initialize(to: FadeClock(frames: 1, gains: gains))
        let kernels = steps.map { _ in
            let kernel = UnsafeMutablePointer<CrossfadeKernel>.allocate(capacity: 1)
            kernel.initialize(to: CrossfadeKernel(clock: clock))
            return kernel
        }
        defer {
            kernels.forEach { $0.deallocate() }
            clock.deallocate()
            gains.deallocate()
        }
        let sources = zip(steps, kernels).map {
            PlanStepSource(kernel: .crossfade($1), inputs: $0.inputs, outputs: $0.outputs)
        }
        try body(CompiledPlan(steps: sources, outputs: outputs, channels: 2, maxFrames: 64), kernels)
    }
}
