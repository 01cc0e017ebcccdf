/// The graph's named chains: `"chains": { "warm": [ node, ... ], ... }`, each a list of effect nodes
/// (one input, one output) linked in order, and `{ "id": "fx", "type": "chain", "chain": "warm" }` nodes that run
/// one of them in their place. Members are `fx/ID` in the running graph (ID: the member's `id`, else its position);
/// an empty chain passes its input through. Every chain is checked, whether a node runs it or not.
struct ChainDefinitions: Sendable {
    struct Member {
        var id: String
        var definition: any NodeDefinition
        var path: String
        var meter = false
    }

    static let typeName = "chain"
    var members: [String: [Member]] = [:]
    /// Chains with errors (already reported).
    var invalid: Set<String> = []

    static func parse(_ value: JSONValue?, context: NodeContext, issues: inout GraphIssues) -> ChainDefinitions {
        var result = ChainDefinitions()
        guard let value else { return result }
        guard let chains = value.objectMembers else {
            issues.report("chains", "expected an object of NAME: [nodes...], found \(value.typeName)", at: value)
            return result
        }
        for (name, list) in chains {
            let path = "chains.\(name)"
            guard let items = list.arrayValue else {
                issues.report(path, "expected an array of nodes, found \(list.typeName)", at: list)
                continue
            }
            if !GraphDocument.isValidID(name) {
                issues.report(path, "'\(name)' is not a valid chain name (non-empty, no ':', '/' or spaces)", at: list)
            }
            var members: [Member] = []
            for (i, item) in items.enumerated() {
                if let member = parseMember(item, path: "\(path)[\(i)]", position: i, context: context, issues: &issues)
                {
                    if members.contains(where: { $0.id == member.id }) {
                        issues.report(
                            "\(path)[\(i)].id", "duplicate id '\(member.id)' in chain '\(name)'", at: item["id"])
                    }
                    members.append(member)
                }
            }
            if members.count < items.count {
                result.invalid.insert(name)
            } else {
                result.members[name] =
                    members.isEmpty
                    ? [Member(id: "through", definition: MixerNode(inputs: 1, volumes: [1], volume: 1), path: path)]
                    : members
            }
        }
        return result
    }

    static func parseMember(
        _ item: JSONValue, path: String, position: Int, context: NodeContext, issues: inout GraphIssues
    ) -> Member? {
        guard item.objectMembers != nil else {
            issues.report(path, "expected a node object, found \(item.typeName)", at: item)
            return nil
        }
        let settings = NodeSettings(object: item, path: path)
        let id = settings.string("id", issues: &issues) ?? "\(position)"
        if !GraphDocument.isValidID(id) {
            issues.report("\(path).id", "'\(id)' is not a valid id (non-empty, no ':', '/' or spaces)", at: item["id"])
        }
        guard let type = settings.string("type", issues: &issues) else {
            if item["type"] == nil { issues.report(path, "missing \"type\"", at: item) }
            return nil
        }
        guard let kind = NodeKinds.named(type) else {
            issues.report(
                "\(path).type", "unknown node type '\(type)'; known types: \(GraphDocument.knownTypes)",
                at: item["type"])
            return nil
        }
        let common = NodeDescriptor.commonSettings.map(\.key)
        settings.rejectUnknownKeys(["id", "type"] + common + kind.descriptor.settingKeys, issues: &issues)
        let before = issues.errors.count
        let meter = settings.bool("meter", issues: &issues) ?? false
        guard let definition = kind.parseDefinition(settings, context: context, issues: &issues),
            issues.errors.count == before
        else { return nil }
        guard definition.inputBuses == 1, definition.outputBuses == 1 else {
            issues.report(
                "\(path).type",
                "a chain holds effects with one input and one output; '\(type)' "
                    + "has \(definition.inputBuses) and \(definition.outputBuses)",
                at: item["type"])
            return nil
        }
        return Member(id: id, definition: definition, path: path, meter: meter)
    }

    /// Reads a chain node's `chain` key; nil (with the problem reported) if it does not name a valid chain.
    func placement(_ settings: NodeSettings, issues: inout GraphIssues) -> String? {
        settings.rejectUnknownKeys(["id", "type", "chain"], issues: &issues)
        guard let name = settings.string("chain", issues: &issues) else {
            if settings.object["chain"] == nil {
                issues.report(
                    settings.path, "missing \"chain\" (the name of one of the graph's chains)", at: settings.object)
            }
            return nil
        }
        guard members[name] != nil else {
            if invalid.contains(name) { return nil }
            let names = members.keys.sorted()
            issues.report(
                settings.path("chain"),
                "no chain '\(name)'; chains: "
                    + "\(names.isEmpty ? "none (declare them in \"chains\")" : names.joined(separator: ", "))",
                at: settings.object["chain"])
            return nil
        }
        return name
    }
}
