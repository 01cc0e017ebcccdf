/// The bytes one decoder reads: a byte source seen through what was already read from it (the sniffed start), cut
/// into links. A link ends where the bytes stop continuing the ones before: a reconnect of an endless stream (when
/// `splitsAtBreaks`), or the first page of the next stream in a chained Ogg stream (when `splitsOggLinks`). At the
/// end of a link `read` returns 0 and `atLinkEnd` is true; `nextLink()` goes on with the next one, which may be of
/// another format, rate or channel count.
final class MediaInput {
    let source: ByteSource
    /// Bytes read from the source and not yet delivered, from `head` on.
    private var pending: [UInt8] = []
    private var head = 0
    /// Offsets (absolute) where the bytes of a new connection begin.
    private var breaks: [Int] = []
    /// The offset of the next byte `read` delivers.
    private(set) var position = 0
    /// Where the current link began.
    private(set) var linkStart = 0
    private var sourceEnded = false
    private(set) var atLinkEnd = false
    private(set) var lastReadFollowsBreak = false
    var splitsAtBreaks = false
    var splitsOggLinks = false {
        didSet { oggPages = splitsOggLinks ? OggPageWalker(offset: position) : nil }
    }
    private var oggPages: OggPageWalker?

    init(_ source: ByteSource) { self.source = source }

    var name: String { source.name }
    /// The source, when it can seek: a file, or a download whose size is known.
    var seekable: SeekableByteSource? {
        guard let source = source as? SeekableByteSource, source.size != nil else { return nil }
        return source
    }

    /// At least `count` bytes from the current position on (fewer at the end of the source), without consuming them.
    func peek(_ count: Int) throws -> ArraySlice<UInt8> {
        while pending.count - head < count && !sourceEnded { try fill() }
        return pending[head..<min(pending.count, head + count)]
    }

    /// Reads up to `buffer.count` bytes of the current link; 0 at its end (or the stream's).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if atLinkEnd { return 0 }
        if head == pending.count {
            if sourceEnded { return 0 }
            try fill()
            if head == pending.count { return 0 }
        }
        let followsBreak = breaks.first == position
        if followsBreak {
            breaks.removeFirst()
            if splitsAtBreaks && position > linkStart { return endLink() }
        }
        var count = min(buffer.count, pending.count - head)
        if let next = breaks.first { count = min(count, next - position) }
        if var pages = oggPages {
            switch try pages.limit(count, at: position, in: self) {
            case .linkEnds: return endLink()
            case .bytes(let n): count = n
            }
            oggPages = pages
        }
        pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[head..<(head + count)])) }
        head += count
        position += count
        lastReadFollowsBreak = followsBreak
        if head > 1 << 16 && head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
        return count
    }

    private func endLink() -> Int {
        atLinkEnd = true
        return 0
    }

    /// Goes on with the link after the one that ended.
    func nextLink() {
        atLinkEnd = false
        linkStart = position
        if splitsOggLinks { oggPages = OggPageWalker(offset: position) }
    }

    /// Starts the source again from its first byte (for `loop`).
    func rewind() throws {
        try source.rewind()
        reset(at: 0)
    }

    /// Moves to `offset` (a seekable source only); `keepingLink` stays in the current link (a decoder seeking in it).
    func seek(to offset: Int, keepingLink: Bool = false) throws {
        guard let seekable else { throw StreamError.decoder("'\(name)' cannot seek") }
        try seekable.seek(to: offset)
        reset(at: offset, linkStart: keepingLink ? linkStart : offset)
    }

    private func reset(at offset: Int, linkStart: Int? = nil) {
        pending.removeAll(keepingCapacity: true)
        head = 0
        breaks.removeAll()
        sourceEnded = false
        atLinkEnd = false
        position = offset
        self.linkStart = linkStart ?? offset
        if splitsOggLinks { oggPages = OggPageWalker(offset: offset, withinLink: offset > self.linkStart) }
    }

    private static let chunk = 16384

    /// Appends the source's next bytes to `pending`.
    private func fill() throws {
        let start = pending.count
        pending.append(contentsOf: repeatElement(0, count: Self.chunk))
        let n = try pending.withUnsafeMutableBytes {
            try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...]))
        }
        pending.removeLast(Self.chunk - n)
        if n == 0 {
            sourceEnded = true
            return
        }
        if source.lastReadFollowsBreak { breaks.append(position + (start - head)) }
    }
}
