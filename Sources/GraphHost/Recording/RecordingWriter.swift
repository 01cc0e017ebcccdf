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
        /// Silence to write once the ring has been read up to `at` frames (idle time, in order with the audio).
        var silences: [(at: Int, frames: Int)] = []
    }
    private let state = Mutex(State())
    /// Frames the writer takes at a time: it sleeps until the render world has captured this many.
    static let chunkFrames = 4096

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
            tap.signal.post()
            thread.join()
            file.close()
        }
        return Summary(
            frames: framesWritten, droppedFrames: droppedFrames, clippedSamples: file.clippedSamples,
            error: state.withLock { $0.failure })
    }

    /// Appends `frames` of silence after what the tap holds now, for time the stream spent idle (its callback wrote
    /// nothing meanwhile), so the recording stays as long as the run's position. The writer thread puts it in place
    /// when it next wakes (for the next chunk of audio, or to finish), so an idle run does not wake it.
    public func appendSilence(frames: Int) {
        guard frames > 0 else { return }
        let at = tap.ring.index.written.load(ordering: .acquiring)
        state.withLock { state in
            if let last = state.silences.last, last.at == at {
                state.silences[state.silences.count - 1].frames += frames
            } else {
                state.silences.append((at, frames))
            }
        }
    }

    /// Writes `frames` frames from `samples` (silence when nil), unless writing failed before.
    private func write(_ samples: UnsafePointer<Float>?, frames: Int, zeros: UnsafePointer<Float>, chunk: Int) {
        guard state.withLock({ $0.failure == nil }) else { return }
        do {
            if let samples {
                try file.write(samples, frames: frames)
            } else {
                var left = frames
                while left > 0 {
                    try file.write(zeros, frames: min(left, chunk))
                    left -= min(left, chunk)
                }
            }
            written.wrappingIncrement(by: frames, ordering: .relaxed)
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    private func drain() {
        let chunk = Self.chunkFrames
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * tap.ring.channels)
        let zeros = UnsafeMutablePointer<Float>.allocate(capacity: chunk * tap.ring.channels)
        zeros.initialize(repeating: 0, count: chunk * tap.ring.channels)
        defer {
            buffer.deallocate()
            zeros.deallocate()
        }
        while true {
            let last = stopping.load(ordering: .acquiring)
            let read = tap.ring.index.read.load(ordering: .relaxed)
            let silence = state.withLock { $0.silences.first }
            if let silence, read >= silence.at || (last && tap.ring.index.readable() == 0) {
                state.withLock { _ = $0.silences.removeFirst() }
                write(nil, frames: silence.frames, zeros: zeros, chunk: chunk)
                continue
            }
            let frames = tap.ring.read(into: buffer, frames: min(chunk, silence.map { $0.at - read } ?? chunk))
            if frames > 0 {
                write(buffer, frames: frames, zeros: zeros, chunk: chunk)
                continue
            }
            if last { return }
            tap.signal.wait(untilReadable: chunk, in: tap.ring.index)
        }
    }
}
