import CCurlGlue
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// What a network stream is doing, for the status line, `status` and events (thread-safe).
public final class NetworkStreamStatus: Sendable {
    public enum State: String, Sendable { case connecting, buffering, playing, rebuffering, retrying, ended, failed }

    private struct Fields {
        var bytesLoaded = 0
        var totalBytes: Int?
        var title: String?
        var titles: [String] = []
        var reconnects = 0
        var connected = false
        var ended = false
        var paused = false
        var problem: String?
    }
    private let fields = Mutex(Fields())

    public init() {}

    public var bytesLoaded: Int { fields.withLock { $0.bytesLoaded } }
    /// The media's size when the server says it (Content-Length), else nil.
    public var totalBytes: Int? { fields.withLock { $0.totalBytes } }
    /// The latest StreamTitle, and every title seen in order.
    public var title: String? { fields.withLock { $0.title } }
    public var titles: [String] { fields.withLock { $0.titles } }
    public var reconnects: Int { fields.withLock { $0.reconnects } }
    /// True while the download waits because the buffer is full (the decoder paces it).
    public var paused: Bool { fields.withLock { $0.paused } }
    /// Why the stream is being retried (its connection ended, broke or was refused), until the server answers again.
    public var problem: String? { fields.withLock { $0.problem } }
    var connected: Bool { fields.withLock { $0.connected } }
    var ended: Bool { fields.withLock { $0.ended } }

    func loaded(_ n: Int) { fields.withLock { $0.bytesLoaded += n } }
    func setTotal(_ n: Int?) { fields.withLock { $0.totalBytes = n } }
    func setConnected() { fields.withLock { $0.connected = true } }
    func reconnected() { fields.withLock { $0.reconnects += 1 } }
    func setEnded() { fields.withLock { $0.ended = true } }
    func setPaused(_ paused: Bool) { fields.withLock { $0.paused = paused } }
    func setProblem(_ problem: String?) { fields.withLock { $0.problem = problem } }
    func setTitle(_ t: String) {
        fields.withLock {
            guard t != $0.title else { return }
            $0.title = t
            $0.titles.append(t)
        }
    }
}

/// Bytes of an http:// or https:// URL, downloaded by libcurl on a thread of its own into a bounded buffer that
/// the decoder reads: playback starts while the download runs, and a full buffer pauses the download
/// (the decoder paces it). A response that ends is the end of the media, unless the server declared a live stream
/// (ICY headers, as Icecast sends): a live stream reconnects. A transfer that breaks resumes with a Range request
/// from the byte reached (a server that ignores the range is skipped ahead). Once the stream has played, a
/// connection that ends, breaks or is refused (a restarting Icecast answers 404) is retried with `StreamRetry`'s
/// backoff for up to `retrySeconds`; before it, the first failure is the stream's. ICY metadata is requested and
/// stripped from the audio; its titles go to `status`. With a cache path, the complete download is kept there.
public final class HTTPByteSource: SeekableByteSource, Sendable {
    public let name: String
    public let status: NetworkStreamStatus
    let cachePath: String?
    /// How long a stream that has played is retried after its connection failed.
    let retrySeconds: Double
    let logger = Logger(label: "graphhost.stream")

    /// Bounds: bytes buffered ahead of the decoder, time without an answer or data before a request is given up.
    static let bufferBytes = 256 * 1024
    static let readTimeout = 5.0
    static let connectTimeoutMs = 5000
    static let maxRedirects = 5
    /// Seconds a stream that has played is retried by default (the stream node's `retrySeconds`).
    public static let defaultRetrySeconds = 30.0

    /// What the download thread and the reading decoder share.
    private struct Shared {
        var buffer = Data()
        /// Offsets in `buffer` where the bytes of a new connection of a live stream begin.
        var breaks: [Int] = []
        var followsBreak = false
        var finished = false
        var failure: Error?
        var cancelled = false
        /// Counts rewinds and seeks: a download of an older generation stops.
        var generation = 0
        var contentType: String?
    }
    private let shared = Monitor(Shared())

    public init(
        url: String, status: NetworkStreamStatus, cachePath: String? = nil, retrySeconds: Double = defaultRetrySeconds
    ) {
        name = url
        self.status = status
        self.cachePath = cachePath
        self.retrySeconds = retrySeconds
        _ = Self.curlReady
        startDownload()
    }

    private static let curlReady: Bool = {
        gh_http_global_init()
        return true
    }()

    deinit { cancel() }

    public func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try shared.wait(
            until: { !$0.buffer.isEmpty || $0.finished || $0.failure != nil || $0.cancelled },
            then: { shared in
                if let failure = shared.failure, shared.buffer.isEmpty { throw failure }
                shared.followsBreak = false
                while shared.breaks.first == 0 {
                    shared.breaks.removeFirst()
                    shared.followsBreak = true
                }
                let n = min(destination.count, shared.buffer.count, shared.breaks.first ?? shared.buffer.count)
                if n > 0 {
                    shared.buffer.withUnsafeBytes {
                        destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n]))
                    }
                    shared.buffer.removeFirst(n)
                    shared.breaks = shared.breaks.map { $0 - n }
                }
                return n
            })
        return n
    }

    public var lastReadFollowsBreak: Bool { shared.withLock { $0.followsBreak } }

    public func rewind() throws {
        try seek(to: 0)
    }

    /// The media's size once the server said it (nil for a live stream or a download without a length, which cannot
    /// seek).
    public var size: Int? { status.totalBytes }

    public var contentType: String? { shared.withLock { $0.contentType } }

    /// Downloads again from `offset` with a Range request (a server that ignores Range is skipped ahead).
    public func seek(to offset: Int) throws {
        let total = status.totalBytes
        shared.withLock { shared in
            shared.generation += 1
            shared.buffer.removeAll()
            shared.breaks.removeAll()
            shared.finished = false
            shared.failure = nil
        }
        startDownload(from: offset, total: offset > 0 ? total : nil)
    }

    public func cancel() {
        shared.withLock { $0.cancelled = true }
    }

    private func startDownload(from offset: Int = 0, total: Int? = nil) {
        let mine = shared.withLock { $0.generation }
        DetachedThread.start(name: "graphhost-http") { [weak self] in
            self?.download(generation: mine, from: offset, total: total)
        }
    }

    /// False once this download was cancelled or replaced by a rewind.
    fileprivate func current(_ mine: Int) -> Bool { shared.withLock { !$0.cancelled && $0.generation == mine } }

    /// Appends audio bytes, waiting while the buffer is full; `afterBreak` says they do not continue the bytes
    /// before. False when the download should stop.
    fileprivate func append(_ bytes: UnsafeRawBufferPointer, generation mine: Int, afterBreak: Bool) -> Bool {
        if shared.withLock({ $0.buffer.count >= Self.bufferBytes }) { status.setPaused(true) }
        return shared.wait(
            until: { $0.buffer.count < Self.bufferBytes || $0.cancelled || $0.generation != mine },
            then: { shared in
                status.setPaused(false)
                guard !shared.cancelled && shared.generation == mine else { return false }
                if afterBreak { shared.breaks.append(shared.buffer.count) }
                shared.buffer.append(contentsOf: bytes)
                return true
            })
    }

    private func end(generation mine: Int, failure error: Error?) {
        shared.withLock { shared in
            guard shared.generation == mine else { return }
            if let error { shared.failure = error } else { shared.finished = true }
        }
        if error == nil { status.setEnded() }
    }

    /// The download loop: one request, then resumes or reconnects until the media is complete or it fails.
    private func download(generation mine: Int, from offset: Int, total: Int?) {
        var transfer = HTTPTransfer(source: self, generation: mine, from: offset, total: total)
        var retry = StreamRetry(limit: retrySeconds)
        while current(mine) {
            let outcome = transfer.run()
            if !current(mine) { return }
            let why: String
            switch outcome {
            case .complete:
                transfer.finishCache(complete: true)
                return end(generation: mine, failure: nil)
            case .failed(let error):
                transfer.finishCache(complete: false)
                return end(generation: mine, failure: error)
            case .refused(let error):
                // Before any byte arrived the first time: a start-up failure, reported at once.
                if !status.connected {
                    transfer.finishCache(complete: false)
                    return end(generation: mine, failure: error)
                }
                why = "\(error)"
            case .interrupted(let reason):
                if !status.connected {
                    transfer.finishCache(complete: false)
                    return end(generation: mine, failure: StreamError.network(name, reason))
                }
                why = reason
            }
            guard
                let wait = retry.failed(
                    connectedFor: transfer.connectedSeconds, progressed: transfer.progressed && transfer.resumable)
            else {
                transfer.finishCache(complete: false)
                return end(
                    generation: mine,
                    failure: StreamError.network(
                        name, "\(why); gave up retrying after \(Format.number(retrySeconds)) s"))
            }
            let resumePoint = transfer.resumable && transfer.audioBytes > 0 ? " from byte \(transfer.audioBytes)" : ""
            logger.warning("\(name): \(why); reconnecting\(resumePoint) in \(Format.number(wait)) s")
            status.reconnected()
            status.setProblem(why)
            shared.wait(
                until: { $0.cancelled || $0.generation != mine }, deadline: Date().addingTimeInterval(wait),
                then: { _ in })
        }
    }

    fileprivate func noteContentType(_ header: String?) {
        let type = header?.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() }
        shared.withLock { $0.contentType = type }
    }

    fileprivate func noteTitle(_ title: String) {
        guard !title.isEmpty || status.title != nil else { return }
        if title != status.title { logger.info("\(name): now playing '\(title)'") }
        status.setTitle(title)
    }
}

/// One download's state across its requests: bytes reached, the ICY splitter, the cache file.
struct HTTPTransfer {
    enum Outcome {
        case complete
        /// The connection ended or broke (why).
        case interrupted(String)
        /// The server answered with an error, or with nothing.
        case refused(Error)
        case failed(Error)
    }

    unowned let source: HTTPByteSource
    let generation: Int
    /// Audio bytes delivered so far (ICY metadata excluded) and the media size, once known.
    var audioBytes = 0
    var total: Int?
    var icy: IcyMetadataSplitter?
    /// True when the last request delivered something (a finite download that moved on starts a new series of retries).
    var progressed = false
    /// The next audio bytes begin a new connection of a live stream.
    var startsAfterBreak = false
    /// The server declared a live stream (ICY headers): a response that ends is not the end of the media.
    var live = false
    /// Seconds the last request stayed connected after its answer (0 when it got none).
    var connectedSeconds = 0.0
    /// The cache file's descriptor.
    var cache: Int32?

    /// A download from `offset` (a seek: `total` is the size already known) is not cached.
    init(source: HTTPByteSource, generation: Int, from offset: Int = 0, total: Int? = nil) {
        self.source = source
        self.generation = generation
        audioBytes = offset
        self.total = total
        if let path = source.cachePath, offset == 0 {
            let fd = open(path + ".part", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            cache = fd >= 0 ? fd : nil
        }
    }

    /// Media that is not live resumes with a Range request; a live stream starts afresh.
    var resumable: Bool { !live }

    /// Per-request state handed to the C callbacks.
    final class Request {
        var transfer: HTTPTransfer
        var status = 0
        var headers: [String: String] = [:]
        var skip = 0
        var accepted = false
        var lastData = Date()
        var acceptedAt: Date?
        /// The status line was `ICY 200 OK` (a SHOUTcast server).
        var icyStatusLine = false
        var stop = false
        var problem: String?
        init(_ transfer: HTTPTransfer) { self.transfer = transfer }
    }

    mutating func run() -> Outcome {
        let from = resumable ? audioBytes : 0
        if !resumable && audioBytes > 0 {
            // A live stream restarts: its audio continues from the new connection, wherever that begins.
            icy = nil
            startsAfterBreak = true
        }
        let request = Request(self)
        request.transfer.progressed = false
        var spec = gh_http_request()
        var result = gh_http_result()
        let url = source.name
        let unmanaged = Unmanaged.passRetained(request)
        url.withCString { cURL in
            spec.url = cURL
            spec.range_from = Int64(from)
            spec.icy_metadata = 1
            spec.connect_timeout_ms = HTTPByteSource.connectTimeoutMs
            spec.max_redirects = HTTPByteSource.maxRedirects
            gh_http_perform(
                &spec,
                { data, size, user in
                    let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                    return r.body(UnsafeRawBufferPointer(start: data, count: size)) ? size : 0
                },
                { line, size, user in
                    let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                    r.header(String(decoding: UnsafeRawBufferPointer(start: line, count: size), as: UTF8.self))
                },
                { user in
                    let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                    return r.shouldAbort() ? 1 : 0
                }, unmanaged.toOpaque(), &result)
        }
        unmanaged.release()
        self = request.transfer
        connectedSeconds = request.acceptedAt.map { Date().timeIntervalSince($0) } ?? 0
        let message = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if request.problem != nil && request.status == 0 {
            return .refused(StreamError.noAnswer(url, HTTPByteSource.readTimeout))
        }
        if request.problem != nil && request.status != 200 && request.status != 206 {
            return .refused(StreamError.http(url, request.status))
        }
        if let problem = request.problem { return .interrupted(problem) }
        if result.curl_code != 0 {
            if result.curl_code == 47 {
                return .failed(StreamError.network(url, message.isEmpty ? "too many redirects" : message))
            }
            return .interrupted(message.isEmpty ? "transfer failed (libcurl error \(result.curl_code))" : message)
        }
        if !request.accepted {
            let status = Int(result.status)
            return .refused(
                status == 200 || status == 206 ? StreamError.emptyResponse(url) : StreamError.http(url, status))
        }
        if let total, audioBytes < total {
            return .interrupted("the connection closed at byte \(audioBytes) of \(total)")
        }
        // The response ended: the media is complete, unless the server said it is a live stream, which goes on.
        if live { return .interrupted("the live stream's connection ended") }
        return .complete
    }

    mutating func finishCache(complete: Bool) {
        guard let cache, let path = source.cachePath else { return }
        close(cache)
        self.cache = nil
        if complete {
            _ = try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.moveItem(atPath: path + ".part", toPath: path)
        } else {
            try? FileManager.default.removeItem(atPath: path + ".part")
        }
    }
}

extension HTTPTransfer.Request {
    func header(_ line: String) {
        let trimmed = line.trimmingWhitespace()
        if trimmed.hasPrefix("HTTP/") || trimmed.hasPrefix("ICY ") {
            // A new response (after a redirect): forget the previous one's headers.
            headers = [:]
            status = Int(trimmed.split(separator: " ").dropFirst().first ?? "") ?? 0
            icyStatusLine = trimmed.hasPrefix("ICY ")
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        headers[trimmed[..<colon].lowercased()] = trimmed[trimmed.index(after: colon)...].trimmingSpaces()
    }

    /// The first body bytes decide: a redirect's body is ignored; 200 or 206 is accepted; anything else fails.
    func accept() -> Bool {
        if (300..<400).contains(status) { return true }
        guard status == 200 || status == 206 else {
            problem = "HTTP \(status)"
            return false
        }
        let from = transfer.resumable ? transfer.audioBytes : 0
        if status == 200 {
            skip = from  // the server ignored the range: skip what we already have
            if let length = headers["content-length"].flatMap(Int.init) { transfer.total = length }
        } else if let range = headers["content-range"], let slash = range.lastIndex(of: "/") {
            transfer.total = Int(range[range.index(after: slash)...]) ?? transfer.total
            let start = range.split(separator: " ").last?.split(separator: "-").first.flatMap { Int($0) } ?? from
            skip = from - start
        }
        // ICY headers (icy-metaint, icy-name, icy-br, ...) or an ICY status line declare a live stream.
        if icyStatusLine || headers.keys.contains(where: { $0.hasPrefix("icy-") }) {
            transfer.live = true
            transfer.total = nil
        }
        if transfer.icy == nil, let interval = headers["icy-metaint"].flatMap(Int.init), interval > 0 {
            transfer.icy = IcyMetadataSplitter(interval: interval)
        }
        transfer.source.status.setTotal(transfer.total)
        transfer.source.noteContentType(headers["content-type"])
        transfer.source.status.setConnected()
        transfer.source.status.setProblem(nil)
        acceptedAt = Date()
        accepted = true
        return true
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !accepted || (300..<400).contains(status) {
            guard accept() else { return false }
            if (300..<400).contains(status) { return true }
        }
        lastData = Date()
        var bytes = bytes
        if skip > 0 {
            let n = min(skip, bytes.count)
            skip -= n
            bytes = UnsafeRawBufferPointer(rebasing: bytes[n...])
        }
        guard bytes.count > 0 else { return true }
        let source = transfer.source
        let generation = transfer.generation
        var keep = true
        func deliver(_ audio: UnsafeRawBufferPointer) {
            guard keep, audio.count > 0 else { return }
            keep = source.append(audio, generation: generation, afterBreak: transfer.startsAfterBreak)
            if keep {
                transfer.startsAfterBreak = false
                transfer.audioBytes += audio.count
                transfer.progressed = true
                source.status.loaded(audio.count)
                if let cache = transfer.cache { _ = audio.withUnsafeBytes { write(cache, $0.baseAddress, $0.count) } }
            }
        }
        if var icy = transfer.icy {
            icy.feed(bytes, audio: deliver, title: { source.noteTitle($0) })
            transfer.icy = icy
        } else {
            deliver(bytes)
        }
        if !keep { stop = true }
        lastData = Date()  // time spent waiting for buffer space is not a network stall
        return keep
    }

    /// Aborts a cancelled download, or one that received nothing for `readTimeout` seconds.
    func shouldAbort() -> Bool {
        if stop || !transfer.source.current(transfer.generation) { return true }
        if Date().timeIntervalSince(lastData) > HTTPByteSource.readTimeout {
            problem = "no data for \(Format.number(HTTPByteSource.readTimeout)) s"
            return true
        }
        return false
    }
}
