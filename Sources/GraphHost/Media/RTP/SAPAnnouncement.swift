/// A Session Announcement Protocol message (RFC 2974) carrying an SDP description (RFC 4566) of an RTP audio session,
/// as PipeWire's RTP sink sends every few seconds, and a deletion when it stops: the session's name (`s=`), and where
/// and how it is sent (`c=`, `m=audio`, `a=rtpmap`, `a=ptime`). Only linear PCM (L16, L24) is taken; an encrypted,
/// compressed or IPv6 announcement, or another payload, is not one of ours (nil).
struct SAPAnnouncement: Equatable {
    /// The session's name (SDP `s=`).
    var name: String
    /// Where the session is received and how its payload is laid out (the address: the destination it is sent to).
    var session: RTPSession
    /// A deletion: the sender stopped.
    var isDeletion: Bool
    /// The originating source the header gives, an IPv4 address in network order (0: none given).
    var origin: UInt32

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 8 else { return nil }
        let flags = bytes[0]
        // Version 1; IPv4 origin; neither encrypted nor compressed.
        guard flags >> 5 == 1, flags & 0x10 == 0, flags & 0x03 == 0 else { return nil }
        isDeletion = flags & 0x04 != 0
        origin = UInt32(bigEndian: (4..<8).reduce(0) { $0 << 8 | UInt32(bytes[$1]) })
        var at = 8 + 4 * Int(bytes[1])
        guard at < bytes.count else { return nil }
        let rest = String(decoding: bytes[at...], as: UTF8.self)
        var text = Substring(rest)
        if !text.hasPrefix("v=0") {
            // A payload type: "application/sdp" and its terminating zero.
            guard let zero = bytes[at...].firstIndex(of: 0),
                String(decoding: bytes[at..<zero], as: UTF8.self) == "application/sdp"
            else { return nil }
            at = zero + 1
            text = Substring(String(decoding: bytes[at...], as: UTF8.self))
        }
        guard let parsed = Self.parseSDP(text) else { return nil }
        (name, session) = parsed
    }

    /// The name and session an SDP description gives, or nil when it is not linear PCM audio over RTP/AVP on IPv4.
    static func parseSDP(_ text: Substring) -> (String, RTPSession)? {
        var name: String?
        var address: String?
        var port: Int?
        var payload: String?
        var maps: [String: (encoding: String, rate: Int, channels: Int)] = [:]
        var ptime: Int?
        for line in text.split(whereSeparator: \.isNewline) {
            let value = line.dropFirst(2)
            switch line.prefix(2) {
            case "s=": name = String(value)
            case "c=":
                let parts = value.split(separator: " ")
                guard parts.count == 3, parts[0] == "IN", parts[1] == "IP4" else { return nil }
                address = String(parts[2].split(separator: "/").first ?? "")
            case "m=":
                let parts = value.split(separator: " ")
                guard parts.count >= 4, parts[0] == "audio", parts[2] == "RTP/AVP" else { return nil }
                port = Int(parts[1])
                payload = String(parts[3])
            case "a=":
                if value.hasPrefix("rtpmap:") {
                    let parts = value.dropFirst("rtpmap:".count).split(separator: " ")
                    guard parts.count == 2 else { continue }
                    let format = parts[1].split(separator: "/")
                    guard format.count >= 2, let rate = Int(format[1]) else { continue }
                    maps[String(parts[0])] = (
                        String(format[0]).uppercased(), rate, format.count > 2 ? Int(format[2]) ?? 1 : 1
                    )
                } else if value.hasPrefix("ptime:") {
                    ptime = Int(value.dropFirst("ptime:".count))
                }
            default: continue
            }
        }
        guard let name, let address, let port, let payload, let map = maps[payload],
            let format = RTPSession.Format(rawValue: map.encoding),
            var session = try? RTPSession(
                url: "rtp://\(address):\(port)?rate=\(map.rate)&channels=\(map.channels)&format=\(format.rawValue)")
        else { return nil }
        if let ptime, (1...20).contains(ptime) { session.ptime = ptime }
        if let type = Int(payload), (0...127).contains(type) { session.payloadType = type }
        return (name, session)
    }
}
