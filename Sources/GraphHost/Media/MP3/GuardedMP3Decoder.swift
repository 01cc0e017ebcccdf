/// MPEG audio bytes in, interleaved Float32 at the stream's own rate and channel count out: the frame guard in
/// front of libmpg123, fed one frame at a time, and behind it the corrupt-block guard and the damage concealer.
final class GuardedMP3Decoder {
    typealias Emit = MediaDecoder.Emit

    private let decoder: MP3Decoder
    private let frameGuard = MPEGFrameGuard()
    private var concealer: DamageConcealer?
    /// The rate of the audio the concealer holds.
    private var concealerRate = 0

    /// The stream's sample rate once the first frame is decoded, else 0.
    var sampleRate: Int { decoder.sampleRate }
    /// What the frame guard and the decoder found so far.
    var damage: StreamDamage {
        StreamDamage(skippedBytes: frameGuard.skippedBytes, silencedFrames: frameGuard.silencedFrames + abandonedFrames)
    }
    /// Frames libmpg123 stopped decoding part-way (it fills the rest with exact zeros).
    private var abandonedFrames = 0
    /// The loudest sample of the last 64 frames decoded before the current output.
    private var recentPeak: Float = 0

    init() throws {
        decoder = try MP3Decoder()
    }

    /// Decodes `bytes`; `final` says the stream ends after them (what is held back is passed on).
    func decode(_ bytes: UnsafeRawBufferPointer, final: Bool, emit: Emit) throws {
        try frameGuard.filter(bytes, final: final) { frame, concealFrames in
            decoder.feed(frame)
            var conceal = concealFrames
            while case .frames(let samples, let frames) = decoder.decode() {
                let channels = decoder.channels
                let rate = decoder.sampleRate
                if concealer?.channels != channels || concealerRate != rate {
                    try flush(emit: emit)
                    concealer = DamageConcealer(channels: channels)
                    concealerRate = rate
                }
                if conceal == 0 && abandoned(samples, frames: frames, channels: channels) {
                    conceal = frames + 576 + 512
                    abandonedFrames += 1
                }
                if conceal > 0 {
                    concealer!.conceal(frames: conceal)
                    conceal = 0
                }
                CorruptAudioGuard.muteImplausibleBlocks(samples, frames: frames, channels: channels)
                try concealer!.process(samples, frames: frames) {
                    try emit($0, $1, ChannelLayout(unspecified: channels), rate)
                }
            }
        }
        if final { try flush(emit: emit) }
    }

    /// Codec, rate, channels and bit rate once a frame was decoded.
    var info: MediaInfo? {
        decoder.sampleRate > 0
            ? MediaInfo(
                codec: "mp3", sampleRate: decoder.sampleRate, channels: decoder.channels, bitRate: decoder.bitRate)
            : nil
    }

    /// Where to read from to go to `seconds` into the stream, and the time reached; nil before the first frame.
    func inputOffset(forSeconds seconds: Double) -> (byte: Int, seconds: Double)? {
        guard decoder.sampleRate > 0,
            let seek = decoder.feedSeek(toSample: Int(seconds * Double(decoder.sampleRate)))
        else { return nil }
        return (seek.byte, Double(seek.sample) / Double(decoder.sampleRate))
    }

    /// The bytes given next come from the offset `inputOffset` gave: what is held back is dropped.
    func reposition() {
        frameGuard.reset()
        concealer = nil
    }

    /// The bytes given next do not continue the ones before (the byte source reconnected).
    func markBreak() { frameGuard.markBreak() }

    /// Starts a new stream (looping): call after the `final` bytes of the last one.
    func restart() throws {
        try decoder.restart()
        frameGuard.reset()
        concealer = nil
    }

    /// True when the decoded `frames` of `samples` end in at least a granule (576 frames) of exact zeros that
    /// follows audible sound: libmpg123 gave up on the frame's main data part-way, and its filter bank goes on
    /// from a state that no longer cancels aliasing. Music fading out never reaches exact zero that fast.
    private func abandoned(_ samples: UnsafeMutablePointer<Float>, frames: Int, channels: Int) -> Bool {
        var zeros = 0
        while zeros < frames && (0..<channels).allSatisfy({ samples[(frames - 1 - zeros) * channels + $0] == 0 }) {
            zeros += 1
        }
        let before = frames - zeros
        let tailPeak = Self.peak(samples, from: max(0, frames - 64) * channels, to: frames * channels)
        defer { recentPeak = tailPeak }
        guard zeros >= 576 else { return false }
        let peak = max(
            before >= 64 ? 0 : recentPeak,
            Self.peak(samples, from: max(0, before - 64) * channels, to: before * channels))
        return peak > 1e-3
    }

    private static func peak(_ samples: UnsafeMutablePointer<Float>, from: Int, to: Int) -> Float {
        Bus.peak(samples, channelStride: 0, channels: 1, from: from, to: to)
    }

    private func flush(emit: Emit) throws {
        guard let concealer else { return }
        try concealer.flush { try emit($0, $1, ChannelLayout(unspecified: concealer.channels), concealerRate) }
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

    /// The damage of two links (or loops) of one stream together.
    public static func + (a: StreamDamage, b: StreamDamage) -> StreamDamage {
        StreamDamage(skippedBytes: a.skippedBytes + b.skippedBytes, silencedFrames: a.silencedFrames + b.silencedFrames)
    }
}
