import Foundation

/// Runs ahead of the render world: reads a byte source on its own thread, decodes it with libmpg123,
/// converts it to the graph's channel count and rate, and writes it into the stream kernel's PCM ring.
public final class StreamDecoder {
    private let makeSource: () throws -> ByteSource
    private let format: GraphFormat
    private let ring: PCMRing
    private let counters: StreamCounters
    private let loop: Bool
    private let wakeup: RingWakeup
    private var thread: Thread?
    /// Guards `stopping`, the failure and the damage counts.
    private let stopRequested = NSLock()
    private var stopping = false
    private var _damage = StreamDamage()
    private let finishedThread = DispatchSemaphore(value: 0)
    private var _failure: Error?
    private var source: ByteSource?
    /// The first error the decoder thread met, if any.
    public var failure: Error? { stopRequested.withLock { _failure } }
    /// What the frame guard dropped or silenced so far.
    public var damage: StreamDamage { stopRequested.withLock { _damage } }

    public init(source: @escaping () throws -> ByteSource, format: GraphFormat, ring: PCMRing,
                counters: StreamCounters, loop: Bool, wakeup: RingWakeup) {
        makeSource = source
        self.format = format
        self.ring = ring
        self.counters = counters
        self.loop = loop
        self.wakeup = wakeup
    }

    public func start() {
        let t = Thread { [self] in
            run()
            finishedThread.signal()
        }
        t.name = "graphhost-decoder"
        thread = t
        t.start()
    }

    /// Asks the thread to stop and waits for it.
    public func stop() {
        guard thread != nil else { return }
        stopRequested.withLock { stopping = true; source?.cancel() }
        wakeup.signalSpace()
        finishedThread.wait()
        thread = nil
    }

    private var shouldStop: Bool { stopRequested.withLock { stopping } }

    private func run() {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)
        let pcm = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1152 * 2 * 8)
        // A mono decode fills `pcm` with twice the frames of a stereo one; `mapped` holds either at the graph's width.
        let mapped = UnsafeMutableBufferPointer<Float>.allocate(capacity: pcm.count * format.channels)
        let resampled = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * format.channels)
        defer {
            chunk.deallocate(); pcm.deallocate(); mapped.deallocate(); resampled.deallocate()
            counters.decoderFinished.store(true, ordering: .releasing)
            wakeup.signalData()
        }
        do {
            let source = try makeSource()
            let cancelled = stopRequested.withLock { () -> Bool in
                self.source = source
                return stopping
            }
            if cancelled { source.cancel() }
            defer { stopRequested.withLock { self.source = nil } }
            let decoder = try MP3Decoder()
            let frameGuard = MPEGFrameGuard()
            var resampler: Resampler?
            var frameBytes: [UInt8] = []
            while !shouldStop {
                let n = try source.read(into: chunk)
                frameBytes.removeAll(keepingCapacity: true)
                frameGuard.filter(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), final: n == 0, into: &frameBytes)
                let damage = StreamDamage(skippedBytes: frameGuard.skippedBytes, silencedFrames: frameGuard.silencedFrames)
                stopRequested.withLock { _damage = damage }
                frameBytes.withUnsafeBytes { decoder.feed($0) }
                while !shouldStop, case .frames(let frames) = decoder.decode(into: pcm) {
                    CorruptAudioGuard.muteImplausibleBlocks(pcm.baseAddress!, frames: frames, channels: decoder.channels)
                    let count = ChannelMap.convert(pcm.baseAddress!, frames: frames, from: decoder.channels,
                                                   to: format.channels, into: mapped.baseAddress!)
                    if decoder.sampleRate == format.sampleRate {
                        push(mapped.baseAddress!, frames: count)
                        continue
                    }
                    if resampler == nil {
                        resampler = try Resampler(from: decoder.sampleRate, to: format.sampleRate, channels: format.channels)
                    }
                    resampler!.process(mapped.baseAddress!, frames: count, scratch: resampled) { push($0, frames: $1) }
                }
                if n == 0 {
                    guard loop else { break }
                    try source.rewind()
                    try decoder.restart()
                    frameGuard.reset()
                }
            }
            resampler?.process(nil, frames: 0, scratch: resampled) { push($0, frames: $1) }
        } catch {
            stopRequested.withLock { _failure = error }
        }
    }

    /// Writes all frames into the ring, waiting for space (control world: waiting is allowed here).
    private func push(_ frames: UnsafePointer<Float>, frames count: Int) {
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

/// Damage found in a stream's bytes: junk dropped between frames after playback began, and frames passed on
/// silenced (see `MPEGFrameGuard`).
public struct StreamDamage: Equatable, Sendable {
    public var skippedBytes = 0
    public var silencedFrames = 0

    public init(skippedBytes: Int = 0, silencedFrames: Int = 0) {
        self.skippedBytes = skippedBytes
        self.silencedFrames = silencedFrames
    }
}

/// Silences decoded audio that cannot be music: a damaged MP3 frame that still passes mpg123's sync
/// check can decode to huge values. Each granule-sized block (576 frames) holding a non-finite sample
/// or one beyond ±2.0 (+6 dBFS, far above any codec overshoot) is replaced by silence.
enum CorruptAudioGuard {
    static let blockFrames = 576
    static let ceiling: Float = 2.0

    @discardableResult
    static func muteImplausibleBlocks(_ samples: UnsafeMutablePointer<Float>, frames: Int, channels: Int) -> Int {
        var muted = 0
        var start = 0
        while start < frames {
            let count = min(blockFrames, frames - start) * channels
            let block = samples + start * channels
            var plausible = true
            for i in 0..<count where !(abs(block[i]) <= ceiling) { plausible = false; break }
            if !plausible {
                block.update(repeating: 0, count: count)
                muted += 1
            }
            start += blockFrames
        }
        return muted
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
public final class RingWakeup {
    private let space = DispatchSemaphore(value: 0)
    private let data = DispatchSemaphore(value: 0)

    public init() {}

    public func signalSpace() { space.signal() }
    public func signalData() { data.signal() }
    public func waitForSpace() { _ = space.wait(timeout: .now() + .milliseconds(5)) }
    public func waitForData() { _ = data.wait(timeout: .now() + .milliseconds(5)) }
}
