import CFFmpegGlue

/// Decodes every format but MP3 (AAC, Vorbis, Opus, FLAC, WAV, and whatever else libavformat reads) with libavformat
/// and libavcodec, reading one link of a `MediaInput` through a custom AVIOContext. Gapless trimming (Opus pre-skip,
/// Vorbis and MP4 edit lists) is FFmpeg's own. Packets the codec rejects are dropped and counted.
final class FFmpegDecoder: MediaDecoder {
    private let input: MediaInput
    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var packet = gh_av_packet_alloc()
    private var frame = gh_av_frame_alloc()
    private var streamIndex: Int32 = -1
    /// The error the byte source threw while libavformat was reading, if any.
    private var readError: Error?
    private let samples = InterleavedSamples()
    private var ended = false
    /// After a seek: decoded audio before this time (in seconds) is dropped.
    private var dropBefore: Double?
    private(set) var info: MediaInfo?
    private(set) var tags: MediaTags?
    private(set) var damage = StreamDamage()

    /// FFmpeg's libraries, loaded on first use (`media` names what needed them, for the error); its own log stays
    /// quiet: what matters reaches the user as graphhost's errors and damage counts.
    static func loadLibraries(for media: String) throws {
        if let failure = gh_ffmpeg_load() {
            throw StreamError.unsupportedMedia(
                media, "FFmpeg's libraries could not be loaded: \(String(cString: failure))")
        }
        _ = quiet
    }
    private static let quiet: Bool = {
        gh_av_log_set_level(AV_LOG_QUIET)
        return true
    }()

    init(input: MediaInput, format: UnsafePointer<AVInputFormat>?) throws {
        try Self.loadLibraries(for: input.name)
        self.input = input
        let bufferSize: Int32 = 65536
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let buffer = gh_av_malloc(Int(bufferSize)),
            let io = gh_avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self), bufferSize, 0, opaque, Self.readPacket, nil,
                input.seekable == nil ? nil : Self.seek)
        else {
            throw StreamError.decoder("cannot allocate FFmpeg's input context")
        }
        self.io = io
        io.pointee.seekable = input.seekable == nil ? 0 : AVIO_SEEKABLE_NORMAL
        var context = gh_avformat_alloc_context()
        context?.pointee.pb = io
        context?.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        let opened = gh_avformat_open_input(&context, "", format, nil)
        if let readError { throw readError }
        guard opened >= 0, let context else { throw StreamError.unsupportedMedia(input.name, Self.message(opened)) }
        formatContext = context
        let found = gh_avformat_find_stream_info(context, nil)
        if let readError { throw readError }
        guard found >= 0 else { throw StreamError.unsupportedMedia(input.name, Self.message(found)) }
        var codec: UnsafePointer<AVCodec>?
        streamIndex = gh_av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0)
        guard streamIndex >= 0, let codec else {
            throw StreamError.unsupportedMedia(
                input.name,
                streamIndex == gh_averror_decoder_not_found()
                    ? "FFmpeg has no decoder for its audio" : "it holds no audio stream")
        }
        let stream = context.pointee.streams[Int(streamIndex)]!
        guard let codecContext = gh_avcodec_alloc_context3(codec) else {
            throw StreamError.decoder("cannot allocate a codec context")
        }
        self.codecContext = codecContext
        gh_avcodec_parameters_to_context(codecContext, stream.pointee.codecpar)
        codecContext.pointee.pkt_timebase = stream.pointee.time_base
        let status = gh_avcodec_open2(codecContext, codec, nil)
        guard status >= 0 else {
            throw StreamError.unsupportedMedia(
                input.name, "cannot open its \(String(cString: codec.pointee.name)) decoder: \(Self.message(status))")
        }
        let parameters = stream.pointee.codecpar.pointee
        let bitRate =
            parameters.bit_rate > 0
            ? Int(parameters.bit_rate) : context.pointee.bit_rate > 0 ? Int(context.pointee.bit_rate) : nil
        info = MediaInfo(
            codec: String(cString: gh_avcodec_get_name(parameters.codec_id)), sampleRate: Int(parameters.sample_rate),
            channels: Int(parameters.ch_layout.nb_channels), bitRate: bitRate)
        readTags()
    }

    deinit {
        gh_av_packet_free(&packet)
        gh_av_frame_free(&frame)
        gh_avcodec_free_context(&codecContext)
        if formatContext != nil { gh_avformat_close_input(&formatContext) }
        if io != nil {
            gh_av_freep(&io!.pointee.buffer)
            gh_avio_context_free(&io)
        }
    }

    func decodeNext(emit: Emit) throws -> Bool {
        guard !ended, let formatContext, let codecContext, let packet else { return false }
        let read = gh_av_read_frame(formatContext, packet)
        if let readError { throw readError }
        if read < 0 {
            gh_avcodec_send_packet(codecContext, nil)
            try receiveFrames(emit: emit)
            ended = true
            return false
        }
        defer { gh_av_packet_unref(packet) }
        if formatContext.pointee.event_flags & AVFMT_EVENT_FLAG_METADATA_UPDATED != 0
            || formatContext.pointee.streams[Int(streamIndex)]!.pointee.event_flags
                & AVSTREAM_EVENT_FLAG_METADATA_UPDATED != 0
        {
            readTags()
        }
        guard packet.pointee.stream_index == streamIndex else { return true }
        if gh_avcodec_send_packet(codecContext, packet) < 0 { damage.silencedFrames += 1 }
        try receiveFrames(emit: emit)
        return true
    }

    func seek(to seconds: Double) throws -> Double? {
        guard input.seekable != nil, let formatContext, let codecContext else { return nil }
        // Codecs that need audio before the target to converge (Opus: 80 ms) start that much earlier; it is decoded and
        // dropped.
        let parameters = formatContext.pointee.streams[Int(streamIndex)]!.pointee.codecpar.pointee
        let preroll = parameters.sample_rate > 0 ? Double(parameters.seek_preroll) / Double(parameters.sample_rate) : 0
        let target = Int64(max(0, seconds - preroll) * Double(AV_TIME_BASE))
        guard gh_avformat_seek_file(formatContext, -1, Int64.min, target, target, 0) >= 0 else {
            if let readError { throw readError }
            return nil
        }
        gh_avcodec_flush_buffers(codecContext)
        ended = false
        dropBefore = seconds
        return seconds
    }

    private func receiveFrames(emit: Emit) throws {
        guard let codecContext, let frame else { return }
        while true {
            let status = gh_avcodec_receive_frame(codecContext, frame)
            if status == gh_averror_eagain() || status == gh_averror_eof() { return }
            if status < 0 {
                damage.silencedFrames += 1
                return
            }
            defer { gh_av_frame_unref(frame) }
            var skip = 0
            if let dropBefore, let start = seconds(of: frame) {
                let rate = Double(frame.pointee.sample_rate)
                skip = min(Int(frame.pointee.nb_samples), max(0, Int(((dropBefore - start) * rate).rounded())))
                if skip < Int(frame.pointee.nb_samples) { self.dropBefore = nil }
            }
            guard let block = samples.interleave(frame) else {
                damage.silencedFrames += 1
                continue
            }
            if block.frames > skip {
                try emit(
                    block.samples + skip * block.channels, block.frames - skip, block.layout,
                    Int(frame.pointee.sample_rate))
            }
        }
    }

    /// The frame's start in seconds, from its timestamp.
    private func seconds(of frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        guard let formatContext else { return nil }
        let pts = frame.pointee.best_effort_timestamp
        guard pts != gh_av_nopts_value() else { return nil }
        let base = formatContext.pointee.streams[Int(streamIndex)]!.pointee.time_base
        return Double(pts) * Double(base.num) / Double(base.den)
    }

    /// Title and artist from the container's or the stream's metadata (Vorbis comments, ID3, MP4 tags), and the
    /// duration.
    private func readTags() {
        guard let formatContext else { return }
        let stream = formatContext.pointee.streams[Int(streamIndex)]!
        formatContext.pointee.event_flags = 0
        stream.pointee.event_flags = 0
        func value(_ key: String) -> String? {
            for dictionary in [stream.pointee.metadata, formatContext.pointee.metadata] {
                if let entry = gh_av_dict_get(dictionary, key, nil, 0), let text = entry.pointee.value {
                    let string = String(cString: text).trimmingSpaces()
                    if !string.isEmpty { return string }
                }
            }
            return nil
        }
        let duration = formatContext.pointee.duration
        let seconds = duration != gh_av_nopts_value() && duration > 0 ? Double(duration) / Double(AV_TIME_BASE) : nil
        let found = MediaTags(title: value("title"), artist: value("artist"), durationSeconds: seconds)
        tags = found == MediaTags() ? nil : found
    }

    private static func message(_ code: Int32) -> String {
        var text = [CChar](repeating: 0, count: 256)
        gh_av_strerror(code, &text, text.count)
        return String(cString: text)
    }

    private static let readPacket:
        @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
            opaque, buffer, size in
            let decoder = Unmanaged<FFmpegDecoder>.fromOpaque(opaque!).takeUnretainedValue()
            do {
                let n = try decoder.input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
                return n == 0 ? gh_averror_eof() : Int32(n)
            } catch {
                decoder.readError = error
                return gh_averror_eio()
            }
        }

    /// Offsets are within the current link.
    private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
        opaque, offset, whence in
        let decoder = Unmanaged<FFmpegDecoder>.fromOpaque(opaque!).takeUnretainedValue()
        let input = decoder.input
        let size = input.seekable?.size.map { $0 - input.linkStart }
        if whence & gh_avseek_size() != 0 { return size.map(Int64.init) ?? -1 }
        let target: Int
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = Int(offset)
        case SEEK_CUR: target = input.position - input.linkStart + Int(offset)
        case SEEK_END:
            guard let size else { return -1 }
            target = size + Int(offset)
        default: return -1
        }
        do {
            try input.seek(to: input.linkStart + target, keepingLink: true)
            return Int64(target)
        } catch {
            decoder.readError = error
            return -1
        }
    }
}
