import FoundationEssentials
import Glibc

/// Where a stream node's compressed bytes come from. Network sources plug in here. The decoder thread reads;
/// the thread that stops the stream may `cancel`.
public protocol ByteSource: AnyObject, Sendable {
    /// A short description for messages (path or URL).
    var name: String { get }
    /// Reads up to `buffer.count` bytes; 0 means the end of the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Starts again from the first byte (for `loop`).
    func rewind() throws
    /// Makes a blocked `read` return (the stream is being stopped); the default does nothing.
    func cancel()
    /// True when the bytes the last `read` returned do not continue the ones before (an endless stream
    /// reconnected); the default is never.
    var lastReadFollowsBreak: Bool { get }
    /// The media type the server gave (`Content-Type`, without parameters), once the first bytes are read; nil for a
    /// file.
    var contentType: String? { get }
}

extension ByteSource {
    public func cancel() {}
    public var lastReadFollowsBreak: Bool { false }
    public var contentType: String? { nil }
}

/// A byte source that can move to any byte: a file, or finite HTTP media (Range requests).
public protocol SeekableByteSource: ByteSource {
    /// The media's size in bytes, when known.
    var size: Int? { get }
    /// Makes the next `read` return the bytes from `offset` on.
    func seek(to offset: Int) throws
}

/// Reads bytes from a local file.
public final class FileByteSource: SeekableByteSource, Sendable {
    public let name: String
    private let fd: Int32

    public init(path: String) throws {
        name = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StreamError.unreadable(
                path, FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
    }

    deinit { close(fd) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if n < 0 { throw StreamError.unreadable(name, String(cString: strerror(errno))) }
        return n
    }

    public func rewind() throws {
        try seek(to: 0)
    }

    public var size: Int? {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : nil
    }

    public func seek(to offset: Int) throws {
        if lseek(fd, off_t(offset), SEEK_SET) < 0 {
            throw StreamError.unreadable(name, String(cString: strerror(errno)))
        }
    }
}

/// Errors of the stream path, each naming the media.
public enum StreamError: Error, CustomStringConvertible {
    case unreadable(String, String)
    case unsupportedMedia(String, String)
    case unsupportedURL(String)
    case decoder(String)
    case http(String, Int)
    case network(String, String)
    /// The server answered 200 (or 206) with no body.
    case emptyResponse(String)
    /// Nothing came back within the given seconds (no status line, or no byte).
    case noAnswer(String, Double)

    public var description: String {
        switch self {
        case .unreadable(let name, let why): return "cannot read media '\(name)': \(why)"
        case .unsupportedMedia(let name, let why): return "'\(name)' is not a supported audio stream: \(why)"
        case .unsupportedURL(let url):
            return "unsupported URL '\(url)': use a file path, a file: URL or an http:// or https:// URL"
        case .http(let url, let status): return "HTTP \(status) from \(url)" + (status == 404 ? " (not found)" : "")
        case .network(let url, let why): return "cannot stream \(url): \(why)"
        case .emptyResponse(let url): return "empty response from \(url)"
        case .noAnswer(let url, let seconds): return "no answer from \(url) within \(Format.number(seconds)) s"
        case .decoder(let why): return "decoder: \(why)"
        }
    }
}
