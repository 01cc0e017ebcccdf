/// A lock-free single-producer/single-consumer ring of interleaved Float32 frames.
/// The decoder thread writes, the render thread reads and deinterleaves into a planar bus.
public struct PCMRing {
    public let samples: UnsafeMutablePointer<Float>
    public let channels: Int
    public let index: SPSCIndex

    /// Allocates a ring of at least `minimumFrames` frames (rounded up to a power of two).
    public static func allocate(minimumFrames: Int, channels: Int) -> PCMRing {
        var capacity = 1
        while capacity < minimumFrames { capacity <<= 1 }
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        samples.initialize(repeating: 0, count: capacity * channels)
        return PCMRing(samples: samples, channels: channels, index: .create(capacity: capacity))
    }

    public func deallocate() {
        samples.deallocate()
        index.destroy()
    }

    public var capacityFrames: Int { index.capacity }

    /// Producer: copies up to `frames` interleaved frames in; returns how many fit.
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let count = min(frames, index.writable())
        let start = index.written.load(ordering: .relaxed)
        let mask = index.capacity - 1
        var done = 0
        while done < count {
            let slot = (start + done) & mask
            let run = min(count - done, index.capacity - slot)
            (samples + slot * channels).update(from: source + done * channels, count: run * channels)
            done += run
        }
        index.written.store(start + count, ordering: .releasing)
        return count
    }

    /// Consumer: moves up to `frames` frames into a planar bus (channel c at `destination + c * channelStride`).
    @_noLocks
    public func readPlanar(into destination: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int) -> Int {
        let count = min(frames, index.readable())
        let start = index.read.load(ordering: .relaxed)
        let mask = index.capacity - 1
        var done = 0
        while done < count {
            let slot = (start + done) & mask
            let run = min(count - done, index.capacity - slot)
            let source = samples + slot * channels
            for c in 0..<channels {
                let out = destination + c * channelStride + done
                for f in 0..<run { out[f] = source[f * channels + c] }
            }
            done += run
        }
        index.read.store(start + count, ordering: .releasing)
        return count
    }
}
