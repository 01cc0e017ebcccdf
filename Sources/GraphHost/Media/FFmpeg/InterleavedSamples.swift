import CFFmpegGlue

/// A decoded AVFrame as interleaved Float32 with its channel layout, in a buffer reused from frame to frame. Integers
/// are scaled as FFmpeg's own conversion scales them (s16 by 2⁻¹⁵, s32 by 2⁻³¹, u8 around 128), so the result matches
/// `ffmpeg -f f32le`.
final class InterleavedSamples {
    private var buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 0)

    deinit { buffer.deallocate() }

    /// The frame's samples, or nil for a sample format that is not plain PCM.
    func interleave(_ frame: UnsafeMutablePointer<AVFrame>) -> (
        samples: UnsafePointer<Float>, frames: Int, channels: Int, layout: ChannelLayout
    )? {
        let frames = Int(frame.pointee.nb_samples)
        let channels = Int(frame.pointee.ch_layout.nb_channels)
        guard frames > 0, channels > 0, let data = frame.pointee.extended_data else { return nil }
        let format = AVSampleFormat(rawValue: frame.pointee.format)
        let planar = gh_av_sample_fmt_is_planar(format) != 0
        if buffer.count < frames * channels {
            buffer.deallocate()
            buffer = .allocate(capacity: frames * channels)
        }
        let out = buffer
        let known = { () -> Bool in
            func copy<T>(_: T.Type, _ value: (T) -> Float) {
                for c in 0..<channels {
                    let plane = UnsafeRawPointer(data[planar ? c : 0]!).assumingMemoryBound(to: T.self)
                    let step = planar ? 1 : channels
                    let first = planar ? 0 : c
                    for f in 0..<frames { out[f * channels + c] = value(plane[first + f * step]) }
                }
            }
            switch gh_av_get_packed_sample_fmt(format) {
            case AV_SAMPLE_FMT_FLT: copy(Float.self) { $0 }
            case AV_SAMPLE_FMT_DBL: copy(Double.self) { Float($0) }
            case AV_SAMPLE_FMT_S16: copy(Int16.self) { Float($0) * (1 / 32768) }
            case AV_SAMPLE_FMT_S32: copy(Int32.self) { Float($0) * (1 / 2_147_483_648) }
            case AV_SAMPLE_FMT_S64: copy(Int64.self) { Float(Double($0) / 9_223_372_036_854_775_808) }
            case AV_SAMPLE_FMT_U8: copy(UInt8.self) { (Float($0) - 128) * (1 / 128) }
            default: return false
            }
            return true
        }()
        guard known else { return nil }
        var layout = ChannelLayout(mask: withUnsafePointer(to: &frame.pointee.ch_layout) { gh_channel_mask($0) })
        if layout.channels != channels { layout = ChannelLayout(unspecified: channels) }
        return (UnsafePointer(buffer.baseAddress!), frames, channels, layout)
    }
}
