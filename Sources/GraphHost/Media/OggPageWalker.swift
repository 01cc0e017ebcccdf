/// Walks the pages of an Ogg stream as its bytes are read, to find where one stream of a chain ends: a page that
/// begins a logical stream (BOS) after pages that did not. Bytes that are not pages (damage) pass through until the
/// next capture pattern.
struct OggPageWalker {
    enum Limit {
        case bytes(Int)
        case linkEnds
    }

    /// The offset of the next page header.
    private var nextPage: Int
    private var sawStreamData = false

    /// `withinLink`: the walk starts inside a link (after a seek), so a BOS page ends it.
    init(offset: Int, withinLink: Bool = false) {
        nextPage = offset
        sawStreamData = withinLink
    }

    static let capturePattern: [UInt8] = Array("OggS".utf8)
    static let headerSize = 27

    /// How many of the `count` bytes at `position` belong to the current link.
    mutating func limit(_ count: Int, at position: Int, in input: MediaInput) throws -> Limit {
        if position == nextPage {
            let header = try input.peek(Self.headerSize)
            if header.count < Self.headerSize || !header.starts(with: Self.capturePattern) {
                try resync(at: position, in: input)
            } else {
                let segments = Int(header[header.startIndex + 26])
                let table = try input.peek(Self.headerSize + segments)
                guard table.count == Self.headerSize + segments else { return .bytes(count) }
                let bos = header[header.startIndex + 5] & 0x02 != 0
                if bos && sawStreamData { return .linkEnds }
                if !bos { sawStreamData = true }
                nextPage = position + Self.headerSize + segments + table.suffix(segments).reduce(0) { $0 + Int($1) }
            }
        }
        return .bytes(nextPage > position ? min(count, nextPage - position) : count)
    }

    /// The bytes at `position` are not a page: the next page is the next capture pattern (or beyond what is read).
    private mutating func resync(at position: Int, in input: MediaInput) throws {
        let window = try input.peek(65536)
        var i = window.startIndex + 1
        while i + 4 <= window.endIndex && !window[i..<(i + 4)].elementsEqual(Self.capturePattern) { i += 1 }
        nextPage = position + max(1, i - window.startIndex)
    }
}
