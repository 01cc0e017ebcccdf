/// A switch from one render plan to the next, prepared completely by the control world.
/// While the fade runs, `plan` renders both graphs on the same input: nodes kept by the swap run once,
/// and crossfades join old and new wherever they differ (the output, and inputs of kept nodes).
public struct PlanTransition {
    public let plan: RenderPlan
    public let next: RenderPlan
    public let clock: UnsafeMutablePointer<FadeClock>

    public init(plan: RenderPlan, next: RenderPlan, clock: UnsafeMutablePointer<FadeClock>) {
        self.plan = plan
        self.next = next
        self.clock = clock
    }
}
