import Atomics
import Foundation

/// Writes what a `RecordTap` captures to a WAV or FLAC file, on a thread of its own (`run --record`): the
/// recording is exactly the output the process callback handed to PipeWire, live changes included.
public final class RecordingWriter {
    public let tap: RecordTap
    public let path: String
    private let file: SoundFileWriter
    private let stopping = ManagedAtomic<Bool>(false)
    private let written = ManagedAtomic<Int>(0)
    private var thread: JoinableThread?
    private var failure: Error?
    /// How often the writer looks at the ring; the ring holds seconds, so a late look loses nothing.
    static let pollMicroseconds: UInt32 = 10_000

    public init(path: String, sampleRate: Int, channels: Int) throws {
        file = try SoundFileWriter(path: path, sampleRate: sampleRate, channels: channels)
        tap = .allocate(channels: channels, sampleRate: sampleRate)
        self.path = path
    }

    deinit {
        if thread != nil { _ = finish() }
        tap.deallocate()
    }

    public var framesWritten: Int { written.load(ordering: .relaxed) }
    public var droppedFrames: Int { tap.droppedFrames.load(ordering: .relaxed) }

    public func start() {
        thread = JoinableThread(name: "graphhost-record") { [self] in drain() }
    }

    /// What a finished recording holds.
    public struct Summary {
        public var frames: Int
        public var droppedFrames: Int
        public var error: Error?
    }

    /// Writes what is left in the ring and closes the file. Call it once the stream no longer renders.
    public func finish() -> Summary {
        if thread != nil {
            stopping.store(true, ordering: .releasing)
            thread?.join()
            thread = nil
            file.close()
        }
        return Summary(frames: framesWritten, droppedFrames: droppedFrames, error: failure)
    }

    private func drain() {
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * tap.ring.channels)
        defer { buffer.deallocate() }
        while true {
            let last = stopping.load(ordering: .acquiring)
            let frames = tap.ring.read(into: buffer, frames: chunk)
            if frames > 0 {
                if failure == nil {
                    do {
                        try file.write(buffer, frames: frames)
                        written.wrappingIncrement(by: frames, ordering: .relaxed)
                    } catch {
                        failure = error
                    }
                }
                continue
            }
            if last { return }
            usleep(Self.pollMicroseconds)
        }
    }
}
