import Foundation

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
        guard let verb = words.first else { return ControlRequest.verbs }
        let nodeIDs = document.nodes.map(\.id)
        switch (verb, words.count) {
        case ("preset", 1):
            return nodeIDs.filter { !(instances[$0]?.presetNames.isEmpty ?? true) }
        case ("preset", _):
            // Preset names may hold spaces: complete the whole name after the node id.
            let typed = (words.dropFirst(2) + [partial]).joined(separator: " ")
            let names = instances[words[1]]?.presetNames ?? []
            let done = words.dropFirst(2).joined(separator: " ")
            return names.filter { $0.hasPrefix(typed) }.map { done.isEmpty ? $0 : String($0.dropFirst(done.count + 1)) }
        case ("set", 1):
            return nodeIDs.filter { !(instances[$0]?.parameters.isEmpty ?? true) }
        case ("set", 2):
            return instances[words[1]]?.parameters.map(\.name) ?? []
        case ("bypass", 1):
            return nodeIDs.filter { instances[$0] is IPodEQInstance || instances[$0] is LV2Instance }
        case ("bypass", 2):
            return ["on", "off"]
        case ("chain", 1):
            return document.chainNodes.map(\.id)
        case ("chain", 2):
            return document.chains.keys.sorted()
        case ("load", _):
            return graphFiles(matching: partial)
        default:
            return []
        }
    }

    /// JSON files and folders for a partly typed path.
    func graphFiles(matching partial: String) -> [String] {
        let folder = partial.contains("/") ? String(partial[...partial.lastIndex(of: "/")!]) : ""
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        return listed.compactMap { name -> String? in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + name, isDirectory: &isDirectory)
            if isDirectory.boolValue { return folder + name + "/" }
            return name.hasSuffix(".json") ? folder + name : nil
        }
    }
}
