import Atomics
import FoundationEssentials
import Glibc
import Synchronization

/// Writes what a `RecordTap` captures to a WAV or FLAC file, on a thread of its own (`run --record`): the
/// recording is exactly the output the process callback handed to PipeWire, live changes included.
public final class RecordingWriter: Sendable {
    public let tap: RecordTap
    public let path: String
    private let stopping = ManagedAtomic<Bool>(false)
    private let written = ManagedAtomic<Int>(0)
    private let file: SoundFileWriter
    private struct State {
        var thread: JoinableThread?
        var failure: Error?
    }
    private let state = Mutex(State())
    /// How often the writer looks at the ring; the ring holds seconds, so a late look loses nothing.
    static let pollMicroseconds: UInt32 = 10_000

    public init(path: String, sampleRate: Int, channels: Int) throws {
        file = try SoundFileWriter(path: path, sampleRate: sampleRate, channels: channels)
        tap = .allocate(channels: channels, sampleRate: sampleRate)
        self.path = path
    }

    deinit {
        _ = finish()
        tap.deallocate()
    }

    public var framesWritten: Int { written.load(ordering: .relaxed) }
    public var droppedFrames: Int { tap.droppedFrames.load(ordering: .relaxed) }

    public func start() {
        let thread = JoinableThread(name: "graphhost-record") { [self] in drain() }
        state.withLock { $0.thread = thread }
    }

    /// What a finished recording holds.
    public struct Summary: Sendable {
        public var frames: Int
        public var droppedFrames: Int
        /// Samples clipped at full scale (formats other than .wav).
        public var clippedSamples = 0
        public var error: Error?
    }

    /// Writes what is left in the ring and closes the file. Call it once the stream no longer renders.
    public func finish() -> Summary {
        let thread = state.withLock { state in
            defer { state.thread = nil }
            return state.thread
        }
        if let thread {
            stopping.store(true, ordering: .releasing)
            thread.join()
            file.close()
        }
        return Summary(frames: framesWritten, droppedFrames: droppedFrames, clippedSamples: file.clippedSamples, error: state.withLock { $0.failure })
    }

    /// Appends `frames` of silence after what the tap holds, for time the stream spent idle (its callback wrote
    /// nothing meanwhile), so the recording stays as long as the run's position.
    public func appendSilence(frames: Int) {
        guard frames > 0, state.withLock({ $0.failure == nil && $0.thread != nil }) else { return }
        // What the callback wrote before it went idle comes first (the writer looks every 10 ms).
        for _ in 0..<1000 where tap.ring.index.readable() > 0 { usleep(1000) }
        let chunk = 4096
        let zeros = [Float](repeating: 0, count: chunk * tap.ring.channels)
        var left = frames
        do {
            while left > 0 {
                let n = min(left, chunk)
                try file.write(zeros, frames: n)
                written.wrappingIncrement(by: n, ordering: .relaxed)
                left -= n
            }
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    private func drain() {
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * tap.ring.channels)
        defer { buffer.deallocate() }
        while true {
            let last = stopping.load(ordering: .acquiring)
            let frames = tap.ring.read(into: buffer, frames: chunk)
            if frames > 0 {
                if state.withLock({ $0.failure == nil }) {
                    do {
                        try file.write(buffer, frames: frames)
                        written.wrappingIncrement(by: frames, ordering: .relaxed)
                    } catch {
                        state.withLock { $0.failure = error }
                    }
                }
                continue
            }
            if last { return }
            usleep(Self.pollMicroseconds)
        }
    }
}
