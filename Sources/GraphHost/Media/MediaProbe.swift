/// What a local media file is, read from its first bytes: its codec, rate, channels and bit rate (for `show` and
/// for checking a graph before it runs).
enum MediaProbe {
    static func probe(path: String) throws -> MediaInfo {
        let input = MediaInput(try FileByteSource(path: path))
        let kind = try MediaSniffer.detect(input)
        if kind == .hls {
            throw StreamError.unsupportedMedia(path, "an HLS playlist is played from its http:// or https:// URL")
        }
        let decoder = try kind.decoder(reading: input)
        var decoded = 0
        while decoder.info == nil && decoded < 1 << 20,
            try decoder.decodeNext(emit: { _, frames, _, _ in decoded += frames })
        {}
        guard var info = decoder.info else {
            throw StreamError.unsupportedMedia(path, "no audio in it could be decoded")
        }
        info.durationSeconds =
            kind == .mp3 ? MediaTags.read(path: path)?.durationSeconds : decoder.tags?.durationSeconds
        return info
    }
}
