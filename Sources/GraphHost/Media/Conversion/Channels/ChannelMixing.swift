/// How a stream node maps its media's channels to the graph's: by layout (the default), with the LFE mixed into a
/// downmix at `lfeGainDB`, or by an explicit matrix.
public struct ChannelMixing: Equatable, Sendable {
    /// Rows: the graph's channels; columns: the media's channels; linear gains.
    public var matrix: [[Double]]?
    /// The LFE's gain in dB where a downmix has no LFE channel to put it in; nil leaves it out.
    public var lfeGainDB: Double?

    public init(matrix: [[Double]]? = nil, lfeGainDB: Double? = nil) {
        self.matrix = matrix
        self.lfeGainDB = lfeGainDB
    }

    /// The largest gain an explicit matrix may hold (+12 dB); beyond ±2.0 the corrupt-block guard mutes anyway.
    public static let matrixGainLimit = 4.0
}
