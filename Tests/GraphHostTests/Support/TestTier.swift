import Foundation

/// The tiers of Tests/tiers. scripts/test names the tier it runs in GRAPHHOST_TEST_TIER, and what a tier lacks
/// refuses to start there (`require`), so a class put in the wrong tier fails rather than slowing the tier down.
enum TestTier: String, CaseIterable {
    case fast, live, browser, long

    /// The table: Tests/tiers, lines of a tier and a class name (`#` starts a comment).
    static let table = TestSupport.root.appendingPathComponent("Tests/tiers")

    /// The tier scripts/test is running, if any.
    static var current: TestTier? {
        ProcessInfo.processInfo.environment["GRAPHHOST_TEST_TIER"].flatMap(TestTier.init(rawValue:))
    }

    /// Throws when the running tier is not one of `tiers`: `what` (a PipeWire daemon, Chromium) is not there.
    static func require(_ tiers: TestTier..., for what: String) throws {
        guard let current, !tiers.contains(current) else { return }
        throw TestSupport.ToolFailure(
            description: "this test starts \(what), which the \(current) tier has not: move its class to "
                + tiers.map(\.rawValue).joined(separator: " or ") + " in Tests/tiers")
    }

    /// The table's rows in order: (tier as written, class, line number).
    static func rows() throws -> [(tier: String, name: String, line: Int)] {
        try String(contentsOf: table, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated().compactMap { index, line in
                let words = line.prefix { $0 != "#" }.split(separator: " ")
                guard !words.isEmpty else { return nil }
                guard words.count == 2 else {
                    throw TestSupport.ToolFailure(
                        description: "Tests/tiers:\(index + 1): a tier and a class name, not '\(line)'")
                }
                return (String(words[0]), String(words[1]), index + 1)
            }
    }
}
