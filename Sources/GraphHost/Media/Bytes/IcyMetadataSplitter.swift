import FoundationEssentials
import Glibc

/// Separates Icecast/SHOUTcast metadata from the audio bytes: after every `interval` audio bytes comes one length
/// byte L and L × 16 bytes of text such as `StreamTitle='Artist - Title';` padded with NULs.
struct IcyMetadataSplitter {
    let interval: Int
    private var audioLeft: Int
    private var metadataLeft = -1  // -1: the length byte comes next (when audioLeft is 0)
    private var metadata: [UInt8] = []

    init(interval: Int) {
        self.interval = interval
        audioLeft = interval
    }

    /// Feeds received bytes; audio goes to `audio` in order, each complete metadata block's title to `title`.
    mutating func feed(
        _ bytes: UnsafeRawBufferPointer, audio: (UnsafeRawBufferPointer) -> Void, title: (String) -> Void
    ) {
        var i = 0
        while i < bytes.count {
            if audioLeft > 0 {
                let n = min(audioLeft, bytes.count - i)
                audio(UnsafeRawBufferPointer(rebasing: bytes[i..<(i + n)]))
                audioLeft -= n
                i += n
            } else if metadataLeft < 0 {
                metadataLeft = Int(bytes[i]) * 16
                i += 1
                metadata.removeAll(keepingCapacity: true)
                if metadataLeft == 0 {
                    metadataLeft = -1
                    audioLeft = interval
                }
            } else {
                let n = min(metadataLeft, bytes.count - i)
                metadata += bytes[i..<(i + n)]
                metadataLeft -= n
                i += n
                if metadataLeft == 0 {
                    if let t = Self.streamTitle(metadata) { title(t) }
                    metadataLeft = -1
                    audioLeft = interval
                }
            }
        }
    }

    /// The text of `StreamTitle='…';` (up to the `';` before the next field or the last one: titles may hold quotes).
    /// UTF-8, else Latin-1.
    static func streamTitle(_ block: [UInt8]) -> String? {
        let bytes = Array(block.prefix { $0 != 0 })
        let text = String(bytes: bytes, encoding: .utf8) ?? String(bytes: bytes, encoding: .isoLatin1) ?? ""
        guard let start = text.firstRange(of: "StreamTitle='") else { return nil }
        let rest = text[start.upperBound...]
        let end = rest.firstRange(of: "';Stream")?.lowerBound ?? rest.ranges(of: "';").last?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
