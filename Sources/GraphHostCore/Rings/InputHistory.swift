import Atomics

/// The recent input of a node, which the render world keeps for the control world to warm filter banks on: a ring of
/// `capacity` frames a channel (channel c starts at `c * capacity`), and the counts by which the control world tells
/// whether the frames it read stayed whole. Prepared by the control world.
public struct InputHistory {
    public let samples: UnsafeMutablePointer<Float>
    /// Input frames the render world has put in the ring so far, published once they are written.
    public let remembered: UnsafeAtomic<Int>
    /// `remembered` plus the frames of a write under way, published before that write begins.
    public let writing: UnsafeAtomic<Int>
    public let channels: Int
    public let capacity: Int

    public static func allocate(channels: Int, capacity: Int) -> InputHistory {
        let h = InputHistory(
            samples: .allocateRender(capacity: channels * capacity), remembered: .create(0), writing: .create(0),
            channels: channels, capacity: capacity)
        h.samples.initialize(repeating: 0, count: channels * capacity)
        return h
    }

    public func deallocate() {
        samples.deallocateRender()
        remembered.destroy()
        writing.destroy()
    }

    /// Render world: appends `frames` frames of input (at most `capacity`) to the ring after the `remembered` frames
    /// already there, and publishes the new count; the count a write will reach goes out before it, so the control
    /// world can tell what it may have overwritten.
    @_noLocks
    public func remember(
        input: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int, remembered: inout Int
    ) {
        writing.store(remembered + frames, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        let at = remembered % capacity
        let first = min(frames, capacity - at)
        let second = frames - first
        for c in 0..<channels {
            let from = input + c * channelStride
            let ring = samples + c * capacity
            // Offsets on the pointers, not inside the loops: no checked index arithmetic there, so they vectorize.
            let end = ring + at
            let wrapped = from + first
            for f in 0..<first { end[f] = from[f] }
            for f in 0..<second { ring[f] = wrapped[f] }
        }
        remembered += frames
        self.remembered.store(remembered, ordering: .releasing)
    }

    /// Control world: calls `read` with the count of frames remembered so far, for it to read the newest `frames` of
    /// them (frames before the first are the ring's initial zeros). Returns that count, or nil when the render world
    /// wrote, or had begun to write, over the frames read meanwhile.
    public func read(newest frames: Int, _ read: (_ through: Int) -> Void) -> Int? {
        let through = remembered.load(ordering: .acquiring)
        read(through)
        // The frames read were whole if no write, finished or under way, has reached the oldest of them.
        atomicMemoryFence(ordering: .acquiring)
        guard writing.load(ordering: .relaxed) - through <= capacity - frames else { return nil }
        return through
    }
}
