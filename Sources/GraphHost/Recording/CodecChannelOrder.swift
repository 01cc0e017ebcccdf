import CSndfile

/// How each file format orders a graph's channels (`ChannelLayout.standard`, whose order is WAVEFORMATEXTENSIBLE's
/// and FLAC's): Vorbis and Opus (channel mapping family 1) keep the Vorbis I order of section 4.3.9, which libsndfile
/// writes as given; a WAV of more than two channels names its speakers in a WAVEFORMATEXTENSIBLE mask.
enum CodecChannelOrder {
    /// For each channel of a Vorbis or Opus file, the graph channel it carries.
    static func vorbis(channels: Int) -> [Int] {
        switch channels {
        case 3: return [0, 2, 1]  // L C R
        case 5: return [0, 2, 1, 3, 4]  // FL C FR RL RR
        case 6: return [0, 2, 1, 4, 5, 3]  // FL C FR RL RR LFE
        case 7: return [0, 2, 1, 5, 6, 4, 3]  // FL C FR SL SR RC LFE
        case 8: return [0, 2, 1, 6, 7, 4, 5, 3]  // FL C FR SL SR RL RR LFE
        default: return Array(0..<channels)
        }
    }

    /// libsndfile's speaker names for the graph's channels (SFC_SET_CHANNEL_MAP_INFO), nil beyond 8 channels.
    static func sndfileMap(channels: Int) -> [Int32]? {
        let layout = ChannelLayout.standard(channels: channels)
        guard layout.mask != 0 else { return nil }
        let names: [(UInt64, Int)] = [
            (ChannelLayout.frontLeft, SF_CHANNEL_MAP_LEFT), (ChannelLayout.frontRight, SF_CHANNEL_MAP_RIGHT),
            (ChannelLayout.frontCenter, channels == 1 ? SF_CHANNEL_MAP_MONO : SF_CHANNEL_MAP_CENTER),
            (ChannelLayout.lowFrequency, SF_CHANNEL_MAP_LFE), (ChannelLayout.backLeft, SF_CHANNEL_MAP_REAR_LEFT),
            (ChannelLayout.backRight, SF_CHANNEL_MAP_REAR_RIGHT),
            (ChannelLayout.backCenter, SF_CHANNEL_MAP_REAR_CENTER),
            (ChannelLayout.sideLeft, SF_CHANNEL_MAP_SIDE_LEFT), (ChannelLayout.sideRight, SF_CHANNEL_MAP_SIDE_RIGHT),
        ]
        return names.filter { layout.mask & $0.0 != 0 }.map { Int32($0.1) }
    }
}
