import CMPG123
import FoundationEssentials
import Glibc

/// What a finite MP3 file says about itself: its ID3 title and artist (ID3v2 TIT2/TPE1, else ID3v1) and its
/// duration, read by libmpg123 from the file's start: the Xing/LAME header, else the file size over a constant
/// bit rate (a VBR file without that header gets an estimate). Nothing is decoded or scanned, so a long file costs
/// no more than a short one.
public struct MediaTags: Equatable, Sendable {
    public var title: String?
    public var artist: String?
    /// Seconds of audio (encoder delay and padding removed when the LAME header gives them).
    public var durationSeconds: Double?

    public init(title: String? = nil, artist: String? = nil, durationSeconds: Double? = nil) {
        self.title = title
        self.artist = artist
        self.durationSeconds = durationSeconds
    }

    /// Reads the tags and duration of the MP3 file at `path`; nil when libmpg123 cannot open it or finds no frame.
    public static func read(path: String) -> MediaTags? {
        _ = MP3Decoder.initialized
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else { return nil }
        defer { mpg123_delete(handle) }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
        guard mpg123_open(handle, path) == MPG123_OK.rawValue else { return nil }
        defer { mpg123_close(handle) }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0 else { return nil }
        var tags = MediaTags()
        let samples = mpg123_length(handle)
        if samples > 0 { tags.durationSeconds = Double(samples) / Double(rate) }
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        if mpg123_meta_check(handle) & MPG123_ID3 != 0, mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue {
            tags.title = text(v2?.pointee.title)
            tags.artist = text(v2?.pointee.artist)
            if let v1 = v1?.pointee {
                tags.title = tags.title ?? text(v1.title)
                tags.artist = tags.artist ?? text(v1.artist)
            }
        }
        return tags
    }

    /// An ID3v2 text (UTF-8 after libmpg123's conversion), nil when empty.
    private static func text(_ string: UnsafeMutablePointer<mpg123_string>?) -> String? {
        guard let s = string?.pointee, let p = s.p, s.fill > 1 else { return nil }
        return nonEmpty(String(decoding: UnsafeRawBufferPointer(start: p, count: s.fill - 1), as: UTF8.self))
    }

    /// An ID3v1 field: 30 bytes, NUL- or space-padded (Latin-1 in practice; read as UTF-8 where valid).
    private static func text<T>(_ field: T) -> String? {
        withUnsafeBytes(of: field) { bytes in
            let used = bytes.prefix { $0 != 0 }
            return nonEmpty(String(decoding: used, as: UTF8.self))
        }
    }

    private static func nonEmpty(_ s: String) -> String? {
        let trimmed = s.trimmingSpaces()
        return trimmed.isEmpty ? nil : trimmed
    }
}
