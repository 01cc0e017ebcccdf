import CHTTP
import Foundation
import Logging

/// What a network stream is doing, for the status line, `status` and events (thread-safe).
public final class NetworkStreamStatus: @unchecked Sendable {
    public enum State: String, Sendable { case connecting, buffering, playing, rebuffering, ended }

    private let lock = NSLock()
    private var _bytesLoaded = 0
    private var _totalBytes: Int?
    private var _title: String?
    private var _titles: [String] = []
    private var _reconnects = 0
    private var _connected = false
    private var _ended = false
    private var _paused = false

    public var bytesLoaded: Int { lock.withLock { _bytesLoaded } }
    /// The media's size when the server says it (Content-Length), else nil.
    public var totalBytes: Int? { lock.withLock { _totalBytes } }
    /// The latest StreamTitle, and every title seen in order.
    public var title: String? { lock.withLock { _title } }
    public var titles: [String] { lock.withLock { _titles } }
    public var reconnects: Int { lock.withLock { _reconnects } }
    /// True while the download waits because the buffer is full (the decoder paces it).
    public var paused: Bool { lock.withLock { _paused } }
    var connected: Bool { lock.withLock { _connected } }
    var ended: Bool { lock.withLock { _ended } }

    func loaded(_ n: Int) { lock.withLock { _bytesLoaded += n } }
    func setTotal(_ n: Int?) { lock.withLock { _totalBytes = n } }
    func setConnected() { lock.withLock { _connected = true } }
    func reconnected() { lock.withLock { _reconnects += 1 } }
    func setEnded() { lock.withLock { _ended = true } }
    func setPaused(_ paused: Bool) { lock.withLock { _paused = paused } }
    func setTitle(_ t: String) {
        lock.withLock {
            guard t != _title else { return }
            _title = t
            _titles.append(t)
        }
    }
}

/// Bytes of an http:// or https:// URL, downloaded by libcurl on a thread of its own into a bounded buffer that
/// the decoder reads: playback starts while the download runs, and a full buffer pauses the download
/// (the decoder paces it). A transfer that breaks resumes with a Range request from the byte reached (a server
/// that ignores the range is skipped ahead); an endless stream (no Content-Length, e.g. Icecast) reconnects. ICY metadata is requested
/// and stripped from the audio; its titles go to `status`. With a cache path, the complete download is kept there.
public final class HTTPByteSource: ByteSource {
    public let name: String
    public let status: NetworkStreamStatus
    let cachePath: String?
    let logger = Logger(label: "graphhost.stream")

    /// Bounds: bytes buffered ahead of the decoder, time without data before a reconnect, attempts in a row.
    static let bufferBytes = 256 * 1024
    static let readTimeout = 5.0
    static let connectTimeoutMs = 5000
    static let maxRedirects = 5
    static let maxAttempts = 6

    private let condition = NSCondition()
    private var buffer = Data()
    /// Offsets in `buffer` where the bytes of a new connection of an endless stream begin.
    private var breaks: [Int] = []
    private var followsBreak = false
    private var finished = false
    private var failure: Error?
    private var cancelled = false
    private var generation = 0
    private var thread: Thread?

    public init(url: String, status: NetworkStreamStatus, cachePath: String? = nil) {
        name = url
        self.status = status
        self.cachePath = cachePath
        _ = Self.curlReady
        startDownload()
    }

    private static let curlReady: Bool = { graphhost_http_global_init(); return true }()

    deinit { cancel() }

    public func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        condition.lock()
        defer { condition.unlock() }
        while buffer.isEmpty && !finished && failure == nil && !cancelled { condition.wait() }
        if let failure, buffer.isEmpty { throw failure }
        followsBreak = false
        while breaks.first == 0 {
            breaks.removeFirst()
            followsBreak = true
        }
        let n = min(destination.count, buffer.count, breaks.first ?? buffer.count)
        if n > 0 {
            buffer.withUnsafeBytes { destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            buffer.removeFirst(n)
            breaks = breaks.map { $0 - n }
            condition.broadcast()
        }
        return n
    }

    public var lastReadFollowsBreak: Bool { condition.withLock { followsBreak } }

    public func rewind() throws {
        condition.lock()
        generation += 1
        buffer.removeAll()
        breaks.removeAll()
        finished = false
        failure = nil
        condition.broadcast()
        condition.unlock()
        startDownload()
    }

    public func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    private func startDownload() {
        let mine = condition.withLock { generation }
        let t = Thread { [weak self] in self?.download(generation: mine) }
        t.name = "graphhost-http"
        thread = t
        t.start()
    }

    /// False once this download was cancelled or replaced by a rewind.
    fileprivate func current(_ mine: Int) -> Bool { condition.withLock { !cancelled && generation == mine } }

    /// Appends audio bytes, waiting while the buffer is full; `afterBreak` says they do not continue the bytes
    /// before. False when the download should stop.
    fileprivate func append(_ bytes: UnsafeRawBufferPointer, generation mine: Int, afterBreak: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if buffer.count >= Self.bufferBytes { status.setPaused(true) }
        while buffer.count >= Self.bufferBytes && !cancelled && generation == mine { condition.wait() }
        status.setPaused(false)
        guard !cancelled && generation == mine else { return false }
        if afterBreak { breaks.append(buffer.count) }
        buffer.append(contentsOf: bytes)
        condition.broadcast()
        return true
    }

    private func end(generation mine: Int, failure error: Error?) {
        condition.lock()
        if generation == mine {
            if let error { failure = error } else { finished = true }
        }
        condition.broadcast()
        condition.unlock()
        if error == nil { status.setEnded() }
    }

    /// The download loop: one request, then resumes or reconnects until the media is complete or it fails.
    private func download(generation mine: Int) {
        var transfer = HTTPTransfer(source: self, generation: mine)
        var attempts = 0
        while current(mine) {
            let outcome = transfer.run()
            if !current(mine) { return }
            switch outcome {
            case .complete:
                transfer.finishCache(complete: true)
                return end(generation: mine, failure: nil)
            case .failed(let error):
                transfer.finishCache(complete: false)
                return end(generation: mine, failure: error)
            case .interrupted(let why):
                // Before any byte arrived the first time: a start-up failure, reported at once.
                if !status.connected {
                    transfer.finishCache(complete: false)
                    return end(generation: mine, failure: StreamError.network(name, why))
                }
                attempts = transfer.progressed ? 1 : attempts + 1
                guard attempts <= Self.maxAttempts else {
                    transfer.finishCache(complete: false)
                    return end(generation: mine, failure: StreamError.network(name, "\(why); gave up after \(Self.maxAttempts) attempts"))
                }
                logger.warning("\(name): \(why); reconnecting\(transfer.resumable ? " from byte \(transfer.audioBytes)" : "")")
                status.reconnected()
                Thread.sleep(forTimeInterval: min(2, 0.1 * pow(2, Double(attempts - 1))))
            }
        }
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
        case interrupted(String)
        case failed(Error)
    }

    unowned let source: HTTPByteSource
    let generation: Int
    /// Audio bytes delivered so far (ICY metadata excluded) and the media size, once known.
    var audioBytes = 0
    var total: Int?
    var icy: IcyMetadataSplitter?
    /// True when the last request delivered something (a reconnect then starts counting attempts afresh).
    var progressed = false
    /// The next audio bytes begin a new connection of an endless stream.
    var startsAfterBreak = false
    var cache: FileHandle?

    init(source: HTTPByteSource, generation: Int) {
        self.source = source
        self.generation = generation
        if let path = source.cachePath {
            FileManager.default.createFile(atPath: path + ".part", contents: nil)
            cache = FileHandle(forWritingAtPath: path + ".part")
        }
    }

    /// A finite media file can resume with a Range request; an ICY stream starts afresh.
    var resumable: Bool { total != nil && icy == nil }

    /// Per-request state handed to the C callbacks.
    final class Request {
        var transfer: HTTPTransfer
        var status = 0
        var headers: [String: String] = [:]
        var skip = 0
        var accepted = false
        var lastData = Date()
        var stop = false
        var problem: String?
        init(_ transfer: HTTPTransfer) { self.transfer = transfer }
    }

    mutating func run() -> Outcome {
        let from = resumable ? audioBytes : 0
        if !resumable && audioBytes > 0 {
            // An endless stream restarts: its audio continues from the new connection, wherever that begins.
            icy = nil
            startsAfterBreak = true
        }
        let request = Request(self)
        request.transfer.progressed = false
        var spec = graphhost_http_request()
        var result = graphhost_http_result()
        let url = source.name
        let unmanaged = Unmanaged.passRetained(request)
        url.withCString { cURL in
            spec.url = cURL
            spec.range_from = Int64(from)
            spec.icy_metadata = 1
            spec.connect_timeout_ms = HTTPByteSource.connectTimeoutMs
            spec.max_redirects = HTTPByteSource.maxRedirects
            graphhost_http_perform(&spec, { data, size, user in
                let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                return r.body(UnsafeRawBufferPointer(start: data, count: size)) ? size : 0
            }, { line, size, user in
                let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                r.header(String(decoding: UnsafeRawBufferPointer(start: line, count: size), as: UTF8.self))
            }, { user in
                let r = Unmanaged<HTTPTransfer.Request>.fromOpaque(user!).takeUnretainedValue()
                return r.shouldAbort() ? 1 : 0
            }, unmanaged.toOpaque(), &result)
        }
        unmanaged.release()
        self = request.transfer
        let message = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if request.problem != nil && request.status != 200 && request.status != 206 {
            return .failed(StreamError.http(url, request.status))
        }
        if let problem = request.problem { return .interrupted(problem) }
        if result.curl_code != 0 {
            if result.curl_code == 47 { return .failed(StreamError.network(url, message.isEmpty ? "too many redirects" : message)) }
            return .interrupted(message.isEmpty ? "transfer failed (libcurl error \(result.curl_code))" : message)
        }
        if !request.accepted { return .failed(StreamError.http(url, Int(result.status))) }
        if let total, audioBytes < total { return .interrupted("the connection closed at byte \(audioBytes) of \(total)") }
        // No length: an endless stream (radio) whose connection ended; it reconnects. (A finite file sent without a
        // length would therefore repeat: servers send Content-Length for files.)
        if total == nil { return .interrupted("the endless stream's connection ended") }
        return .complete
    }

    mutating func finishCache(complete: Bool) {
        guard let cache, let path = source.cachePath else { return }
        try? cache.close()
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
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") || trimmed.hasPrefix("ICY ") {
            // A new response (after a redirect): forget the previous one's headers.
            headers = [:]
            status = Int(trimmed.split(separator: " ").dropFirst().first ?? "") ?? 0
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        headers[trimmed[..<colon].lowercased()] = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
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
            skip = from          // the server ignored the range: skip what we already have
            if let length = headers["content-length"].flatMap(Int.init) { transfer.total = length }
        } else if let range = headers["content-range"], let slash = range.lastIndex(of: "/") {
            transfer.total = Int(range[range.index(after: slash)...]) ?? transfer.total
            let start = range.split(separator: " ").last?.split(separator: "-").first.flatMap { Int($0) } ?? from
            skip = from - start
        }
        if transfer.icy == nil, let interval = headers["icy-metaint"].flatMap(Int.init), interval > 0 {
            transfer.icy = IcyMetadataSplitter(interval: interval)
            transfer.total = nil
        }
        transfer.source.status.setTotal(transfer.total)
        transfer.source.status.setConnected()
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
        let source = transfer.source, generation = transfer.generation
        var keep = true
        func deliver(_ audio: UnsafeRawBufferPointer) {
            guard keep, audio.count > 0 else { return }
            keep = source.append(audio, generation: generation, afterBreak: transfer.startsAfterBreak)
            if keep {
                transfer.startsAfterBreak = false
                transfer.audioBytes += audio.count
                transfer.progressed = true
                source.status.loaded(audio.count)
                if let cache = transfer.cache { cache.write(Data(audio)) }
            }
        }
        if var icy = transfer.icy {
            icy.feed(bytes, audio: deliver, title: { source.noteTitle($0) })
            transfer.icy = icy
        } else {
            deliver(bytes)
        }
        if !keep { stop = true }
        lastData = Date()      // time spent waiting for buffer space is not a network stall
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
