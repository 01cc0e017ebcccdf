/// The audio format every bus of a graph carries.
public struct GraphFormat: Equatable, Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// The largest slice the render plan processes at once; larger requests are split.
    public var maxFrames: Int
    /// The slice length the host runs most of the time (`render --block`, the PipeWire quantum), told to plugins as
    /// their nominal block length; nil when not known, taken as `maxFrames`. Not part of a graph file.
    public var nominalFrames: Int?

    /// `nominalFrames` within 1…`maxFrames` (a larger request is split into `maxFrames` slices).
    public var nominalBlockLength: Int { min(max(nominalFrames ?? maxFrames, 1), maxFrames) }

    public static let `default` = GraphFormat(sampleRate: 48000, channels: 2, maxFrames: 4096)

    public init(sampleRate: Int, channels: Int, maxFrames: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.maxFrames = maxFrames
    }
}
