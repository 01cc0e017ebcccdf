import FoundationEssentials
import Glibc

/// Reading the `nodes` array: ids, types, each kind's settings through its descriptor, chain nodes.
extension GraphDocument {
    static func parseNodes(
        _ value: JSONValue?, context: NodeContext, chains: ChainDefinitions, selection: [String: String],
        placements: inout [ChainPlacement], issues: inout GraphIssues
    ) -> [GraphNode?] {
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
                    issues.report(
                        "\(path).id", "'\(id)' is not a valid id (non-empty, no ':', '/' or spaces)", at: item["id"])
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
                    result.append(
                        GraphNode(
                            id: "\(id)/\(member.id)", index: result.count, definition: member.definition,
                            path: member.path, meter: member.meter))
                }
                continue
            }
            guard let kind = NodeKinds.named(type) else {
                issues.report(
                    "\(path).type", "unknown node type '\(type)'; known types: \(knownTypes)", at: item["type"])
                result.append(nil)
                continue
            }
            let common = NodeDescriptor.commonSettings.map(\.key)
            settings.rejectUnknownKeys(["id", "type"] + common + kind.descriptor.settingKeys, issues: &issues)
            let before = issues.errors.count
            let meter = settings.bool("meter", issues: &issues) ?? false
            let definition = kind.parseDefinition(settings, context: context, issues: &issues)
            if let definition, let id, issues.errors.count == before {
                result.append(
                    GraphNode(id: id, index: result.count, definition: definition, path: path, meter: meter))
            } else {
                result.append(nil)
            }
        }
        return result
    }

    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && !id.contains(":") && !id.contains("/") && !id.contains(where: \.isWhitespace)
    }

    static var knownTypes: String {
        (NodeKinds.all.map { $0.typeName } + [ChainDefinitions.typeName]).joined(separator: ", ")
    }
}
