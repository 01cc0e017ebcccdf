/// One node's work in a render plan: its kernel and the bus buffers it reads and writes.
public struct RenderStep {
    /// Every kind of render kernel, addressed by pointer into memory the control world owns.
    /// New node kinds add a case here and in `RenderPlan.runSlice` / `RenderEngine.deliverMessages`.
    public enum Kernel {
        case stream(UnsafeMutablePointer<StreamKernel>)
        case mixer(UnsafeMutablePointer<MixerKernel>)
        case ipodEQ(UnsafeMutablePointer<IPodEQKernel>)
        case lv2(UnsafeMutablePointer<LV2Kernel>)
        case crossfade(UnsafeMutablePointer<CrossfadeKernel>)
        case output
    }

    public var kernel: Kernel
    public var inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    public var inputCount: Int
    public var output: UnsafeMutablePointer<Float>?

    public init(kernel: Kernel, inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, inputCount: Int,
                output: UnsafeMutablePointer<Float>?) {
        self.kernel = kernel
        self.inputs = inputs
        self.inputCount = inputCount
        self.output = output
    }
}
