import FoundationEssentials
import Glibc

/// Reading the `links` array: bus endpoints (`NODE:BUS`) and port endpoints the nodes link by name (`NODE:PORT`).
extension GraphDocument {
    /// `declared` holds every id written in the file, so a link to a node that failed its own checks is not reported
    /// again. `chainEnds` maps a chain node's id to its first member (links into it) and last member (links out of it).
    static func parseLinks(
        _ value: JSONValue?, nodes: inout [GraphNode?], declared: Set<String>,
        chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues
    ) -> [GraphLink] {
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
                issues.report(
                    path, "expected a link object like {\"from\": \"a\", \"to\": \"b:0\"}, found \(item.typeName)",
                    at: item)
                continue
            }
            let s = NodeSettings(object: item, path: path)
            s.rejectUnknownKeys(["from", "to", "channel"], issues: &issues)
            var from: (Int, Int)?
            var fromPort: String?
            switch portEndpoint(s, key: "from", nodes: &nodes, chainEnds: chainEnds, issues: &issues) {
            case .ports(let node, let buses, let symbols):
                (from, fromPort) = ((node, buses[0]), symbols.joined(separator: ","))
            case .invalid:
                continue
            case .notAPort:
                from = endpoint(
                    "from", s, nodes: nodes, declared: declared, output: true, chainEnds: chainEnds, issues: &issues)
            }
            // Events linked to a plugin with audio inputs go to its main MIDI input.
            var eventInput: String?
            if let from, let target = s.object["to"]?.stringValue, !target.contains(":"),
                nodes[from.0].map(Self.sendsEvents) == true,
                let node = nodes.first(where: { $0?.id == (chainEnds[target]?.first ?? target) }) ?? nil,
                let port = node.definition.mainEventInput
            {
                eventInput = "\(target):\(port)"
            }
            switch portEndpoint(s, key: "to", naming: eventInput, nodes: &nodes, chainEnds: chainEnds, issues: &issues)
            {
            case .ports(let node, let buses, let symbols):
                guard let from else { continue }
                for (bus, symbol) in zip(buses, symbols) {
                    links.append(
                        GraphLink(
                            from: from.0, fromBus: from.1, to: node, toBus: bus, toPort: symbol, fromPort: fromPort))
                }
                continue
            case .invalid:
                continue
            case .notAPort:
                break
            }
            if s.object["channel"] != nil {
                issues.report(
                    s.path("channel"),
                    "\"channel\" picks the source channel for a link to one port (\"to\": \"NODE:PORT\")",
                    at: s.object["channel"])
            }
            let to = endpoint(
                "to", s, nodes: nodes, declared: declared, output: false, chainEnds: chainEnds, issues: &issues)
            if let from, let to {
                links.append(GraphLink(from: from.0, fromBus: from.1, to: to.0, toBus: to.1, fromPort: fromPort))
            }
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
    static func portEndpoint(
        _ s: NodeSettings, key: String, naming written: String? = nil, nodes: inout [GraphNode?],
        chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues
    ) -> PortTarget {
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
        guard
            let buses = node.definition.linkPorts(
                symbols, end: LinkEnd(settings: s, key: key, text: text, nodeID: id), issues: &issues)
        else {
            return .invalid
        }
        nodes[position] = node
        return .ports(node: position, buses: buses, symbols: symbols)
    }

    /// Resolves `id` or `id:bus` to (node position, bus).
    static func endpoint(
        _ key: String, _ s: NodeSettings, nodes: [GraphNode?], declared: Set<String>, output: Bool,
        chainEnds: [String: (first: String, last: String)], issues: inout GraphIssues
    ) -> (Int, Int)? {
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
            issues.report(
                s.path(key), "dangling link: no node with id '\(id)' (ids: \(ids.joined(separator: ", ")))",
                at: s.object[key])
            return nil
        }
        guard let node = nodes[position] else { return nil }
        let count = output ? node.definition.outputBuses : node.definition.inputBuses
        guard bus < count else {
            let what = output ? "output" : "input"
            let has = count == 0 ? "has no \(what) buses" : "has \(what) buses 0…\(count - 1)"
            issues.report(
                s.path(key), "dangling link: '\(id)' (\(node.definition.typeName)) \(has), not \(bus)",
                at: s.object[key])
            return nil
        }
        return (position, bus)
    }
}
