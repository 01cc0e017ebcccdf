/// What the control world can analyse of a node's output (`GraphSession.watch`).
public enum AnalysisKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// EBU R128 loudness and true peak (`LoudnessMeter`).
    case loudness
    /// The spectrum (an analyzer registered with `AudioAnalysis.register`).
    case spectrum

    public var description: String { rawValue }
}
