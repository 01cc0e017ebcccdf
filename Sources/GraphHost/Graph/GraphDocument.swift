import FoundationEssentials
import Glibc

/// A graph file read and checked completely: everything a render needs, with the render order.
public struct GraphDocument: Sendable {
    public var file: URL
    public var format: GraphFormat
    public var nodes: [GraphNode]
    public var links: [GraphLink]
    /// Node indices in topological order.
    public var order: [Int]
    /// Settings that were adjusted rather than rejected.
    public var warnings: [GraphError] = []
    /// The named chains (member ids in order) and the chain nodes with the chain each runs.
    public var chains: [String: [String]] = [:]
    public var chainNodes: [ChainPlacement] = []
    /// How long a swap to this graph crossfades.
    public var crossfadeSeconds = GraphDocument.defaultCrossfadeSeconds
    /// How swaps to this graph replace the running one (`"swap"`), and how long a spillover's tails may ring at
    /// most (`"tailSeconds"`).
    public var swapMode = SwapMode.crossfade
    public var tailSeconds = SwapMode.defaultTailSeconds
    /// The musical transport (tempo, meter, rolling) plugins are told about; nil when the graph declares none.
    public var musicalTime: MusicalTime.Settings?
    /// The MIDI control port and its mappings (`"midiControl"`).
    public var midiControl: MIDIControlMap?
    /// Which applications' playback streams `run` moves into which sink nodes (`"routes"`).
    public var routes: StreamRoutes?
    var root: JSONValue?
    var shownName: String?

    public static let defaultCrossfadeSeconds = 0.03
    static let topLevelKeys = [
        "format", "nodes", "links", "chains", "crossfadeSeconds", "swap", "tailSeconds", "transport", "baseDirectory",
        "midiControl", "routes",
    ]

    public var displayName: String { shownName ?? file.path }

    public func node(_ id: String) -> GraphNode? { nodes.first { $0.id == id } }

    /// The output nodes' ids in file order: output 0 is what `render -o FILE` writes and `run` plays first.
    public var outputIDs: [String] { nodes.filter { $0.definition.traits.contains(.isOutput) }.map(\.id) }

    /// Reads and validates a graph file; throws `GraphErrors` listing every problem. `files` says which files the
    /// graph file and the files it names may be (a remote surface's load is confined).
    public static func load(path given: String, files: FileAccess = .owner) throws -> GraphDocument {
        let path = files.roots == nil ? given : try files.commandPath(given)
        let url = URL(fileURLWithPath: path)
        var issues = GraphIssues(file: path)
        guard let data = FileManager.default.contents(atPath: path) else {
            issues.report(
                "",
                "cannot read the graph file "
                    + "(\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))"
            )
            throw GraphErrors(errors: issues.errors)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            issues.report("", "the graph file is not valid UTF-8")
            throw GraphErrors(errors: issues.errors)
        }
        return try parse(text: text, file: url, displayName: path, files: files)
    }

    /// Validates graph JSON text; relative media paths resolve against `file`'s folder.
    public static func parse(
        text: String, file: URL, displayName: String? = nil, files: FileAccess = .owner
    ) throws -> GraphDocument {
        let issues = GraphIssues(file: displayName ?? file.path)
        let root = try parseJSON(text, issues: issues)
        return try parse(
            root: root, file: file, displayName: displayName, selection: [:], files: files, issues: issues)
    }

    /// Parses JSON text; malformed text throws `GraphErrors` with the line and column.
    static func parseJSON(_ text: String, issues: GraphIssues) throws -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch let e as JSONSyntaxError {
            var issues = issues
            issues.report("", "malformed JSON: \(e.message)")
            issues.errors[0].line = e.line
            issues.errors[0].column = e.column
            throw GraphErrors(errors: issues.errors)
        }
    }

    /// The same graph with chain node `node` running the chain `name` (for `chain NODE NAME`).
    public func selecting(chain name: String, for node: String) throws -> GraphDocument {
        guard let current = chainNodes.first(where: { $0.id == node }) else {
            throw GraphChangeError.notAChainNode(node, chainNodes: chainNodes.map(\.id))
        }
        guard chains[name] != nil else {
            throw GraphChangeError.unknownChain(name, known: chains.keys.sorted())
        }
        var selection = Dictionary(uniqueKeysWithValues: chainNodes.map { ($0.id, $0.chain) })
        selection[current.id] = name
        var next = try Self.parse(
            root: root!, file: file, displayName: shownName, selection: selection,
            issues: GraphIssues(file: displayName))
        // Nodes outside the switched chain keep their live settings.
        for (i, node) in next.nodes.enumerated() {
            if let live = self.node(node.id), live.path == node.path,
                live.definition.typeName == node.definition.typeName
            {
                next.nodes[i].definition = live.definition
            }
        }
        next.musicalTime = musicalTime
        next.midiControl = midiControl
        return next
    }

    static func parse(
        root: JSONValue, file: URL, displayName: String?, selection: [String: String], files: FileAccess = .owner,
        issues: GraphIssues
    ) throws -> GraphDocument {
        var issues = issues
        guard root.objectMembers != nil else {
            issues.report(
                "", "the graph must be a JSON object with \"nodes\" and \"links\", found \(root.typeName)", at: root)
            throw GraphErrors(errors: issues.errors)
        }
        for (key, value) in root.objectMembers! where !topLevelKeys.contains(key) {
            issues.report(
                key, "unknown top-level key '\(key)'; valid keys: \(topLevelKeys.joined(separator: ", "))", at: value)
        }
        let format = parseFormat(root["format"], issues: &issues)
        let top = NodeSettings(object: root, path: "")
        let crossfade = top.number("crossfadeSeconds", in: 0.001...1, issues: &issues) ?? defaultCrossfadeSeconds
        var swapMode = SwapMode.crossfade
        if let name = top.string("swap", issues: &issues) {
            if let mode = SwapMode(rawValue: name) {
                swapMode = mode
            } else {
                issues.report("swap", "unknown swap mode '\(name)'; valid: \(SwapMode.names)", at: root["swap"])
            }
        }
        let tailSeconds = top.number("tailSeconds", in: 0.1...60, issues: &issues) ?? SwapMode.defaultTailSeconds
        let musicalTime = parseMusicalTime(root["transport"], issues: &issues)
        // Relative media paths resolve against the graph's folder, or `baseDirectory` (which `save` writes when it
        // puts a graph into another folder).
        let folder = file.deletingLastPathComponent()
        let base =
            top.string("baseDirectory", issues: &issues).map {
                URL(fileURLWithPath: $0, relativeTo: folder).standardizedFileURL
            } ?? folder
        let context = NodeContext(format: format, baseDirectory: base, files: files)
        let chains = ChainDefinitions.parse(root["chains"], context: context, issues: &issues)
        var placements: [ChainPlacement] = []
        var nodes = parseNodes(
            root["nodes"], context: context, chains: chains, selection: selection,
            placements: &placements, issues: &issues)
        let declared = Set((root["nodes"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        // A node id given twice is an error reported with the nodes; the first placement stands meanwhile.
        let ends = Dictionary(
            placements.map { p in
                (
                    p.id,
                    (
                        first: "\(p.id)/\(chains.members[p.chain]!.first!.id)",
                        last: "\(p.id)/\(chains.members[p.chain]!.last!.id)"
                    )
                )
            }, uniquingKeysWith: { first, _ in first })
        var links = parseLinks(root["links"], nodes: &nodes, declared: declared, chainEnds: ends, issues: &issues)
        for p in placements {
            let ids = chains.members[p.chain]!.map { "\(p.id)/\($0.id)" }
            for (a, b) in zip(ids, ids.dropFirst()) {
                if let from = nodes.firstIndex(where: { $0?.id == a }),
                    let to = nodes.firstIndex(where: { $0?.id == b })
                {
                    links.append(GraphLink(from: from, fromBus: 0, to: to, toBus: 0))
                }
            }
        }
        let valid = nodes.compactMap { $0 }
        if valid.count == nodes.count {
            checkInputs(nodes: valid, links: links, issues: &issues)
        }
        if valid.count == nodes.count { checkEventLinks(nodes: valid, links: links, issues: &issues) }
        for node in valid {
            for warning in node.definition.unlinkedInputWarnings(id: node.id) { issues.warn(node.path, warning) }
        }
        var ports: [String: String] = [:]
        for node in valid {
            guard let port = node.definition.midiInputPort else { continue }
            if let other = ports[port] {
                issues.report(
                    node.path,
                    "MIDI port '\(port)' is already the port of '\(other)'; "
                        + "link that midi node to several instruments instead"
                )
            }
            ports[port] = node.id
        }
        var midiControl: MIDIControlMap?
        if let value = root["midiControl"], valid.count == nodes.count {
            midiControl = MIDIControlMap.parse(
                value, nodes: valid, chains: chains, chainNodes: placements.map(\.id), issues: &issues)
            if let port = midiControl?.port, let owner = ports[port] {
                issues.report(
                    "midiControl.port",
                    "MIDI port '\(port)' is the port of midi node '\(owner)'; the control port needs a name of its own",
                    at: value["port"])
            }
        }
        var routes: StreamRoutes?
        if let value = root["routes"], valid.count == nodes.count {
            routes = StreamRoutes.parse(
                value, sinks: valid.filter { $0.definition.virtualSinkName(id: $0.id, graphName: "") != nil }.map(\.id),
                issues: &issues)
        }
        let outputs = valid.filter { $0.definition.traits.contains(.isOutput) }
        if outputs.isEmpty && valid.count == nodes.count {
            issues.report(
                "nodes", "the graph has no output node (add { \"id\": \"out\", \"type\": \"output\" } and link to it)")
        }
        let order = issues.errors.isEmpty ? topologicalOrder(nodes: valid, links: links, issues: &issues) : []
        if !issues.errors.isEmpty { throw GraphErrors(errors: issues.errors) }
        var document = GraphDocument(
            file: file, format: format, nodes: valid, links: links, order: order, warnings: issues.warnings)
        document.chains = chains.members.mapValues { $0.map(\.id) }
        document.chainNodes = placements
        document.crossfadeSeconds = crossfade
        document.swapMode = swapMode
        document.tailSeconds = tailSeconds
        document.musicalTime = musicalTime
        document.midiControl = midiControl
        document.routes = routes
        document.root = root
        document.shownName = displayName
        return document
    }

    static func parseFormat(_ value: JSONValue?, issues: inout GraphIssues) -> GraphFormat {
        var format = GraphFormat.default
        guard let value else { return format }
        guard value.objectMembers != nil else {
            issues.report("format", "expected an object, found \(value.typeName)", at: value)
            return format
        }
        let s = NodeSettings(object: value, path: "format")
        s.rejectUnknownKeys(["sampleRate", "channels", "maxFrames"], issues: &issues)
        if let r = s.integer("sampleRate", in: 8000...384_000, issues: &issues) { format.sampleRate = r }
        if let c = s.integer("channels", in: 1...8, issues: &issues) { format.channels = c }
        if let m = s.integer("maxFrames", in: 16...16384, issues: &issues) { format.maxFrames = m }
        return format
    }
}
