import Glibc

/// Why a control socket (the command socket, OSC's UDP socket, an eventfd) could not be opened.
public enum SocketError: Error, CustomStringConvertible, Sendable {
    /// Another run listens on the socket's path.
    case taken(String)
    /// A system call failed: what was being done, and its errno.
    case system(String, errno: Int32)
    /// Anything else, in words (a port out of range, a name that does not resolve).
    case other(String)

    public var description: String {
        switch self {
        case .taken(let path): return "another graphhost is listening on \(path); choose another --name"
        case .system(let what, let code): return "\(what): \(String(cString: strerror(code)))"
        case .other(let message): return message
        }
    }
}
