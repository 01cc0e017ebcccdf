import FoundationEssentials
import Glibc

/// One node of a checked graph.
public struct GraphNode: Sendable {
    public var id: String
    /// Position in `GraphDocument.nodes`.
    public var index: Int
    public var definition: any NodeDefinition
    /// Where the node is written in the file (`nodes[2]`, or `chains.warm[0]` for a member of a chain).
    public var path: String
}

/// A `chain` node: which of the graph's named chains runs in its place.
public struct ChainPlacement: Equatable, Sendable {
    public var id: String
    public var chain: String
}

/// One link from a node's output bus to another node's input bus. A link to an LV2 node's port by symbol
/// (`"to": "comp:sidechain"`) feeds that port alone, on an input bus of its own (`toPort` names it); a link from
/// output ports by symbol (`"from": "xover:lo_l,lo_r"`) reads an output bus made of those ports (`fromPort`).
public struct GraphLink: Equatable, Sendable {
    public var from: Int
    public var fromBus: Int
    public var to: Int
    public var toBus: Int
    public var toPort: String?
    public var fromPort: String?

    public init(from: Int, fromBus: Int, to: Int, toBus: Int, toPort: String? = nil, fromPort: String? = nil) {
        (self.from, self.fromBus, self.to, self.toBus, self.toPort, self.fromPort) = (from, fromBus, to, toBus, toPort, fromPort)
    }
}

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
    var root: JSONValue?
    var shownName: String?

    public static let defaultCrossfadeSeconds = 0.03
    static let topLevelKeys = ["format", "nodes", "links", "chains", "crossfadeSeconds", "swap", "tailSeconds", "transport", "baseDirectory", "midiControl"]

    public var displayName: String { shownName ?? file.path }

    public func node(_ id: String) -> GraphNode? { nodes.first { $0.id == id } }

    /// The output nodes' ids in file order: output 0 is what `render -o FILE` writes and `run` plays first.
    public var outputIDs: [String] { nodes.filter { $0.definition.traits.contains(.isOutput) }.map(\.id) }

    /// Reads and validates a graph file; throws `GraphErrors` listing every problem.
    public static func load(path: String) throws -> GraphDocument {
        let url = URL(fileURLWithPath: path)
        var issues = GraphIssues(file: path)
        guard let data = FileManager.default.contents(atPath: path) else {
            issues.report("", "cannot read the graph file (\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))")
            throw GraphErrors(errors: issues.errors)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            issues.report("", "the graph file is not valid UTF-8")
            throw GraphErrors(errors: issues.errors)
        }
        return try parse(text: text, file: url, displayName: path)
    }

    /// Validates graph JSON text; relative media paths resolve against `file`'s folder.
    public static func parse(text: String, file: URL, displayName: String? = nil) throws -> GraphDocument {
        var issues = GraphIssues(file: displayName ?? file.path)
        let root: JSONValue
        do {
            root = try JSONParser.parse(text)
        } catch let e as JSONSyntaxError {
            issues.report("", "malformed JSON: \(e.message)")
            issues.errors[0].line = e.line
            issues.errors[0].column = e.column
            throw GraphErrors(errors: issues.errors)
        }
        return try parse(root: root, file: file, displayName: displayName, selection: [:], issues: issues)
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
        var next = try Self.parse(root: root!, file: file, displayName: shownName, selection: selection,
                                  issues: GraphIssues(file: displayName))
        // Nodes outside the switched chain keep their live settings.
        for (i, node) in next.nodes.enumerated() {
            if let live = self.node(node.id), live.path == node.path, live.definition.typeName == node.definition.typeName {
                next.nodes[i].definition = live.definition
            }
        }
        next.musicalTime = musicalTime
        next.midiControl = midiControl
        return next
    }

    static func parse(root: JSONValue, file: URL, displayName: String?, selection: [String: String], issues: GraphIssues) throws -> GraphDocument {
        var issues = issues
        guard root.objectMembers != nil else {
            issues.report("", "the graph must be a JSON object with \"nodes\" and \"links\", found \(root.typeName)", at: root)
            throw GraphErrors(errors: issues.errors)
        }
        for (key, value) in root.objectMembers! where !topLevelKeys.contains(key) {
            issues.report(key, "unknown top-level key '\(key)'; valid keys: \(topLevelKeys.joined(separator: ", "))", at: value)
        }
        let format = parseFormat(root["format"], issues: &issues)
        let top = NodeSettings(object: root, path: "")
        let crossfade = top.number("crossfadeSeconds", in: 0.001...1, issues: &issues) ?? defaultCrossfadeSeconds
        var swapMode = SwapMode.crossfade
        if let name = top.string("swap", issues: &issues) {
            if let mode = SwapMode(rawValue: name) { swapMode = mode } else {
                issues.report("swap", "unknown swap mode '\(name)'; valid: \(SwapMode.names)", at: root["swap"])
            }
        }
        let tailSeconds = top.number("tailSeconds", in: 0.1...60, issues: &issues) ?? SwapMode.defaultTailSeconds
        let musicalTime = parseMusicalTime(root["transport"], issues: &issues)
        // Relative media paths resolve against the graph's folder, or `baseDirectory` (which `save` writes when it
        // puts a graph into another folder).
        let folder = file.deletingLastPathComponent()
        let base = top.string("baseDirectory", issues: &issues).map { URL(fileURLWithPath: $0, relativeTo: folder).standardizedFileURL } ?? folder
        let context = NodeContext(format: format, baseDirectory: base)
        let chains = ChainDefinitions.parse(root["chains"], context: context, issues: &issues)
        var placements: [ChainPlacement] = []
        var nodes = parseNodes(root["nodes"], context: context, chains: chains, selection: selection,
                               placements: &placements, issues: &issues)
        let declared = Set((root["nodes"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        let ends = Dictionary(uniqueKeysWithValues: placements.map { p in
            (p.id, (first: "\(p.id)/\(chains.members[p.chain]!.first!.id)", last: "\(p.id)/\(chains.members[p.chain]!.last!.id)"))
        })
        var links = parseLinks(root["links"], nodes: &nodes, declared: declared, chainEnds: ends, issues: &issues)
        for p in placements {
            let ids = chains.members[p.chain]!.map { "\(p.id)/\($0.id)" }
            for (a, b) in zip(ids, ids.dropFirst()) {
                if let from = nodes.firstIndex(where: { $0?.id == a }), let to = nodes.firstIndex(where: { $0?.id == b }) {
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
                issues.report(node.path, "MIDI port '\(port)' is already the port of '\(other)'; link that midi node to several instruments instead")
            }
            ports[port] = node.id
        }
        var midiControl: MIDIControlMap?
        if let value = root["midiControl"], valid.count == nodes.count {
            midiControl = MIDIControlMap.parse(value, nodes: valid, chains: chains, chainNodes: placements.map(\.id), issues: &issues)
            if let port = midiControl?.port, let owner = ports[port] {
                issues.report("midiControl.port", "MIDI port '\(port)' is the port of midi node '\(owner)'; the control port needs a name of its own", at: value["port"])
            }
        }
        let outputs = valid.filter { $0.definition.traits.contains(.isOutput) }
        if outputs.isEmpty && valid.count == nodes.count {
            issues.report("nodes", "the graph has no output node (add { \"id\": \"out\", \"type\": \"output\" } and link to it)")
        }
        let order = issues.errors.isEmpty ? topologicalOrder(nodes: valid, links: links, issues: &issues) : []
        if !issues.errors.isEmpty { throw GraphErrors(errors: issues.errors) }
        var document = GraphDocument(file: file, format: format, nodes: valid, links: links, order: order, warnings: issues.warnings)
        document.chains = chains.members.mapValues { $0.map(\.id) }
        document.chainNodes = placements
        document.crossfadeSeconds = crossfade
        document.swapMode = swapMode
        document.tailSeconds = tailSeconds
        document.musicalTime = musicalTime
        document.midiControl = midiControl
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

    static func parseNodes(_ value: JSONValue?, context: NodeContext, chains: ChainDefinitions, selection: [String: String],
                           placements: inout [ChainPlacement], issues: inout GraphIssues) -> [GraphNode?] {
        guard let value else {
            issues.report("nodes", "missing: the graph needs a \"nodes\" array")
            return []
        }
        guard let items = value.arrayValue else {
            issues.report("nodes", "expected an array of nodes, found \(value.typeName)", at: value)
            return []
        }
        var seen: [String: Int] = [:]
        var result: [GraphNode?] = []
        for (i, item) in items.enumerated() {
            let path = "nodes[\(i)]"
            guard item.objectMembers != nil else {
                issues.report(path, "expected a node object, found \(item.typeName)", at: item)
                result.append(nil)
                continue
            }
            let settings = NodeSettings(object: item, path: path)
            let id = settings.string("id", issues: &issues)
            if item["id"] == nil { issues.report(path, "missing \"id\"", at: item) }
            if let id {
                if !isValidID(id) {
                    issues.report("\(path).id", "'\(id)' is not a valid id (non-empty, no ':', '/' or spaces)", at: item["id"])
                } else if let first = seen[id] {
                    issues.report("\(path).id", "duplicate id '\(id)' (also nodes[\(first)].id)", at: item["id"])
                } else {
                    seen[id] = i
                }
            }
            guard let type = settings.string("type", issues: &issues) else {
                if item["type"] == nil { issues.report(path, "missing \"type\"; known types: \(knownTypes)", at: item) }
                result.append(nil)
                continue
            }
            if type == ChainDefinitions.typeName {
                guard let id, let chain = chains.placement(settings, issues: &issues) else {
                    result.append(nil)
                    continue
                }
                let selected = selection[id] ?? chain
                placements.append(ChainPlacement(id: id, chain: selected))
                for member in chains.members[selected]! {
                    result.append(GraphNode(id: "\(id)/\(member.id)", index: result.count, definition: member.definition, path: member.path))
                }
                continue
            }
            guard let kind = NodeKinds.named(type) else {
                issues.report("\(path).type", "unknown node type '\(type)'; known types: \(knownTypes)", at: item["type"])
                result.append(nil)
                continue
            }
            settings.rejectUnknownKeys(["id", "type"] + kind.descriptor.settingKeys, issues: &issues)
            let before = issues.errors.count
            let definition = kind.parseDefinition(settings, context: context, issues: &issues)
            if let definition, let id, issues.errors.count == before {
                result.append(GraphNode(id: id, index: result.count, definition: definition, path: path))
            } else {
                result.append(nil)
            }
        }
        return result
    }

    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && !id.contains(":") && !id.contains("/") && !id.contains(where: \.isWhitespace)
    }

    static var knownTypes: String { (NodeKinds.all.map { $0.typeName } + [ChainDefinitions.typeName]).joined(separator: ", ") }

    /// `declared` holds every id written in the file, so a link to a node that failed its own checks is not reported again.
    /// `chainEnds` maps a chain node's id to its first member (links into it) and last member (links out of it).
    static func parseLinks(_ value: JSONValue?, nodes: inout [GraphNode?], declared: Set<String>,
                           chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues) -> [GraphLink] {
        guard let value else {
            issues.report("links", "missing: the graph needs a \"links\" array")
            return []
        }
        guard let items = value.arrayValue else {
            issues.report("links", "expected an array of links, found \(value.typeName)", at: value)
            return []
        }
        var links: [GraphLink] = []
        for (i, item) in items.enumerated() {
            let path = "links[\(i)]"
            guard item.objectMembers != nil else {
                issues.report(path, "expected a link object like {\"from\": \"a\", \"to\": \"b:0\"}, found \(item.typeName)", at: item)
                continue
            }
            let s = NodeSettings(object: item, path: path)
            s.rejectUnknownKeys(["from", "to", "channel"], issues: &issues)
            var from: (Int, Int)?, fromPort: String?
            switch portEndpoint(s, key: "from", nodes: &nodes, chainEnds: chainEnds, issues: &issues) {
            case .ports(let node, let buses, let symbols):
                (from, fromPort) = ((node, buses[0]), symbols.joined(separator: ","))
            case .invalid:
                continue
            case .notAPort:
                from = endpoint("from", s, nodes: nodes, declared: declared, output: true, chainEnds: chainEnds, issues: &issues)
            }
            // Events linked to a plugin with audio inputs go to its main MIDI input.
            var eventInput: String?
            if let from, let target = s.object["to"]?.stringValue, !target.contains(":"), nodes[from.0].map(Self.sendsEvents) == true,
               let node = nodes.first(where: { $0?.id == (chainEnds[target]?.first ?? target) }) ?? nil,
               let port = node.definition.mainEventInput {
                eventInput = "\(target):\(port)"
            }
            switch portEndpoint(s, key: "to", naming: eventInput, nodes: &nodes, chainEnds: chainEnds, issues: &issues) {
            case .ports(let node, let buses, let symbols):
                guard let from else { continue }
                for (bus, symbol) in zip(buses, symbols) {
                    links.append(GraphLink(from: from.0, fromBus: from.1, to: node, toBus: bus, toPort: symbol, fromPort: fromPort))
                }
                continue
            case .invalid:
                continue
            case .notAPort:
                break
            }
            if s.object["channel"] != nil {
                issues.report(s.path("channel"), "\"channel\" picks the source channel for a link to one port (\"to\": \"NODE:PORT\")", at: s.object["channel"])
            }
            let to = endpoint("to", s, nodes: nodes, declared: declared, output: false, chainEnds: chainEnds, issues: &issues)
            if let from, let to { links.append(GraphLink(from: from.0, fromBus: from.1, to: to.0, toBus: to.1, fromPort: fromPort)) }
        }
        return links
    }

    /// What an end of a link names: a bus (not a port), ports that cannot be linked (reported), or ports with the
    /// node's buses they take.
    enum PortTarget {
        case notAPort
        case invalid
        case ports(node: Int, buses: [Int], symbols: [String])
    }

    /// A link end `"NODE:PORT"` or `"NODE:PORT,PORT…"` naming ports, which the node links (`NodeDefinition.linkPorts`).
    static func portEndpoint(_ s: NodeSettings, key: String, naming written: String? = nil, nodes: inout [GraphNode?],
                             chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues) -> PortTarget {
        let input = key == "to"
        guard let text = written ?? s.object[key]?.stringValue else { return .notAPort }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, Int(parts[1]) == nil, !parts[1].isEmpty else { return .notAPort }
        let written = String(parts[0])
        let id = chainEnds[written].map { input ? $0.first : $0.last } ?? written
        let symbols = parts[1].split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
        let position = nodes.firstIndex { $0?.id == id }
        guard let position, var node = nodes[position] else {
            LinkEnd(settings: s, key: key, text: text, nodeID: id).reportNotPorts(issues: &issues)
            return .invalid
        }
        guard let buses = node.definition.linkPorts(symbols, end: LinkEnd(settings: s, key: key, text: text, nodeID: id), issues: &issues) else {
            return .invalid
        }
        nodes[position] = node
        return .ports(node: position, buses: buses, symbols: symbols)
    }

    /// Resolves `id` or `id:bus` to (node position, bus).
    static func endpoint(_ key: String, _ s: NodeSettings, nodes: [GraphNode?], declared: Set<String>, output: Bool,
                         chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues) -> (Int, Int)? {
        guard let text = s.string(key, issues: &issues) else {
            if s.object[key] == nil { issues.report(s.path, "missing \"\(key)\"", at: s.object) }
            return nil
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let written = String(parts[0])
        let id = chainEnds[written].map { output ? $0.last : $0.first } ?? written
        var bus = 0
        if parts.count == 2 {
            guard let b = Int(parts[1]), b >= 0 else {
                issues.report(s.path(key), "'\(text)': the bus after ':' must be a number", at: s.object[key])
                return nil
            }
            bus = b
        }
        guard let position = nodes.firstIndex(where: { $0?.id == id }) else {
            if declared.contains(written) { return nil }
            let ids = nodes.compactMap { $0?.id }
            issues.report(s.path(key), "dangling link: no node with id '\(id)' (ids: \(ids.joined(separator: ", ")))", at: s.object[key])
            return nil
        }
        guard let node = nodes[position] else { return nil }
        let count = output ? node.definition.outputBuses : node.definition.inputBuses
        guard bus < count else {
            let what = output ? "output" : "input"
            let has = count == 0 ? "has no \(what) buses" : "has \(what) buses 0…\(count - 1)"
            issues.report(s.path(key), "dangling link: '\(id)' (\(node.definition.typeName)) \(has), not \(bus)", at: s.object[key])
            return nil
        }
        return (position, bus)
    }

    /// Whether a node's output bus carries events (a `midi` node, a plugin sending MIDI).
    static func sendsEvents(_ node: GraphNode) -> Bool {
        node.definition.traits.contains(.sendsEvents)
    }

    /// Event buses (`midi` nodes and MIDI processors send them) go to event inputs (instruments and MIDI processors
    /// take them on their input bus, other plugins with a MIDI input on a bus of its own), and nothing else does.
    static func checkEventLinks(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) {
        for (i, link) in links.enumerated() {
            let source = nodes[link.from], target = nodes[link.to]
            let fromEvents = sendsEvents(source)
            let toEvents = target.definition.carriesEvents(bus: link.toBus)
            let input = link.toPort.map { "'\(target.id):\($0)'" } ?? "'\(target.id)'"
            if fromEvents && !toEvents {
                issues.report("links[\(i)]", "'\(source.id)' sends MIDI events: link it to an instrument, a MIDI processor or a plugin's MIDI input (an lv2 plugin with a MIDI input), not to \(input)")
            } else if toEvents && !fromEvents {
                issues.report("links[\(i)]", "\(input) takes MIDI events (a midi node's or a MIDI processor's), not the audio of '\(source.id)'")
            }
        }
    }

    static func checkInputs(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) {
        for node in nodes {
            for bus in 0..<node.definition.inputBuses {
                let feeding = links.indices.filter { links[$0].to == node.index && links[$0].toBus == bus }
                if feeding.count > 1 {
                    let list = feeding.map { "links[\($0)]" }.joined(separator: ", ")
                    issues.report(node.path, "input '\(node.id):\(bus)' is connected \(feeding.count) times (\(list)); feed a mixer to combine signals")
                } else if feeding.isEmpty && !node.definition.traits.contains(.mixesInputs) && !(bus == 0 && node.definition.traits.contains(.isSource)) {
                    issues.report(node.path, "input '\(node.id):\(bus)' is not connected")
                }
            }
        }
    }

    /// Kahn's algorithm, stable in file order; a cycle is reported with its nodes.
    static func topologicalOrder(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) -> [Int] {
        var indegree = Array(repeating: 0, count: nodes.count)
        for l in links { indegree[l.to] += 1 }
        var order: [Int] = []
        var ready = (0..<nodes.count).filter { indegree[$0] == 0 }
        while !ready.isEmpty {
            let n = ready.removeFirst()
            order.append(n)
            for l in links where l.from == n {
                indegree[l.to] -= 1
                if indegree[l.to] == 0 { ready.append(l.to); ready.sort() }
            }
        }
        if order.count < nodes.count {
            // Walk backwards along links among the remaining nodes until a node repeats.
            let remaining = Set((0..<nodes.count).filter { !order.contains($0) })
            var path: [Int] = [remaining.min()!]
            while true {
                let next = links.first { $0.to == path.last! && remaining.contains($0.from) }!.from
                if let start = path.firstIndex(of: next) {
                    var cycle = Array(path[start...].reversed())
                    let first = cycle.firstIndex(of: cycle.min()!)!
                    cycle = Array(cycle[first...] + cycle[..<first])
                    let names = (cycle + [cycle[0]]).map { nodes[$0].id }.joined(separator: " → ")
                    issues.report("links", "the links form a cycle: \(names)")
                    break
                }
                path.append(next)
            }
        }
        return order
    }
}
