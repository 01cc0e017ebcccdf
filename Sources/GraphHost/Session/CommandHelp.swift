/// One verb of the live-control language as people read it: its form, what it does, its arguments and an example.
/// `all` is the one list of verbs: completion, `help`, `ctl --help` and the parser's error messages read it.
public struct CommandHelp: Sendable, Equatable {
    public let verb: String
    /// The form, e.g. `preset NODE NAME|INDEX`.
    public let synopsis: String
    public let summary: String
    /// Each argument in the synopsis with what it is.
    public let arguments: [Argument]
    public let example: String

    /// An argument's name as the synopsis writes it and what it takes.
    public struct Argument: Sendable, Equatable {
        public let name: String
        public let meaning: String
    }

    init(_ synopsis: String, _ summary: String, _ arguments: [(String, String)] = [], example: String? = nil) {
        self.synopsis = synopsis
        verb = String(synopsis.prefix { $0 != " " })
        self.summary = summary
        self.arguments = arguments.map { Argument(name: $0.0, meaning: $0.1) }
        self.example = example ?? synopsis
    }

    private static let node = ("NODE", "a node id, as `list` shows it (a node inside a chain: CHAIN-NODE/ID)")
    private static let swap = (
        "spillover|crossfade",
        "how the old graph ends: its tails ring out, or a crossfade (default: the graph's \"swap\")"
    )

    public static let all: [CommandHelp] = [
        CommandHelp(
            "preset NODE NAME|INDEX", "Switches a node to one of its presets.",
            [node, ("NAME|INDEX", "the preset's name (it may contain spaces) or its number in `list`")],
            example: "preset eq Bass Booster"),
        CommandHelp(
            "set NODE PARAM VALUE|LABEL", "Sets a parameter, smoothed so that it does not click.",
            [
                node, ("PARAM", "a parameter of the node, as `list` shows it (e.g. volume, band.3, preamp)"),
                ("VALUE|LABEL", "a number within the parameter's range, or one of its labels (on/off for a toggle)"),
            ],
            example: "set mix volume 0.5"),
        CommandHelp(
            "bypass NODE on|off", "Passes a node's input through unchanged, or puts the node back.",
            [node, ("on|off", "on bypasses the node")], example: "bypass eq on"),
        CommandHelp(
            "seek NODE SECONDS", "Moves a stream to a time in its media.",
            [node, ("SECONDS", "the time from the media's start, in seconds")], example: "seek song 30"),
        CommandHelp(
            "chain NODE NAME [spillover|crossfade]", "Swaps a chain node to another of the graph's chains.",
            [("NODE", "a chain node's id"), ("NAME", "a chain of the graph's \"chains\""), swap],
            example: "chain fx bright"),
        CommandHelp(
            "load GRAPH [spillover|crossfade]",
            "Swaps the whole graph for another graph file; nodes that stay alike keep playing.",
            [("GRAPH", "a graph JSON file (a relative path starts from the folder graphhost runs in)"), swap],
            example: "load other.json crossfade"),
        CommandHelp(
            "save GRAPH", "Writes the live graph, every setting as it is heard now, to a graph file.",
            [("GRAPH", "the graph JSON file to write")], example: "save tweaked.json"),
        CommandHelp(
            "learn NODE PARAM", "Binds the next control change on the graph's MIDI control port to a parameter.",
            [node, ("PARAM", "a parameter of the node")], example: "learn eq preamp"),
        CommandHelp(
            "meter NODE on|off", "Turns a node's level meter on or off; `status` shows the levels of those on.",
            [node, ("on|off", "on meters the node's output: peak, held peak, RMS over 300 ms, clips")],
            example: "meter eq on"),
        CommandHelp(
            "tempo BPM", "Sets the transport's tempo; plugins that follow the host's tempo hear it.",
            [("BPM", "beats per minute, 1…999")], example: "tempo 128"),
        CommandHelp("pause", "Pauses the graph; streams keep their place."),
        CommandHelp("play", "Plays the graph again after pause."),
        CommandHelp(
            "status",
            "Shows the position, streams, inputs, meters, latency and counters (`status --json`: the JSON)."),
        CommandHelp("list", "Lists the nodes with their parameters, ranges and presets (`list --json`: the JSON)."),
        CommandHelp(
            "help [COMMAND]", "Lists the commands, or shows one command's usage, arguments and an example.",
            [("COMMAND", "a command's name")], example: "help preset"),
        CommandHelp("quit", "Stops playing and ends the run."),
    ]

    /// The verbs, in the order `help` lists them.
    public static var verbs: [String] { all.map(\.verb) }

    /// The help of `verb`; an error naming the known verbs when there is no such command.
    public static func named(_ verb: String) throws(CommandError) -> CommandHelp {
        guard let help = all.first(where: { $0.verb == verb }) else {
            throw CommandError("unknown command '\(verb)'; commands: \(verbs.joined(separator: ", "))")
        }
        return help
    }

    /// The forms of `verbs` (all when nil), comma-separated, for errors and `ctl --help`.
    public static func usage(_ verbs: [String]? = nil) -> String {
        all.filter { verbs?.contains($0.verb) ?? true }.map { $0.synopsis }.joined(separator: ", ")
    }
}
