/// A problem found in a graph file: the file, the JSON path (e.g. `nodes[2].preset`), where it stands, and what is
/// wrong.
public struct GraphError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var path: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public var description: String {
        var place = file
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return path.isEmpty ? "\(place): \(message)" : "\(place): \(path): \(message)"
    }
}

/// Every problem of one graph file, reported together.
public struct GraphErrors: Error, CustomStringConvertible, Sendable {
    public var errors: [GraphError]
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Collects problems while a graph is read and checked.
public struct GraphIssues {
    public let file: String
    public var errors: [GraphError] = []

    public init(file: String) { self.file = file }

    /// Things that were adjusted rather than rejected (e.g. a clamped control value).
    public var warnings: [GraphError] = []

    public mutating func report(_ path: String, _ message: String, at value: JSONValue? = nil) {
        errors.append(GraphError(file: file, path: path, line: value?.line, column: value?.column, message: message))
    }

    public mutating func warn(_ path: String, _ message: String, at value: JSONValue? = nil) {
        warnings.append(GraphError(file: file, path: path, line: value?.line, column: value?.column, message: message))
    }
}
