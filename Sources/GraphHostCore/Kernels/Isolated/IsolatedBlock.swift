import Atomics

/// The memory an isolated plugin node shares with its helper process (mapped by both): which block was posted and
/// which was done, the posted block's length, then its input and the helper's output, `channels` planar channels of
/// `frames` frames each. The render world posts a block only while the helper is idle (`done == posted`), so neither
/// side ever waits for the other.
public struct IsolatedBlock {
    public let base: UnsafeMutableRawPointer
    public let channels: Int
    /// Frames per channel: the node's latency, the longest block it posts.
    public let frames: Int

    static let headerBytes = 256

    /// The bytes a block of `channels` × `frames` needs.
    public static func byteCount(channels: Int, frames: Int) -> Int {
        headerBytes + 2 * channels * frames * MemoryLayout<Float>.stride
    }

    public init(base: UnsafeMutableRawPointer, channels: Int, frames: Int) {
        self.base = base
        self.channels = channels
        self.frames = frames
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
    public var input: UnsafeMutablePointer<Float> {
        @_noLocks get { (base + Self.headerBytes).assumingMemoryBound(to: Float.self) }
    }
    public var output: UnsafeMutablePointer<Float> {
        @_noLocks get { input + channels * frames }
    }
}
