import Glibc

/// Who may use the page's server: a request must carry the run's token (in the `token` query of the URL `run` prints,
/// or in the cookie that URL sets), name this server in its Host header (no DNS rebinding), and, when it carries an
/// Origin (a browser's cross-site request, every WebSocket), come from the page itself.
public struct WebAccess: Sendable {
    /// The random token the URL carries: 32 hexadecimal digits (128 bits from the kernel's random source).
    public let token: String
    /// The host names and addresses a Host header may name (with the server's port).
    public let hosts: Set<String>
    public let port: Int
    public static let cookieName = "graphhost_token"

    /// Why a request is refused: a status and a sentence for the body.
    public struct Refusal: Error, Equatable, Sendable {
        public var status: Int
        public var reason: String
    }

    public init(token: String = WebAccess.randomToken(), bindAddress: String, port: Int) {
        self.token = token
        self.port = port
        var hosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]
        if !["0.0.0.0", "::", "[::]"].contains(bindAddress) { hosts.insert(Self.bracketed(bindAddress)) }
        hosts.formUnion(Self.localAddresses(wildcard: ["0.0.0.0", "::", "[::]"].contains(bindAddress)))
        self.hosts = hosts
    }

    /// 128 random bits as 32 hexadecimal digits, from the system's cryptographically secure generator.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let word = generator.next()
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    /// Compares in time that depends only on the lengths, so the token cannot be guessed a character at a time.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return difference == 0
    }

    /// Checks a request: its Host header, its Origin if any, and the token from the query or the cookie.
    public func check(host: String?, origin: String?, queryToken: String?, cookie: String?) throws(Refusal) {
        guard let host, isOwnHost(host) else {
            throw Refusal(
                status: 421,
                reason: "the Host header \(host.map { "'\($0)'" } ?? "is missing and") does not name this server")
        }
        if let origin, !isOwnOrigin(origin) {
            throw Refusal(status: 403, reason: "requests from \(origin) are refused (another site)")
        }
        guard let given = queryToken ?? Self.cookieValue(cookie, name: Self.cookieName) else {
            throw Refusal(status: 403, reason: "no token: open the URL graphhost run printed")
        }
        guard Self.constantTimeEqual(given, token) else {
            throw Refusal(status: 403, reason: "wrong token: open the URL graphhost run printed")
        }
    }

    /// Whether `host` (a Host header: name or address, with or without the port) is this server.
    public func isOwnHost(_ host: String) -> Bool {
        let (name, hostPort) = Self.split(host.lowercased())
        return hosts.contains(name) && (hostPort == nil || hostPort == port)
    }

    /// Whether `origin` (scheme://host[:port]) is the page this server serves.
    public func isOwnOrigin(_ origin: String) -> Bool {
        guard origin.hasPrefix("http://") else { return false }
        let rest = String(origin.dropFirst("http://".count))
        guard !rest.contains("/") else { return false }
        let (name, originPort) = Self.split(rest.lowercased())
        return hosts.contains(name) && (originPort ?? 80) == port
    }

    /// The `Set-Cookie` value that keeps the token for the page's later requests.
    public var cookie: String { "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

    /// A cookie's value in a Cookie header (`a=1; b=2`).
    static func cookieValue(_ header: String?, name: String) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingSpaces() == name {
                return pair[1].trimmingSpaces()
            }
        }
        return nil
    }

    /// A host and its port: `[::1]:8080` → (`[::1]`, 8080), `localhost` → (`localhost`, nil).
    static func split(_ host: String) -> (String, Int?) {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return (host, nil) }
            let name = String(host[...close])
            let rest = host[host.index(after: close)...]
            return (name, rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? -1 : nil)
        }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return (host, nil) }
        return (String(parts[0]), Int(parts[1]) ?? -1)
    }

    static func bracketed(_ address: String) -> String {
        address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address.lowercased()
    }

    /// The machine's own addresses (for a server bound to every interface) and its host name.
    static func localAddresses(wildcard: Bool) -> [String] {
        guard wildcard else { return [] }
        var names: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count) == 0 {
            names.append(
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased())
        }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return names }
        defer { freeifaddrs(list) }
        var entry = list
        while let e = entry {
            if let address = e.pointee.ifa_addr, [AF_INET, AF_INET6].contains(Int32(address.pointee.sa_family)) {
                var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                let length = socklen_t(
                    Int32(address.pointee.sa_family) == AF_INET
                        ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
                if getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                    let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    // A link-local address carries its interface (fe80::1%eth0); a Host header cannot.
                    names.append(bracketed(String(text.split(separator: "%")[0])))
                }
            }
            entry = e.pointee.ifa_next
        }
        return names
    }
}
