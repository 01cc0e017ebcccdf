/// Helpers for planar bus buffers: channel c of a bus starts at `base + c * channelStride`.
public enum Bus {
    @_noLocks @inline(__always)
    public static func clear(_ base: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, from: Int, to: Int) {
        guard to > from else { return }
        for c in 0..<channels { (base + c * channelStride + from).update(repeating: 0, count: to - from) }
    }
}
