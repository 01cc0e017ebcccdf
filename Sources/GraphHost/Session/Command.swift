import FoundationEssentials
import Glibc

/// What a command asks of one node.
public enum NodeCommand: Equatable, Sendable, CustomStringConvertible {
    case preset(String)
    case set(parameter: ParameterID, value: Double)
    /// A value by name: a scale point's label, or on/off for a toggle.
    case choose(parameter: ParameterID, label: String)
    case bypass(Bool)
    /// Moves a stream to a time in its media (seconds).
    case seek(Double)

    public var description: String {
        switch self {
        case .preset(let name): return "preset \(name)"
        case .set(let parameter, let value): return "set \(parameter) \(Format.number(value))"
        case .choose(let parameter, let label): return "set \(parameter) \(label)"
        case .bypass(let on): return "bypass \(on ? "on" : "off")"
        case .seek(let seconds): return "seek \(Format.number(seconds))"
        }
    }
}

/// A node command addressed to a node: what `preset`, `set`, `bypass` and `seek` ask (`Command.node`).
public struct NodeRequest: Equatable, Sendable, CustomStringConvertible {
    public var node: String
    public var action: NodeCommand

    public var description: String {
        switch action {
        case .bypass(let on): return "bypass \(node) \(on ? "on" : "off")"
        case .seek(let seconds): return "seek \(node) \(Format.number(seconds))"
        case .preset, .set, .choose:
            let words = action.description.split(separator: " ", maxSplits: 1)
            return "\(words[0]) \(node) \(words[1])"
        }
    }

    /// The commands and their forms, for help texts and errors.
    public static var usage: String { CommandHelp.usage(["preset", "set", "bypass", "seek"]) }

    /// Parses `preset NODE NAME` (the name may contain spaces), `set NODE PARAM VALUE` (a number, or a label that
    /// may contain spaces) or `bypass NODE on|off`.
    public static func parse(_ line: String) throws(CommandError) -> NodeRequest {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first else { throw CommandError("empty command; commands: \(usage)") }
        switch verb {
        case "preset":
            guard words.count >= 3 else { throw CommandError("usage: preset NODE NAME|INDEX") }
            return NodeRequest(node: words[1], action: .preset(words[2...].joined(separator: " ")))
        case "bypass":
            guard words.count == 3, ["on", "off"].contains(words[2]) else {
                throw CommandError("usage: bypass NODE on|off")
            }
            return NodeRequest(node: words[1], action: .bypass(words[2] == "on"))
        case "seek":
            guard words.count == 3, let seconds = Double(words[2]), seconds.isFinite else {
                throw CommandError("usage: seek NODE SECONDS")
            }
            return NodeRequest(node: words[1], action: .seek(seconds))
        case "set":
            guard words.count >= 4 else { throw CommandError("usage: set NODE PARAM VALUE|LABEL") }
            if words.count == 4, let value = Double(words[3]) {
                guard value.isFinite else { throw CommandError("'\(words[3])' is not a finite number (in: \(line))") }
                return NodeRequest(node: words[1], action: .set(parameter: ParameterID(words[2]), value: value))
            }
            return NodeRequest(
                node: words[1],
                action: .choose(parameter: ParameterID(words[2]), label: words[3...].joined(separator: " ")))
        default:
            throw CommandError("unknown command '\(verb)'; commands: \(usage)")
        }
    }
}

/// A line the text language cannot read, with the reason in plain words (the usage, the known commands).
public struct CommandError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A typed control command, what every surface hands `LiveControl.perform`: a node command or a request about the
/// whole graph. `parse` reads it from a line of the text language (console, socket, `ctl`, `render --at`).
public enum Command: Equatable, Sendable, CustomStringConvertible {
    case node(NodeRequest)
    /// A swap; `swap` overrides the new graph's own `"swap"` mode for this one.
    case chain(node: String, name: String, swap: SwapMode? = nil)
    case load(path: String, swap: SwapMode? = nil)
    /// The musical transport's tempo in beats per minute (plugins that follow the host's tempo hear it).
    case tempo(Double)
    case pause, play
    /// Writes the live graph (every setting as it is heard now) as a graph file.
    case save(path: String)
    /// Binds the next control change on the graph's MIDI control port to a parameter.
    case learn(node: String, parameter: ParameterID)
    /// Turns a node's level meter on or off (`status` shows the levels of the meters that are on).
    case meter(node: String, on: Bool)
    case status, list, quit
    /// The commands, or one command's usage (`help COMMAND`).
    case help(String?)

    public static var verbs: [String] { CommandHelp.verbs }
    public static var usage: String { CommandHelp.usage() }

    public var description: String {
        switch self {
        case .node(let command): return command.description
        case .chain(let node, let name, let swap):
            return "chain \(node) \(name)" + (swap.map { " " + $0.rawValue } ?? "")
        case .load(let path, let swap): return "load \(path)" + (swap.map { " " + $0.rawValue } ?? "")
        case .save(let path): return "save \(path)"
        case .learn(let node, let parameter): return "learn \(node) \(parameter)"
        case .meter(let node, let on): return "meter \(node) \(on ? "on" : "off")"
        case .tempo(let bpm): return "tempo \(Format.number(bpm))"
        case .pause: return "pause"
        case .play: return "play"
        case .status: return "status"
        case .list: return "list"
        case .quit: return "quit"
        case .help(let verb): return "help" + (verb.map { " " + $0 } ?? "")
        }
    }

    /// True for requests that change what is heard (everything but status, list, help, save, meter and quit).
    public var changesGraph: Bool {
        switch self {
        case .status, .list, .help, .quit, .save, .meter: return false
        default: return true
        }
    }

    /// The swap mode a `chain` or `load` asks for, if it names one.
    public var swapMode: SwapMode? {
        switch self {
        case .chain(_, _, let mode), .load(_, let mode): return mode
        default: return nil
        }
    }

    /// True for requests `render --at` can carry out (all but status, list, help, quit and learn).
    public var appliesOffline: Bool {
        switch self {
        case .status, .list, .help, .quit, .learn: return false
        default: return true
        }
    }

    public static func parse(_ line: String) throws(CommandError) -> Command {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        let verb = words.first ?? ""
        func bare(_ request: Command) throws(CommandError) -> Command {
            guard words.count == 1 else { throw CommandError("'\(verb)' takes no arguments") }
            return request
        }
        switch verb {
        case "pause": return try bare(.pause)
        case "play": return try bare(.play)
        case "status": return try bare(.status)
        case "list": return try bare(.list)
        case "quit": return try bare(.quit)
        case "help":
            guard words.count <= 2 else { throw CommandError("usage: \(try CommandHelp.named("help").synopsis)") }
            guard let verb = words.dropFirst().first else { return .help(nil) }
            return .help(try CommandHelp.named(verb).verb)
        case "chain":
            guard words.count == 3 || (words.count == 4 && SwapMode(rawValue: words[3]) != nil) else {
                throw CommandError("usage: chain NODE NAME [\(SwapMode.names)]")
            }
            return .chain(node: words[1], name: words[2], swap: words.count == 4 ? SwapMode(rawValue: words[3]) : nil)
        case "learn":
            guard words.count == 3 else {
                throw CommandError(
                    "usage: learn NODE PARAM (the next control change on the MIDI control port moves it)")
            }
            return .learn(node: words[1], parameter: ParameterID(words[2]))
        case "meter":
            guard words.count == 3, ["on", "off"].contains(words[2]) else {
                throw CommandError("usage: \(try CommandHelp.named("meter").synopsis)")
            }
            return .meter(node: words[1], on: words[2] == "on")
        case "tempo":
            guard words.count == 2, let bpm = Double(words[1]), (1...999).contains(bpm) else {
                throw CommandError("usage: tempo BPM (beats per minute, 1…999)")
            }
            return .tempo(bpm)
        case "load", "save":
            guard words.count >= 2 else { throw CommandError("usage: \(verb) GRAPH (a graph JSON file)") }
            var rest = line.drop { $0.isWhitespace }.dropFirst(4).trimmingSpaces()
            guard verb == "load" else { return .save(path: rest) }
            // A mode word after the path: `load GRAPH spillover`.
            var swap: SwapMode?
            if words.count >= 3, let mode = SwapMode(rawValue: words.last!) {
                swap = mode
                rest = String(rest.dropLast(mode.rawValue.count)).trimmingSpaces()
            }
            return .load(path: rest, swap: swap)
        default:
            do { return .node(try NodeRequest.parse(line)) } catch {
                throw error.description.hasPrefix("unknown command")
                    ? CommandError("unknown command '\(verb)'; commands: \(usage)") : error
            }
        }
    }
}
