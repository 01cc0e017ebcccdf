/// A decoder of one link of a stream: compressed bytes from a `MediaInput` in, interleaved Float32 at the media's own
/// rate and channel count out (both may change from one emitted block to the next).
protocol MediaDecoder: AnyObject {
    /// Receives decoded audio: interleaved samples, frames, the channels' layout, sample rate.
    typealias Emit = (UnsafePointer<Float>, Int, ChannelLayout, Int) throws -> Void

    /// Decodes the next part of the media; false once it ended and what it held back was emitted.
    func decodeNext(emit: Emit) throws -> Bool
    /// Codec, rate, channels and bit rate, once known.
    var info: MediaInfo? { get }
    /// Title and artist the media carries (Vorbis comments, ID3, MP4 tags), and its duration; nil when it has none.
    var tags: MediaTags? { get }
    /// What was found damaged and dropped or silenced so far.
    var damage: StreamDamage { get }
    /// Moves to `seconds` into the link; returns the position reached (decoding goes on from there), or nil when the
    /// media cannot seek.
    func seek(to seconds: Double) throws -> Double?
}

/// What a stream carries, for `show` and `status`.
public struct MediaInfo: Equatable, Sendable {
    public var codec: String
    public var sampleRate: Int
    public var channels: Int
    /// Bits per second, when the container or codec says.
    public var bitRate: Int?
    /// Seconds of audio, when the media says (a file's probe).
    public var durationSeconds: Double?

    public init(codec: String, sampleRate: Int, channels: Int, bitRate: Int?, durationSeconds: Double? = nil) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
        self.durationSeconds = durationSeconds
    }

    /// "aac, 44100 Hz, 2 ch, 96 kb/s".
    public var description: String {
        "\(codec), \(sampleRate) Hz, \(channels) ch" + (bitRate.map { ", \(($0 + 500) / 1000) kb/s" } ?? "")
    }
}
