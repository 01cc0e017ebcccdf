import FoundationEssentials
import Glibc

/// An RTP session: `rtp://ADDRESS:PORT?format=L16&rate=48000&channels=2&ptime=4`. Received, ADDRESS is a local
/// address to bind (0.0.0.0 for any) or an IPv4 multicast group to join; sent, the destination. The payload is linear
/// PCM, big-endian: L16 or L24, as PipeWire's module-rtp-sink sends it (whose defaults the query's defaults are);
/// `ptime` is the milliseconds of audio a packet carries; `session` the name a sent session is announced under (SAP),
/// which a receiver finds it by (`sap://?session=NAME`); `clock` whether a receiver follows the sender's clock; `pt`
/// the payload type a receiver takes (127, PipeWire's).
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
    public var ptime: Int
    /// The RTP payload type of the session's packets (received; PipeWire's RTP sink sends 127).
    public var payloadType = 127
    /// The name the session is announced under (nil: "graphhost ADDRESS:PORT").
    public var name: String?
    /// Received: whether the sender's clock is followed (`clock=follow`, the default: `ClockFollower`) or taken to be
    /// the graph's own (`clock=shared`, as with a common PTP clock: never resampled).
    public var followsClock = true
    /// Whether `rate` and `channels` were given (a sender takes the graph's, and refuses others).
    public var givesRate = false
    public var givesChannels = false
    /// Whether `ptime` was given (a receiver then takes no longer packets).
    public var givesPtime = false

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
        ptime = 4
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
                givesRate = true
            case "channels":
                guard let c = Int(value), (1...8).contains(c) else { throw bad("channels '\(value)': use 1…8") }
                channels = c
                givesChannels = true
            case "ptime":
                guard let t = Int(value), (1...20).contains(t) else { throw bad("ptime '\(value)': use 1…20 ms") }
                ptime = t
                givesPtime = true
            case "pt":
                guard let t = Int(value), (0...127).contains(t) else { throw bad("pt '\(value)': use 0…127") }
                payloadType = t
            case "clock":
                guard let follows = Self.clockChoice(value) else { throw bad("clock '\(value)': use follow or shared") }
                followsClock = follows
            case "session":
                guard !value.isEmpty, !value.contains(where: { $0 == "\"" || $0 == "\\" || $0.isNewline }) else {
                    throw bad("session '\(value)': give a name without quotes, backslashes or line breaks")
                }
                name = value
            default:
                throw bad("unknown parameter '\(item.name)' (format, rate, channels, ptime, pt, session, clock)")
            }
        }
    }
}

extension RTPSession {
    /// `clock=follow` (true) or `clock=shared` (false); nil for anything else.
    static func clockChoice(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "follow": true
        case "shared": false
        default: nil
        }
    }

    /// The most frames a received packet may carry: `ptime` and a millisecond more (a sender may round its packet time
    /// down) when the URL gives it, else `unknownPtimeLimit` ms, the longest packets PipeWire's RTP sink sends (its
    /// default `sess.max-ptime`) and the longest `ptime` takes.
    var maxPacketFrames: Int { ((givesPtime ? ptime + 1 : Self.unknownPtimeLimit) * rate + 999) / 1000 }

    static let unknownPtimeLimit = 20

    /// PipeWire's sample format for the payload.
    var pipewireFormat: String { format == .l16 ? "S16BE" : "S24BE" }

    /// The name a sent session is announced under.
    var announcedName: String { name ?? "graphhost \(address):\(port)" }

    /// The node.name of the RTP sink graphhost loads to send this session.
    var sinkNodeName: String { "graphhost-rtp-\(address)-\(port)" }

    /// The arguments of libpipewire-module-rtp-sink sending this session at `rate` with `channels`: unicast, with
    /// its SAP announcements to the destination too (no multicast route needed), packets of `ptime` ms, and a sink
    /// node others can play to.
    func sinkArguments(rate: Int, channels: Int) -> String {
        "{ destination.ip = \(address) destination.port = \(port) sap.ip = \(address) "
            + "audio.format = \(pipewireFormat) audio.rate = \(rate) audio.channels = \(channels) "
            + "sess.min-ptime = \(ptime) sess.max-ptime = \(ptime) sess.name = \"\(announcedName)\" "
            + "node.name = \"\(sinkNodeName)\" media.class = Audio/Sink }"
    }
}
