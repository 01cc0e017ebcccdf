/// How a swap (`chain`, `load`) replaces the running graph: a crossfade, or a spillover where the old graph stops
/// taking input but its tails (reverb, delay) ring out while the new graph takes over.
public enum SwapMode: String, Sendable, CaseIterable {
    case crossfade, spillover

    /// A tail has ended once its peak stays below −80 dBFS for a slice.
    public static let tailThreshold: Float = 1e-4
    public static let defaultTailSeconds = 10.0

    static var names: String { allCases.map(\.rawValue).joined(separator: " or ") }
}
