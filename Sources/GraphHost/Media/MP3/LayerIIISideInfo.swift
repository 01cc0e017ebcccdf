/// The parts of a layer III frame's side information that say where its main data lies in the bit reservoir.
struct LayerIIISideInfo {
    /// How many bytes before this frame's main data area its main data begins (the bit reservoir).
    let mainDataBegin: Int
    /// Bits of main data of all granules and channels (the sum of part2_3_length).
    let mainDataBits: Int
    /// No field holds a value the standard forbids (big_values above 288, window switching with block type 0,
    /// Huffman table 4 or 14, which are not used).
    let isPlausible: Bool

    /// Reads the side information of the frame at `frame` (header first).
    init(_ frame: UnsafePointer<UInt8>, header: MPEGFrameHeader) {
        var bits = BitReader(frame + (header.hasCRC ? 6 : 4))
        let channels = header.isMono ? 1 : 2
        let granules: Int
        if header.version == .mpeg1 {
            mainDataBegin = bits.read(9)
            bits.skip(channels == 1 ? 5 : 3)  // private bits
            bits.skip(4 * channels)  // scfsi
            granules = 2
        } else {
            mainDataBegin = bits.read(8)
            bits.skip(channels)  // private bits
            granules = 1
        }
        var total = 0
        var plausible = true
        for _ in 0..<(granules * channels) {
            total += bits.read(12)  // part2_3_length
            if bits.read(9) > 288 { plausible = false }
            bits.skip(8)  // global_gain
            bits.skip(header.version == .mpeg1 ? 4 : 9)
            let tables: Int
            if bits.read(1) == 1 {  // window switching
                if bits.read(2) == 0 { plausible = false }
                bits.skip(1)  // mixed block
                tables = 2
            } else {
                tables = 3
            }
            for _ in 0..<tables {
                let table = bits.read(5)
                if table == 4 || table == 14 { plausible = false }  // unused Huffman tables
            }
            bits.skip(tables == 2 ? 9 : 4 + 3)  // subblock gains, or region counts
            bits.skip(header.version == .mpeg1 ? 3 : 2)
        }
        mainDataBits = total
        isPlausible = plausible
    }
}

/// Reads big-endian bit fields.
private struct BitReader {
    private let bytes: UnsafePointer<UInt8>
    private var position = 0

    init(_ bytes: UnsafePointer<UInt8>) { self.bytes = bytes }

    /// The next `count` bits (1 to 32); only the bytes they lie in are read.
    mutating func read(_ count: Int) -> Int {
        let end = position + count
        let last = (end - 1) >> 3
        var window = 0
        for byte in (position >> 3)...last { window = window << 8 | Int(bytes[byte]) }
        position = end
        return window >> ((last + 1) * 8 - end) & (1 << count - 1)
    }

    mutating func skip(_ count: Int) { position += count }
}
