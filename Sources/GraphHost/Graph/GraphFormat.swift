/// The audio format every bus of a graph carries.
public struct GraphFormat: Equatable, Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// The largest slice the render plan processes at once; larger requests are split.
    public var maxFrames: Int

    public static let `default` = GraphFormat(sampleRate: 48000, channels: 2, maxFrames: 4096)

    public init(sampleRate: Int, channels: Int, maxFrames: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.maxFrames = maxFrames
    }
}
