/// What a carried-out control command answers.
public enum ControlResult: Sendable {
    /// A change carried out: the command, when it arrived (monotonic nanoseconds) and how many render messages the
    /// engine had applied before it (a client waits for the count to pass to know the change is heard).
    case done(Command, arrival: Int, appliedBefore: Int)
    case status(RunStatus)
    case listing(NodeListing)
    /// Every command's help, or one command's (`detailed`: with its arguments and example).
    case help([CommandHelp], detailed: Bool)
    /// The run is stopping.
    case quitting
}

extension ControlResult {
    /// The socket's reply: `{"ok":true, ...}` with the result's members.
    public var reply: String {
        var members: [(key: String, value: JSONValue)] = [("ok", .bool(true))]
        switch self {
        case .done(let request, let arrival, let before):
            members += [
                ("command", .string(request.description)), ("arrival", .number(arrival)),
                ("appliedBefore", .number(before)),
            ]
        case .status(let status): members.append(("status", status.json))
        case .listing(let listing): members += listing.json
        case .help(let entries, let detailed):
            members.append(("help", .array(entries.map { $0.json(detailed: detailed) })))
        case .quitting: break
        }
        return JSONValue.object(members).compact
    }
}

extension ControlError {
    /// The socket's reply to a command that was not carried out.
    public var reply: String { Self.reply(description) }

    /// `{"ok":false,"error":MESSAGE}`.
    public static func reply(_ message: String) -> String {
        JSONValue.object([("ok", .bool(false)), ("error", .string(message))]).compact
    }
}

extension CommandHelp {
    func json(detailed: Bool) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("command", .string(verb)), ("synopsis", .string(synopsis)), ("summary", .string(summary)),
        ]
        if detailed {
            members.append(
                (
                    "arguments",
                    .array(arguments.map { .object([("name", .string($0.name)), ("meaning", .string($0.meaning))]) })
                ))
            members.append(("example", .string(example)))
        }
        return .object(members)
    }
}
