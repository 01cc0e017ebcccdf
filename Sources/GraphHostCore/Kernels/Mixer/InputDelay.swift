/// Delays one mixer input by a whole number of frames, so that parallel paths with different plugin latencies
/// meet in step (latency compensation). A planar ring of `capacity` frames per channel, prepared by the control world.
public struct InputDelay {
    public let ring: UnsafeMutablePointer<Float>
    /// Frames per channel in the ring: a power of two above the largest delay it can give.
    public let capacity: Int
    /// The delay now, in frames (at most `capacity - 1`).
    public var frames: Int
    var position = 0

    public init(ring: UnsafeMutablePointer<Float>, capacity: Int, frames: Int) {
        self.ring = ring
        self.capacity = capacity
        self.frames = frames
    }

    /// Writes `count` frames of `source` into the ring and the same frames `frames` earlier into `destination`.
    @_noLocks
    public mutating func process(
        _ source: UnsafeMutablePointer<Float>, into destination: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, count: Int
    ) {
        let mask = capacity - 1
        for c in 0..<channels {
            let line = ring + c * capacity
            let src = source + c * channelStride
            let dst = destination + c * channelStride
            for f in 0..<count {
                line[(position + f) & mask] = src[f]
                dst[f] = line[(position + f - frames) & mask]
            }
        }
        position = (position + count) & mask
    }
}
