import Foundation

/// One source encoded in every format the stream node reads, by Debian's encoders, and FFmpeg's decoding of a file.
enum EncodedMedia {
    /// The formats made from one source, with the encoder that makes each and the rate it decodes at.
    static let formats: [(ext: String, rate: Int)] = [
        ("m4a", 44100), ("aac", 44100), ("ogg", 44100), ("opus", 48000),
        ("flac", 44100), ("wav", 44100),
    ]

    /// A 6 s stereo source at 44.1 kHz: a sweep on the left, a tone with tremolo on the right, pink noise on both.
    static func source() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("formats-source.wav").path
        if FileManager.default.fileExists(atPath: path) { return path }
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "6",
            "sine", "200-3000", "sine", "660", "remix", "1", "2", "tremolo", "3", "40", "gain", "-n", "-6",
        ])
        return path
    }

    /// The source encoded as `ext`, titled "Title ext" by "Artist ext".
    static func file(_ ext: String) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("formats-media.\(ext)").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = try source()
        let title = "Title \(ext)"
        let artist = "Artist \(ext)"
        switch ext {
        case "m4a":
            try TestSupport.run([
                "ffmpeg", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-b:a", "160k",
                "-metadata", "title=\(title)", "-metadata", "artist=\(artist)", path,
            ])
        case "aac":
            try TestSupport.run([
                "ffmpeg", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-b:a", "160k", "-f", "adts", "-write_id3v2",
                "1",
                "-metadata", "title=\(title)", "-metadata", "artist=\(artist)", path,
            ])
        case "ogg": try TestSupport.run(["oggenc", "-Q", "-t", title, "-a", artist, "-o", path, wav])
        case "opus": try TestSupport.run(["opusenc", "--quiet", "--title", title, "--artist", artist, wav, path])
        case "flac":
            try TestSupport.run(["flac", "-s", "-f", "-T", "TITLE=\(title)", "-T", "ARTIST=\(artist)", "-o", path, wav])
        case "wav":
            try TestSupport.run([
                "ffmpeg", "-v", "error", "-y", "-i", wav, "-c:a", "pcm_s16le",
                "-metadata", "title=\(title)", "-metadata", "artist=\(artist)", path,
            ])
        case "mp3": try TestSupport.run(["lame", "--quiet", "-b", "192", "--tt", title, "--ta", artist, wav, path])
        default: throw TestSupport.ToolFailure(description: "no encoder for .\(ext)")
        }
        return path
    }

    /// `ffmpeg -i FILE -f f32le`: interleaved floats at the file's own rate.
    static func ffmpegDecode(_ path: String) throws -> [Float] {
        let data = try TestSupport.run(["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func largestDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
        zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }
}
