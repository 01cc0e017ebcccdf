import FoundationEssentials
import Glibc

/// Tab completion for the command language: verbs, node ids, presets, parameters, chains and graph files.
public struct CommandCompletion {
    let document: GraphDocument
    let instances: [String: NodeInstance]

    public init(session: GraphSession) {
        document = session.graph.document
        instances = session.graph.instances
    }

    /// Completed lines for `line` (the text before the cursor); one entry completes it, several are choices.
    public func complete(_ line: String) -> [String] {
        var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let typingNew = line.isEmpty || line.hasSuffix(" ")
        let partial = typingNew ? "" : words.removeLast()
        let prefix = words.isEmpty ? "" : words.joined(separator: " ") + " "
        let choices = candidates(after: words, partial: partial)
        return choices.filter { $0.hasPrefix(partial) }.sorted().map { prefix + $0 + ($0.hasSuffix("/") ? "" : " ") }
    }

    func candidates(after words: [String], partial: String) -> [String] {
        guard let verb = words.first else { return Command.verbs }
        let nodeIDs = document.nodes.map(\.id)
        switch (verb, words.count) {
        case ("preset", 1):
            return nodeIDs.filter { !(instances[$0]?.presetNames.isEmpty ?? true) }
        case ("preset", _):
            return Self.names(
                instances[words[1]]?.presetNames ?? [], typed: Array(words.dropFirst(2)), partial: partial)
        case ("set", 1):
            return nodeIDs.filter { !(instances[$0]?.parameters.isEmpty ?? true) }
        case ("set", 2):
            return instances[words[1]]?.parameters.map(\.name) ?? []
        case ("set", _):
            let parameter = instances[words[1]]?.parameters.first { $0.id == ParameterID(words[2]) }
            return Self.names(parameter?.valueNames ?? [], typed: Array(words.dropFirst(3)), partial: partial)
        case ("bypass", 1):
            return nodeIDs.filter { document.node($0)?.definition.traits.contains(.canBypass) == true }
        case ("meter", 1):
            return document.nodes.filter { $0.definition.outputBuses > 0 || $0.definition.traits.contains(.isOutput) }
                .map(\.id)
        case ("bypass", 2), ("meter", 2):
            return ["on", "off"]
        case ("chain", 1):
            return document.chainNodes.map(\.id)
        case ("chain", 2):
            return document.chains.keys.sorted()
        case ("chain", 3):
            return SwapMode.allCases.map(\.rawValue)
        case ("load", 1), ("save", 1):
            return graphFiles(matching: partial)
        case ("load", 2):
            return SwapMode.allCases.map(\.rawValue)
        case ("help", 1):
            return Command.verbs
        case ("status", 1), ("list", 1):
            return ["--json"]
        default:
            return []
        }
    }

    /// Names that may hold spaces (presets, scale points): the rest of each name that starts with the words typed
    /// so far and the partial word.
    static func names(_ names: [String], typed: [String], partial: String) -> [String] {
        let done = typed.joined(separator: " ")
        let start = (typed + [partial]).joined(separator: " ")
        return names.filter { $0.hasPrefix(start) }.map { done.isEmpty ? $0 : String($0.dropFirst(done.count + 1)) }
    }

    /// JSON files and folders for a partly typed path.
    func graphFiles(matching partial: String) -> [String] {
        let folder = partial.contains("/") ? String(partial[...partial.lastIndex(of: "/")!]) : ""
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        return listed.compactMap { name -> String? in
            if isDirectory(folder + name) { return folder + name + "/" }
            return name.hasSuffix(".json") ? folder + name : nil
        }
    }
}
