import CFFmpeg

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
    static let hlsTypes: Set = ["application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl"]
    static let mpegTypes: Set = ["audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg"]

    /// Looks at the next bytes of `input` (without consuming them) and its source's Content-Type.
    static func detect(_ input: MediaInput) throws -> MediaKind {
        let start = try input.peek(10)
        if start.isEmpty { throw StreamError.unsupportedMedia(input.name, "it holds no bytes") }
        let type = input.source.contentType
        if start.starts(with: Array("#EXTM3U".utf8)) || type.map(hlsTypes.contains) == true { return .hls }
        let tagBytes = min(id3Size(start), 1 << 22)
        let bytes = Array(try input.peek(tagBytes + probeBytes))
        let body = bytes.dropFirst(tagBytes)
        if isMPEGAudio(body) { return .mp3 }
        try FFmpegDecoder.loadLibraries(for: input.name)
        var score: Int32 = 0
        let format: UnsafePointer<AVInputFormat>? = bytes.withUnsafeBufferPointer { buffer in
            // libavformat wants AVPROBE_PADDING_SIZE zero bytes after the data.
            var padded = Array(buffer) + [UInt8](repeating: 0, count: 64)
            return padded.withUnsafeMutableBufferPointer { p in
                (type ?? "").withCString { mime in
                    "".withCString { filename in
                        var probe = AVProbeData(filename: filename, buf: p.baseAddress, buf_size: Int32(buffer.count), mime_type: mime)
                        return gh_av_probe_input_format3(&probe, 1, &score)
                    }
                }
            }
        }
        if let format, String(cString: format.pointee.name) == "mp3" { return .mp3 }
        if let format, score >= 25 { return .ffmpeg(format: format) }
        if type.map(mpegTypes.contains) == true { return .mp3 }
        if containsMPEGAudio(try input.peek(1 << 20)) { return .mp3 }
        if let format { return .ffmpeg(format: format) }
        throw StreamError.unsupportedMedia(input.name, "no audio format recognised in its first \(bytes.count) bytes"
                                           + (type.map { " (Content-Type \($0))" } ?? ""))
    }

    /// The size of an ID3v2 tag at the start of `bytes`, else 0.
    static func id3Size(_ bytes: ArraySlice<UInt8>) -> Int {
        let b = Array(bytes)
        guard b.count >= 10, b.starts(with: Array("ID3".utf8)) else { return 0 }
        let size = b[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7f) }
        return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Two MPEG audio frame headers in a row at the start of `bytes`.
    static func isMPEGAudio(_ bytes: ArraySlice<UInt8>) -> Bool {
        frameChain(in: Array(bytes), at: 0)
    }

    /// Two MPEG audio frame headers in a row anywhere in `bytes` (junk before the first frame).
    static func containsMPEGAudio(_ bytes: ArraySlice<UInt8>) -> Bool {
        let b = Array(bytes)
        return b.indices.contains { b[$0] == 0xFF && frameChain(in: b, at: $0) }
    }

    private static func frameChain(in b: [UInt8], at offset: Int) -> Bool {
        guard offset + 4 <= b.count else { return false }
        return b.withUnsafeBufferPointer { p in
            guard let first = MPEGFrameHeader(p.baseAddress! + offset), first.length > 0 else { return false }
            let next = offset + first.length
            guard next + 4 <= b.count, let second = MPEGFrameHeader(p.baseAddress! + next) else { return false }
            return second.sampleRate == first.sampleRate && second.layer == first.layer
        }
    }
}
