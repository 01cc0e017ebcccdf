/// Which loudspeaker each channel of interleaved audio feeds: a mask of FFmpeg's channel bits (AV_CH_*), the channels
/// in the order of their bits (FL FR FC LFE BL BR FLC FRC BC SL SR …, WAVEFORMATEXTENSIBLE's order), or only a channel
/// count when the media does not say.
public struct ChannelLayout: Hashable, Sendable {
    /// The speaker bits, or 0 when unknown.
    public var mask: UInt64
    public var channels: Int

    public init(mask: UInt64) {
        self.mask = mask
        channels = mask.nonzeroBitCount
    }

    /// `channels` channels whose speakers the media does not name.
    public init(unspecified channels: Int) {
        mask = 0
        self.channels = channels
    }

    public static let frontLeft: UInt64 = 1 << 0, frontRight: UInt64 = 1 << 1, frontCenter: UInt64 = 1 << 2
    public static let lowFrequency: UInt64 = 1 << 3, backLeft: UInt64 = 1 << 4, backRight: UInt64 = 1 << 5
    public static let backCenter: UInt64 = 1 << 8, sideLeft: UInt64 = 1 << 9, sideRight: UInt64 = 1 << 10

    /// The layout a graph of `channels` channels carries, as FLAC, Vorbis and Opus define their defaults:
    /// 1 mono (FC), 2 stereo, 3 FL FR FC, 4 quad (FL FR BL BR), 5 FL FR FC BL BR, 6 5.1 (FL FR FC LFE BL BR),
    /// 7 6.1 (FL FR FC LFE BC SL SR), 8 7.1 (FL FR FC LFE BL BR SL SR). Beyond 8 channels: unspecified.
    public static func standard(channels: Int) -> ChannelLayout {
        let front = frontLeft | frontRight
        let back = backLeft | backRight
        let side = sideLeft | sideRight
        switch channels {
        case 1: return ChannelLayout(mask: frontCenter)
        case 2: return ChannelLayout(mask: front)
        case 3: return ChannelLayout(mask: front | frontCenter)
        case 4: return ChannelLayout(mask: front | back)
        case 5: return ChannelLayout(mask: front | frontCenter | back)
        case 6: return ChannelLayout(mask: front | frontCenter | lowFrequency | back)
        case 7: return ChannelLayout(mask: front | frontCenter | lowFrequency | backCenter | side)
        case 8: return ChannelLayout(mask: front | frontCenter | lowFrequency | back | side)
        default: return ChannelLayout(unspecified: channels)
        }
    }

    /// The media's layout, or the standard one for its channel count when it names none (a WAV without a channel
    /// mask, MP3's mono and stereo).
    public var named: ChannelLayout { mask != 0 ? self : Self.standard(channels: channels) }
}
