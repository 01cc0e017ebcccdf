/// One node's work in a render plan: its kernel and the bus buffers it reads and writes.
public struct RenderStep {
    public var kernel: Kernel
    public var inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    public var inputCount: Int
    public var output: UnsafeMutablePointer<Float>?
    /// Output buses 1, 2, … of a node that has more than one (an LV2 node's outputs linked by port name).
    public var extraOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    /// Measures the output after each slice while it is on (`"meter": true`, `meter NODE on`).
    public var meter: UnsafeMutablePointer<LevelMeter>?
    /// Copies the output for the control world's analysis while it is on (loudness, spectrum).
    public var tap: UnsafeMutablePointer<AnalysisTap>?

    public init(
        kernel: Kernel, inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, inputCount: Int,
        output: UnsafeMutablePointer<Float>?, extraOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>? = nil,
        meter: UnsafeMutablePointer<LevelMeter>? = nil, tap: UnsafeMutablePointer<AnalysisTap>? = nil
    ) {
        self.kernel = kernel
        self.inputs = inputs
        self.inputCount = inputCount
        self.output = output
        self.extraOutputs = extraOutputs
        self.meter = meter
        self.tap = tap
    }
}
