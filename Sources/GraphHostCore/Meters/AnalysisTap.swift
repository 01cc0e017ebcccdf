import Atomics

/// Copies a node's bus into a lock-free ring for the control world's analysis (loudness, spectrum) while someone
/// watches it. Off, a capture costs one relaxed load; on, one interleaving copy per sample and a look at the drain
/// thread's signal. When the drain falls behind, the frames that do not fit are dropped and counted. The ring is
/// allocated the first time the tap is turned on, so a graph nobody analyses holds no ring memory.
public struct AnalysisTap {
    /// How much the ring holds once allocated (`turnOn`).
    public static let ringSeconds = 0.3

    public let channels: Int
    public let sampleRate: Int
    /// Whether the render world captures; the control world turns it on (`turnOn`) and off.
    public let isOn: UnsafeAtomic<Bool>
    /// Frames the ring had no room for.
    public let droppedFrames: UnsafeAtomic<Int>
    /// Set once by the first `turnOn`, before `isOn` is published; never changed afterwards.
    public private(set) var ring: PCMRing?
    /// Wakes the drain thread once enough is captured; set with the ring.
    public private(set) var signal: RingSignal?

    /// An off tap of `channels` channels at `sampleRate` (control world only).
    public static func allocate(channels: Int, sampleRate: Int) -> UnsafeMutablePointer<AnalysisTap> {
        let tap = UnsafeMutablePointer<AnalysisTap>.allocateRender(capacity: 1)
        tap.initialize(
            to: AnalysisTap(
                channels: channels, sampleRate: sampleRate, isOn: .create(false), droppedFrames: .create(0), ring: nil,
                signal: nil))
        return tap
    }

    /// Frees a tap from `allocate` and its ring (control world only; nothing may capture into it any more). The
    /// signal belongs to whoever passed it to `turnOn`.
    public static func deallocate(_ tap: UnsafeMutablePointer<AnalysisTap>) {
        tap.pointee.isOn.destroy()
        tap.pointee.droppedFrames.destroy()
        tap.pointee.ring?.deallocate()
        tap.deinitialize(count: 1).deallocateRender()
    }

    /// Turns `tap` on (control world, as the ring's consumer): allocates the ring the first time (then `signal`
    /// stays the one it is woken by), drops what an earlier time on left in it, and publishes.
    public static func turnOn(_ tap: UnsafeMutablePointer<AnalysisTap>, signal: RingSignal) {
        if tap.pointee.ring == nil {
            tap.pointee.ring = .allocate(
                minimumFrames: Int(ringSeconds * Double(tap.pointee.sampleRate)), channels: tap.pointee.channels)
            tap.pointee.signal = signal
        }
        let ring = tap.pointee.ring!
        _ = ring.discard(ring.index.readable())
        tap.pointee.isOn.store(true, ordering: .releasing)
    }

    /// Copies `frames` frames of `bus` (channel c at `bus + c * channelStride`) into the ring if the tap is on.
    @_noLocks
    public func capture(_ bus: UnsafePointer<Float>, channelStride: Int, frames: Int) {
        guard isOn.load(ordering: .relaxed) else { return }
        // Pairs with the releasing store of `turnOn`: the ring and signal written before it are seen.
        atomicMemoryFence(ordering: .acquiring)
        guard let ring, let signal else { return }
        let written = ring.write(bus: bus, channelStride: channelStride, frames: frames)
        if written < frames { droppedFrames.wrappingIncrement(by: frames - written, ordering: .relaxed) }
        signal.dataWritten(in: ring.index)
    }
}
