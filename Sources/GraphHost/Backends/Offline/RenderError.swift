/// Why an offline render stopped or did not start.
public enum RenderError: Error, CustomStringConvertible, Sendable {
    /// A timed command (`--at`) that cannot apply, with the time it was for (seconds).
    case command(seconds: Double, request: Command, ControlError)
    /// Nothing ends the render: no stream, or a looping one, and no duration.
    case endless
    /// SIGINT or SIGTERM arrived.
    case interrupted

    public var description: String {
        switch self {
        case .command(let seconds, let request, let error):
            return "at \(Format.number(seconds)) s, '\(request)': \(error)"
        case .endless: return "this graph never ends by itself (no stream, or a looping stream): give --duration"
        case .interrupted: return "interrupted; no file written"
        }
    }
}
