import Glibc

/// Turns an RTP session's packets into interleaved Float32 at the session's rate. The session is locked to its sender:
/// the source address, port and SSRC of its first packet of the session's payload type and format (of an announced
/// session, the first from the announcement's address). A datagram that is no RTP packet is counted malformed; a packet
/// of another payload type, not whole frames, longer than the session's packets (`RTPSession.maxPacketFrames`) or
/// from anyone else is dropped and counted by reason. Another sender takes the session over once its sender has been
/// silent for `takeoverSeconds`, fading in as after a loss. Packets come in sequence order or are dropped (a late or
/// repeated one is counted, never played out of place). A gap in the sequence of up to a second is filled with the
/// last packet's audio fading to silence, and the packet after it fades in, so a loss is heard as a short dip, never
/// as a burst or a click; a longer gap starts the session afresh (the stream rebuffers), as does a session its
/// announcement moved. `resynchronise` puts frames back into the session or leaves some out (`JitterBufferKeeper`),
/// faded the same way.
final class RTPDecoder: MediaDecoder {
    private let source: RTPPacketSource
    /// The session of the packets played (an announced one may move or change its format).
    private var session: RTPSession?
    /// The source's count of sessions opened when `session` was taken.
    private var generation = 0
    private var packet = [UInt8](repeating: 0, count: 65536)
    /// The last packet played, as floats, and its frames (what a gap repeats).
    private var last: [Float] = []
    private var lastFrames = 0
    private var filled: [Float] = []
    private var expected: (sequence: UInt16, timestamp: UInt32, ssrc: UInt32)?
    /// The sender the session is locked to, and when its latest packet came (monotonic nanoseconds).
    private var sender: RTPSender?
    private var heard: UInt64 = 0
    /// How long a sender must have been silent before another takes the session over.
    static let takeoverSeconds = 1.0
    /// Late packets in a row: past a few dozen the sender has started over (with its old SSRC), and so does this.
    private var lateInARow = 0
    /// Frames of fade-in owed to the audio after a gap.
    private static let fadeInFrames = 64
    /// Frames to put back (positive) or leave out (negative) at the next packet, and frames still to leave out, in the
    /// session's frames.
    private var resync = 0
    private var skipping = 0

    init(source: RTPPacketSource) {
        self.source = source
        (session, generation, _) = source.current
    }

    var info: MediaInfo? {
        session.map {
            MediaInfo(
                codec: "rtp \($0.format.rawValue)", sampleRate: $0.rate, channels: $0.channels,
                bitRate: $0.rate * $0.channels * $0.format.bytesPerSample * 8)
        }
    }
    /// An announced session's name is its title.
    var tags: MediaTags? { source.announcedName.map { MediaTags(title: $0) } }
    var damage: StreamDamage { StreamDamage() }
    func seek(to seconds: Double) throws -> Double? { nil }

    func decodeNext(emit: Emit) throws -> Bool {
        let datagram = try packet.withUnsafeMutableBytes { try source.receive(into: $0) }
        var count = datagram.count
        guard count > 0 else { return false }
        let current = source.current
        guard let session = current.session else { return true }
        if session != self.session || current.generation != generation {
            self.session = session
            generation = current.generation
            expected = nil
            lastFrames = 0
            skipping = 0
            sender = nil
        }
        guard let header = RTPHeader(packet, count: &count) else {
            source.counters.update { $0.malformed += 1 }
            return true
        }
        let payload = count - header.payloadOffset
        guard header.payloadType == session.payloadType else {
            source.counters.update { $0.dropped.payloadType += 1 }
            return true
        }
        guard payload % session.frameBytes == 0 else {
            source.counters.update { $0.dropped.partialFrames += 1 }
            return true
        }
        var frames = payload / session.frameBytes
        guard frames <= session.maxPacketFrames else {
            source.counters.update { $0.dropped.oversized += 1 }
            return true
        }
        var fadeIn = false
        let from = RTPSender(from: datagram.from, ssrc: header.ssrc)
        let now = Self.monotonicNanoseconds()
        if from != sender {
            let silent = sender.map { _ in now &- heard >= UInt64(Self.takeoverSeconds * 1e9) } ?? true
            guard silent, frames > 0, current.origins?.contains(from.from.address) ?? true else {
                source.counters.update { $0.dropped.foreignSender += 1 }
                return true
            }
            if sender != nil {
                // A takeover is a discontinuity: nothing of the old sender is repeated, and the new one fades in.
                source.counters.update { $0.takeovers += 1 }
                fadeIn = true
                lastFrames = 0
                skipping = 0
            }
            sender = from
            expected = nil
            lateInARow = 0
        }
        heard = now
        guard frames > 0 else { return true }
        if let expected, expected.ssrc == header.ssrc {
            let ahead = Int(Int16(bitPattern: header.sequence &- expected.sequence))
            let missing = Int(Int32(bitPattern: header.timestamp &- expected.timestamp))
            if ahead < 0 && lateInARow < 50 {
                lateInARow += 1
                source.counters.update { $0.late += 1 }
                return true
            }
            if ahead > 0 {
                source.counters.update { $0.lost += ahead }
                if missing > 0 && missing <= session.rate {
                    // Frames being left out are taken from the gap first.
                    let fill = missing - min(skipping, missing)
                    skipping -= missing - fill
                    if fill > 0 {
                        try conceal(frames: fill, channels: session.channels, rate: session.rate, emit: emit)
                        source.counters.update { $0.concealedFrames += fill }
                    }
                    fadeIn = true
                }
            }
        }
        lateInARow = 0
        expected = (header.sequence &+ 1, header.timestamp &+ UInt32(frames), header.ssrc)
        source.counters.update { $0.received += 1 }
        var offset = header.payloadOffset
        if skipping > 0 {
            let skipped = min(skipping, frames)
            skipping -= skipped
            guard skipped < frames else { return true }
            offset += skipped * session.frameBytes
            frames -= skipped
            fadeIn = true
        }
        if resync > 0 {
            try conceal(frames: resync, channels: session.channels, rate: session.rate, emit: emit)
            source.counters.update { $0.insertedFrames += resync }
            fadeIn = true
        }
        convert(offset, frames: frames, session: session)
        if resync < 0 {
            // Frames are left out after this packet, which fades out.
            for f in 0..<frames {
                let gain = Float(frames - f) / Float(frames + 1)
                for c in 0..<session.channels { last[f * session.channels + c] *= gain }
            }
            skipping = -resync
            source.counters.update { $0.droppedFrames -= resync }
        }
        resync = 0
        if fadeIn {
            let n = min(Self.fadeInFrames, frames)
            for f in 0..<n {
                let gain = Float(f + 1) / Float(n + 1)
                for c in 0..<session.channels { last[f * session.channels + c] *= gain }
            }
        }
        try last.withUnsafeBufferPointer {
            try emit($0.baseAddress!, frames, ChannelLayout(unspecified: session.channels), session.rate)
        }
        return true
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Whether frames asked for by `resynchronise` are still to be put back or left out.
    var isResynchronising: Bool { resync != 0 || skipping > 0 }

    /// Puts `frames` frames back into the session (positive: the gap is filled as a lost packet's is) or leaves them
    /// out (negative: the packet before fades out and the audio after fades in), at the next packet.
    func resynchronise(by frames: Int) {
        resync = frames
        source.counters.update { $0.resyncs += 1 }
    }

    /// The payload at `offset` as floats in `last`.
    private func convert(_ offset: Int, frames: Int, session: RTPSession) {
        let samples = frames * session.channels
        if last.count < samples { last = [Float](repeating: 0, count: samples) }
        lastFrames = frames
        switch session.format {
        case .l16:
            for i in 0..<samples {
                let at = offset + 2 * i
                last[i] = Float(Int16(bitPattern: UInt16(packet[at]) << 8 | UInt16(packet[at + 1]))) / 32768
            }
        case .l24:
            for i in 0..<samples {
                let at = offset + 3 * i
                let value = Int32(
                    bitPattern: UInt32(packet[at]) << 24 | UInt32(packet[at + 1]) << 16 | UInt32(packet[at + 2]) << 8)
                last[i] = Float(value >> 8) / 8_388_608
            }
        }
    }

    /// `frames` frames in place of lost packets (or put back): the last packet again and again, fading out over one
    /// packet's length.
    private func conceal(frames: Int, channels: Int, rate: Int, emit: Emit) throws {
        if filled.count < frames * channels { filled = [Float](repeating: 0, count: frames * channels) }
        let fade = max(1, min(frames, lastFrames))
        for f in 0..<frames {
            let gain = f < fade ? Float(fade - f) / Float(fade + 1) : 0
            for c in 0..<channels {
                filled[f * channels + c] = lastFrames > 0 ? gain * last[(f % lastFrames) * channels + c] : 0
            }
        }
        try filled.withUnsafeBufferPointer {
            try emit($0.baseAddress!, frames, ChannelLayout(unspecified: channels), rate)
        }
    }
}

/// Who sends an RTP session: where its packets come from and their SSRC.
struct RTPSender: Equatable {
    /// An IPv4 address (network order) and port (host order).
    struct Address: Equatable {
        var address: UInt32
        var port: UInt16
    }

    var from: Address
    var ssrc: UInt32
}

extension RTPSender.Address {
    init(_ socketAddress: sockaddr_in) {
        address = socketAddress.sin_addr.s_addr
        port = UInt16(bigEndian: socketAddress.sin_port)
    }
}

/// The fixed part of an RTP header (RFC 3550) and where the payload starts: after the CSRCs and any extension, and
/// before any padding (which the count excludes).
struct RTPHeader {
    var payloadType: Int
    var sequence: UInt16
    var timestamp: UInt32
    var ssrc: UInt32
    var payloadOffset: Int

    init?(_ bytes: [UInt8], count: inout Int) {
        guard count >= 12, bytes[0] >> 6 == 2 else { return nil }
        func word(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        payloadType = Int(bytes[1] & 0x7f)
        sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        timestamp = word(4)
        ssrc = word(8)
        var offset = 12 + 4 * Int(bytes[0] & 0x0f)
        if bytes[0] & 0x10 != 0 {
            guard count >= offset + 4 else { return nil }
            offset += 4 + 4 * Int(UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3]))
        }
        if bytes[0] & 0x20 != 0 {
            let padding = Int(bytes[count - 1])
            guard padding > 0, count - padding >= offset else { return nil }
            count -= padding
        }
        guard count >= offset else { return nil }
        payloadOffset = offset
    }
}
