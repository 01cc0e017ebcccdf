import FoundationEssentials
import Glibc

/// `graphhost service run CONFIG`: which graph plays for which output device. The first device whose `match` fits
/// the default sink's properties (node.name, node.description, …) gives the graph; `fallback` plays for any other.
/// Graph paths are relative to the configuration's folder; every graph must swap with the fallback (same format and
/// number of outputs). `routes` move applications into the sinks of whichever graph plays, unless that graph has routes
/// of its own; each rule's sink must be in every graph.
public struct ServiceConfig: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var match: PropertyMatch
        /// The graph file's absolute path.
        public var graph: String
    }

    public var devices: [Device]
    public var fallback: String
    public var routes: StreamRoutes?
    public var file: String

    /// The graph for an output device (nil: no default sink).
    public func graph(for sink: [String: String]?) -> String {
        guard let sink else { return fallback }
        return devices.first { $0.match.fits { sink[$0] } }?.graph ?? fallback
    }

    /// Reads and checks a configuration: every problem, with its JSON path, in the thrown `GraphErrors`.
    public static func load(path: String) throws -> ServiceConfig {
        var issues = GraphIssues(file: path)
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            issues.report("", "cannot read the configuration")
            throw GraphErrors(errors: issues.errors)
        }
        let root = try GraphDocument.parseJSON(text, issues: issues)
        let top = NodeSettings(object: root, path: "")
        guard root.objectMembers != nil else {
            issues.report(
                "", "expected an object with \"devices\", \"fallback\" and \"routes\", found \(root.typeName)", at: root
            )
            throw GraphErrors(errors: issues.errors)
        }
        top.rejectUnknownKeys(["devices", "fallback", "routes"], issues: &issues)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var documents: [(path: String, jsonPath: String, document: GraphDocument)] = []
        func graph(_ s: NodeSettings, _ key: String) -> String? {
            guard let name = s.string(key, issues: &issues) else {
                if s.object[key] == nil { issues.report(s.path.isEmpty ? key : s.path(key), "missing (a graph file)") }
                return nil
            }
            let file = URL(fileURLWithPath: name, relativeTo: folder).standardizedFileURL.path
            let jsonPath = s.path.isEmpty ? key : s.path(key)
            do {
                documents.append((file, jsonPath, try GraphDocument.load(path: file)))
            } catch {
                issues.report(jsonPath, "\(error)", at: s.object[key])
                return nil
            }
            return file
        }
        let fallback = graph(top, "fallback")
        var devices: [Device] = []
        for (i, item) in (root["devices"]?.arrayValue ?? []).enumerated() {
            let s = NodeSettings(object: item, path: "devices[\(i)]")
            s.rejectUnknownKeys(["match", "graph"], issues: &issues)
            guard let match = PropertyMatch.parse(s, "match", issues: &issues), let file = graph(s, "graph") else {
                continue
            }
            devices.append(Device(match: match, graph: file))
        }
        if let first = documents.first {
            for other in documents.dropFirst()
            where other.document.format != first.document.format
                || other.document.outputIDs.count != first.document.outputIDs.count
            {
                issues.report(
                    other.jsonPath,
                    "\(other.path) cannot take over from \(first.path): a graph of the service needs the same format "
                        + "and number of outputs")
            }
        }
        var routes: StreamRoutes?
        if let value = root["routes"] {
            // The sinks every graph has: the rules hold whichever graph plays.
            let sinks = documents.map { entry in
                Set(
                    entry.document.nodes.filter { $0.definition.virtualSinkName(id: $0.id, graphName: "") != nil }.map(
                        \.id))
            }
            let common = sinks.dropFirst().reduce(sinks.first ?? []) { $0.intersection($1) }
            routes = StreamRoutes.parse(value, sinks: common.sorted(), issues: &issues)
        }
        guard let fallback, issues.errors.isEmpty else { throw GraphErrors(errors: issues.errors) }
        return ServiceConfig(devices: devices, fallback: fallback, routes: routes, file: path)
    }
}
