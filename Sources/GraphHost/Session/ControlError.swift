/// Why a control command was not carried out; nothing changed. Its description is the reply's error text.
public enum ControlError: Error, CustomStringConvertible, Sendable {
    /// A line the text language cannot read (the parser's error names the usage).
    case unreadable(CommandError)
    case unknownNode(String, known: [String])
    case unknownParameter(node: String, parameter: ParameterID, known: [String])
    /// `learn` on a parameter without a finite range.
    case unboundedRange(node: String, parameter: ParameterID, port: String)
    /// `meter` on a node without an audio output (the nodes that have one).
    case notMetered(node: String, metered: [String])
    /// `watch … off` with no watcher of that kind on that node (nil: every output).
    case notWatched(kind: String, node: String?)
    /// A kind of analysis nothing was registered for (`AudioAnalysis.register`).
    case noAnalyzer(String)
    case noMIDIControlPort
    case noTransport
    /// `status`, `list`, `help` or `quit` given where a change is expected.
    case notAChange(Command)
    /// A command `render --at` cannot carry out.
    case notOffline(Command)
    case queueFull
    /// Another swap is being built (the graph it swaps to).
    case swapBusy(String)
    /// A swap the running graph cannot take (a different format, number of outputs or MIDI control port).
    case swapRefused(String)
    /// The swap was overtaken while it was built.
    case swapStale(String)
    /// What a node instance said when it refused a command.
    case node(any Error)
    /// A graph file (loading, a chain, saving) that could not be used.
    case graph(any Error)
    case swapCancelled(String)
    /// A stream of the new graph did not buffer within `GraphSession.warmUpTimeout`.
    case warmUpTimeout(stream: String, bufferSeconds: Double)
    /// Building or warming up the graph a swap goes to failed.
    case swapFailed(any Error)

    public var description: String {
        switch self {
        case .unreadable(let error): return error.description
        case .unknownNode(let node, let known): return "no node '\(node)'; nodes: \(known.joined(separator: ", "))"
        case .unknownParameter(let node, let parameter, let known):
            return "'\(node)' has no parameter '\(parameter)'; parameters: \(known.joined(separator: ", "))"
        case .unboundedRange(let node, let parameter, let port):
            return
                "'\(node)' \(parameter) has no bounded range for a controller "
                + "on '\(port)'; map it in the graph file with min and max"
        case .notMetered(let node, let metered):
            return "'\(node)' has no audio output to meter; nodes with one: \(metered.joined(separator: ", "))"
        case .notWatched(let kind, let node):
            return "nobody watches the \(kind) of " + (node.map { "'\($0)'" } ?? "the outputs")
        case .noAnalyzer(let kind): return "no \(kind) analysis is available"
        case .noMIDIControlPort:
            return "the graph has no MIDI control port; declare one with \"midiControl\": {\"port\": \"control\"}"
        case .noTransport: return "the graph has no transport; declare one with \"transport\": {\"bpm\": 120}"
        case .notAChange(let request): return "'\(request)' does not change the graph"
        case .notOffline: return "not a command for an offline render"
        case .queueFull: return "the control queue is full; try again"
        case .swapBusy(let name): return "another swap is being built (\(name)); try again when it is done"
        case .swapRefused(let reason), .swapStale(let reason): return reason
        case .swapCancelled(let name): return "the swap to \(name) was cancelled"
        case .warmUpTimeout(let stream, let buffer):
            return
                "stream '\(stream)' did not buffer \(Format.number(buffer)) s "
                + "within \(Format.number(GraphSession.warmUpTimeout)) s"
        case .node(let error), .graph(let error), .swapFailed(let error): return "\(error)"
        }
    }
}

extension ControlError {
    /// Runs `body`, turning what it throws into `wrap` of it (a `ControlError` stays as it is).
    static func wrapping<T>(_ wrap: (any Error) -> ControlError, _ body: () throws -> T) throws(ControlError) -> T {
        do { return try body() } catch let error as ControlError { throw error } catch { throw wrap(error) }
    }
}
