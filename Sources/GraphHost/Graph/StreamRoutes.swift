import FoundationEssentials
import Glibc

/// The graph's `routes`: which applications' playback streams `run` moves into which of the graph's sinks. The first
/// rule whose `match` fits a stream decides: it names a sink node (`to`) or leaves the stream where it is
/// (`exclude`). A rule without `match` fits every stream, so a last one is the default.
public struct StreamRoutes: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        /// Stream properties (application.name, media.role, application.process.binary, …) and their patterns.
        public var match: PropertyMatch
        /// The sink node's id; nil when the rule excludes.
        public var sink: String?
    }

    public var rules: [Rule]

    /// The sink node id the first fitting rule names; nil when it excludes or no rule fits.
    public func sink(for property: (String) -> String?) -> String? {
        rules.first { $0.match.fits(property) }?.sink
    }

    /// Reads `routes`, checking that every `to` names a sink node of the graph.
    static func parse(_ value: JSONValue, sinks: [String], issues: inout GraphIssues) -> StreamRoutes? {
        guard let items = value.arrayValue else {
            issues.report(
                "routes",
                "expected an array of rules like {\"match\": {\"application.name\": \"Firefox\"}, "
                    + "\"to\": \"music\"}, found \(value.typeName)", at: value)
            return nil
        }
        var rules: [Rule] = []
        for (i, item) in items.enumerated() {
            let s = NodeSettings(object: item, path: "routes[\(i)]")
            guard item.objectMembers != nil else {
                issues.report(s.path, "expected an object, found \(item.typeName)", at: item)
                continue
            }
            s.rejectUnknownKeys(["match", "to", "exclude"], issues: &issues)
            guard let match = PropertyMatch.parse(s, "match", issues: &issues) else { continue }
            let exclude = s.bool("exclude", issues: &issues) ?? false
            let sink = s.string("to", issues: &issues)
            switch (sink, exclude) {
            case (nil, false):
                issues.report(s.path, "a rule needs \"to\" (a sink node) or \"exclude\": true", at: item)
            case (.some, true):
                issues.report(s.path, "a rule either moves (\"to\") or excludes, not both", at: item)
            case (let sink?, false) where !sinks.contains(sink):
                issues.report(
                    s.path("to"),
                    "no sink node '\(sink)'; sink nodes: \(sinks.isEmpty ? "none" : sinks.joined(separator: ", "))",
                    at: item["to"])
            default:
                rules.append(Rule(match: match, sink: sink))
            }
        }
        return StreamRoutes(rules: rules)
    }

    /// The rules as the graph file writes them.
    public var json: JSONValue {
        .array(
            rules.map { rule in
                var members: [(key: String, value: JSONValue)] = []
                if !rule.match.patterns.isEmpty {
                    let patterns = rule.match.patterns.sorted { $0.key < $1.key }
                    members.append(("match", .object(patterns.map { ($0.key, .string($0.value)) })))
                }
                members.append(rule.sink.map { ("to", .string($0)) } ?? ("exclude", .bool(true)))
                return .object(members)
            })
    }
}
