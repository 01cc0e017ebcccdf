import FoundationEssentials
import Glibc

/// PipeWire properties and shell patterns (`*`, `?`, `[…]`, case-sensitive) their values must all fit: how routes
/// pick streams and a service configuration picks output devices. Empty fits everything.
public struct PropertyMatch: Sendable, Equatable {
    public var patterns: [String: String]

    public init(_ patterns: [String: String] = [:]) { self.patterns = patterns }

    public func fits(_ property: (String) -> String?) -> Bool {
        patterns.allSatisfy { key, pattern in property(key).map { fnmatch(pattern, $0, 0) == 0 } ?? false }
    }

    /// Reads the object setting `key` of `s` (absent: empty); nil (reported) when it is not an object of strings.
    static func parse(_ s: NodeSettings, _ key: String, issues: inout GraphIssues) -> PropertyMatch? {
        guard let members = s.members(key, shape: "properties and patterns", issues: &issues) else { return nil }
        var patterns: [String: String] = [:]
        for (path, name, value) in members {
            guard let text = value.stringValue else {
                issues.report(path, "expected a string, found \(value.typeName)", at: value)
                return nil
            }
            patterns[name] = text
        }
        return PropertyMatch(patterns)
    }
}
