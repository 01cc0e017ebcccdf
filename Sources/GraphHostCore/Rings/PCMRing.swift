/// A lock-free single-producer/single-consumer ring of interleaved Float32 frames.
/// The decoder thread writes, the render thread reads and deinterleaves into a planar bus.
/// It is shared by exactly one producer thread and one consumer thread (the contract the compiler cannot check).
public struct PCMRing: @unchecked Sendable {
    public let samples: UnsafeMutablePointer<Float>
    public let channels: Int
    public let index: SPSCIndex

    /// Allocates a ring of at least `minimumFrames` frames (rounded up to a power of two).
    public static func allocate(minimumFrames: Int, channels: Int) -> PCMRing {
        var capacity = 1
        while capacity < minimumFrames { capacity <<= 1 }
        let samples = UnsafeMutablePointer<Float>.allocateRender(capacity: capacity * channels)
        samples.initialize(repeating: 0, count: capacity * channels)
        return PCMRing(samples: samples, channels: channels, index: .create(capacity: capacity))
    }

    public func deallocate() {
        samples.deallocateRender()
        index.destroy()
    }

    public var capacityFrames: Int { index.capacity }

    /// Producer: copies up to `frames` interleaved frames in; returns how many fit.
    @_noLocks
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        produce(frames) { ring, done, run in
            let from = source + done * channels
            for i in 0..<(run * channels) { ring[i] = from[i] }
        }
    }

    /// Producer: interleaves up to `frames` frames from one buffer per channel; returns how many fit.
    @_noLocks
    public func write(planar source: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        produce(frames) { ring, done, run in
            if channels == 2 {
                return Interleaving.interleaveStereo(source[0] + done, source[1] + done, into: ring, frames: run)
            }
            for c in 0..<channels {
                let from = source[c] + done
                for f in 0..<run { ring[f * channels + c] = from[f] }
            }
        }
    }

    /// Producer: interleaves up to `frames` frames of a planar bus (channel c at `bus + c * channelStride`); returns
    /// how many fit.
    @_noLocks
    public func write(bus: UnsafePointer<Float>, channelStride: Int, frames: Int) -> Int {
        produce(frames) { ring, done, run in
            Interleaving.interleave(
                from: bus + done, channelStride: channelStride, channels: channels, frames: run, into: ring)
        }
    }

    /// Consumer: moves up to `frames` frames into a planar bus (channel c at `destination + c * channelStride`); with
    /// `levels` and two channels, adds what it copies to their levels.
    @_noLocks
    public func readPlanar(
        into destination: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int,
        levels: LevelMeter.RunLevels? = nil
    ) -> Int {
        consume(frames) { ring, done, run in
            if let levels, channels == 2 {
                SampleRunLevels.deinterleaveStereo(
                    ring, into: destination + done, destination + channelStride + done, frames: run, levels: levels)
            } else {
                Interleaving.deinterleave(
                    from: ring, channels: channels, frames: run, into: destination + done, channelStride: channelStride)
            }
        }
    }

    /// Consumer: copies up to `frames` frames that lie `offset` frames past the oldest into a planar bus without
    /// consuming anything; returns how many there were.
    @_noLocks
    public func peekPlanar(offset: Int, into destination: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int)
        -> Int
    {
        let available = index.readable() - offset
        let count = frames < available ? frames : (available > 0 ? available : 0)
        runs(from: index.read.load(ordering: .relaxed) + offset, count: count) { ring, done, run in
            Interleaving.deinterleave(
                from: ring, channels: channels, frames: run, into: destination + done, channelStride: channelStride)
        }
        return count
    }

    /// Consumer: moves up to `frames` interleaved frames out; returns how many there were.
    @_noLocks
    public func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        consume(frames) { ring, done, run in
            let to = destination + done * channels
            for i in 0..<(run * channels) { to[i] = ring[i] }
        }
    }

    /// Consumer: drops up to `frames` of the oldest frames; returns how many.
    @_noLocks
    public func discard(_ frames: Int) -> Int {
        let count = frames < index.readable() ? frames : index.readable()
        index.read.store(index.read.load(ordering: .relaxed) + count, ordering: .releasing)
        return count
    }

    /// Up to `frames` writable frames handed to `fill` as contiguous runs (ring memory, frames before the run, run
    /// length), then published to the consumer; returns how many.
    @_noLocks @inline(__always)
    func produce(_ frames: Int, _ fill: (UnsafeMutablePointer<Float>, Int, Int) -> Void) -> Int {
        let count = min(frames, index.writable())
        let start = index.written.load(ordering: .relaxed)
        runs(from: start, count: count, fill)
        index.written.store(start + count, ordering: .releasing)
        return count
    }

    /// Up to `frames` readable frames handed to `take` as contiguous runs, then released to the producer; returns how
    /// many.
    @_noLocks @inline(__always)
    func consume(_ frames: Int, _ take: (UnsafeMutablePointer<Float>, Int, Int) -> Void) -> Int {
        let count = min(frames, index.readable())
        let start = index.read.load(ordering: .relaxed)
        runs(from: start, count: count, take)
        index.read.store(start + count, ordering: .releasing)
        return count
    }

    @_noLocks @inline(__always)
    func runs(from position: Int, count: Int, _ body: (UnsafeMutablePointer<Float>, Int, Int) -> Void) {
        let mask = index.capacity - 1
        var done = 0
        while done < count {
            let slot = (position + done) & mask
            let run = min(count - done, index.capacity - slot)
            body(samples + slot * channels, done, run)
            done += run
        }
    }
}
