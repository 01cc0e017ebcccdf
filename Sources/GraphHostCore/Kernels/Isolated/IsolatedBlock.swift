import Atomics

/// The memory an isolated plugin node shares with its helper process (mapped by both): which block was posted and
/// which was done, the posted block's length and musical time, then its input buses and the helper's output buses,
/// each `channels` planar channels of `frames` frames (an input bus that carries events holds an atom sequence in
/// the same bytes). The render world posts a block only while the helper is idle (`done == posted`), so neither side
/// ever waits for the other.
public struct IsolatedBlock {
    public let base: UnsafeMutableRawPointer
    public let channels: Int
    /// Frames per channel: the node's latency, the longest block it posts.
    public let frames: Int
    public let inputBuses: Int
    public let outputBuses: Int

    static let headerBytes = 512
    static let timeOffset = 320

    /// The bytes a block of `inputBuses` + `outputBuses` buses of `channels` × `frames` needs.
    public static func byteCount(channels: Int, frames: Int, inputBuses: Int = 1, outputBuses: Int = 1) -> Int {
        headerBytes + (inputBuses + outputBuses) * channels * frames * MemoryLayout<Float>.stride
    }

    public init(base: UnsafeMutableRawPointer, channels: Int, frames: Int, inputBuses: Int = 1, outputBuses: Int = 1) {
        self.base = base
        self.channels = channels
        self.frames = frames
        self.inputBuses = inputBuses
        self.outputBuses = outputBuses
        precondition(MemoryLayout<MusicalTime>.size <= Self.headerBytes - Self.timeOffset)
    }

    /// Sequence number of the last block the render world posted (0: none yet).
    public var posted: UnsafeAtomic<Int> {
        @_noLocks get { UnsafeAtomic(at: base.assumingMemoryBound(to: Int.AtomicRepresentation.self)) }
    }
    /// Sequence number of the last block the helper finished.
    public var done: UnsafeAtomic<Int> {
        @_noLocks get { UnsafeAtomic(at: (base + 64).assumingMemoryBound(to: Int.AtomicRepresentation.self)) }
    }
    /// Sequence number of the block whose output the output area holds (a restarted helper marks the block its
    /// predecessor left unfinished as done, never as answered).
    public var answered: UnsafeAtomic<Int> {
        @_noLocks get { UnsafeAtomic(at: (base + 192).assumingMemoryBound(to: Int.AtomicRepresentation.self)) }
    }
    /// Frames in the posted block.
    public var postedFrames: UnsafeAtomic<Int> {
        @_noLocks get { UnsafeAtomic(at: (base + 128).assumingMemoryBound(to: Int.AtomicRepresentation.self)) }
    }
    /// Whether the posted block has a musical time (written with the block, read after `posted`).
    public var hasTime: UnsafeMutablePointer<Bool> {
        @_noLocks get { (base + 256).assumingMemoryBound(to: Bool.self) }
    }
    /// The musical time at the posted block's first frame.
    public var time: UnsafeMutablePointer<MusicalTime> {
        @_noLocks get { (base + Self.timeOffset).assumingMemoryBound(to: MusicalTime.self) }
    }
    /// Input bus `bus` (0: the main one).
    @_noLocks
    public func input(_ bus: Int) -> UnsafeMutablePointer<Float> {
        (base + Self.headerBytes).assumingMemoryBound(to: Float.self) + bus * channels * frames
    }
    /// Output bus `bus` (0: the main one).
    @_noLocks
    public func output(_ bus: Int) -> UnsafeMutablePointer<Float> {
        input(inputBuses) + bus * channels * frames
    }
    public var input: UnsafeMutablePointer<Float> {
        @_noLocks get { input(0) }
    }
    public var output: UnsafeMutablePointer<Float> {
        @_noLocks get { output(0) }
    }
}
