/// The 4-byte header of an MPEG-1, -2 or -2.5 audio frame (layers I, II, III) and what follows from it.
struct MPEGFrameHeader {
    enum Version { case mpeg1, mpeg2, mpeg25 }

    let version: Version
    let layer: Int
    let sampleRate: Int
    /// Bytes of the whole frame, header included.
    let length: Int
    let isMono: Bool
    /// A CRC-16 follows the header.
    let hasCRC: Bool
    /// Bytes of layer III side information (0 for layers I and II).
    let sideInfoLength: Int
    /// The fields that stay the same from frame to frame of one stream: sync, version, layer, sample rate (the CRC
    /// flag may differ between a LAME tag frame and the audio frames).
    let streamKey: UInt32

    /// Bytes before the main data: header, CRC, side information.
    var prefixLength: Int { 4 + (hasCRC ? 2 : 0) + sideInfoLength }

    /// Audio frames (samples per channel) the frame decodes to.
    var samplesPerFrame: Int { layer == 1 ? 384 : layer == 3 && version != .mpeg1 ? 576 : 1152 }

    /// What four bytes hold: a frame header, a free-format header (its length is not in the header), or neither.
    enum Reading {
        case header(MPEGFrameHeader)
        case freeFormat, none
    }

    /// Parses `bytes[0..<4]`; nil for anything that is not a valid header with a known bitrate.
    init?(_ bytes: UnsafePointer<UInt8>) {
        guard case .header(let header) = Self.read(bytes) else { return nil }
        self = header
    }

    static func read(_ b: UnsafePointer<UInt8>) -> Reading {
        guard b[0] == 0xFF, b[1] & 0xE0 == 0xE0 else { return .none }
        let version: Version
        switch (b[1] >> 3) & 3 {
        case 3: version = .mpeg1
        case 2: version = .mpeg2
        case 0: version = .mpeg25
        default: return .none
        }
        let layer = 4 - Int((b[1] >> 1) & 3)
        let bitrateIndex = Int(b[2] >> 4)
        let rateIndex = Int((b[2] >> 2) & 3)
        guard layer != 4, bitrateIndex != 15, rateIndex != 3 else { return .none }
        guard bitrateIndex != 0 else { return .freeFormat }
        let bitrate = Self.kilobits(version: version, layer: layer)[bitrateIndex] * 1000
        let sampleRate = [44100, 48000, 32000][rateIndex] / (version == .mpeg1 ? 1 : version == .mpeg2 ? 2 : 4)
        let padding = Int((b[2] >> 1) & 1)
        let length: Int
        switch layer {
        case 1: length = (12 * bitrate / sampleRate + padding) * 4
        case 3 where version != .mpeg1: length = 72 * bitrate / sampleRate + padding
        default: length = 144 * bitrate / sampleRate + padding
        }
        let isMono = b[3] >> 6 == 3
        let sideInfo = layer != 3 ? 0 : version == .mpeg1 ? (isMono ? 17 : 32) : (isMono ? 9 : 17)
        let key = UInt32(b[0]) << 24 | UInt32(b[1] & 0xFE) << 16 | UInt32(b[2] & 0x0C) << 8
        return .header(
            MPEGFrameHeader(
                version: version, layer: layer, sampleRate: sampleRate, length: length,
                isMono: isMono, hasCRC: b[1] & 1 == 0, sideInfoLength: sideInfo, streamKey: key))
    }

    private init(
        version: Version, layer: Int, sampleRate: Int, length: Int, isMono: Bool, hasCRC: Bool,
        sideInfoLength: Int, streamKey: UInt32
    ) {
        self.version = version
        self.layer = layer
        self.sampleRate = sampleRate
        self.length = length
        self.isMono = isMono
        self.hasCRC = hasCRC
        self.sideInfoLength = sideInfoLength
        self.streamKey = streamKey
    }

    /// Bitrates in kbit/s by bitrate index (ISO 11172-3 and 13818-3).
    private static func kilobits(version: Version, layer: Int) -> [Int] {
        switch (version == .mpeg1, layer) {
        case (true, 1): return [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): return [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): return [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 1): return [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        case (false, _): return [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
    }

    /// The CRC-16 (polynomial 0x8005, initial 0xFFFF) a layer III frame carries: over header bytes 2–3 and the side
    /// information.
    static func crc(_ frame: UnsafePointer<UInt8>, sideInfoLength: Int) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        func add(_ byte: UInt8) {
            for bit in (0..<8).reversed() {
                let feedback = (crc >> 15) ^ UInt16((byte >> UInt8(bit)) & 1)
                crc <<= 1
                if feedback != 0 { crc ^= 0x8005 }
            }
        }
        add(frame[2])
        add(frame[3])
        for i in 0..<sideInfoLength { add(frame[6 + i]) }
        return crc
    }
}
