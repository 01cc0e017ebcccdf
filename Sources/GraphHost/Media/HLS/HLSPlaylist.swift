import FoundationEssentials
import Glibc

/// An HLS playlist (RFC 8216): a master playlist's variants, or a media playlist's segments. URIs are resolved
/// against the playlist's own URL.
struct HLSPlaylist: Equatable {
    struct Variant: Equatable {
        var url: String
        var bandwidth: Int
        var codecs: String?

        /// True when the CODECS attribute names only audio codecs (or is absent).
        var isAudioOnly: Bool {
            guard let codecs else { return true }
            let audio = ["mp4a", "opus", "flac", "mp3", "ac-3", "ec-3", "vorbis", "alac"]
            return codecs.split(separator: ",").allSatisfy { c in
                audio.contains { c.trimmingSpaces().lowercased().hasPrefix($0) }
            }
        }
    }

    struct Segment: Equatable {
        var url: String
        var duration: Double
        var sequence: Int
        /// EXT-X-DISCONTINUITY before this segment: its bytes do not continue the ones before.
        var discontinuity: Bool
        /// The init section (EXT-X-MAP) that applies to this segment, if any.
        var initSection: String?
    }

    var variants: [Variant] = []
    var segments: [Segment] = []
    var targetDuration: Double = 0
    /// EXT-X-ENDLIST: a finite playlist (no reloads).
    var ended = false

    var isMaster: Bool { !variants.isEmpty }

    /// The variant played: the highest bandwidth among the audio-only ones (or those without CODECS), else the highest.
    var chosenVariant: Variant? {
        let audio = variants.filter(\.isAudioOnly)
        return (audio.isEmpty ? variants : audio).max { $0.bandwidth < $1.bandwidth }
    }

    /// Parses `text`, fetched from `url`; throws naming the URL and line of what cannot be followed.
    static func parse(_ text: String, url: String) throws -> HLSPlaylist {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .map { $0.trimmingSpaces() }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { throw HLSError(url, 1, "does not start with #EXTM3U") }
        var playlist = HLSPlaylist()
        var sequence = 0
        var duration: Double?
        var discontinuity = false
        var initSection: String?
        var pendingVariant: (bandwidth: Int, codecs: String?)?
        for (index, line) in lines.enumerated() where !line.isEmpty {
            let number = index + 1
            if line.hasPrefix("#") {
                let (tag, value) = split(line)
                switch tag {
                case "#EXT-X-TARGETDURATION":
                    guard let d = Double(value), d > 0 else {
                        throw HLSError(url, number, "EXT-X-TARGETDURATION '\(value)' is not a positive number")
                    }
                    playlist.targetDuration = d
                case "#EXT-X-MEDIA-SEQUENCE":
                    guard let n = Int(value), n >= 0 else {
                        throw HLSError(url, number, "EXT-X-MEDIA-SEQUENCE '\(value)' is not a whole number")
                    }
                    sequence = n
                case "#EXTINF":
                    guard let d = Double(value.split(separator: ",", maxSplits: 1).first ?? ""), d >= 0 else {
                        throw HLSError(url, number, "EXTINF '\(value)' has no duration")
                    }
                    duration = d
                case "#EXT-X-DISCONTINUITY": discontinuity = true
                case "#EXT-X-ENDLIST": playlist.ended = true
                case "#EXT-X-KEY":
                    let method = attributes(value)["METHOD"] ?? ""
                    if method != "NONE" {
                        throw HLSError(url, number, "encrypted HLS (METHOD=\(method)) is not supported")
                    }
                case "#EXT-X-MAP":
                    guard let uri = attributes(value)["URI"] else {
                        throw HLSError(url, number, "EXT-X-MAP has no URI")
                    }
                    initSection = try resolve(uri, against: url, line: number)
                case "#EXT-X-STREAM-INF":
                    let a = attributes(value)
                    guard let bandwidth = a["BANDWIDTH"].flatMap(Int.init) else {
                        throw HLSError(url, number, "EXT-X-STREAM-INF has no BANDWIDTH")
                    }
                    pendingVariant = (bandwidth, a["CODECS"])
                default: break
                }
                continue
            }
            let target = try resolve(line, against: url, line: number)
            if let variant = pendingVariant {
                playlist.variants.append(Variant(url: target, bandwidth: variant.bandwidth, codecs: variant.codecs))
                pendingVariant = nil
            } else {
                guard let d = duration else { throw HLSError(url, number, "segment '\(line)' has no EXTINF before it") }
                playlist.segments.append(
                    Segment(
                        url: target, duration: d, sequence: sequence, discontinuity: discontinuity,
                        initSection: initSection))
                sequence += 1
                duration = nil
                discontinuity = false
            }
        }
        if !playlist.isMaster && playlist.targetDuration == 0 && !playlist.segments.isEmpty {
            throw HLSError(url, lines.count, "a media playlist without EXT-X-TARGETDURATION")
        }
        return playlist
    }

    private static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]))
    }

    /// `KEY=VALUE,KEY="quoted, value"` attribute lists.
    static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(list)
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].trimmingSpaces()
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : body[body.endIndex...]
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            result[key] = String(value)
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return result
    }

    private static func resolve(_ uri: String, against base: String, line: Int) throws -> String {
        guard let resolved = URL(string: uri, relativeTo: URL(string: base))?.absoluteURL,
            ["http", "https"].contains(resolved.scheme?.lowercased() ?? "")
        else {
            throw HLSError(base, line, "'\(uri)' is not an http:// or https:// URL")
        }
        return resolved.absoluteString
    }
}

/// A playlist that cannot be followed, naming its URL and line.
struct HLSError: Error, CustomStringConvertible {
    var description: String
    init(_ url: String, _ line: Int, _ why: String) { description = "HLS playlist \(url), line \(line): \(why)" }
}
