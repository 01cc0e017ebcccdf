import FoundationEssentials
import Glibc

/// What MPRIS shows as the track: the graph's first stream, read from the run's status. A network stream's ICY
/// title "Artist - Title" is split into artist and title; a file gives its ID3 title and artist and its length.
struct MPRISTrack: Equatable {
    var title: String?
    var artist: String?
    var url: String?
    /// The file's duration in microseconds; nil for an endless stream.
    var lengthMicroseconds: Int64?

    /// The track of the status reply's first stream (nil: the graph has none).
    init?(status: RunStatus) {
        guard let stream = status.streams.first else { return nil }
        url = stream.url
        title = stream.title
        artist = stream.artist
        let isNetwork = url.map { $0.hasPrefix("http://") || $0.hasPrefix("https://") } ?? false
        if isNetwork, artist == nil, let icy = title {
            (artist, title) = Self.split(icy: icy)
        }
        if !isNetwork, let seconds = stream.duration { lengthMicroseconds = Int64((seconds * 1e6).rounded()) }
    }

    /// Splits an ICY StreamTitle at its first " - " into artist and title; a title without one has no artist.
    static func split(icy: String) -> (artist: String?, title: String) {
        guard let dash = icy.firstRange(of: " - ") else { return (nil, icy) }
        let artist = icy[..<dash.lowerBound].trimmingSpaces()
        let title = icy[dash.upperBound...].trimmingSpaces()
        if artist.isEmpty || title.isEmpty { return (nil, icy) }
        return (artist, title)
    }
}
