import FoundationEssentials
import Glibc

/// Where and how an RTP stream arrives: `rtp://ADDRESS:PORT?format=L16&rate=48000&channels=2`. ADDRESS is a local
/// address to bind (0.0.0.0 for any) or an IPv4 multicast group to join. The payload is linear PCM, big-endian: L16 or
/// L24, as PipeWire's module-rtp-sink sends it (whose defaults the query's defaults are).
public struct RTPSession: Equatable, Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case l16 = "L16"
        case l24 = "L24"

        public var bytesPerSample: Int { self == .l16 ? 2 : 3 }
    }

    public var address: String
    public var port: Int
    public var format: Format
    public var rate: Int
    public var channels: Int

    /// Bytes of one frame of payload.
    public var frameBytes: Int { format.bytesPerSample * channels }

    /// Parses an `rtp://` URL; the error names what is wrong.
    public init(url: String) throws {
        func bad(_ why: String) -> StreamError { .unreadable(url, why) }
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "rtp" else {
            throw bad("expected rtp://ADDRESS:PORT")
        }
        guard let host = components.host, !host.isEmpty else { throw bad("no address (rtp://ADDRESS:PORT)") }
        var probe = in_addr()
        guard inet_pton(AF_INET, host, &probe) == 1 else {
            throw bad("'\(host)' is not an IPv4 address (a local address, 0.0.0.0, or a multicast group)")
        }
        guard let port = components.port, (1...65535).contains(port) else {
            throw bad("no port, or one outside 1…65535 (rtp://ADDRESS:PORT)")
        }
        address = host
        self.port = port
        format = .l16
        rate = 48000
        channels = 2
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "format":
                guard let f = Format(rawValue: value.uppercased()) else {
                    throw bad("format '\(value)': use L16 or L24")
                }
                format = f
            case "rate":
                guard let r = Int(value), (8000...384_000).contains(r) else {
                    throw bad("rate '\(value)': use a sample rate within 8000…384000 Hz")
                }
                rate = r
            case "channels":
                guard let c = Int(value), (1...8).contains(c) else { throw bad("channels '\(value)': use 1…8") }
                channels = c
            default:
                throw bad("unknown parameter '\(item.name)' (format, rate, channels)")
            }
        }
    }
}
