import Foundation

/// Encodes 8-bit RGB pixels as a PNG file (zlib stream of stored deflate blocks, CRC-32, Adler-32).
///
/// No compression is performed: the image data is wrapped in "stored" deflate blocks,
/// which every PNG decoder accepts. Each scanline uses filter type 0 (None).
public struct PNGEncoder {
    /// Returns the bytes of a PNG file for a `width` x `height` image.
    /// `rgb` holds row-major pixels, 3 bytes each (`rgb.count == width * height * 3`).
    public static func encode(width: Int, height: Int, rgb: [UInt8]) -> [UInt8] {
        precondition(width > 0 && height > 0, "PNG dimensions must be positive")
        precondition(rgb.count == width * height * 3, "rgb.count must equal width*height*3")

        // Raw scanlines: a filter byte (0) followed by the row's pixel bytes.
        let rowBytes = width * 3
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * height)
        for y in 0..<height {
            raw.append(0)
            raw.append(contentsOf: rgb[(y * rowBytes)..<((y + 1) * rowBytes)])
        }

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

        var header = [UInt8]()
        appendBE32(UInt32(width), to: &header)
        appendBE32(UInt32(height), to: &header)
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type 2 (RGB), deflate, no filter, no interlace
        appendChunk("IHDR", header, to: &png)
        appendChunk("IDAT", zlibStored(raw), to: &png)
        appendChunk("IEND", [], to: &png)
        return png
    }

    /// Wraps `data` in a zlib stream made of stored (uncompressed) deflate blocks.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]  // CMF (deflate, 32K window), FLG (no dict, check bits valid)
        out.reserveCapacity(data.count + data.count / 65535 * 5 + 16)
        var offset = 0
        repeat {
            let length = min(65535, data.count - offset)
            let isFinal = offset + length == data.count
            out.append(isFinal ? 1 : 0)  // BFINAL bit, BTYPE = 00 (stored)
            out += [UInt8(length & 0xFF), UInt8(length >> 8),
                    UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out.append(contentsOf: data[offset..<(offset + length)])
            offset += length
        } while offset < data.count
        appendBE32(adler32(data), to: &out)
        return out
    }

    /// Adler-32 checksum as used by zlib.
    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var index = 0
        while index < data.count {
            // 5552 is the largest block that cannot overflow 32-bit sums before the modulo.
            let end = min(index + 5552, data.count)
            for i in index..<end {
                a &+= UInt32(data[i])
                b &+= a
            }
            a %= 65521
            b %= 65521
            index = end
        }
        return (b << 16) | a
    }

    /// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) lookup table.
    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// CRC-32 over the concatenation of `parts`.
    static func crc32(_ parts: [UInt8]...) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for part in parts {
            for byte in part { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        }
        return c ^ 0xFFFF_FFFF
    }

    private static func appendBE32(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// Appends a PNG chunk: length, type, data, CRC of type + data.
    private static func appendChunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        appendBE32(UInt32(data.count), to: &out)
        out += typeBytes
        out += data
        appendBE32(crc32(typeBytes, data), to: &out)
    }
}
