import CFFmpegGlue

/// What a stream is, told from its first bytes and the server's Content-Type, never from its name.
enum MediaKind: Equatable {
    /// MPEG audio: libmpg123 behind the frame guard.
    case mp3
    /// An HLS playlist: its segments are the stream.
    case hls
    /// Anything libavformat reads (`format` is its demuxer, when the probe found one).
    case ffmpeg(format: UnsafePointer<AVInputFormat>?)

    /// True for Ogg, whose chained streams are decoded one link at a time.
    var isOgg: Bool {
        if case .ffmpeg(let format?) = self { return String(cString: format.pointee.name) == "ogg" }
        return false
    }
}

enum MediaSniffer {
    static let probeBytes = 8192
    static let hlsTypes: Set = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
    ]

    /// Looks at the next bytes of `input` (without consuming them) and its source's Content-Type. MPEG audio, which
    /// has no signature of its own, is taken only where its frames run on (`MPEGFrameRun`): a Content-Type
    /// or a probe score alone does not make a stream of binary data MP3.
    static func detect(_ input: MediaInput) throws -> MediaKind {
        let start = try input.peek(10)
        if start.isEmpty { throw StreamError.unsupportedMedia(input.name, "it holds no bytes") }
        let type = input.source.contentType
        if start.starts(with: Array("#EXTM3U".utf8)) || type.map(hlsTypes.contains) == true { return .hls }
        let tagBytes = min(id3Size(start), 1 << 22)
        if try hasMPEGAudio(input, from: tagBytes, anywhere: false) { return .mp3 }
        let bytes = Array(try input.peek(tagBytes + probeBytes))
        try FFmpegDecoder.loadLibraries(for: input.name)
        var score: Int32 = 0
        let format: UnsafePointer<AVInputFormat>? = bytes.withUnsafeBufferPointer { buffer in
            // libavformat wants AVPROBE_PADDING_SIZE zero bytes after the data.
            var padded = Array(buffer) + [UInt8](repeating: 0, count: 64)
            return padded.withUnsafeMutableBufferPointer { p in
                (type ?? "").withCString { mime in
                    "".withCString { filename in
                        var probe = AVProbeData(
                            filename: filename, buf: p.baseAddress, buf_size: Int32(buffer.count), mime_type: mime)
                        return gh_av_probe_input_format3(&probe, 1, &score)
                    }
                }
            }
        }
        let other = format.flatMap { String(cString: $0.pointee.name) == "mp3" ? nil : $0 }
        if let other, score >= 25 { return .ffmpeg(format: other) }
        if try hasMPEGAudio(input, from: tagBytes, anywhere: true) { return .mp3 }
        if let other { return .ffmpeg(format: other) }
        throw StreamError.unsupportedMedia(
            input.name,
            "no audio format recognised: no container signature in its first "
                + "\(bytes.count) bytes, and no run of MPEG audio frames"
                + (type.map { " (Content-Type \($0))" } ?? ""))
    }

    /// Whether MPEG audio frames run on (`MPEGFrameRun`) from `start`, or with `anywhere` from any offset within the
    /// first megabyte after it (junk first: a radio stream joined mid-frame, a damaged file). The bytes are looked at
    /// in windows that double from 2 KiB, so a live stream that is audio is told as soon as 16 of its frames are there.
    static func hasMPEGAudio(_ input: MediaInput, from start: Int, anywhere: Bool) throws -> Bool {
        var span = 1 << 11
        while true {
            let bytes = Array(try input.peek(start + span))
            let whole = bytes.count < start + span
            var cut = false
            for offset in start..<(anywhere ? max(start, bytes.count - 3) : min(start + 1, bytes.count))
            where bytes[offset] == 0xFF {
                switch MPEGFrameRun(bytes, at: offset, whole: whole).verdict {
                case .audio: return true
                case .cut: cut = true
                case .notAudio: break
                }
            }
            if !cut || whole || span >= 1 << 20 { return false }
            span *= 2
        }
    }

    /// The size of an ID3v2 tag at the start of `bytes`, else 0.
    static func id3Size(_ bytes: ArraySlice<UInt8>) -> Int {
        let b = Array(bytes)
        guard b.count >= 10, b.starts(with: Array("ID3".utf8)) else { return 0 }
        let size = b[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7f) }
        return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
    }
}
