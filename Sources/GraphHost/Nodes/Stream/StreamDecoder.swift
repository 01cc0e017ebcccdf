import Foundation
import Synchronization

/// Runs ahead of the render world: reads a byte source on its own thread, decodes it with libmpg123,
/// converts it to the graph's channel count and rate, and writes it into the stream kernel's PCM ring.
public final class StreamDecoder: Sendable {
    private let makeSource: @Sendable () throws -> ByteSource
    private let format: GraphFormat
    private let ring: PCMRing
    private let counters: StreamCounters
    private let loop: Bool
    private let wakeup: RingWakeup
    /// What the decoder thread and the threads that watch or stop it share.
    private struct Shared {
        var thread: JoinableThread?
        var stopping = false
        var damage = StreamDamage()
        var failure: Error?
        var source: ByteSource?
        var tags: MediaTags?
    }
    private let shared = Mutex(Shared())
    /// The first error the decoder thread met, if any.
    public var failure: Error? { shared.withLock { $0.failure } }
    /// What the frame guard dropped or silenced so far.
    public var damage: StreamDamage { shared.withLock { $0.damage } }
    /// The ID3 tags and duration of a file source, once the decoder thread has read them (nil for a network stream).
    public var tags: MediaTags? { shared.withLock { $0.tags } }

    public init(source: @escaping @Sendable () throws -> ByteSource, format: GraphFormat, ring: PCMRing,
                counters: StreamCounters, loop: Bool, wakeup: RingWakeup) {
        makeSource = source
        self.format = format
        self.ring = ring
        self.counters = counters
        self.loop = loop
        self.wakeup = wakeup
    }

    public func start() {
        let thread = JoinableThread(name: "graphhost-decoder") { [self] in run() }
        shared.withLock { $0.thread = thread }
    }

    /// Asks the thread to stop and waits for it.
    public func stop() {
        let thread = shared.withLock { shared in
            defer { shared.thread = nil }
            shared.stopping = true
            shared.source?.cancel()
            return shared.thread
        }
        guard let thread else { return }
        wakeup.signalSpace()
        thread.join()
    }

    private var shouldStop: Bool { shared.withLock { $0.stopping } }

    private func run() {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)
        let mappedFrames = 8192
        let mapped = UnsafeMutableBufferPointer<Float>.allocate(capacity: mappedFrames * format.channels)
        let resampled = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * format.channels)
        defer {
            chunk.deallocate(); mapped.deallocate(); resampled.deallocate()
            counters.decoderFinished.store(true, ordering: .releasing)
            wakeup.signalData()
        }
        do {
            let source = try makeSource()
            let cancelled = shared.withLock { shared in
                shared.source = source
                return shared.stopping
            }
            if cancelled { source.cancel() }
            defer { shared.withLock { $0.source = nil } }
            if let file = source as? FileByteSource, let tags = MediaTags.read(path: file.name) {
                shared.withLock { $0.tags = tags }
            }
            let decoder = try GuardedMP3Decoder()
            var resampler: Resampler?
            while !shouldStop {
                let n = try source.read(into: chunk)
                if source.lastReadFollowsBreak { decoder.markBreak() }
                try decoder.decode(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), final: n == 0) { samples, frames, channels in
                    var done = 0
                    while done < frames && !shouldStop {
                        let part = min(frames - done, mappedFrames)
                        let count = ChannelMap.convert(samples + done * channels, frames: part, from: channels,
                                                       to: format.channels, into: mapped.baseAddress!)
                        done += part
                        if decoder.sampleRate == format.sampleRate {
                            push(mapped.baseAddress!, frames: count)
                            continue
                        }
                        if resampler == nil {
                            resampler = try Resampler(from: decoder.sampleRate, to: format.sampleRate, channels: format.channels)
                        }
                        resampler!.process(mapped.baseAddress!, frames: count, scratch: resampled) { push($0, frames: $1) }
                    }
                }
                let damage = decoder.damage
                shared.withLock { $0.damage = damage }
                if n == 0 {
                    guard loop else { break }
                    try source.rewind()
                    try decoder.restart()
                }
            }
            resampler?.process(nil, frames: 0, scratch: resampled) { push($0, frames: $1) }
        } catch {
            shared.withLock { $0.failure = error }
        }
    }

    /// Writes all frames into the ring, waiting for space (control world: waiting is allowed here).
    /// `frames` points into this decoder's own buffers (mapped or resampled audio); blocks beyond the ceiling are
    /// muted again here because resampling can lift a peak just under it slightly above.
    private func push(_ frames: UnsafePointer<Float>, frames count: Int) {
        CorruptAudioGuard.muteImplausibleBlocks(UnsafeMutablePointer(mutating: frames), frames: count, channels: format.channels)
        var done = 0
        while done < count {
            let n = ring.write(frames + done * format.channels, frames: count - done)
            done += n
            if n > 0 { wakeup.signalData() }
            if done < count {
                if shouldStop { return }
                wakeup.waitForSpace()
            }
        }
    }
}

/// Maps interleaved frames from the decoder's channel count to the graph's: mono is copied to every
/// channel, stereo to mono is averaged, otherwise channel c takes source channel c modulo the source count.
enum ChannelMap {
    static func convert(_ source: UnsafePointer<Float>, frames: Int, from: Int, to: Int,
                        into destination: UnsafeMutablePointer<Float>) -> Int {
        if from == to {
            destination.update(from: source, count: frames * to)
        } else if to == 1 {
            for f in 0..<frames {
                var sum: Float = 0
                for c in 0..<from { sum += source[f * from + c] }
                destination[f] = sum / Float(from)
            }
        } else {
            for f in 0..<frames {
                for c in 0..<to { destination[f * to + c] = source[f * from + c % from] }
            }
        }
        return frames
    }
}

/// Wakes the decoder thread when the ring has room and a waiting offline renderer when it has data.
/// Waits time out, so a real-time consumer that never signals still works.
public final class RingWakeup: Sendable {
    private let space = DispatchSemaphore(value: 0)
    private let data = DispatchSemaphore(value: 0)

    public init() {}

    public func signalSpace() { space.signal() }
    public func signalData() { data.signal() }
    public func waitForSpace() { _ = space.wait(timeout: .now() + .milliseconds(5)) }
    public func waitForData() { _ = data.wait(timeout: .now() + .milliseconds(5)) }
}
