import Atomics

/// The render side of `run --record`: the process callback copies every frame it hands to PipeWire into a
/// lock-free ring that a control-world writer drains. When the writer falls behind, the frames that do not fit
/// are dropped and counted; the callback never waits.
public struct RecordTap: Sendable {
    public let ring: PCMRing
    /// Frames the ring had no room for.
    public let droppedFrames: UnsafeAtomic<Int>
    /// Wakes the recording writer once a chunk is captured.
    public let signal: RingSignal

    public static func allocate(channels: Int, sampleRate: Int, seconds: Double = 4) -> RecordTap {
        RecordTap(
            ring: .allocate(minimumFrames: Int(seconds * Double(sampleRate)), channels: channels),
            droppedFrames: .create(0), signal: .create())
    }

    public func deallocate() {
        ring.deallocate()
        droppedFrames.destroy()
        signal.destroy()
    }

    @_noLocks
    public func capture(interleaved source: UnsafePointer<Float>, frames: Int) {
        captured(dropping: frames - ring.write(source, frames: frames))
    }

    @_noLocks
    public func capture(planar source: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int) {
        captured(dropping: frames - ring.write(planar: source, frames: frames))
    }

    /// After a capture: counts the frames the ring had no room for and wakes the writer once a chunk is there.
    @_noLocks
    func captured(dropping frames: Int) {
        if frames > 0 { droppedFrames.wrappingIncrement(by: frames, ordering: .relaxed) }
        signal.dataWritten(in: ring.index)
    }
}
