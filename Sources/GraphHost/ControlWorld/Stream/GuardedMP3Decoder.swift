/// MPEG audio bytes in, interleaved Float32 at the stream's own rate and channel count out: the frame guard in
/// front of libmpg123, fed one frame at a time, and behind it the corrupt-block guard and the damage concealer.
final class GuardedMP3Decoder {
    /// Receives decoded audio: interleaved samples, frames, channels.
    typealias Emit = (UnsafePointer<Float>, Int, Int) throws -> Void

    private let decoder: MP3Decoder
    private let frameGuard = MPEGFrameGuard()
    private var concealer: DamageConcealer?
    private let pcm: UnsafeMutableBufferPointer<Float>

    /// The stream's sample rate once the first frame is decoded, else 0.
    var sampleRate: Int { decoder.sampleRate }
    /// What the frame guard found so far.
    var damage: StreamDamage { StreamDamage(skippedBytes: frameGuard.skippedBytes, silencedFrames: frameGuard.silencedFrames) }

    init() throws {
        decoder = try MP3Decoder()
        pcm = .allocate(capacity: 1152 * 2 * 8)
    }

    deinit { pcm.deallocate() }

    /// Decodes `bytes`; `final` says the stream ends after them (what is held back is passed on).
    func decode(_ bytes: UnsafeRawBufferPointer, final: Bool, emit: Emit) throws {
        try frameGuard.filter(bytes, final: final) { frame, concealFrames in
            decoder.feed(frame)
            var conceal = concealFrames
            while case .frames(let frames) = decoder.decode(into: pcm) {
                let channels = decoder.channels
                if concealer?.channels != channels {
                    try flush(emit: emit)
                    concealer = DamageConcealer(channels: channels)
                }
                if conceal > 0 {
                    concealer!.conceal(frames: conceal)
                    conceal = 0
                }
                CorruptAudioGuard.muteImplausibleBlocks(pcm.baseAddress!, frames: frames, channels: channels)
                try concealer!.process(pcm.baseAddress!, frames: frames) { try emit($0, $1, channels) }
            }
        }
        if final { try flush(emit: emit) }
    }

    /// Starts a new stream (looping): call after the `final` bytes of the last one.
    func restart() throws {
        try decoder.restart()
        frameGuard.reset()
        concealer = nil
    }

    private func flush(emit: Emit) throws {
        guard let concealer else { return }
        try concealer.flush { try emit($0, $1, concealer.channels) }
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
