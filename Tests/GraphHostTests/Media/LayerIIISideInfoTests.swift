import XCTest

@testable import GraphHost

/// `LayerIIISideInfo` reads its fields a byte window at a time; these tests read random side information bit by bit,
/// field by field as ISO 11172-3 and 13818-3 lay it out, and expect the same main data offset, length and verdict.
final class LayerIIISideInfoTests: XCTestCase {
    /// The header bytes of layer III frames: MPEG-1 stereo and mono, MPEG-2 stereo and mono, with and without CRC.
    private let headers: [[UInt8]] = [
        [0xFF, 0xFB, 0x90, 0x00], [0xFF, 0xFB, 0x90, 0xC0], [0xFF, 0xF3, 0x90, 0x00], [0xFF, 0xF3, 0x90, 0xC0],
        [0xFF, 0xFA, 0x90, 0x00], [0xFF, 0xF2, 0x90, 0xC0],
    ]

    func testFieldsMatchABitByBitReading() throws {
        var generator = SystemRandomNumberGenerator()
        var implausible = 0
        for header in headers {
            for _ in 0..<2000 {
                let frame = header + (0..<42).map { _ in UInt8.random(in: 0...255, using: &generator) }
                try frame.withUnsafeBufferPointer { bytes in
                    let parsed = try XCTUnwrap(MPEGFrameHeader(bytes.baseAddress!))
                    let side = LayerIIISideInfo(bytes.baseAddress!, header: parsed)
                    let expected = Self.reference(Array(bytes), header: parsed)
                    XCTAssertEqual(side.mainDataBegin, expected.begin, "\(frame)")
                    XCTAssertEqual(side.mainDataBits, expected.bits, "\(frame)")
                    XCTAssertEqual(side.isPlausible, expected.plausible, "\(frame)")
                    if !expected.plausible { implausible += 1 }
                }
            }
        }
        XCTAssertGreaterThan(implausible, 0)
        XCTAssertLessThan(implausible, headers.count * 2000)
    }

    /// The side information read one bit at a time.
    private static func reference(_ bytes: [UInt8], header: MPEGFrameHeader) -> (begin: Int, bits: Int, plausible: Bool)
    {
        var position = (header.hasCRC ? 6 : 4) * 8
        func read(_ count: Int) -> Int {
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position / 8] >> (7 - position % 8) & 1)
                position += 1
            }
            return value
        }
        let mpeg1 = header.version == .mpeg1
        let channels = header.isMono ? 1 : 2
        let begin = read(mpeg1 ? 9 : 8)
        _ = read(mpeg1 ? (channels == 1 ? 5 : 3) + 4 * channels : channels)
        var bits = 0
        var plausible = true
        for _ in 0..<((mpeg1 ? 2 : 1) * channels) {
            bits += read(12)
            if read(9) > 288 { plausible = false }
            _ = read(8 + (mpeg1 ? 4 : 9))
            var tables = 3
            if read(1) == 1 {
                if read(2) == 0 { plausible = false }
                _ = read(1)
                tables = 2
            }
            for _ in 0..<tables where [4, 14].contains(read(5)) { plausible = false }
            _ = read((tables == 2 ? 9 : 7) + (mpeg1 ? 3 : 2))
        }
        return (begin, bits, plausible)
    }
}
