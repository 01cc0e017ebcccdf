import Foundation

/// A PNG file's chunks, read to check what a tool wrote into them: the image's size (IHDR) and its tEXt entries.
/// Every chunk's CRC is checked, so a chunk written with a wrong one is an error, as it is to a PNG reader.
struct PNGChunks {
    var width: Int
    var height: Int
    /// tEXt keyword → text (Latin-1).
    var text: [String: String]

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.starts(with: Self.signature) else { throw Malformed(description: "no PNG signature") }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var (width, height, text, at) = (0, 0, [String: String](), 8)
        while at + 12 <= bytes.count {
            let length = word(at)
            guard at + 12 + length <= bytes.count else {
                throw Malformed(description: "the chunk at byte \(at) runs past the end")
            }
            let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            let body = Array(bytes[at + 8..<at + 8 + length])
            guard Self.crc32(Array(bytes[at + 4..<at + 8]) + body) == UInt32(word(at + 8 + length)) else {
                throw Malformed(description: "the \(type) chunk at byte \(at) has a wrong CRC")
            }
            switch type {
            case "IHDR" where length >= 8: (width, height) = (word(at + 8), word(at + 12))
            case "tEXt":
                if let zero = body.firstIndex(of: 0) {
                    let latin1 = { (part: ArraySlice<UInt8>) in String(part.map { Character(Unicode.Scalar($0)) }) }
                    text[latin1(body[..<zero])] = latin1(body[(zero + 1)...])
                }
            case "IEND":
                (self.width, self.height, self.text) = (width, height, text)
                return
            default: break
            }
            at += 12 + length
        }
        throw Malformed(description: "no IEND chunk")
    }

    /// CRC-32 (ISO 3309, as PNG and zlib compute it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
