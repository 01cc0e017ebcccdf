import FoundationEssentials
import Glibc
import Logging

/// The bytes of an HLS stream: the segments of a media playlist, each downloaded in turn by an `HTTPByteSource`, the
/// init section (EXT-X-MAP) before the first segment it applies to. A finite playlist ends after its last segment; a
/// live one is reloaded as RFC 8216 6.3.4 asks (after a target duration, half of one when the last reload brought
/// nothing new). A discontinuity, or segments that left a live playlist before they were fetched, make the next read
/// follow a break, where the decoder starts afresh. A master playlist plays its `chosenVariant`. Once the stream has
/// played, a playlist reload or a segment request that fails (a server restarting answers 404) is tried again with
/// `StreamRetry`'s backoff for up to `retrySeconds`; a segment is fetched again only when it gave no bytes.
public final class HLSByteSource: ByteSource, Sendable {
    public let name: String
    let status: NetworkStreamStatus
    let retrySeconds: Double
    private let logger = Logger(label: "graphhost.stream")
    /// Playlists are small: one larger than this is refused.
    static let playlistLimit = 1 << 20

    private struct State {
        var mediaURL: String
        var playlist: HLSPlaylist
        var first: HLSPlaylist
        /// The media sequence number of the next segment to fetch (nil before the first).
        var nextSequence: Int?
        /// The download being read, and the URLs still to read for the current segment (its init section first).
        var current: HTTPByteSource?
        /// The URL `current` reads, and whether it gave any bytes yet.
        var currentURL: String?
        var currentGaveBytes = false
        var retry: StreamRetry
        /// `delivered` when the last failure was retried: more since then is progress.
        var deliveredAtFailure = 0
        var parts: [String] = []
        var initSection: String?
        var lastReload = Date()
        var reloadBroughtNothing = false
        var breakPending = false
        var followsBreak = false
        var cancelled = false
        var delivered = 0
    }
    private let state: Monitor<State>

    /// `text` is the playlist already read from `url`.
    public init(
        url: String, text: String, status: NetworkStreamStatus,
        retrySeconds: Double = HTTPByteSource.defaultRetrySeconds
    ) throws {
        name = url
        self.status = status
        self.retrySeconds = retrySeconds
        var playlist = try HLSPlaylist.parse(text, url: url)
        var mediaURL = url
        if let variant = playlist.chosenVariant {
            mediaURL = variant.url
            playlist = try HLSPlaylist.parse(try Self.fetch(variant.url), url: variant.url)
            if playlist.isMaster {
                throw HLSError(variant.url, 1, "a master playlist where a media playlist was expected")
            }
        }
        state = Monitor(
            State(mediaURL: mediaURL, playlist: playlist, first: playlist, retry: StreamRetry(limit: retrySeconds)))
    }

    public var lastReadFollowsBreak: Bool { state.withLock { $0.followsBreak } }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let (part, cancelled) = state.withLock { ($0.current, $0.cancelled) }
            if cancelled { return 0 }
            if let part {
                let n: Int
                do {
                    n = try part.read(into: buffer)
                } catch {
                    let again = state.withLock { s -> Bool in
                        guard !s.currentGaveBytes, let url = s.currentURL else { return false }
                        s.parts.insert(url, at: 0)
                        s.current = nil
                        return true
                    }
                    guard again else { throw error }
                    try retry(after: error)
                    continue
                }
                if n > 0 {
                    status.loaded(n)
                    status.setConnected()
                    status.setProblem(nil)
                    state.withLock { s in
                        s.followsBreak = s.breakPending && s.delivered > 0
                        s.breakPending = false
                        s.delivered += n
                        s.currentGaveBytes = true
                    }
                    return n
                }
                state.withLock { $0.current = nil }
                continue
            }
            do {
                if try !advance() {
                    status.setEnded()
                    return 0
                }
            } catch {
                try retry(after: error)
            }
        }
    }

    /// Waits before trying again after `error`, or rethrows it: before the stream played (bad input), or when the
    /// failures have lasted `retrySeconds`.
    private func retry(after error: Error) throws {
        let wait = state.withLock { s -> Double? in
            guard s.delivered > 0, !s.cancelled else { return nil }
            let progressed = s.delivered > s.deliveredAtFailure
            s.deliveredAtFailure = s.delivered
            return s.retry.failed(connectedFor: 0, progressed: progressed)
        }
        guard let wait else {
            if state.withLock({ $0.delivered }) > 0 && !state.withLock({ $0.cancelled }) {
                throw StreamError.network(name, "\(error); gave up retrying after \(Format.number(retrySeconds)) s")
            }
            throw error
        }
        logger.warning("\(name): \(error); trying again in \(Format.number(wait)) s")
        status.reconnected()
        status.setProblem("\(error)")
        state.wait(until: { $0.cancelled }, deadline: Date().addingTimeInterval(wait), then: { _ in })
    }

    /// Starts the next download: the next part of the current segment, the next segment, or after a reload. False at
    /// the end of a finite playlist.
    private func advance() throws -> Bool {
        let next: String? = state.withLock { s in
            if !s.parts.isEmpty { return s.parts.removeFirst() }
            let upcoming = s.playlist.segments.first { $0.sequence >= (s.nextSequence ?? 0) }
            guard let segment = upcoming else { return nil }
            if let expected = s.nextSequence, segment.sequence > expected {
                logger.warning(
                    "\(name): segments \(expected)…\(segment.sequence - 1) left the playlist before they were fetched")
                s.breakPending = true
            }
            if segment.discontinuity { s.breakPending = true }
            if let map = segment.initSection, map != s.initSection || s.breakPending { s.parts.append(map) }
            s.initSection = segment.initSection
            s.parts.append(segment.url)
            s.nextSequence = segment.sequence + 1
            return s.parts.removeFirst()
        }
        if let next {
            let segment = HTTPByteSource(url: next, status: NetworkStreamStatus(), retrySeconds: retrySeconds)
            state.withLock { s in
                s.current = segment
                s.currentURL = next
                s.currentGaveBytes = false
            }
            return true
        }
        if state.withLock({ $0.playlist.ended }) { return false }
        try reload()
        return true
    }

    /// Waits as RFC 8216 asks, then fetches the media playlist again.
    private func reload() throws {
        let url = state.wait(
            until: { $0.cancelled },
            deadline: state.withLock { s in
                let wait = s.playlist.targetDuration * (s.reloadBroughtNothing ? 0.5 : 1)
                return s.lastReload.addingTimeInterval(wait)
            },
            then: { s -> String? in s.cancelled ? nil : s.mediaURL }
        )
        guard let url else { return }
        let playlist = try HLSPlaylist.parse(try Self.fetch(url), url: url)
        state.withLock { s in
            let newest = s.playlist.segments.last?.sequence ?? -1
            s.reloadBroughtNothing = (playlist.segments.last?.sequence ?? -1) <= newest && !playlist.ended
            s.playlist = playlist
            s.lastReload = Date()
        }
    }

    /// The body of a playlist.
    static func fetch(_ url: String) throws -> String {
        let source = HTTPByteSource(url: url, status: NetworkStreamStatus())
        defer { source.cancel() }
        return try text(of: url, read: source.read)
    }

    /// Everything `read` gives, as the text of the playlist at `url`.
    static func text(of url: String, read: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> String {
        var data = Data()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = try read(chunk)
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
            if data.count > playlistLimit { throw HLSError(url, 1, "larger than \(playlistLimit) bytes") }
        }
        return String(decoding: data, as: UTF8.self)
    }

    public func rewind() throws {
        state.withLock { s in
            s.current?.cancel()
            s.current = nil
            s.parts = []
            s.playlist = s.first
            s.nextSequence = nil
            s.initSection = nil
            s.breakPending = false
            s.delivered = 0
        }
    }

    public func cancel() {
        state.withLock { s in
            s.cancelled = true
            s.current?.cancel()
        }
    }
}

/// Reads an HLS playlist from the start of a stream and gives the byte source of its segments.
enum HLSPlaylistReader {
    static func source(reading input: MediaInput) throws -> ByteSource {
        guard let http = input.source as? HTTPByteSource else {
            throw StreamError.unsupportedMedia(input.name, "an HLS playlist is played from its http:// or https:// URL")
        }
        let text = try HLSByteSource.text(of: input.name, read: input.read)
        // The playlist's own size is not the stream's.
        http.status.setTotal(nil)
        return try HLSByteSource(url: input.name, text: text, status: http.status, retrySeconds: http.retrySeconds)
    }
}
