import FoundationEssentials
import Glibc

/// A `sap://` URL: `sap://[ADDRESS][:PORT][?session=NAME]`. Session announcements (SAP, as PipeWire's RTP sink sends
/// them) are listened for on PORT (9875, SAP's own) at ADDRESS: a multicast group to join, or a local address; by
/// default every local address, joining PipeWire's group 224.0.0.56 and SAP's 224.2.127.254 where the network has a
/// route for them. The session named NAME (the first announced without one) is then received as its `rtp://` session
/// with the format its description gives.
public struct SAPQuery: Equatable, Sendable {
    /// The address to listen at (nil: every local address, joining `defaultGroups`).
    public var address: String?
    public var port: Int
    /// The session to play (nil: the first announced).
    public var sessionName: String?
    /// Whether the sender's clock is followed (`clock=follow`, the default) or shared (`clock=shared`).
    public var followsClock = true

    public static let defaultPort = 9875
    public static let defaultGroups = ["224.0.0.56", "224.2.127.254"]

    /// Parses a `sap://` URL; the error names what is wrong.
    public init(url: String) throws {
        func bad(_ why: String) -> StreamError { .unreadable(url, why) }
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "sap" else {
            throw bad("expected sap://[ADDRESS][:PORT][?session=NAME]")
        }
        if let host = components.host, !host.isEmpty {
            var probe = in_addr()
            guard inet_pton(AF_INET, host, &probe) == 1 else {
                throw bad("'\(host)' is not an IPv4 address (a multicast group or a local address)")
            }
            address = host
        }
        port = components.port ?? Self.defaultPort
        guard (1...65535).contains(port) else { throw bad("port \(port) is outside 1…65535") }
        for item in components.queryItems ?? [] {
            switch item.name {
            case "session":
                guard let name = item.value, !name.isEmpty else { throw bad("session: give the session's name") }
                sessionName = name
            case "clock":
                guard let follows = RTPSession.clockChoice(item.value ?? "") else {
                    throw bad("clock '\(item.value ?? "")': use follow or shared")
                }
                followsClock = follows
            default: throw bad("unknown parameter '\(item.name)' (session, clock)")
            }
        }
    }
}
